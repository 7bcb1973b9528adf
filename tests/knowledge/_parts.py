"""The parts of a ``Knowledge`` built by hand, as its facade builds them, for unit tests."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from fixlore.abstraction import Pattern
from fixlore.knowledge import Event, EventKind, PruneConfig
from fixlore.knowledge._admin import Admin
from fixlore.knowledge._model import COUNT_KINDS
from fixlore.knowledge._shared import SharedStore
from fixlore.knowledge._tiers import Tiers
from fixlore.knowledge._verify import check_privacy
from fixlore.knowledge._writer import Writer

T0 = 1_900_000_000.0


@dataclass
class Parts:
    """A writer, the index's tiers and the commands over one store file (or none)."""

    lock: threading.Condition
    shared: SharedStore
    writer: Writer
    tiers: Tiers
    admin: Admin

    def record(self, kind: EventKind, pattern: Pattern, at: float = T0, workspace: str = "w1") -> None:
        """What ``Knowledge.record`` does for a pattern the verifier passed."""
        event = Event(kind, pattern, workspace, at)
        with self.lock:
            fp, i = pattern.fingerprint, COUNT_KINDS.index(kind)
            self.tiers.record_locked(event, fp, i, workspace=False)
            self.writer.queue_locked(event, fp, i, ok=True, workspace=False)

    def close(self) -> None:
        self.writer.close(10)
        self.shared.close()


def build(home: Path, *, writable: bool = True, interval: float = 0.01, max_events: int = 100) -> Parts:
    """The parts over ``home/knowledge.sqlite3`` (not created unless ``writable``)."""
    lock = threading.Condition(threading.Lock())
    shared = SharedStore(home / "knowledge.sqlite3", writable=writable)
    writer = Writer(shared.path, lock, interval=interval, max_events=max_events)
    tiers = Tiers(shared, lock, writer, eager_max=1000, cache_rows=1000, packed_rows=0)
    admin = Admin(shared, tiers, writer, verifier=check_privacy, prune_config=PruneConfig(), workspace=None)
    tiers.load_user()
    return Parts(lock, shared, writer, tiers, admin)


def stored(path: Path, fingerprint: str) -> tuple[int, ...] | None:
    """The seven counts of a pattern in the store file, None if it has no row."""
    conn = sqlite3.connect(path)
    try:
        cols = ", ".join(k.value for k in COUNT_KINDS)
        row = conn.execute(f"SELECT {cols} FROM patterns WHERE fingerprint = ?", (fingerprint,)).fetchone()
        return None if row is None else tuple(row)
    finally:
        conn.close()


def event_rows(path: Path) -> int:
    """How many events the store file's log holds."""
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()
