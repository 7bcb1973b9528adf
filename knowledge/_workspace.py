"""The workspace scope: ``<root>/.fixlore/patterns.json``, a file a team may commit.

Why a JSON file and not a second SQLite database: a team reviews and commits
it, so it must diff line by line, merge, and show at a glance what it shares
(nothing but abstract patterns and counts). It is the export format itself,
so ``knowledge export`` output can be dropped in as-is. It is read (and
validated as untrusted input) at open; fixlore adds its own count deltas on
flush under an exclusive lock, re-reading the file first, then rewrites it
atomically (temp file, fsync, rename), so two editors on one workspace add
up instead of overwriting each other. A file that fails validation is never
overwritten: the scope is then ignored and the reason logged.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ._delta import WorkspaceDelta
from ._exchange import MAX_BYTES, Record, Verifier, dump_document, parse_document
from ._model import InvalidImport
from ._paths import workspace_file
from ._untrusted import read_regular
from ._verify import shareable

logger = logging.getLogger(__name__)


class WorkspaceScope:
    """Reads and merges into one workspace's ``patterns.json``."""

    def __init__(self, root: Path, verifier: Verifier) -> None:
        self.path = workspace_file(root)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.verifier = verifier
        self.broken = False

    def load(self) -> list[Record]:
        """The file's records; ``[]`` if it does not exist or is invalid (then never written)."""
        if self.broken:
            return []
        try:
            return parse_document(read_regular(self.path, MAX_BYTES), self.verifier)
        except FileNotFoundError:
            return []
        except InvalidImport as exc:
            # The message names a place in the file and a rule, never its content.
            logger.warning("workspace knowledge ignored: %s", exc)
            self.broken = True
            return []

    def merge(self, deltas: dict[str, WorkspaceDelta], remove: frozenset[str] = frozenset()) -> None:
        """Add ``deltas`` to the file's counts (and drop ``remove``), atomically."""
        if self.broken or not (deltas or remove):
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        ignore = self.path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*.lock\n*.tmp\n", encoding="utf-8")
        with open(self.lock_path, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            current = {r.fingerprint: r for r in self.load()}
            if self.broken:
                return
            for fp, d in deltas.items():
                if shareable(d.pattern):  # what the file's readers would refuse stays in the user store
                    current[fp] = d.onto(current.get(fp))
            for fp in remove:
                current.pop(fp, None)
            atomic_write(self.path, dump_document(current.values()))


def atomic_write(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces, streamed) to ``path`` via a temp file, fsync and rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # a team shares this file: ordinary permissions
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
