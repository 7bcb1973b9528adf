#!/usr/bin/env bash
# Build, lint, test and package the VS Code extension, non-interactively.
#
# The integration test starts the real server: FIXLORE_CMD (default: `fixlore`
# on PATH; e.g. "/path/to/venv/bin/fixlore" or "python -m fixlore.lsp") and
# RUFF_CMD (default: `ruff` next to fixlore, then on PATH).
set -euo pipefail
cd "$(dirname "$0")"

# CI installs the project into the repository's .venv: use that server when none is named.
if [[ -z "${FIXLORE_CMD:-}" && -x ../.venv/bin/fixlore ]]; then
  export FIXLORE_CMD="$PWD/../.venv/bin/fixlore"
fi

npm ci --no-audit --no-fund
npm run compile
npm run lint
npm test
rm -f fixlore-*.vsix
npx --no-install vsce package --out fixlore.vsix </dev/null

# The package must hold the compiled extension and its runtime dependency,
# and none of the sources or tests.
python3 - <<'PY'
import sys
import zipfile

names = set(zipfile.ZipFile("fixlore.vsix").namelist())
required = [
    "extension/package.json",
    "extension/out/extension.js",
    "extension/out/config.js",
    "extension/out/discovery.js",
    "extension/node_modules/vscode-languageclient/package.json",
]
missing = [n for n in required if n not in names]
stray = sorted(n for n in names if n.startswith(("extension/src/", "extension/out/test/")) or n.endswith(".ts"))
if missing or stray:
    print(f"vsix: missing {missing}, should not contain {stray[:5]}")
    sys.exit(1)
print(f"vsix: {len(names)} files, compiled extension and vscode-languageclient present")
PY
