"""House rules that CI enforces: ruff lint and format, and mypy.

mypy is strict on `abstraction/` and `knowledge/` (STYLE.md) and checks the
bodies of `lsp/`. The three folders install as `fixlore.*` through a
package-dir mapping that mypy cannot follow in an editable install, so the
test lays out a `fixlore/` folder of symlinks and points MYPYPATH at it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def test_ruff_lint_is_clean() -> None:
    proc = subprocess.run(
        [str(BIN / "ruff"), "check", "--no-cache", "."], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_format_is_clean() -> None:
    proc = subprocess.run(
        [str(BIN / "ruff"), "format", "--check", "--no-cache", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.fixture(scope="module")
def mypy_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mypyroot")
    (root / "fixlore").mkdir()
    for layer in ("lsp", "abstraction", "knowledge"):
        (root / "fixlore" / layer).symlink_to(REPO / layer, target_is_directory=True)
    return root


def run_mypy(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MYPYPATH=str(root))
    base = [str(BIN / "mypy"), "--ignore-missing-imports", "--explicit-package-bases", "--no-incremental"]
    return subprocess.run([*base, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)


def test_mypy_strict_on_abstraction_and_knowledge(mypy_root: Path) -> None:
    proc = run_mypy(mypy_root, "--strict", "-p", "fixlore.abstraction", "-p", "fixlore.knowledge")
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_mypy_checks_the_lsp_layer(mypy_root: Path) -> None:
    files = [str(p.relative_to(mypy_root)) for p in (mypy_root / "fixlore" / "lsp").glob("**/*.py")]
    files = [f for f in files if "sample_workspace" not in f]
    proc = run_mypy(mypy_root, "--check-untyped-defs", *files)
    assert proc.returncode == 0, proc.stdout[-4000:]
