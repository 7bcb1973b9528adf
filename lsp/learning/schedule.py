"""When each document settles: its pause timer, the wait for late sources, one settle at a time.

:class:`SettleSchedule` decides *when*; what a settle does is the learning
loop's (:meth:`~fixlore.lsp.learning.loop.LearningLoop` ``._try_settle``, the
``settle`` it is given). Every timer is set on the loop's
:class:`~fixlore.lsp.learning.clock.Clock`, so a test drives them with a fake.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from fixlore.lsp.learning.clock import Clock, Timer

S = TypeVar("S")


class SettleSchedule(Generic[S]):
    """Per document: whether a settle is wanted, its pause timer, a late-sources timer, one settle running.

    ``S`` is what a settle settles (the loop's state of a document, taken when it was due).
    """

    def __init__(self, clock: Clock, settle: Callable[[str], None]) -> None:
        self._clock = clock
        self._settle = settle
        """Called when a wanted settle's pause has run out (it may find the document not ready)."""
        self._timers: dict[str, Timer] = {}
        self._fires_at: dict[str, float] = {}
        """When each pause timer in ``_timers`` goes off."""
        self._due: dict[str, float] = {}
        """When each pause runs out: later than its timer after a restart, which the timer then sets again."""
        self._source_timers: dict[str, Timer] = {}
        """When to stop waiting for late sources."""
        self._wanted: set[str] = set()
        self.settling: set[str] = set()
        """Documents whose settle runs now."""
        self._queued: dict[str, list[S]] = {}
        """States found due while their document's settle ran: settled after it, in order."""

    def want(self, uri: str, *, delay: float) -> None:
        """Settle ``uri`` once ``delay`` has passed (the pause restarts).

        Every keystroke restarts the pause: its timer is kept when it goes off no
        later than the new end (it then sets itself again for the rest), instead
        of a timer cancelled and made a keystroke.
        """
        self._wanted.add(uri)
        due = self._clock.now() + delay
        self._due[uri] = due
        if uri in self._timers and self._fires_at[uri] <= due:
            return
        self._arm(uri, due, delay)

    def _stop_pause(self, uri: str) -> None:
        _cancel(self._timers, uri)
        self._fires_at.pop(uri, None)
        self._due.pop(uri, None)

    def _arm(self, uri: str, at: float, delay: float) -> None:
        _cancel(self._timers, uri)
        self._timers[uri] = self._clock.call_later(delay, self._fired, uri)
        self._fires_at[uri] = at

    def recheck(self, uri: str, *, delay: float) -> None:
        """Settle ``uri`` after ``delay``, unless a settle is wanted already: that one comes first or is due now.

        For a verdict that waits for the pause, which any later settle gives: it must
        not push back a settle that is due (an accepted action's state waiting for its
        diagnostics), which the user's next edit would then put off for good.
        """
        if uri not in self._wanted:
            self.want(uri, delay=delay)

    def want_now(self, uri: str) -> None:
        """Settle ``uri`` at the next chance, without a pause."""
        self._stop_pause(uri)
        self._wanted.add(uri)

    def if_due(self, uri: str) -> None:
        """Settle now if one was asked for and its pause has run out."""
        if uri in self._wanted and uri not in self._timers:
            self._settle(uri)

    def wait_for_sources(self, uri: str, delay: float) -> None:
        """Try again after ``delay`` even if the late sources have not reported."""
        if uri not in self._source_timers:
            self._source_timers[uri] = self._clock.call_later(delay, self._overdue, uri)

    def stop_waiting(self, uri: str) -> None:
        """The sources need no more waiting for (the text changed, or the settle starts)."""
        _cancel(self._source_timers, uri)

    def started(self, uri: str) -> None:
        """The settle of ``uri`` starts: it is no longer wanted, nor waited for."""
        _cancel(self._source_timers, uri)
        self._wanted.discard(uri)
        self.settling.add(uri)

    def queue(self, uri: str, state: S) -> None:
        """A settle of ``uri`` is due while one runs: ``state``, taken now, settles after it.

        Not later, from the text of then: the user may type on meanwhile, and
        the state due now (an accepted action's, say) would never settle.
        """
        self._queued.setdefault(uri, []).append(state)

    def next_queued(self, uri: str) -> S | None:
        """The oldest state queued for ``uri`` (taken off the queue), if any."""
        queued = self._queued.get(uri)
        if not queued:
            return None
        state = queued.pop(0)
        if not queued:
            del self._queued[uri]
        return state

    def forget(self, uri: str) -> None:
        """The document closed."""
        self._wanted.discard(uri)
        self._queued.pop(uri, None)
        self._stop_pause(uri)
        _cancel(self._source_timers, uri)

    def close(self) -> None:
        """Stop every timer (the session ends)."""
        for handle in (*self._timers.values(), *self._source_timers.values()):
            handle.cancel()
        self._timers.clear()
        self._fires_at.clear()
        self._due.clear()
        self._source_timers.clear()
        self._queued.clear()

    def _fired(self, uri: str) -> None:
        now = self._clock.now()
        due = self._due.get(uri, now)
        if due > now:  # restarted since this timer was set
            self._arm(uri, due, due - now)
            return
        self._timers.pop(uri, None)
        self._due.pop(uri, None)
        self._settle(uri)

    def _overdue(self, uri: str) -> None:
        self._source_timers.pop(uri, None)
        self.if_due(uri)


def _cancel(timers: dict[str, Timer], uri: str) -> None:
    """Stop and forget ``uri``'s timer, if it has one."""
    handle = timers.pop(uri, None)
    if handle is not None:
        handle.cancel()
