"""``fixlore dashboard`` loads only what it uses; every sub-command is still there for ``--help`` and a typo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fixlore.knowledge.dashboard import render_html, render_page

from ._generate import populate

# Modules of other sub-commands (or of --serve and the browser) that `fixlore dashboard -o` has no use for.
NOT_FOR_A_PAGE = (
    "fixlore.knowledge.cli",
    "fixlore.lsp.tools.explain_cli",
    "fixlore.lsp.actions.explain",
    "fixlore.lsp.config",
    "http.server",
    "webbrowser",
)


def run(*args: str, home: Path, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "fixlore.lsp", *args],
        env={**os.environ, "FIXLORE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def loaded(stderr: str) -> set[str]:
    return {line.split("|")[2].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_a_page_is_written_without_the_other_sub_commands_modules(tmp_path: Path) -> None:
    populate(tmp_path, 50)
    proc = run("dashboard", "--no-base", "-o", str(tmp_path / "page.html"), home=tmp_path, importtime=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = loaded(proc.stderr)
    assert "fixlore.knowledge.dashboard" in modules  # the log is the build's
    assert [m for m in NOT_FOR_A_PAGE if m in modules] == []
    assert (tmp_path / "page.html").read_bytes().startswith(b"<!doctype html>")


def test_help_and_a_typo_still_know_every_sub_command(tmp_path: Path) -> None:
    commands = ("serve", "doctor", "demo", "knowledge", "dashboard", "team", "explain")
    help_text = run("--help", home=tmp_path)
    assert help_text.returncode == 0
    assert all(f"    {c}" in help_text.stdout for c in commands), help_text.stdout
    typo = run("dashbord", home=tmp_path)
    assert typo.returncode == 2
    assert "invalid choice: 'dashbord'" in typo.stderr and all(f"'{c}'" in typo.stderr for c in commands)
    # A sub-command's own help and its errors come from its own parser, registered alone.
    assert "--serve" in run("dashboard", "--help", home=tmp_path).stdout
    wrong = run("dashboard", "--bogus", home=tmp_path)
    assert wrong.returncode == 2 and "fixlore dashboard: error: unrecognized arguments: --bogus" in wrong.stderr


def test_the_page_is_the_same_as_bytes_and_as_text() -> None:
    data = {"x": "</script><!-- → ·", "n": [1, 2]}
    page = render_page(data, nonce="fixed")
    assert page == render_html(data, nonce="fixed").encode()
    assert "→ ·".encode() in page and b"\\u003c/script" in page and b"\\u003c!--" in page
