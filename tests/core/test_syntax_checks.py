"""Syntax checks: one per text however many ask, and a file of any size off the server's GIL.

The diagnostics' check (on open and after edits) and the learning loop's settle
ask about the same text; both parsed it, on threads, right when an editor asks
for the lightbulb. Real checks, a real child process.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

from fixlore.lsp.hub import PROCESS_CHARS, DiagnosticsHub, SyntaxChecker

from .fakes import FakeEditor


def _checker() -> SyntaxChecker:
    editor = FakeEditor()
    return SyntaxChecker(editor, DiagnosticsHub(editor), ThreadPoolExecutor(max_workers=1))  # type: ignore[arg-type]


def _module(chars: int, *, broken: bool = False) -> str:
    body = "".join(f"def f{i}(a, b):\n    return a + b * {i}\n\n" for i in range(chars // 30 + 1))
    return body + ("def tail(:\n" if broken else "")


async def test_the_same_text_is_checked_once_for_every_asker() -> None:
    checker = _checker()
    try:
        text = _module(200, broken=True)
        first, second = await asyncio.gather(checker.problems("python", text), checker.problems("python", text))
        assert first, "the broken definition is a problem"
        assert first is second  # one check answered both
        assert await checker.problems("python", text) is first  # and a later asker (the settle)
        other = await checker.problems("python", text.replace("def tail(:\n", ""))
        assert other == [] and other is not first
    finally:
        checker.close()


async def test_a_module_of_a_few_kilobytes_is_checked_in_the_child_process() -> None:
    checker = _checker()
    try:
        text = _module(PROCESS_CHARS + 100, broken=True)
        # The first one starts the child from a thread of its own (a spawn would hold the loop).
        problems = await checker.problems("python", text)
        assert [p.range.start.line for p in problems] == [text.count("\n") - 1]
        children = checker._process.processes()
        assert children and all(p.pid != os.getpid() for p in children)
        fixed = text.replace("def tail(:\n", "def tail():\n    pass\n")
        assert await checker.problems("python", fixed) == []
        assert await checker.problems("python", text + "x = (\n") != []
    finally:
        checker.close()


async def test_the_learning_loops_check_runs_in_a_child_that_steps_back() -> None:
    """A settle's check of a large text (the baseline of a file just opened) yields the CPU to the requests'."""
    checker = _checker()
    try:
        text = _module(PROCESS_CHARS + 100, broken=True)
        problems = await checker.problems_in_background("python", text)
        assert [p.range.start.line for p in problems] == [text.count("\n") - 1]
        children = checker._background.processes()
        assert children and all(p.pid != os.getpid() for p in children)
        assert not checker._process.processes()  # the diagnostics' child was not started for it
        if hasattr(os, "getpriority"):
            ours = os.getpriority(os.PRIO_PROCESS, 0)
            assert all(os.getpriority(os.PRIO_PROCESS, p.pid) > ours for p in children if p.pid)
        # The diagnostics' own check of that text reuses the finished answer ...
        assert await checker.problems("python", text) is problems
        assert not checker._process.processes()
        # ... and the settle reuses theirs.
        other = text + "x = (\n"
        mine = await checker.problems("python", other)
        assert await checker.problems_in_background("python", other) is mine
    finally:
        checker.close()


async def test_the_diagnostics_do_not_wait_for_a_check_running_in_the_background() -> None:
    checker = _checker()
    try:
        text = _module(PROCESS_CHARS + 100, broken=True)
        behind = asyncio.ensure_future(checker.problems_in_background("python", text))
        await asyncio.sleep(0)  # the background check is under way
        ahead = await checker.problems("python", text)
        assert ahead == await behind
        assert checker._process.processes(), "the diagnostics' check ran in the diagnostics' child"
    finally:
        checker.close()
