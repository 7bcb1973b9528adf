"""Hostile files: ``fixlore knowledge import`` as a subprocess, ``knowledge show`` on a terminal.

Whatever the file holds, the command ends in time with one line naming the
problem (exit 3, no traceback) and the store is byte-for-byte what it was.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import Pattern
from fixlore.knowledge._untrusted import printable
from tests.conftest import fixlore_command

from .test_exchange import db_digest, exported, fill, open_k

__all__ = ["exported"]  # the fixture, used by name

pytestmark = pytest.mark.e2e


def knowledge(*args: str, home: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``fixlore knowledge ARGS --home HOME`` as a user runs it."""
    return subprocess.run(
        fixlore_command("knowledge", *args, "--home", str(home)),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def retitled(exported: dict[str, Any], title: str) -> dict[str, Any]:
    """``exported`` with its first action's title replaced (and the fingerprint made to match)."""
    doc = copy.deepcopy(exported)
    rec = next(r for r in doc["patterns"] if r["pattern"]["action"])
    rec["pattern"]["action"]["title"] = title
    with contextlib.suppress(UnicodeEncodeError):  # a lone surrogate has no fingerprint: the old one stays
        rec["fingerprint"] = Pattern.from_dict(rec["pattern"]).fingerprint
    return doc


def _text(doc: str) -> Callable[[Path, dict[str, Any]], None]:
    return lambda f, _: f.write_text(doc)


def _json(make: Callable[[dict[str, Any]], Any]) -> Callable[[Path, dict[str, Any]], None]:
    return lambda f, exported: f.write_text(json.dumps(make(exported)))


def _symlink(target: str) -> Callable[[Path, dict[str, Any]], None]:
    return lambda f, _: f.symlink_to(target)


HOSTILE: list[tuple[str, Callable[[Path, dict[str, Any]], None], str]] = [
    ("nested 100k deep", _text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    (
        "5,000-digit integer",
        _text('{"format": "fixlore-knowledge", "version": ' + "9" * 5000 + ', "patterns": []}'),
        "a number of 5000 digits",
    ),
    ("lone surrogate in a title", _json(lambda d: retitled(d, "Replace \ud800 with")), "lone surrogate"),
    (
        "duplicate key",
        _text('{"format": "fixlore-knowledge", "version": 2, "version": 1, "patterns": []}'),
        "duplicate key",
    ),
    ("NaN", _text('{"format": "fixlore-knowledge", "version": 1, "patterns": [], "exported_at": NaN}'), "NaN"),
    ("symlink to /dev/zero", _symlink("/dev/zero"), "not a regular file"),
    ("FIFO", lambda f, _: os.mkfifo(f), "not a regular file"),
    ("directory", lambda f, _: f.mkdir(), "not a regular file"),
]


@pytest.mark.parametrize(("make", "message"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_import_is_one_line_and_changes_nothing(
    tmp_path: Path, exported: dict[str, Any], make: Callable[[Path, dict[str, Any]], None], message: str
) -> None:
    home = tmp_path / "dst"
    with open_k(home) as k:
        fill(k)
    before = db_digest(home)
    f = tmp_path / "hostile.json"
    make(f, exported)

    done = knowledge("import", str(f), home=home, timeout=30)

    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("fixlore: import refused, nothing was changed: ") and message in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert db_digest(home) == before


def test_show_escapes_control_characters_a_title_holds(tmp_path: Path, exported: dict[str, Any]) -> None:
    # The privacy verifier lets these through (no word in them); a terminal must not run them.
    title = "Replace\x07\x08\x08\x08 with\x00 `cond is None`"
    doc = retitled(exported, title)
    f = tmp_path / "bell.json"
    f.write_text(json.dumps(doc))
    home = tmp_path / "dst"
    assert knowledge("import", str(f), home=home).returncode == 0
    fp = next(r["fingerprint"] for r in doc["patterns"] if r["pattern"]["action"])

    shown = knowledge("show", fp, home=home)

    assert shown.returncode == 0
    assert "[quickfix] Replace\\x07\\x08\\x08\\x08 with\\x00 `cond is None`" in shown.stdout
    assert not any(ch in shown.stdout for ch in "\x00\x07\x08")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("evil\u202etxt.py", "evil\\u202etxt.py"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("c1\x9bx", "c1\\x9bx"),
        ("lone\ud800", "lone\\ud800"),
        ("é ✓ 🔑 $1 is None", "é ✓ 🔑 $1 is None"),
        ("two\nlines\tand a tab", "two\nlines\tand a tab"),
    ],
)
def test_printable_escapes_what_a_terminal_would_act_on(text: str, shown: str) -> None:
    assert printable(text) == shown
