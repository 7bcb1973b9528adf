"""A hostile ``.fixlore/patterns.json`` in a repository: ignored with one message, the user store works.

The e2e test starts ``fixlore serve`` on a workspace whose file is a FIFO
(nobody writes to it): the session learns, ``shutdown`` is answered, the
process exits 0 and the event is in the user store.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import Scope
from fixlore.knowledge import Event, EventKind, Knowledge
from tests.conftest import stored_events
from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand

from ._patterns import FIX
from .test_hostile_files_e2e import retitled


def _exported(f: Path) -> dict[str, Any]:
    """A valid export document, made in a store beside ``f``."""
    with Knowledge.open(f.parent / "export-home", base=False, auto_prune=False) as k:
        k.record(Event(EventKind.ACCEPTED, FIX, "w", time.time()))
        k.flush()
        return json.loads(k.export_text()[0])


HOSTILE: list[tuple[str, Callable[[Path], None]]] = [
    ("nested", lambda f: f.write_text("[" * 100_000 + "]" * 100_000)),
    ("5,000 digits", lambda f: f.write_text('{"format": "fixlore-knowledge", "version": ' + "9" * 5000 + "}")),
    (
        "duplicate keys",
        lambda f: f.write_text('{"format": "fixlore-knowledge", "version": 2, "version": 1, "patterns": []}'),
    ),
    ("lone surrogate", lambda f: f.write_text(json.dumps(retitled(_exported(f), "Replace \ud800 with")))),
    ("symlink to /dev/zero", lambda f: f.symlink_to("/dev/zero")),
    ("FIFO", lambda f: os.mkfifo(f)),
    ("directory", lambda f: f.mkdir()),
]


@pytest.mark.parametrize("make", [h[1] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_workspace_file_is_ignored_once_and_the_user_store_works(
    tmp_path: Path, make: Callable[[Path], None], caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "proj"
    (root / ".fixlore").mkdir(parents=True)
    path = root / ".fixlore" / "patterns.json"
    make(path)
    kind = path.lstat().st_mode
    caplog.set_level(logging.WARNING, logger="fixlore.knowledge")

    with Knowledge.open(
        tmp_path / "home", workspace_root=root, workspace_scope=True, base=False, auto_prune=False, batch_interval=0.05
    ) as k:
        for _ in range(2):  # two flushes: each would merge into the workspace file
            k.record(Event(EventKind.ACCEPTED, FIX, k.workspace_id, time.time()))
            k.flush(timeout=10)
        stats = k.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert (stats.scope, stats.counts.accepted) == (Scope.USER, 2)

    ignored = [r for r in caplog.records if "workspace knowledge ignored" in r.getMessage()]
    assert len(ignored) == 1, [r.getMessage() for r in caplog.records]
    assert path.lstat().st_mode == kind  # never rewritten
    with Knowledge.open(tmp_path / "home", base=False, learning=False) as reader:
        assert reader.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 2


@pytest.mark.e2e
async def test_a_fifo_workspace_file_neither_hangs_the_session_nor_its_shutdown(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
    (tmp_path / ".fixlore").mkdir()
    os.mkfifo(tmp_path / ".fixlore" / "patterns.json")
    editor = Editor(tmp_path, ruff=False, settings={"workspaceKnowledge": True})
    await editor.__aenter__()
    process = editor.process
    assert process is not None
    try:
        header = "def total(rows, start)"

        def add_colon(uri: str) -> None:
            editor.insert(uri, len(header), ":")

        await fix_by_hand(editor, "c.py", f"{header}\n    return len(rows)\n", "python-syntax", add_colon)
        events = (await editor.stats())["session"]["events"]
        assert events > 0
        await asyncio.wait_for(editor.request("shutdown", None), 30)
        editor.notify("exit")
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        await editor.kill()

    assert stored_events() == events
