"""Settling and manual-fix detection in the learning loop, driven by a fake clock (no process, no store)."""

from __future__ import annotations

import asyncio
from typing import Any

from fixlore.lsp.hub import DiagnosticsHub
from fixlore.lsp.learning.loop import SOURCE_WAIT_S, LearningLoop, SyntaxCheck

from .fakes import FakeClock, FakeEditor, settle_tasks

URI = "file:///w/probe.py"
BEFORE = "def check(total):\n    if total == None:\n        return 0\n    return total\n"
FIXED = "def check(total):\n    if total is None:\n        return 0\n    return total\n"
BROKEN = "def check(total):\n    if total is None\n        return 0\n    return total\n"
E711 = {
    "range": {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 20}},
    "source": "Ruff",
    "code": "E711",
    "message": "Comparison to `None` should be `cond is None`",
}
PAUSE_S = 1.0


class FakeExtractor:
    """Remembers what it was asked to learn from; learns nothing (that is the abstraction's job)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, str]] = []

    async def extract(self, language: str, before: str, after: str, info: Any) -> Any:
        self.asked.append((language, before, after))
        return None

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass


class Session:
    def __init__(self, syntax: SyntaxCheck | None = None) -> None:
        self.editor = FakeEditor(manual_fix_pause_ms=int(PAUSE_S * 1000))
        self.clock = FakeClock()
        self.extractor = FakeExtractor()
        self.hub = DiagnosticsHub(self.editor)  # type: ignore[arg-type]
        self.loop = LearningLoop(
            self.editor,  # type: ignore[arg-type]
            self.hub,
            clock=self.clock,
            extractor=self.extractor,  # type: ignore[arg-type]
            syntax=syntax,
        )
        self.hub.follower = self.loop

    async def open(self, text: str, diagnostics: list[dict[str, Any]]) -> None:
        self.editor.open(URI, text)
        self.loop.did_open(URI, {})
        self.hub.set(URI, "ruff", 1, diagnostics)  # the first publish is the baseline at once
        await settle_tasks(self.editor)

    async def type(self, text: str, diagnostics: list[dict[str, Any]]) -> None:
        self.editor.edit(URI, text)
        doc = self.editor.documents[URI]
        self.loop.did_change(
            URI, {"textDocument": {"uri": URI, "version": doc.version}, "contentChanges": [{"text": text}]}
        )
        self.hub.set(URI, "ruff", doc.version, diagnostics)
        await settle_tasks(self.editor)

    async def pause(self, seconds: float) -> None:
        self.clock.advance(seconds)
        await settle_tasks(self.editor)

    def close(self) -> None:
        self.loop.shutdown()


async def test_a_diagnostic_gone_after_the_pause_is_a_fix_by_hand() -> None:
    s = Session()
    await s.open(BEFORE, [E711])
    await s.type(FIXED, [])
    assert s.extractor.asked == []  # the user has not paused yet
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [("python", BEFORE, FIXED)]
    assert s.loop.settles == 2
    s.close()


async def test_typing_on_restarts_the_pause() -> None:
    s = Session()
    await s.open(BEFORE, [E711])
    await s.type(BROKEN, [])
    await s.pause(PAUSE_S * 0.6)
    await s.type(FIXED, [])
    await s.pause(PAUSE_S * 0.6)
    assert s.extractor.asked == []  # 1.2 s since the first keystroke, 0.6 since the last
    await s.pause(PAUSE_S * 0.4)
    assert s.extractor.asked == [("python", BEFORE, FIXED)]
    s.close()


async def test_a_state_that_does_not_parse_teaches_nothing() -> None:
    s = Session()
    await s.open(BEFORE, [E711])
    await s.type(BROKEN, [])
    await s.pause(PAUSE_S)
    assert s.extractor.asked == []
    s.close()


async def test_a_source_that_has_not_reported_is_waited_for_not_taken_as_fixed() -> None:
    s = Session()
    await s.open(BEFORE, [E711])
    s.editor.edit(URI, FIXED)
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": FIXED}]})
    s.hub.set(URI, "other", 2, [])  # another source reports for version 2; ruff (with E711) has not
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [] and s.loop.settles == 1
    await s.pause(SOURCE_WAIT_S)  # it never does: the document settles without it, E711 neither fixed nor new
    assert s.extractor.asked == [] and s.loop.settles == 2
    s.close()


async def test_taking_an_action_never_turns_its_twin_down_and_turns_down_the_rest() -> None:
    """A learned fix and the upstream action that make the very same edit here: taking one is not refusing the other.

    Nor is it taking it: where the two differ (a removal of every unused name, of one), this choice says nothing.
    """
    from fixlore.abstraction import DiagnosticInfo, Position, TextRange
    from fixlore.knowledge import EventKind
    from fixlore.lsp.actions.assemble import action_pattern

    info = DiagnosticInfo("Ruff", "E711", E711["message"], TextRange(Position(1, 7), Position(1, 20)))
    chosen, twin, other = (action_pattern("python", info, t, "quickfix") for t in ("Use `is`", "Same edit", "Other"))
    s = Session()
    await s.open(BEFORE, [E711])
    recorded: list[tuple[EventKind, str]] = []
    s.loop.store.record = lambda kind, pattern: recorded.append((kind, pattern.fingerprint))  # type: ignore[method-assign]
    s.loop.accepted(chosen, (chosen, twin, other), True, URI, 1, E711, BEFORE, (twin,))
    assert sorted(recorded) == sorted(
        [
            (EventKind.ACCEPTED, chosen.fingerprint),
            (EventKind.REJECTED, other.fingerprint),
        ]
    )
    s.close()


async def test_a_fix_by_hand_fixlore_cannot_learn_still_turns_the_offered_actions_down() -> None:
    """The user imported a name fixlore may not keep, say: the fixes they were shown were still not taken."""
    from fixlore.abstraction import DiagnosticInfo, Position, TextRange
    from fixlore.knowledge import EventKind
    from fixlore.lsp.actions.assemble import action_pattern

    info = DiagnosticInfo("Ruff", "E711", E711["message"], TextRange(Position(1, 7), Position(1, 20)))
    offered = action_pattern("python", info, "Use `is`", "quickfix")
    s = Session()
    await s.open(BEFORE, [E711])
    recorded: list[tuple[EventKind, str]] = []
    s.loop.store.record = lambda kind, pattern: recorded.append((kind, pattern.fingerprint))  # type: ignore[method-assign]
    s.loop.saw_offers(URI, 1, [(E711, (offered,), {})])
    await s.type(FIXED, [])
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [("python", BEFORE, FIXED)]  # the fake extractor learns nothing from it
    assert recorded == [(EventKind.REJECTED, offered.fingerprint)]
    s.close()


async def test_offers_are_turned_down_at_the_settle_not_after_a_slow_extraction_and_a_close() -> None:
    """The editor closes the file while the fix is still being abstracted: the offers it forgets were turned down."""
    import asyncio

    from fixlore.abstraction import DiagnosticInfo, Position, TextRange
    from fixlore.knowledge import EventKind
    from fixlore.lsp.actions.assemble import action_pattern

    class SlowExtractor(FakeExtractor):
        def __init__(self) -> None:
            super().__init__()
            self.release = asyncio.Event()

        async def extract(self, language: str, before: str, after: str, info: Any) -> Any:
            self.asked.append((language, before, after))
            await self.release.wait()
            return None

    info = DiagnosticInfo("Ruff", "E711", E711["message"], TextRange(Position(1, 7), Position(1, 20)))
    offered = action_pattern("python", info, "Use `is`", "quickfix")
    s = Session()
    s.extractor = SlowExtractor()
    s.loop.extractor = s.extractor  # type: ignore[assignment]
    await s.open(BEFORE, [E711])
    recorded: list[tuple[EventKind, str]] = []
    s.loop.store.record = lambda kind, pattern: recorded.append((kind, pattern.fingerprint))  # type: ignore[method-assign]
    s.loop.saw_offers(URI, 1, [(E711, (offered,), {})])
    await s.type(FIXED, [])
    s.clock.advance(PAUSE_S)
    for _ in range(50):  # the settle runs; its extraction waits (settle_tasks would wait for it)
        if s.extractor.asked:
            break
        await asyncio.sleep(0.01)
    assert s.extractor.asked == [("python", BEFORE, FIXED)]  # extraction under way
    s.loop.did_close(URI, {})
    s.extractor.release.set()
    await settle_tasks(s.editor)
    assert recorded == [(EventKind.REJECTED, offered.fingerprint)]
    s.close()


async def test_a_fix_saved_and_closed_while_its_settle_parses_is_learned_and_turns_the_offers_down() -> None:
    """Fix, save, close at once: the close comes while the save's settle still checks the syntax."""
    import asyncio
    from collections.abc import Collection

    from fixlore.abstraction import DiagnosticInfo, Position, TextRange
    from fixlore.knowledge import EventKind
    from fixlore.lsp.actions.assemble import action_pattern

    release = asyncio.Event()
    checking: list[str] = []

    async def slow_syntax(language: str, text: str) -> Collection[object]:
        checking.append(text)
        if text == FIXED:
            await release.wait()
        return ()

    info = DiagnosticInfo("Ruff", "E711", E711["message"], TextRange(Position(1, 7), Position(1, 20)))
    offered = action_pattern("python", info, "Use `is`", "quickfix")
    s = Session()
    s.loop = LearningLoop(s.editor, s.hub, clock=s.clock, extractor=s.extractor, syntax=slow_syntax)  # type: ignore[arg-type]
    s.hub.follower = s.loop
    await s.open(BEFORE, [E711])
    recorded: list[tuple[EventKind, str]] = []
    s.loop.store.record = lambda kind, pattern: recorded.append((kind, pattern.fingerprint))  # type: ignore[method-assign]
    s.loop.saw_offers(URI, 1, [(E711, (offered,), {})])
    await s.type(FIXED, [])
    s.loop.did_save(URI, {})
    s.clock.advance(0)  # a save settles at once
    for _ in range(50):  # the save's settle starts and waits in the syntax check
        if FIXED in checking:
            break
        await asyncio.sleep(0.01)
    assert FIXED in checking and s.extractor.asked == []
    s.loop.did_close(URI, {})
    s.editor.documents.pop(URI)  # the editor has closed it too
    release.set()
    await settle_tasks(s.editor)
    assert s.extractor.asked == [("python", BEFORE, FIXED)]  # the fix is learned from
    assert recorded == [(EventKind.REJECTED, offered.fingerprint)]  # the offer it replaced, turned down
    # then forgotten, as a close does
    assert URI not in s.loop._offers._by_uri and URI not in s.loop.verification.watches


UNDEFINED = {
    "range": {"start": {"line": 3, "character": 11}, "end": {"line": 3, "character": 13}},
    "source": "Ruff",
    "code": "F821",
    "message": "Undefined name `os`",
}
TWO_ISSUES = BEFORE.replace("return total", "return os.sep")
ONE_FIXED = TWO_ISSUES.replace("== None", "is None")
BOTH_FIXED = "import os\n" + ONE_FIXED


async def test_a_state_due_while_another_settles_is_settled_after_it_even_if_the_user_types_on() -> None:
    """An accepted action's state is due while an earlier settle is still parsing; the user fixes the next thing.

    The action's state is settled after the running one, so the fix by hand is
    learned from it alone (not from a diff with the action's edit in it, which
    the abstraction cannot read as a fix). Seen on a loaded machine: the
    earlier settle still parsing when the action's diagnostics came in.
    """
    from fixlore.lsp.actions.assemble import action_pattern

    gate = asyncio.Event()
    gate.set()

    async def slow_check(language: str, text: str) -> list[object]:
        await gate.wait()
        return []

    s = Session(syntax=slow_check)
    await s.open(TWO_ISSUES, [E711, UNDEFINED])
    gate.clear()
    s.loop.did_save(URI, {})
    s.clock.advance(0.0)  # a settle of the text as opened starts and parses on
    await asyncio.sleep(0)
    s.clock.advance(0.05)
    s.editor.edit(URI, ONE_FIXED)  # the action's edit, applied by the editor
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": ONE_FIXED}]})
    pattern = action_pattern("python", diag_info_of(E711, TWO_ISSUES), "Use `is`", "quickfix")
    s.loop.accepted(pattern, (pattern,), True, URI, 1, E711, TWO_ISSUES)
    s.hub.set(URI, "ruff", 2, [UNDEFINED])
    s.clock.advance(0.0)  # the action's state is due now
    s.editor.edit(URI, BOTH_FIXED)  # the user types the next fix at once
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 3}, "contentChanges": [{"text": BOTH_FIXED}]})
    s.hub.set(URI, "ruff", 3, [])
    gate.set()
    await settle_tasks(s.editor)
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [("python", ONE_FIXED, BOTH_FIXED)]
    assert s.loop.settles == 4  # as opened, as saved, the action's state, the fix by hand
    s.close()


def diag_info_of(diag: dict[str, Any], text: str) -> Any:
    from fixlore.lsp.learning.timeline import diag_info

    return diag_info(diag, text, len)


def _dies_the_first_time(marker: str, language: str, text: str) -> list[Any]:
    """In a worker process: the first call kills its own process (as the OOM killer would), later ones check."""
    import os
    import signal
    from pathlib import Path

    from fixlore.abstraction import syntax_problems

    if not Path(marker).exists():
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return syntax_problems(language, text)


async def test_a_settle_whose_syntax_check_lost_its_process_checks_again_and_settles(tmp_path: Any) -> None:
    from fixlore.lsp.workers import WorkerProcess

    worker = WorkerProcess("test-syntax", processes=None)
    marker = tmp_path / "died"

    async def check(language: str, text: str) -> list[Any]:
        return await asyncio.wrap_future(worker.submit(_dies_the_first_time, str(marker), language, text))

    s = Session(syntax=check)
    try:
        await s.open(BEFORE, [E711])
        marker.unlink()  # the text as opened was checked (the child died once there): now the settle's check
        await s.type(FIXED, [])
        await s.pause(PAUSE_S)
        assert marker.exists()  # the first check's process died under it
        assert s.extractor.asked == [("python", BEFORE, FIXED)]
    finally:
        worker.close()
        s.close()


UNUSED = {
    "range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 10}},
    "source": "Ruff",
    "code": "F401",
    "message": "`sys` imported but unused",
}


def _down(diag: dict[str, Any], lines: int) -> dict[str, Any]:
    start, end = diag["range"]["start"], diag["range"]["end"]
    return {
        **diag,
        "range": {
            "start": {"line": start["line"] + lines, "character": start["character"]},
            "end": {"line": end["line"] + lines, "character": end["character"]},
        },
    }


async def test_an_action_judged_after_the_pause_does_not_put_off_the_next_actions_state() -> None:
    """Two actions taken one after the other, then a fix by hand at once.

    The first action's verdict waits for the pause; the settle that says so
    must not push back the settle of the second action's state, already due:
    the user's next edit would make it never settle, and the fix by hand would
    be compared with a text that lacks the second action's edit.
    """
    from fixlore.lsp.actions.assemble import action_pattern

    gate = asyncio.Event()
    gate.set()

    async def slow_check(language: str, text: str) -> list[object]:
        await gate.wait()
        return []

    three = "import sys\n" + TWO_ISSUES
    s = Session(syntax=slow_check)
    await s.open(three, [UNUSED, _down(E711, 1), _down(UNDEFINED, 1)])
    gate.clear()
    first = action_pattern("python", diag_info_of(UNUSED, three), "Remove import", "quickfix")
    s.editor.edit(URI, TWO_ISSUES)
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": TWO_ISSUES}]})
    s.loop.accepted(first, (first,), True, URI, 1, UNUSED, three)
    s.hub.set(URI, "ruff", 2, [E711, UNDEFINED])
    s.clock.advance(0.0)  # the first action's state settles, and parses on
    await asyncio.sleep(0)
    s.clock.advance(0.05)
    second = action_pattern("python", diag_info_of(E711, TWO_ISSUES), "Use `is`", "quickfix")
    s.editor.edit(URI, ONE_FIXED)
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 3}, "contentChanges": [{"text": ONE_FIXED}]})
    s.loop.accepted(second, (second,), True, URI, 2, E711, TWO_ISSUES)
    s.clock.advance(0.0)  # wanted at once; its diagnostics are not in yet
    gate.set()
    await settle_tasks(s.editor)  # the first action: its diagnostic is gone, its verdict waits for the pause
    s.hub.set(URI, "ruff", 3, [UNDEFINED])  # the second action's state is due
    await settle_tasks(s.editor)
    s.editor.edit(URI, BOTH_FIXED)  # the fix by hand, at once
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 4}, "contentChanges": [{"text": BOTH_FIXED}]})
    s.hub.set(URI, "ruff", 4, [])
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [("python", ONE_FIXED, BOTH_FIXED)]
    s.close()


async def test_a_learned_fix_seen_and_fixed_another_way_by_hand_is_turned_down_but_not_when_typed_as_it_is() -> None:
    """A learned fix in the list the user saw is turned down by a different fix by hand, like the tool's actions."""
    from fixlore.abstraction import DiagnosticInfo, Position, TextRange
    from fixlore.knowledge import EventKind
    from fixlore.lsp.learning.timeline import text_digest
    from tests.abstraction._helpers import learn

    info = DiagnosticInfo("Ruff", "E711", E711["message"], TextRange(Position(1, 7), Position(1, 20)))
    learned = learn("python", BEFORE, FIXED, info)  # `total == None` -> `total is None`, a shape
    assert learned.action is None and learned.shape is not None
    other = BEFORE.replace("total == None", "not total")
    for typed, expected in ((other, [(EventKind.REJECTED, learned.fingerprint)]), (FIXED, [])):
        s = Session()
        await s.open(BEFORE, [E711])
        recorded: list[tuple[EventKind, str]] = []
        s.loop.store.record = lambda kind, pattern, out=recorded: out.append((kind, pattern.fingerprint))  # type: ignore[method-assign,misc]
        s.loop.saw_offers(URI, 1, [(E711, (learned,), {learned.fingerprint: text_digest(FIXED)})])
        await s.type(typed, [])
        await s.pause(PAUSE_S)
        assert s.extractor.asked == [("python", BEFORE, typed)]
        assert recorded == expected
        s.close()


async def test_what_an_accepted_action_fixed_beside_its_own_diagnostic_is_neither_a_fix_by_hand_nor_a_refusal() -> None:
    """ruff's "Remove unused import" for `a` removes the statement, `b` with it ("Disable" a line's every Q000).

    `b`'s diagnostic vanishes by the tool's edit: learning it as the user's hand fix
    gave the tool's edit made-up hand-fix evidence as a learned fix of its own, and
    counted the user's choice as turning down what `b`'s list offered. A diagnostic
    elsewhere, fixed by hand meanwhile, is still the user's.
    """
    from fixlore.abstraction import DiagnosticInfo, Position, TextRange
    from fixlore.knowledge import EventKind
    from fixlore.lsp.actions.assemble import action_pattern

    gap = "\n" * 8
    before = f"from m import a, b\n{gap}def f(x):\n    return x == None\n"
    removed = f"{gap}def f(x):\n    return x == None\n"
    fixed = f"{gap}def f(x):\n    return x is None\n"

    def unused(name: str, start: int) -> dict[str, Any]:
        return {
            "range": {"start": {"line": 0, "character": start}, "end": {"line": 0, "character": start + 1}},
            "source": "Ruff",
            "code": "F401",
            "message": f"`m.{name}` imported but unused",
        }

    first, second, e711 = unused("a", 14), unused("b", 17), _down(E711, 9)
    info = DiagnosticInfo("Ruff", "F401", first["message"], TextRange(Position(0, 14), Position(0, 15)))
    remove = action_pattern("python", info, "Remove unused import", "quickfix")
    s = Session()
    await s.open(before, [first, second, e711])
    recorded: list[tuple[EventKind, str]] = []

    def record(kind: EventKind, pattern: Any) -> None:
        recorded.append((kind, pattern.fingerprint))

    s.loop.store.record = record  # type: ignore[method-assign]
    s.loop.saw_offers(URI, 1, [(second, (remove,), {})])  # the user had seen `b`'s list too
    s.editor.edit(URI, removed)  # the editor applies the action's edit, then runs its command
    s.loop.did_change(URI, {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": removed}]})
    s.loop.accepted(remove, (remove,), True, URI, 1, first, before)
    s.hub.set(URI, "ruff", 2, [_down(E711, 8)])
    await s.pause(PAUSE_S)
    await s.type(fixed, [])  # then fixes the E711 by hand
    await s.pause(PAUSE_S)
    assert s.extractor.asked == [("python", removed, fixed)]  # the E711 only: one hand fix
    assert recorded == [(EventKind.ACCEPTED, remove.fingerprint), (EventKind.SUCCEEDED, remove.fingerprint)]
    s.close()
