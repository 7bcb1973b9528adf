"""Work nobody waits for steps aside while the editor waits for a code action.

A code action asked for right after a file's diagnostics came (the replay of
real fixes asks ~1 ms after the pull's answer, as a user does who jumps to a
problem) was answered while the event loop also ran what those diagnostics set
off: the pull's answer handed to the hub (:data:`~fixlore.lsp.proxy.diagnostics.HUB_DELAY`
after the editor had it), fixlore's own syntax check landing, the learning
loop's settle. In a replay of 450 real fixes (three sessions on two cores),
one of these ran inside 44 % of the code actions' handling, ~120 ms of their
1,090 ms in all, and inside most of the slowest tenth.

:class:`InFlight` counts the code actions in flight; that work, started through
:meth:`InFlight.after` or :meth:`InFlight.wait`, runs once the last of them is
answered — or after :data:`MAX_WAIT_S` at most, so a request waiting long for
learned fixes never holds diagnostics back for long.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

MAX_WAIT_S = 0.05
"""The longest that work steps aside for requests in flight."""
QUIET_S = 0.3
"""How long without a request counts as quiet (:meth:`InFlight.quiet`): past an editor's burst on opening a file."""


class InFlight:
    """The requests in flight the editor waits for; what steps aside until they are answered."""

    def __init__(self) -> None:
        self._count = 0
        self._waiting: list[asyncio.Future[None]] = []
        self._last = float("-inf")
        """The loop's time when the last request was answered."""

    @property
    def busy(self) -> bool:
        """Whether a request is in flight."""
        return self._count > 0

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """For the time a request is being answered."""
        self._count += 1
        try:
            yield
        finally:
            self._count -= 1
            self._last = asyncio.get_running_loop().time()
            if not self._count and self._waiting:
                waiting, self._waiting = self._waiting, []
                # The loop's next turn: the answer is written first.
                asyncio.get_running_loop().call_soon(_release, waiting)

    def after(self, callback: Callable[..., object], *args: Any) -> None:
        """Call ``callback(*args)`` now if nothing is in flight, else once it is answered (or :data:`MAX_WAIT_S`)."""
        if not self._count:
            callback(*args)
            return
        future = self._future()
        future.add_done_callback(lambda done: done.cancelled() or callback(*args))

    async def wait(self) -> None:
        """Return once no request is in flight (or after :data:`MAX_WAIT_S`)."""
        if self._count:
            await self._future()

    async def quiet(self, at_most: float) -> None:
        """Return once no request came for :data:`QUIET_S` (or after ``at_most`` seconds).

        For work that may wait longer than a request: the first settle of a file
        just opened, whose syntax check ran beside the editor's first requests
        about that file (its first lightbulb, the menu, the lightbulb as the
        cursor moves) and took a core from them and from the upstream.
        """
        loop = asyncio.get_running_loop()
        until = loop.time() + at_most
        while True:
            await self.wait()
            now = loop.time()
            left = min(self._last + QUIET_S, until) - now
            if now >= until or (left <= 0 and not self._count):
                return
            await asyncio.sleep(max(left, 0.001))

    def _future(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        # Those the time limit released go: requests in flight back to back keep none of them.
        self._waiting = [waiting for waiting in self._waiting if not waiting.done()]
        self._waiting.append(future)
        loop.call_later(MAX_WAIT_S, _release, [future])
        return future


def _release(futures: list[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(None)


__all__ = ["MAX_WAIT_S", "QUIET_S", "InFlight"]
