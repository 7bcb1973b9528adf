"""Work nobody waits for steps aside while a code action is answered (``fixlore.lsp.in_flight``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from fixlore.lsp import in_flight
from fixlore.lsp.actions.code_actions import CodeActions
from fixlore.lsp.in_flight import InFlight

from .fakes import FakeEditor
from .test_code_actions import DIAG, REMOVE, TEXT, URI, FakeLearning, FakeUpstreams, request


async def test_work_runs_at_once_when_nothing_is_in_flight() -> None:
    gate, ran = InFlight(), []
    gate.after(ran.append, "now")
    await gate.wait()
    assert ran == ["now"] and not gate.busy


async def test_work_waits_for_the_last_request_in_flight_and_runs_after_its_answer() -> None:
    gate, ran = InFlight(), []
    with gate.answering():
        with gate.answering():
            gate.after(ran.append, "deferred")
            waiter = asyncio.ensure_future(gate.wait())
            await asyncio.sleep(0)
            assert gate.busy and ran == [] and not waiter.done()
        await asyncio.sleep(0)
        assert ran == [] and not waiter.done()  # one request still in flight
        ran.append("answer written")  # what the handler does before it returns
    assert ran == ["answer written"]  # the work comes on the loop's next turn, after the answer
    await asyncio.wait_for(waiter, 1)
    await asyncio.sleep(0)
    assert ran == ["answer written", "deferred"]


async def test_a_request_that_stays_in_flight_holds_work_back_for_a_bounded_time() -> None:
    gate, ran = InFlight(), []
    began = time.monotonic()
    with gate.answering():
        gate.after(ran.append, "late")
        await asyncio.wait_for(gate.wait(), 1)
        waited = time.monotonic() - began
        await asyncio.sleep(0)
        assert ran == ["late"]  # released by the time limit, the request still in flight
    assert in_flight.MAX_WAIT_S * 0.8 <= waited < 0.5


class SlowAnswers:
    """An upstream whose code actions come when ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def answers(self) -> list[tuple[str, dict[str, Any]]]:
        await self.release.wait()
        return [("python:ruff", REMOVE)]

    def drop(self) -> None:
        pass


class SlowUpstreams(FakeUpstreams):
    def __init__(self) -> None:
        super().__init__([REMOVE])
        self.pending = SlowAnswers()

    def start_code_actions(self, params: Any) -> Any:
        return self.pending


async def test_a_pull_answer_reaches_the_hub_after_the_code_action_asked_meanwhile() -> None:
    editor = FakeEditor()
    editor.open(URI, TEXT)
    gate, upstreams, learning, order = InFlight(), SlowUpstreams(), FakeLearning(), []
    actions = CodeActions(editor, upstreams, learning, learning, gate)  # type: ignore[arg-type]
    task = asyncio.ensure_future(actions.code_action(request(1)))
    await asyncio.sleep(0)
    assert gate.busy
    gate.after(order.append, "hub told")  # what the diagnostics bridge does when a pull's answer lands
    await asyncio.sleep(0.01)
    assert order == []
    upstreams.pending.release.set()
    answer = await task
    order.append("answered")
    assert answer and answer[0]["title"] == REMOVE["title"] and answer[0]["diagnostics"] == [DIAG]
    await asyncio.sleep(0)
    assert order == ["answered", "hub told"] and not gate.busy


async def test_requests_back_to_back_keep_no_released_waiter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(in_flight, "MAX_WAIT_S", 0.001)
    gate = InFlight()
    with gate.answering():
        for _ in range(50):
            await gate.wait()  # each released by the time limit, the request still in flight
        assert len(gate._waiting) == 1


async def test_quiet_waits_until_no_request_came_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(in_flight, "QUIET_S", 0.05)
    gate = InFlight()
    began = time.monotonic()
    await asyncio.wait_for(gate.quiet(1.0), 1)  # nothing asked yet: quiet at once
    assert time.monotonic() - began < 0.04
    waiter = asyncio.ensure_future(gate.quiet(1.0))
    last = began
    for _ in range(4):  # a burst: a request every 30 ms, each answered at once
        with gate.answering():
            pass
        last = time.monotonic()
        await asyncio.sleep(0.03)
        assert not waiter.done()
    await asyncio.wait_for(waiter, 1)
    assert time.monotonic() - last >= 0.05 * 0.9  # quiet for that long after the last answer


async def test_quiet_gives_up_after_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(in_flight, "QUIET_S", 0.2)
    gate = InFlight()
    waiter = asyncio.ensure_future(gate.quiet(0.1))
    began = time.monotonic()
    while not waiter.done():
        with gate.answering():
            pass
        await asyncio.sleep(0.01)
    assert 0.08 <= time.monotonic() - began < 0.5
