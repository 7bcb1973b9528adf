"""The names a hand fix brought in are remembered for the session, unless the fix brought an error in.

Driven like the settling tests (fake clock, fake editor, no process); the
extractor answers as if the fix had brought in a name of the project.
"""

from __future__ import annotations

from typing import Any

from fixlore.abstraction import Extracted
from tests.abstraction._helpers import diag_at, learn

from .fakes import settle_tasks
from .test_settling import BEFORE, E711, FIXED, PAUSE_S, FakeExtractor, Session

E711_RULE = ("Ruff", "E711", "Comparison to `None` should be `cond is None`")


class BringingExtractor(FakeExtractor):
    """Learns E711's fix as if it had brought in a name of the project."""

    async def extract(self, language: str, before: str, after: str, info: Any) -> Any:
        await super().extract(language, before, after, info)
        pattern = learn("python", BEFORE, FIXED, diag_at(BEFORE, "total == None", *E711_RULE))
        return Extracted(pattern, brought=(("$9", "zz_helper"),))


async def test_the_names_a_fix_brought_in_are_remembered_unless_it_brought_an_error_in() -> None:
    near = {**E711, "code": "F821", "message": "Undefined name `zz_helper`"}
    for after_fix, remembered in (([], 1), ([near], 0)):
        s = Session()
        s.extractor = s.loop.extractor = BringingExtractor()  # type: ignore[assignment]
        await s.open(BEFORE, [E711])
        await s.type(FIXED, after_fix)
        await s.pause(PAUSE_S)
        await settle_tasks(s.editor)
        assert s.loop.fixes_learned == 1
        assert len(s.loop.fixes.recall) == remembered
        s.close()
