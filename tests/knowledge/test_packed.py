"""The packed tier: a large store held in memory at ~63 bytes a row, exact and changeable."""

from __future__ import annotations

import time
from pathlib import Path

from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.knowledge._packed import R_BODY, PackedBucket

from .test_lazy import KEYS, accepted, fill, fix, learned, sig


def open_packed(home: Path, **kw: object) -> Knowledge:
    """About 6 rows loaded as lists, every other rule key packed: none cold."""
    return Knowledge.open(
        home,
        base=False,
        auto_prune=False,
        eager_max=0,
        cache_rows=6,
        packed_rows=1000,
        **kw,  # type: ignore[arg-type]
    )


def keys() -> list[tuple[str, str, str]]:
    """Every rule key of :func:`fill`."""
    return [sig(i).rule_key for i in range(KEYS)]


def test_after_warm_up_every_rule_key_answers_from_memory_with_exact_counts(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_packed(tmp_path) as k:
        assert k.warmed(10)
        index = k._index
        assert index.cold_count(keys()) == 0
        assert len(index.packed) >= KEYS - 4, "most keys are packed, only ~6 rows stay as lists"
        assert all(k.ready(key) for key in keys())
        assert [accepted(k, i) for i in range(KEYS)] == [i + 1 for i in range(KEYS)]
        assert k.stats().by_scope[1] == ("user", 2 * KEYS)
        per_row = sum(p.nbytes() for p in index.packed.values()) / index.packed_rows
        assert per_row < 70, per_row


def test_a_write_to_a_packed_key_unpacks_it_and_keeps_the_loaded_rows_near_the_budget(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_packed(tmp_path, batch_interval=60.0) as k:
        k.warmed(10)
        packed = [i for i in range(KEYS) if sig(i).rule_key in k._index.packed]
        for i in packed:
            k.record(Event(EventKind.ACCEPTED, fix(i), "w", time.time()))
            assert accepted(k, i) == i + 2, "the event is visible at once"
            assert sig(i).rule_key not in k._index.packed
        assert k._index.user_rows() <= 6 + 2, "older keys were packed again"
        assert [accepted(k, i) for i in packed] == [i + 2 for i in packed]
        k.flush()
    with open_packed(tmp_path) as k:
        k.warmed(10)
        assert [accepted(k, i) for i in packed] == [i + 2 for i in packed]


def test_another_windows_write_and_a_forget_reach_packed_keys(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_packed(tmp_path) as k, Knowledge.open(tmp_path, base=False, auto_prune=False) as other:
        k.warmed(10)
        i, j = [n for n in range(KEYS) if sig(n).rule_key in k._index.packed][:2]
        other.record(Event(EventKind.ACCEPTED, fix(i), "w", time.time()))
        other.flush()
        assert k.refresh()
        assert accepted(k, i) == i + 2

        assert k.forget(fix(j).fingerprint)
        assert fix(j).fingerprint not in k.evidence(sig(j).rule_key)
        assert learned(j).fingerprint in k.evidence(sig(j).rule_key)


def test_learned_fixes_of_a_packed_key_are_not_ready_until_preloaded(tmp_path: Path) -> None:
    fill(tmp_path)
    with open_packed(tmp_path) as k:
        k.warmed(10)
        i = next(n for n in range(KEYS) if sig(n).rule_key in k._index.packed)
        key = sig(i).rule_key
        assert k.ready(key) and not k.ready(key, fixes=True), "counts in memory, patterns on disk"

        k.preload(key)

        assert k.ready(key, fixes=True)
        assert [s.fingerprint for s in k.learned_fixes(sig(i))] == [learned(i).fingerprint]


def test_packing_round_trips_rows_and_refuses_what_does_not_fit() -> None:
    ctx = ("Module", "If")
    rows = {
        "0123456789abcdef0123": [1, 2, 3, 4, 5, 6, 7, 10.5, 20.25, 3, ctx, None],
        "ffffffffffffffffffff": [0, 0, 0, 0, 0, 1, 0, 1.0, 2.0, 0, (), '{"v":1}'],
    }
    ids: dict[tuple[str, ...], int] = {}
    packed = PackedBucket.pack(rows, ids, [])
    assert packed is not None and packed.shapes
    assert packed.unpack() == {
        "0123456789abcdef0123": rows["0123456789abcdef0123"],
        "ffffffffffffffffffff": [*rows["ffffffffffffffffffff"][:R_BODY], ""],  # pattern: read on demand
    }
    assert "ffffffffffffffffffff" in packed and "00000000000000000000" not in packed
    assert "not-a-fingerprint" not in packed and packed.get("0123") is None
    assert PackedBucket.pack({"short": rows["0123456789abcdef0123"]}, ids, []) is None
    assert PackedBucket.pack({"0123456789abcdef0123": [2**40, *rows["0123456789abcdef0123"][1:]]}, ids, []) is None
