"""A file just opened settles once the editor's requests about it quiet down (``InFlight.quiet``)."""

from __future__ import annotations

import asyncio
from typing import Any

from fixlore.lsp import in_flight
from fixlore.lsp.in_flight import InFlight
from fixlore.lsp.learning.loop import LearningLoop

from .test_settling import BEFORE, E711, FIXED, PAUSE_S, URI, Session


async def test_a_file_just_opened_is_checked_once_the_editors_requests_about_it_quiet_down(
    monkeypatch: Any,
) -> None:
    """Its first lightbulb, the menu, the lightbulb as the cursor moves: the baseline's parse waits for them."""
    monkeypatch.setattr(in_flight, "QUIET_S", 0.05)
    checked: list[str] = []

    async def check(language: str, text: str) -> list[Any]:
        checked.append(text)
        return []

    s = Session()
    gate = InFlight()
    s.loop = LearningLoop(s.editor, s.hub, clock=s.clock, extractor=s.extractor, syntax=check, in_flight=gate)  # type: ignore[arg-type]
    s.hub.follower = s.loop
    s.editor.open(URI, BEFORE)
    s.loop.did_open(URI, {})
    with gate.answering():  # the first lightbulb, asked as the diagnostics come
        s.hub.set(URI, "ruff", 1, [E711])
        await asyncio.sleep(0.01)
    for _ in range(3):  # more requests, 20 ms apart
        await asyncio.sleep(0.02)
        assert checked == []
        with gate.answering():
            pass
    for _ in range(100):
        if checked:
            break
        await asyncio.sleep(0.01)
    assert checked == [BEFORE]
    await s.type(FIXED, [])
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [("python", BEFORE, FIXED)]  # the baseline still came first
    s.close()
