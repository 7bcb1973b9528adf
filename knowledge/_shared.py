"""The caller's connection to the user store, shared by the request path and the commands.

The writer thread has its own connection (:mod:`._writer`); every other thread
of a :class:`~fixlore.knowledge.Knowledge` reads (and the commands write)
through this one, under its lock. Opened read-only while learning is off, so
that a store that does not exist is not created; :meth:`SharedStore.rw`
reopens it for writing when a command or ``set_learning`` needs to.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ._model import KnowledgeError
from ._store import Store


class SharedStore:
    """One :class:`Store` (or none yet) and the lock every use of it holds."""

    def __init__(self, path: Path, *, writable: bool) -> None:
        """Open ``path`` (created if ``writable``); a missing store read-only stays unopened."""
        self.path = path
        self.lock = threading.RLock()
        self._db: Store | None = None
        try:
            if writable or path.exists():
                self._db = Store(path, readonly=not writable)
        except sqlite3.Error as exc:
            raise KnowledgeError(f"cannot open the knowledge store {path}: {exc}") from exc

    def ro(self) -> Store | None:
        """The connection as it is (None: there is no store); hold :attr:`lock` while using it."""
        return self._db

    def rw(self) -> Store:
        """The connection, (re)opened for writing if need be (the store is created if missing)."""
        with self.lock:
            if self._db is None or self._db.readonly:
                if self._db is not None:
                    self._db.close()
                self._db = Store(self.path)
            return self._db

    def close(self) -> None:
        """Close the connection; :meth:`ro` is None after this."""
        with self.lock:
            if self._db is not None:
                self._db.close()
            self._db = None
