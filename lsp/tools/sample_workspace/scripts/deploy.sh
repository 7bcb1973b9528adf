#!/usr/bin/env bash
set -euo pipefail
if [ -z "${TARGET:-}" ]; then
  echo "TARGET is not set"
  exit 1
