"""Importing the same export twice adds its counts once (issue 17: it used to double them)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from fixlore.knowledge import Event, EventKind, Knowledge

from ._patterns import FIX, LEARNED


def open_k(home: Path) -> Knowledge:
    return Knowledge.open(home, base=False, auto_prune=False)


def test_the_same_file_imported_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    now = time.time()
    with open_k(tmp_path / "src") as k:
        for kind in (EventKind.ACCEPTED, EventKind.ACCEPTED, EventKind.SUCCEEDED):
            k.record(Event(kind, FIX, "w1", now))
        k.record(Event(EventKind.MANUAL, LEARNED, "w1", now))
        k.flush()
        f = tmp_path / "export.json"
        assert k.export(f) == 2
    with open_k(tmp_path / "dst") as k:
        first = k.import_file(f)
        assert (first.imported, first.merged, first.unchanged) == (2, 0, 0)
        second = k.import_file(f)
        assert (second.imported, second.merged, second.unchanged) == (0, 0, 2)
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 2
    with open_k(tmp_path / "dst") as k:  # and in another process's view of the file
        assert k.import_file(f).unchanged == 2
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 2


def test_a_later_export_with_more_counts_is_added(tmp_path: Path) -> None:
    now = time.time()
    f1, f2 = tmp_path / "one.json", tmp_path / "two.json"
    with open_k(tmp_path / "src") as k:
        k.record(Event(EventKind.ACCEPTED, FIX, "w1", now))
        k.flush(30)
        k.export(f1)
        k.record(Event(EventKind.ACCEPTED, FIX, "w1", now))
        k.flush(30)
        k.export(f2)
    with open_k(tmp_path / "dst") as k:
        k.import_file(f1)
        report = k.import_file(f2)
        assert (report.merged, report.unchanged) == (1, 0)
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 3


def test_after_forget_or_reset_the_file_imports_again(tmp_path: Path) -> None:
    now = time.time()
    f = tmp_path / "export.json"
    with open_k(tmp_path / "src") as k:
        k.record(Event(EventKind.ACCEPTED, FIX, "w1", now))
        k.flush(30)
        k.export(f)
    with open_k(tmp_path / "dst") as k:
        k.import_file(f)
        assert k.forget(FIX.fingerprint)
        assert k.import_file(f).imported == 1
        k.reset()
        assert k.import_file(f).imported == 1
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1


def test_cli_reports_records_imported_before(tmp_path: Path) -> None:
    from fixlore.knowledge import cli

    with open_k(tmp_path / "src") as k:
        k.record(Event(EventKind.ACCEPTED, FIX, "w1", time.time()))
        k.flush(30)
        k.export(tmp_path / "e.json")
    args = ["knowledge", "import", str(tmp_path / "e.json"), "--home", str(tmp_path / "dst"), "--no-base", "--json"]
    import contextlib
    import io

    outs = []
    for _ in range(2):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert cli.main(args) == 0
        outs.append(json.loads(buf.getvalue()))
    assert outs == [{"imported": 1, "merged": 0, "unchanged": 0}, {"imported": 0, "merged": 0, "unchanged": 1}]
