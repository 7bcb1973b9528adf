"""The writer alone, over a real store file: queue, commit, flush, close (no process, no Knowledge)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from fixlore.knowledge import Event, EventKind, KnowledgeError
from fixlore.knowledge._model import COUNT_KINDS
from fixlore.knowledge._writer import Writer

from ._parts import T0, event_rows, stored
from ._patterns import ALL, FIX, LEARNED


def writer(path: Path, *, interval: float = 0.01, max_events: int = 100) -> tuple[Writer, threading.Condition]:
    lock = threading.Condition(threading.Lock())
    return Writer(path, lock, interval=interval, max_events=max_events), lock


def queue(w: Writer, lock: threading.Condition, event: Event, ok: bool = True) -> None:
    with lock:
        w.queue_locked(event, event.pattern.fingerprint, COUNT_KINDS.index(event.kind), ok=ok, workspace=False)


def test_close_commits_what_is_queued_without_waiting_for_the_interval(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    w, lock = writer(path, interval=60.0)
    queue(w, lock, Event(EventKind.ACCEPTED, FIX, "w1", T0))
    queue(w, lock, Event(EventKind.SUCCEEDED, FIX, "w1", T0 + 1))
    queue(w, lock, Event(EventKind.MANUAL, LEARNED, "w2", T0 + 2))
    started = time.monotonic()
    w.close(timeout=10)
    assert time.monotonic() - started < 5, "close waited for the 60 s interval"
    assert stored(path, FIX.fingerprint) == (0, 1, 0, 1, 0, 0, 0)
    assert stored(path, LEARNED.fingerprint) == (0, 0, 0, 0, 0, 1, 0)
    assert event_rows(path) == 3


def test_a_burst_from_many_threads_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    w, lock = writer(path, max_events=50)
    threads, per_thread = 8, 400

    def burst(n: int) -> None:
        for i in range(per_thread):
            queue(w, lock, Event(EventKind.OFFERED, ALL[(n + i) % len(ALL)], f"w{n}", T0 + i))

    workers = [threading.Thread(target=burst, args=(n,)) for n in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    w.flush(timeout=30)
    assert sum(stored(path, p.fingerprint)[0] for p in ALL) == threads * per_thread  # type: ignore[index]
    assert event_rows(path) == threads * per_thread
    w.close(timeout=10)


def test_refused_events_are_counted_and_nothing_of_them_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    w, lock = writer(path)
    queue(w, lock, Event(EventKind.ACCEPTED, FIX, "w1", T0), ok=False)
    w.flush(timeout=10)
    w.close(timeout=10)
    assert stored(path, FIX.fingerprint) is None
    assert event_rows(path) == 0
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'refused'").fetchone() == ("1",)
    conn.close()


def test_a_cold_read_is_told_every_batch_its_snapshot_may_miss(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    w, lock = writer(path)
    with lock:
        w.begin_read_locked()
    queue(w, lock, Event(EventKind.ACCEPTED, FIX, "w1", T0))
    with lock:
        assert [FIX.fingerprint in b.patterns for b in w.unseen_locked(0)] == [True]  # queued
    w.flush(timeout=10)
    conn = sqlite3.connect(path)
    rev = int(conn.execute("SELECT value FROM meta WHERE key = 'rev'").fetchone()[0])
    conn.close()
    with lock:
        before = w.unseen_locked(rev - 1)  # a snapshot taken before the commit
        after = w.unseen_locked(rev)  # a snapshot that holds it
        w.end_read_locked()
        ended = w.unseen_locked(rev - 1)
    assert [FIX.fingerprint in b.patterns for b in before] == [True, False]
    assert [FIX.fingerprint in b.patterns for b in after] == [False]
    assert [FIX.fingerprint in b.patterns for b in ended] == [False], "kept after the last read ended"
    w.close(timeout=10)


def test_drop_forgets_what_is_queued_for_one_pattern(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    w, lock = writer(path, interval=60.0)
    queue(w, lock, Event(EventKind.ACCEPTED, FIX, "w1", T0))
    queue(w, lock, Event(EventKind.MANUAL, LEARNED, "w1", T0))
    with lock:
        w.drop_locked(FIX.fingerprint)
    w.close(timeout=10)
    assert stored(path, FIX.fingerprint) is None
    assert stored(path, LEARNED.fingerprint) == (0, 0, 0, 0, 0, 1, 0)
    assert event_rows(path) == 1


def test_flush_raises_when_the_store_cannot_be_opened(tmp_path: Path) -> None:
    w, lock = writer(tmp_path)  # a directory: the writer's connection fails
    queue(w, lock, Event(EventKind.ACCEPTED, FIX, "w1", T0))
    with pytest.raises(KnowledgeError):
        w.flush(timeout=0.5)
    w.close(timeout=10)
