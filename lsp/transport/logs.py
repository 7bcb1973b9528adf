"""Logging: to the editor's log (window/logMessage), never with the user's code in it.

pygls logs whole message bodies at INFO/DEBUG ("Sending data: {...}") and the
params of failed requests; those carry source text. fixlore therefore keeps
pygls' loggers at WARNING and, as a second line of defence, drops any pygls
record whose arguments look like message bodies. fixlore's own modules log
ids, counts and node kinds only (STYLE.md).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types

logger = logging.getLogger(__name__)

_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}


class _PyglsBodyFilter(logging.Filter):
    """Drop pygls records that would print message payloads."""

    _MARKERS = ("Sending data", "received", "Failed to handle", "Unable to deserialize", "initialized")

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite pygls records that would carry payloads; keep everything else."""
        if not record.name.startswith("pygls"):
            return True
        if record.args and any(m in str(record.msg) for m in self._MARKERS):
            # Keep the fact, lose the payload.
            record.msg = "%s"
            record.args = (f"pygls: {record.levelname.lower()} (payload withheld)",)
        record.exc_text = None
        if record.exc_info:
            exc_type = record.exc_info[0]
            record.msg = "%s (%s)"
            record.args = ("pygls: exception while handling a message", getattr(exc_type, "__name__", "?"))
            record.exc_info = None
        return True


_MESSAGE_TYPES = ((logging.ERROR, 1), (logging.WARNING, 2), (logging.INFO, 3))
"""``window/logMessage`` types by level: Error, Warning, Info; below INFO it is Log (4)."""


def message_type(levelno: int) -> int:
    """The LSP ``MessageType`` of a log level (ERROR and above 1, WARNING 2, INFO 3, lower 4)."""
    for level, kind in _MESSAGE_TYPES:
        if levelno >= level:
            return kind
    return 4


class NotReady(Exception):
    """Raised by a ``send`` whose connection is not up yet: the record waits."""


class LspLogHandler(logging.Handler):
    """Forwards records to ``window/logMessage`` through ``send``.

    Editors show a server's stderr as errors (VS Code's Output channel says
    ``[error]`` for every line, Neovim's ``lsp.log`` ``[ERROR]``), so once an
    editor is connected fixlore's records go to it with their real type and
    stderr stays silent but for crashes. Until ``send`` is bound (the editor
    not yet connected) records wait in a small buffer; a send that fails (the
    editor gone) falls back to ``fallback`` (stderr).
    """

    _BUFFER = 200

    def __init__(self, send: Callable[[int, str], None] | None = None, fallback: logging.Handler | None = None) -> None:
        super().__init__()
        self._send = send
        self._fallback = fallback
        self._busy = False
        self._pending: list[logging.LogRecord] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def bind(self, send: Callable[[int, str], None] | None) -> None:
        """Send through ``send`` from now on (``None``: buffer again)."""
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        """Send one record to the editor (never raising, never recursing)."""
        if self._busy:  # a failing send must not log its way into recursion
            return
        self._busy = True
        try:
            self._deliver(record)
        finally:
            self._busy = False

    def _deliver(self, record: logging.LogRecord) -> None:
        if self._send is None:
            if len(self._pending) < self._BUFFER:
                self._pending.append(record)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._loop, self._thread = loop, threading.get_ident()
        elif self._loop is not None and not self._loop.is_closed() and threading.get_ident() != self._thread:
            # A record from a worker thread: the transport belongs to the event loop.
            try:
                self._loop.call_soon_threadsafe(self.handle, record)
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        pending, self._pending = self._pending, []
        for index, item in enumerate([*pending, record]):
            try:
                self._send(message_type(item.levelno), self.format(item))
            except NotReady:  # no transport yet: keep this and the rest, in order
                self._pending = [*pending, record][index:][: self._BUFFER]
                return
            except Exception:  # noqa: BLE001 - logging must never take the server down
                if self._fallback is not None:
                    self._fallback.handle(item)

    def flush_to_fallback(self, level: int = logging.WARNING) -> None:
        """Write what still waits, from ``level`` up, to the fallback (the editor never came)."""
        pending, self._pending = self._pending, []
        if self._fallback is not None:
            for item in pending:
                if item.levelno >= level:
                    self._fallback.handle(item)


_STDERR_QUIET = logging.CRITICAL
"""The stderr handler's level: only crashes (editors show every stderr line as an error)."""


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """stderr: crashes, and what the editor could not receive."""

    _fixlore = True


_editor_handler: LspLogHandler | None = None
_stderr_handler: logging.Handler | None = None


def configure(level: str = "info", stream: object = None) -> None:
    """Set up fixlore's logging for a server process (idempotent).

    Records go to the editor as ``window/logMessage`` once :func:`connect`
    has given them one (those logged before wait for it); stderr carries only
    CRITICAL records (crashes), a record the editor could not take (it left),
    and at exit the warnings and errors no editor ever received. Python's own
    report of an uncaught exception goes to stderr too.
    """
    global _editor_handler, _stderr_handler
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_fixlore", False):
            root.removeHandler(handler)
    stderr = _StderrHandler(stream or sys.stderr)  # type: ignore[arg-type]
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    stderr.addFilter(_PyglsBodyFilter())
    editor = LspLogHandler(fallback=stderr)
    editor.addFilter(_PyglsBodyFilter())
    editor._fixlore = True  # type: ignore[attr-defined]
    stderr.setLevel(_STDERR_QUIET)
    if _editor_handler is None:
        atexit.register(_flush_unsent)
    _editor_handler, _stderr_handler = editor, stderr
    root.addHandler(stderr)
    root.addHandler(editor)
    set_level(level)


def to_stderr() -> None:
    """Log to stderr at the configured level instead of to the editor (``serve --tcp``: a terminal's)."""
    editor, stderr = _editor_handler, _stderr_handler
    if editor is None or stderr is None:
        return
    logging.getLogger().removeHandler(editor)
    stderr.setLevel(logging.NOTSET)
    editor.flush_to_fallback(logging.NOTSET)


def to_file(path: str) -> None:
    """Also log to the file ``path`` (appended), at the configured level (``serve --log-file``).

    The same filter as the editor's log: what pygls would print of message
    bodies is withheld, and fixlore's own records carry no code.
    """
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_PyglsBodyFilter())
    handler._fixlore = True  # type: ignore[attr-defined]
    logging.getLogger().addHandler(handler)


def _flush_unsent() -> None:
    if _editor_handler is not None:
        _editor_handler.flush_to_fallback()


def connect(server: Any) -> None:
    """Send the log records of a process set up by :func:`configure` to ``server``'s editor.

    A no-op where :func:`configure` did not run (a server inside a test
    process keeps that process's logging as it is). Records are sent once the
    server has a transport; those logged before wait and go first.
    """
    editor, stderr = _editor_handler, _stderr_handler
    if editor is None or stderr is None:
        return

    def send(kind: int, message: str) -> None:
        protocol = server.protocol
        if getattr(protocol, "writer", None) is None:
            raise NotReady
        protocol.notify(types.WINDOW_LOG_MESSAGE, types.LogMessageParams(type=types.MessageType(kind), message=message))

    editor.bind(send)


def set_level(level: str) -> None:
    """Apply a configured log level; pygls never goes below WARNING."""
    logging.getLogger().setLevel(_LEVELS.get(level, logging.INFO))
    logging.getLogger("fixlore").setLevel(_LEVELS.get(level, logging.INFO))
    logging.getLogger("pygls").setLevel(logging.WARNING)


def spawn(coro: Awaitable[Any], *, name: str) -> asyncio.Task[Any]:
    """Run a background coroutine whose failure is logged, not lost."""
    task = asyncio.ensure_future(coro)

    def done(t: asyncio.Task[Any]) -> None:
        if not t.cancelled() and t.exception() is not None:
            exc = t.exception()
            logger.error("background task %s failed: %s", name, type(exc).__name__)

    task.add_done_callback(done)
    return task


class RateLimiter:
    """Allows one event per ``interval`` seconds per key (for showMessage)."""

    def __init__(self, interval: float = 60.0) -> None:
        self._interval = interval
        self._last: dict[str, float] = {}

    def allow(self, key: str) -> bool:
        """True if ``key`` has not fired within the interval (and record that it fires now)."""
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._interval:
            return False
        self._last[key] = now
        return True
