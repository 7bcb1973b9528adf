"""A store too large to hold whole: rule keys load on first use, stay exact, and go cold again.

Every test runs twice: with rule keys either loaded or cold (no packed tier),
and with all three tiers (loaded, packed, cold) at once.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from fixlore.abstraction import Pattern, Signature
from fixlore.knowledge import Event, EventKind, Knowledge

from ._patterns import FIX, LEARNED

KEYS = 12


def sig(i: int) -> Signature:
    """The i-th rule key's signature."""
    return replace(FIX.signature, code=f"E{700 + i}")


def fix(i: int) -> Pattern:
    """The upstream action of rule key i."""
    return replace(FIX, signature=sig(i))


def learned(i: int) -> Pattern:
    """A learned fix of rule key i."""
    return replace(LEARNED, signature=sig(i))


PACKED = 0
"""Rows the packed tier may hold in the running test (see the ``tiers`` fixture)."""


@pytest.fixture(autouse=True, params=[0, 8], ids=["loaded-or-cold", "three-tiers"])
def tiers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run each test without a packed tier, then with one of 8 rows (4 of the 12 keys)."""
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKED"]), "PACKED", request.param)


def open_lazy(home: Path, **kw: object) -> Knowledge:
    """Read per rule key whatever the size, keeping about 6 rows loaded (and PACKED packed)."""
    kw.setdefault("packed_rows", PACKED)
    return Knowledge.open(home, base=False, auto_prune=False, eager_max=0, cache_rows=6, **kw)  # type: ignore[arg-type]


def fill(home: Path) -> None:
    """Rule key i: i+1 acceptances of its action, 1 manual fix."""
    with Knowledge.open(home, base=False, auto_prune=False) as k:
        for i in range(KEYS):
            for _ in range(i + 1):
                k.record(Event(EventKind.ACCEPTED, fix(i), "w", time.time()))
            k.record(Event(EventKind.MANUAL, learned(i), "w", time.time()))


def accepted(k: Knowledge, i: int) -> int:
    """Acceptances of rule key i's action as ranking sees them."""
    return k.evidence(sig(i).rule_key)[fix(i).fingerprint].counts.accepted


def test_every_rule_key_reads_the_same_lazily_as_whole(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_lazy(tmp_path) as k:
        assert k.warmed(10)
        assert (
            0 < k._index.cold_count([sig(i).rule_key for i in range(KEYS)]) < KEYS
        )  # warm-up stopped at the cache size
        assert [accepted(k, i) for i in range(KEYS)] == [i + 1 for i in range(KEYS)]
        assert [s.fingerprint for s in k.learned_fixes(sig(3))] == [learned(3).fingerprint]
        assert k.stats().by_scope[1] == ("user", 2 * KEYS)
        assert k.list_patterns() and len(k.list_patterns()) == 2 * KEYS


def test_events_for_cold_and_evicted_keys_are_not_lost(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_lazy(tmp_path, batch_interval=60.0) as k:
        k.warmed(10)
        # Unflushed events on keys that are cold, then loaded, then evicted, then loaded again.
        for i in range(KEYS):
            k.record(Event(EventKind.ACCEPTED, fix(i), "w", time.time()))
        assert [accepted(k, i) for i in range(KEYS)] == [i + 2 for i in range(KEYS)]
        assert [accepted(k, i) for i in reversed(range(KEYS))] == [i + 2 for i in reversed(range(KEYS))]
        k.flush()
        assert [accepted(k, i) for i in range(KEYS)] == [i + 2 for i in range(KEYS)]
    with open_lazy(tmp_path) as k:
        assert [accepted(k, i) for i in range(KEYS)] == [i + 2 for i in range(KEYS)]


def test_another_windows_writes_reach_cold_and_loaded_keys(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_lazy(tmp_path) as k, Knowledge.open(tmp_path, base=False, auto_prune=False) as other:
        k.warmed(10)
        assert accepted(k, 0) == 1  # loaded now
        for i in (0, KEYS - 1):
            other.record(Event(EventKind.ACCEPTED, fix(i), "w", time.time()))
        other.flush()
        assert k.refresh()
        assert accepted(k, 0) == 2
        assert accepted(k, KEYS - 1) == KEYS + 1


def test_import_into_a_lazy_store_counts_once(tmp_path: Path) -> None:
    fill(tmp_path / "src")
    with Knowledge.open(tmp_path / "src", base=False, auto_prune=False) as k:
        k.export(tmp_path / "x.json")
    fill(tmp_path / "dst")
    with open_lazy(tmp_path / "dst") as k:
        k.warmed(10)
        assert accepted(k, 0) == 1  # one loaded key, the rest cold
        assert k.import_file(tmp_path / "x.json").merged == 2 * KEYS
        assert [accepted(k, i) for i in range(KEYS)] == [2 * (i + 1) for i in range(KEYS)]


def test_ready_tells_the_request_path_whether_memory_answers_and_preload_warms_a_key(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_lazy(tmp_path) as k:
        assert k.warmed(10)
        cold = [i for i in range(KEYS) if not k.ready(sig(i).rule_key)]
        assert cold, "the cache holds only part of the store"
        i = cold[0]
        assert not k.ready(sig(i).rule_key, fixes=True)

        k.preload(sig(i).rule_key)

        assert k.ready(sig(i).rule_key) and k.ready(sig(i).rule_key, fixes=True)
        assert accepted(k, i) == i + 1
        assert [s.fingerprint for s in k.learned_fixes(sig(i))] == [learned(i).fingerprint]


def test_a_store_held_whole_is_always_ready(tmp_path: Path) -> None:
    fill(tmp_path)
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        assert all(k.ready(sig(i).rule_key, fixes=True) for i in range(KEYS))
