"""How the workspace imports each name: the answer to an undefined name, from the project's own files.

"Undefined name `xrange`" in one file of a project that writes ``from six.moves
import xrange`` in others: the fix is that import, and no linter offers it.
This index maps each name the workspace's Python files import at column 0 to
the statements that do (:func:`~fixlore.abstraction._import_lines.top_level_imports`),
with how many files use each; a learned fix recorded as the
``import_as_elsewhere`` rewrite asks it at instantiation.

Fed by the files the editor opens and saves (their text as the editor has it)
and, once per workspace root, by a scan of the files on disk in a worker thread,
bounded (:data:`MAX_FILES` files of at most :data:`MAX_BYTES`, hidden folders,
virtual environments and ``node_modules`` skipped), pausing between files so
the request path keeps the GIL. Memory only: nothing of it is written, logged or
sent anywhere but to the instantiation worker, and only the statement for the
name a diagnostic is about.

Which statement, where files differ: the one more files use; between equals,
the one of the file seen last. A relative import (``from .errors import
ParseError``) counts only for files in the same folder, where it means the same.

A name no file imports yet (its first use elsewhere) is imported from the one
module of the workspace's packages that defines it at column 0 (``def``,
``class``, an assignment): ``from pkg.urls import Href``. Only modules inside a
package (folders with ``__init__.py``, so the dotted name is the one Python
imports) whose top-level package sits in a workspace folder or in ``src`` /
``lib`` (elsewhere it may be part of a namespace package), not test modules,
not private names, not a name two modules define or a standard-library
module's name.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pygls.uris import to_fs_path

from fixlore.abstraction import is_relative, top_level_imports

logger = logging.getLogger(__name__)

MAX_FILES = 5000
"""At most this many files are read from disk per workspace root."""
MAX_BYTES = 1_000_000
"""Files larger than this are not read (generated code, vendored bundles)."""
SCAN_DELAY_S = 3.0
"""The server's scan starts this long after the settings are known (start-up has the CPU first)."""
SCAN_PAUSE_S = 0.0005
"""The scan's pause after each file (lets the event loop's thread have the GIL)."""
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist"})
_SOURCE_ROOTS = frozenset({"src", "lib"})
"""Folders that hold a project's packages (``src/pkg/__init__.py`` is imported as ``pkg``)."""
MAX_DEFINED = 500
"""At most this many names a file defines are indexed (generated tables are not a module's API)."""
_DEFINED = re.compile(
    r"^(?:(?:async[ \t]+)?def|class)[ \t]+([A-Za-z]\w*)|^([A-Za-z]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE
)


def _folder(uri: str) -> str:
    return uri.rsplit("/", 1)[0]


class WorkspaceImports:
    """Name -> the import statements of the workspace's files that bind it (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, Mapping[str, str]] = {}
        """uri -> its imports (name -> statement)."""
        self._seen: dict[str, int] = {}
        """uri -> when it was last read (a counter)."""
        self._users: dict[str, set[str]] = {}
        """name -> the uris that import it."""
        self._defines: dict[str, tuple[str, frozenset[str]]] = {}
        """uri -> its dotted module name and the public names it defines at column 0 (package modules only)."""
        self._definers: dict[str, set[str]] = {}
        """name -> the uris that define it."""
        self._packages: dict[Path, bool] = {}
        """folder -> whether it holds an ``__init__.py`` (asked of the disk once)."""
        self._clock = 0
        self._scanned: set[Path] = set()
        self._roots: set[Path] = set()
        """The workspace folders (resolved), known from the moment a scan of one is asked for."""
        self._closed = threading.Event()
        """Set at shutdown: a scan under way stops at its next file."""
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixlore-workspace-imports")
        """Reads the editor's texts, in the order they came (never on the event loop)."""

    def close(self) -> None:
        """Stop a scan under way (the session ends): no file is read past this."""
        self._closed.set()
        self._reader.shutdown(wait=False, cancel_futures=True)

    def read_later(self, uri: str, text: str) -> None:
        """:meth:`update` on a thread of its own: a text the editor opened or saved (~1 ms for 150 KB)."""
        try:
            self._reader.submit(self.update, uri, text)
        except RuntimeError:  # closed: the session is ending
            return

    def start_scan(self, root: Path) -> None:
        """Read the workspace's files on a thread, :data:`SCAN_DELAY_S` from now, once per root."""
        if not self._add_root(root):
            return  # asked for already (the settings change; the folder does not)
        threading.Thread(
            target=self.scan, args=(root,), kwargs={"delay": SCAN_DELAY_S}, name="fixlore-workspace-scan", daemon=True
        ).start()

    def __len__(self) -> int:
        return len(self._files)

    def update(self, uri: str, text: str, *, from_disk: bool = False) -> None:
        """The text of one Python file (opened, saved, or ``from_disk``: never over what the editor gave)."""
        found = top_level_imports(text)
        module = self._module_of(uri)
        defined = _defined(text) if module is not None else frozenset()
        with self._lock:
            if from_disk and uri in self._files:
                return  # the editor's text is newer than the disk's
            _, old_defined = self._defines.pop(uri, ("", frozenset()))
            for name in old_defined - defined:
                definers = self._definers.get(name)
                if definers is not None:
                    definers.discard(uri)
                    if not definers:
                        del self._definers[name]
            if module is not None and defined:
                self._defines[uri] = (module, defined)
                for name in defined:
                    self._definers.setdefault(name, set()).add(uri)
            old = self._files.get(uri, {})
            for name in old.keys() - found.keys():
                users = self._users.get(name)
                if users is not None:
                    users.discard(uri)
                    if not users:
                        del self._users[name]
            for name in found:
                self._users.setdefault(name, set()).add(uri)
            self._files[uri] = found
            self._clock += 1
            self._seen[uri] = self._clock

    def statement_for(self, name: str, uri: str) -> str | None:
        """The statement the workspace's other files import ``name`` with, for the file ``uri``.

        None does: the import from the one package module that defines it (see the module's docstring).
        """
        with self._lock:
            users = [u for u in self._users.get(name, ()) if u != uri]
            votes: dict[str, tuple[int, int]] = {}
            here = _folder(uri)
            for user in users:
                statement = self._files[user][name]
                if (is_relative(statement) and _folder(user) != here) or _imports_itself(statement, uri):
                    continue
                count, last = votes.get(statement, (0, 0))
                votes[statement] = (count + 1, max(last, self._seen.get(user, 0)))
            if not votes:
                return self._defined_in(name, uri)
        return max(votes.items(), key=lambda item: item[1])[0]

    def _defined_in(self, name: str, uri: str) -> str | None:
        """``from <module> import name``: the one package module that defines ``name`` (the lock held)."""
        definers = [u for u in self._definers.get(name, ()) if u != uri]
        if len(definers) != 1 or name in sys.stdlib_module_names:
            return None
        statement = f"from {self._defines[definers[0]][0]} import {name}"
        return None if _imports_itself(statement, uri) else statement

    def _module_of(self, uri: str) -> str | None:
        """The dotted module name a file of a package is imported by (``None``: not in a package, or a test)."""
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        if not fs_path:
            return None
        path = Path(fs_path)
        parts = [] if path.name == "__init__.py" else [path.stem]
        if parts and (
            parts[0].startswith("test_") or parts[0].endswith("_test") or parts[0] in ("conftest", "__main__")
        ):
            return None
        folder = path.parent
        while self._is_package(folder):
            parts.insert(0, folder.name)
            folder = folder.parent
        if folder == path.parent or not all(part.isidentifier() for part in parts) or not self._is_root(folder):
            return None
        return ".".join(parts)

    def _is_root(self, folder: Path) -> bool:
        """Whether the folder above a top-level package is one imports start from: a workspace root, or ``src``.

        Anywhere else the package may sit in a namespace package (``acme/tools/__init__.py``
        without ``acme/__init__.py`` is imported as ``acme.tools``): no guess is offered.
        """
        if folder.name in _SOURCE_ROOTS:
            return True
        try:
            resolved = folder.resolve()
        except OSError:
            return False
        return resolved in self._roots

    def _add_root(self, root: Path) -> bool:
        """Remember a workspace folder; whether it is new."""
        try:
            resolved = root.resolve()
        except OSError:
            return False
        with self._lock:
            new = resolved not in self._roots
            self._roots.add(resolved)
        return new

    def _is_package(self, folder: Path) -> bool:
        known = self._packages.get(folder)
        if known is None:
            try:
                known = (folder / "__init__.py").is_file()
            except OSError:
                known = False
            self._packages[folder] = known
        return known

    def scan(self, root: Path, *, delay: float = 0.0) -> int:
        """Read the Python files under ``root`` once (a worker thread), after ``delay`` s; how many were read."""
        root = root.resolve()
        self._add_root(root)
        with self._lock:
            if root in self._scanned:
                return 0
            self._scanned.add(root)
        if self._closed.wait(delay):
            return 0
        read = 0
        started = time.monotonic()
        for path in _python_files(root):
            if read >= MAX_FILES or self._closed.is_set():
                break
            try:
                if path.stat().st_size > MAX_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            self.update(path.as_uri(), text, from_disk=True)
            read += 1
            time.sleep(SCAN_PAUSE_S)
        logger.info("workspace imports: %d files read in %.0f ms", read, (time.monotonic() - started) * 1000)
        return read


def _defined(text: str) -> frozenset[str]:
    """The public names ``text`` defines at column 0: functions, classes, assigned names."""
    names = {m.group(1) or m.group(2) for m in _DEFINED.finditer(text)}
    return frozenset(sorted(names)[:MAX_DEFINED]) if len(names) > MAX_DEFINED else frozenset(names)


def _imports_itself(statement: str, uri: str) -> bool:
    """Whether ``statement`` would import the module that the file ``uri`` is (``werkzeug/_compat.py``)."""
    words = statement.split()
    module = words[1]
    if is_relative(statement):
        rest = module.lstrip(".")
        module = rest or (words[3] if module == "." else "")
        if not module or "." in module:
            return False
        return uri.endswith((f"/{module}.py", f"/{module}/__init__.py"))
    paths = [module.replace(".", "/")]
    if words[0] == "from":  # `from pkg import urls` in pkg/urls.py imports the file itself too
        paths.append(f"{paths[0]}/{words[3]}")
    return any(uri.endswith((f"/{path}.py", f"/{path}/__init__.py")) for path in paths)


def _python_files(root: Path) -> Iterator[Path]:
    """The ``.py`` files under ``root``, breadth first, skipping what is not the project's own code."""
    pending = [root]
    while pending:
        folder = pending.pop(0)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        if any(e.name == "pyvenv.cfg" for e in entries) and folder != root:
            continue  # a virtual environment
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.name.endswith(".py") and entry.is_file():
                    yield Path(entry.path)
            except OSError:
                continue


__all__ = ["MAX_BYTES", "MAX_FILES", "WorkspaceImports"]
