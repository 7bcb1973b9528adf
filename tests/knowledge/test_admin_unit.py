"""The commands over a store file, built from their parts by hand (no process, no Knowledge)."""

from __future__ import annotations

import time
from pathlib import Path

from fixlore.abstraction import Scope
from fixlore.knowledge import EventKind, ExportFilters, PruneConfig
from fixlore.knowledge._admin import auto_prune
from fixlore.knowledge._store import Store

from ._parts import T0, build, event_rows, stored
from ._patterns import FIX, LEARNED, NOQA


def test_forget_drops_what_is_queued_stored_and_held(tmp_path: Path) -> None:
    parts = build(tmp_path, interval=60.0)
    parts.record(EventKind.ACCEPTED, FIX)
    parts.writer.flush(timeout=10)
    parts.record(EventKind.ACCEPTED, FIX, at=T0 + 1)  # queued, not committed
    parts.record(EventKind.MANUAL, LEARNED)
    assert parts.admin.forget(FIX.fingerprint[:8])
    parts.close()
    assert stored(parts.shared.path, FIX.fingerprint) is None
    assert stored(parts.shared.path, LEARNED.fingerprint) == (0, 0, 0, 0, 0, 1, 0)
    assert event_rows(parts.shared.path) == 1
    assert FIX.fingerprint not in parts.tiers.evidence(FIX.signature.rule_key)


def test_reset_empties_the_store_the_index_and_the_queue(tmp_path: Path) -> None:
    parts = build(tmp_path)
    parts.record(EventKind.ACCEPTED, FIX)
    parts.record(EventKind.MANUAL, LEARNED)
    parts.admin.reset()
    assert parts.admin.stats(learning=True).patterns == 0
    assert dict(parts.tiers.sizes())[Scope.USER.value] == 0
    assert parts.tiers.refresh() is False, "its own reset is not another process's change"
    parts.close()
    assert event_rows(parts.shared.path) == 0


def test_prune_archives_a_failing_pattern_and_the_index_lets_it_go(tmp_path: Path) -> None:
    parts = build(tmp_path)
    for i in range(3):
        parts.record(EventKind.FAILED, NOQA, at=T0 + i)
    parts.record(EventKind.SUCCEEDED, FIX)
    report = parts.admin.prune(now=T0 + 10)
    assert [fp for fp, _ in report.archived] == [NOQA.fingerprint]
    assert NOQA.fingerprint not in parts.tiers.evidence(NOQA.signature.rule_key)
    assert FIX.fingerprint in parts.tiers.evidence(FIX.signature.rule_key)
    assert parts.admin.stats(learning=True).archived == 1
    parts.close()


def test_export_then_import_into_another_store_carries_the_counts(tmp_path: Path) -> None:
    src = build(tmp_path / "src")
    past = time.time() - 1000  # an import refuses times in the future
    src.record(EventKind.ACCEPTED, FIX, at=past)
    src.record(EventKind.MANUAL, LEARNED, at=past)
    out = tmp_path / "export.json"
    assert src.admin.export(out, ExportFilters()) == 2
    src.close()
    dst = build(tmp_path / "dst")
    report = dst.admin.import_file(out)
    assert (report.imported, report.merged, report.unchanged) == (2, 0, 0)
    assert dst.tiers.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1
    fixes = dst.tiers.learned_for(LEARNED.signature)
    assert [s.pattern for s in fixes] == [LEARNED]
    assert dst.admin.import_file(out).unchanged == 2, "the same file twice adds nothing"
    dst.close()


def test_auto_prune_runs_once_an_interval(tmp_path: Path) -> None:
    parts = build(tmp_path)
    for i in range(3):
        parts.record(EventKind.FAILED, NOQA, at=T0 + i)
    parts.writer.flush(timeout=10)
    dropped: list[list[str]] = []
    store = Store(parts.shared.path)
    try:
        auto_prune(store, PruneConfig(max_idle_days=1e9), dropped.append)
        auto_prune(store, PruneConfig(max_idle_days=1e9), dropped.append)  # pruned just now: skipped
    finally:
        store.close()
    assert dropped == [[NOQA.fingerprint]]
    parts.close()
