"""Time as the learning loop sees it: a clock to read and timers to set, so a test can drive both.

:class:`LoopClock` is the real one (``time.monotonic`` and the event loop's
timers); a unit test passes a fake whose time moves only when told.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol


class Timer(Protocol):
    """A timer that was set: it can be cancelled."""

    def cancel(self) -> None:
        """Do not call its callback."""


class Clock(Protocol):
    """Reading the time, and calling something later."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> Timer:
        """Call ``callback(*args)`` after ``delay`` seconds."""


class LoopClock:
    """``time.monotonic`` and the running event loop's timers."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> Timer:
        """Call ``callback(*args)`` after ``delay`` seconds, on the running loop."""
        return asyncio.get_running_loop().call_later(delay, callback, *args)


__all__ = ["Clock", "LoopClock", "Timer"]
