"""The settle schedule's pause: restarted by every keystroke without a timer made and cancelled for each."""

from __future__ import annotations

from typing import Any

import pytest

from fixlore.lsp.learning.schedule import SettleSchedule
from tests.core.fakes import FakeClock

URI = "file:///a.py"
PAUSE = 2.5
STEP = 0.01


class CountingClock(FakeClock):
    """The fake clock, counting the timers set on it."""

    def __init__(self) -> None:
        super().__init__()
        self.made = 0

    def call_later(self, delay: float, callback: Any, *args: Any) -> Any:
        self.made += 1
        return super().call_later(delay, callback, *args)

    def tick(self, seconds: float) -> None:
        """Move on in small steps, so a timer goes off near its time."""
        for _ in range(round(seconds / STEP)):
            self.advance(STEP)


def schedule() -> tuple[CountingClock, SettleSchedule[object], list[float]]:
    clock = CountingClock()
    settled: list[float] = []
    return clock, SettleSchedule(clock, lambda uri: settled.append(clock.now())), settled


def test_typing_on_puts_the_settle_off_to_a_pause_after_the_last_keystroke_with_two_timers() -> None:
    clock, plan, settled = schedule()
    for _ in range(50):  # a keystroke every 0.05 s
        last = clock.now()
        plan.want(URI, delay=PAUSE)
        clock.tick(0.05)
    clock.tick(PAUSE - 0.1)
    assert settled == []  # 2.45 s since the last keystroke
    clock.tick(0.1)
    assert settled == [pytest.approx(last + PAUSE, abs=STEP * 1.5)]
    clock.tick(PAUSE * 2)
    assert len(settled) == 1  # once
    # the first timer, and one more for the rest of the pause when it went off early; not one a keystroke
    assert clock.made == 2


def test_a_shorter_pause_asked_later_is_not_held_back_by_the_longer_one() -> None:
    clock, plan, settled = schedule()
    plan.want(URI, delay=PAUSE)
    clock.tick(0.5)
    plan.want(URI, delay=0.0)  # an accepted action's edit arrived: settle at once
    clock.advance(0.0)
    assert settled == [clock.now()]
    clock.tick(PAUSE * 2)
    assert len(settled) == 1


def test_settle_now_and_forget_stop_the_pause() -> None:
    clock, plan, settled = schedule()
    plan.want(URI, delay=PAUSE)
    plan.want_now(URI)
    plan.if_due(URI)
    assert settled == [clock.now()]
    clock.tick(PAUSE * 2)
    assert len(settled) == 1  # its timer was stopped
    plan.want(URI, delay=PAUSE)
    plan.forget(URI)
    clock.tick(PAUSE * 2)
    assert len(settled) == 1
    plan.want(URI, delay=PAUSE)  # after a forget the pause starts afresh
    clock.tick(PAUSE + STEP)
    assert len(settled) == 2
