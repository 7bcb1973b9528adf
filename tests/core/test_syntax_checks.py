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
