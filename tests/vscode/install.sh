#!/usr/bin/env bash
# Installs what the VS Code end-to-end suite needs, offline but for the
# registries: code-server (VS Code's workbench, from npm) and playwright-core
# into tests/.npm/vscode-e2e/ (gitignored), driving Debian's Chromium.
# Idempotent: a second run with the same pins does nothing.
#
# Needs (apt): chromium ripgrep build-essential libkrb5-dev; node >= 20 with
# its headers in /usr/include/node (Debian's nodejs/libnode-dev, or NodeSource).
set -euo pipefail
cd "$(dirname "$0")/../.."
PREFIX=tests/.npm/vscode-e2e
CODE_SERVER=4.100.3
PLAYWRIGHT=1.52.0
STAMP="$PREFIX/.installed-$CODE_SERVER-$PLAYWRIGHT"
if [[ -f "$STAMP" && -x "$PREFIX/node_modules/.bin/code-server" ]]; then
  exit 0
fi
mkdir -p "$PREFIX"
# @vscode/ripgrep's postinstall downloads rg from GitHub; it takes a cached
# tarball instead, so give it Debian's rg under the name it looks for.
RG=$(command -v rg) || { echo "install.sh: ripgrep (rg) is missing: apt-get install ripgrep" >&2; exit 1; }
TMP=${TMPDIR:-/tmp}
for v in 1.15.11 1.15.9 1.15.10 1.15.12 1.15.13 1.15.14 1.17.1; do
  cache="$TMP/vscode-ripgrep-cache-$v"
  mkdir -p "$cache"
  for t in ripgrep-v13.0.0-10-x86_64-unknown-linux-musl ripgrep-v14.1.1-1-x86_64-unknown-linux-musl ripgrep-v13.0.0-13-x86_64-unknown-linux-musl; do
    [[ -f "$cache/$t.tar.gz" ]] || tar -czf "$cache/$t.tar.gz" -C "$(dirname "$RG")" rg
  done
done
if [[ -z "${npm_config_nodedir:-}" && -f /usr/include/node/node.h ]]; then
  export npm_config_nodedir=/usr
fi
cat > "$PREFIX/package.json" <<JSON
{"name": "fixlore-vscode-e2e", "private": true,
 "dependencies": {"code-server": "$CODE_SERVER", "playwright-core": "$PLAYWRIGHT"}}
JSON
(cd "$PREFIX" && npm_config_yes=true npm install --unsafe-perm --no-audit --no-fund --loglevel=error)
touch "$STAMP"
