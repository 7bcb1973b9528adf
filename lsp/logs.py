"""Logging: to stderr and the editor's log, never with the user's code in it.

pygls logs whole message bodies at INFO/DEBUG ("Sending data: {...}") and the
params of failed requests; those carry source text. fixlore therefore keeps
pygls' loggers at WARNING and, as a second line of defence, drops any pygls
record whose arguments look like message bodies. fixlore's own modules log
ids, counts and node kinds only (STYLE.md).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

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


class LspLogHandler(logging.Handler):
    """Forwards records to ``window/logMessage`` through ``send``."""

    def __init__(self, send: Callable[[int, str], None]) -> None:
        super().__init__()
        self._send = send
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        """Send one record to the editor (never raising, never recursing)."""
        if self._busy:  # a failing send must not log its way into recursion
            return
        self._busy = True
        try:
            self._send(record.levelno, self.format(record))
        except Exception:  # noqa: BLE001 - logging must never take the server down
            pass
        finally:
            self._busy = False


def configure(level: str = "info", stream: object = None) -> None:
    """Set up fixlore's logging for a server process (idempotent)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_fixlore", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_PyglsBodyFilter())
    handler._fixlore = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    set_level(level)


def set_level(level: str) -> None:
    """Apply a configured log level; pygls never goes below WARNING."""
    logging.getLogger().setLevel(_LEVELS.get(level, logging.INFO))
    logging.getLogger("fixlore").setLevel(_LEVELS.get(level, logging.INFO))
    logging.getLogger("pygls").setLevel(logging.WARNING)


def body_filter() -> logging.Filter:
    """The pygls payload filter, for handlers added elsewhere."""
    return _PyglsBodyFilter()


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
