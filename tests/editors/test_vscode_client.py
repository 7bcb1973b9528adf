"""The VS Code client: npm ci, compile, lint, unit and integration tests, vsix packaging.

Runs `vscode-client/run-tests.sh` against this environment's `fixlore` (and
the `ruff` beside it), so the Node integration test drives the real server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e


def test_vscode_client_builds_tests_and_packages() -> None:
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to build and test the VS Code client (vscode-client/)")
    env = dict(os.environ)
    env["FIXLORE_CMD"] = str(Path(sys.executable).parent / "fixlore")
    proc = subprocess.run(
        ["bash", str(REPO / "vscode-client" / "run-tests.sh")],
        cwd=REPO / "vscode-client",
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "vsix: " in output and "compiled extension and vscode-languageclient present" in output
    assert "ℹ fail 0" in output and "ℹ pass 0" not in output, output[-3000:]
