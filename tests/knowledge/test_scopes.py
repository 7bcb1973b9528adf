"""Scopes: the workspace file a team commits, precedence workspace > user > base."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest

from fixlore.abstraction import Scope
from fixlore.knowledge import Candidate, Event, EventKind, Knowledge, KnowledgeError, rank_actions

from ._patterns import FIX, NOQA

REPO = Path(__file__).resolve().parents[2]


def open_ws(home: Path, root: Path, **kw: object) -> Knowledge:
    """A store with the workspace scope of ``root`` switched on."""
    return Knowledge.open(home, workspace_root=root, workspace_scope=True, base=False, auto_prune=False, **kw)  # type: ignore[arg-type]


def test_workspace_file_is_the_export_format_and_adds_up_across_editors(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    with open_ws(tmp_path / "alice", root) as a, open_ws(tmp_path / "bob", root) as b:
        a.record(Event(EventKind.ACCEPTED, FIX, a.workspace_id, time.time()))
        b.record(Event(EventKind.ACCEPTED, FIX, b.workspace_id, time.time()))
        b.record(Event(EventKind.REJECTED, NOQA, b.workspace_id, time.time()))
        a.flush()
        b.flush()
    path = root / ".fixlore" / "patterns.json"
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, json.loads((REPO / "docs" / "knowledge-schema.json").read_text()))
    counts = {p["fingerprint"]: p["counts"] for p in doc["patterns"]}
    assert counts[FIX.fingerprint]["accepted"] == 2
    assert counts[NOQA.fingerprint]["rejected"] == 1
    assert path.stat().st_mode & 0o044  # readable by the team, not a private temp file
    assert (root / ".fixlore" / ".gitignore").read_text().startswith("*.lock")
    # A new editor opening the workspace sees the team's counts in the workspace scope.
    with open_ws(tmp_path / "carol", root) as c:
        stats = c.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert (stats.scope, stats.counts.accepted) == (Scope.WORKSPACE, 2)


def test_workspace_outranks_user(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".fixlore").mkdir(parents=True)
    # The team's file says: take the fix. This user personally kept choosing noqa.
    with open_ws(tmp_path / "team", root) as team:
        for _ in range(3):
            team.record(Event(EventKind.ACCEPTED, FIX, "", time.time()))
    with Knowledge.open(tmp_path / "me", base=False, auto_prune=False) as me:
        for _ in range(3):
            me.record(Event(EventKind.ACCEPTED, NOQA, "", time.time()))
    with open_ws(tmp_path / "me", root) as k:
        ev = k.evidence(FIX.signature.rule_key)
        ranked = rank_actions(
            [Candidate(NOQA.fingerprint, NOQA, 0), Candidate(FIX.fingerprint, FIX, 1)], ev, now=time.time()
        )
        assert ranked[0].candidate.key == FIX.fingerprint


def test_an_invalid_workspace_file_is_ignored_and_never_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".fixlore").mkdir(parents=True)
    path = root / ".fixlore" / "patterns.json"
    path.write_text('{"format": "fixlore-knowledge", "version": 99, "patterns": []}')
    with open_ws(tmp_path / "home", root) as k:
        k.record(Event(EventKind.ACCEPTED, FIX, "", time.time()))
        k.flush()
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].scope is Scope.USER
    assert json.loads(path.read_text())["version"] == 99


def test_a_failing_workspace_file_does_not_count_user_events_twice(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    with open_ws(tmp_path / "home", root, batch_interval=0.05) as k:
        # The workspace file cannot be written (".fixlore" is a file, not a folder) ...
        (root / ".fixlore").write_text("in the way\n")
        k.record(Event(EventKind.ACCEPTED, FIX, k.workspace_id, time.time()))
        with pytest.raises(KnowledgeError):
            k.flush(timeout=5)
        # ... while the user store took the event once, however often the writer retries.
        with Knowledge.open(tmp_path / "home", base=False, learning=False) as reader:
            assert reader.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1
        # Once it can be written, the workspace file gets the event, also once.
        (root / ".fixlore").unlink()
        (root / ".fixlore").mkdir()
        k.record(Event(EventKind.REJECTED, FIX, k.workspace_id, time.time()))
        k.flush(timeout=5)
        counts = k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts
        assert (counts.accepted, counts.rejected) == (1, 1)
    with Knowledge.open(tmp_path / "other", workspace_root=root, workspace_scope=True, base=False) as fresh:
        ws = fresh.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert ws.scope.value == "workspace" and (ws.counts.accepted, ws.counts.rejected) == (1, 1)
    with Knowledge.open(tmp_path / "home", base=False, learning=False) as reader:
        user = reader.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts
        assert (user.accepted, user.rejected) == (1, 1)
