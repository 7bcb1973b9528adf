"""Learned fixes on the request path: prepared when diagnostics arrive, no wait when there is nothing to try.

A real knowledge store and the real instantiation worker; the editor is a
plain dict of documents (:class:`tests.core.fakes.FakeEditor`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import abstract_rule_action, apply_edits
from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.lsp.learning.fixes import (
    INVOKED_WAIT_S,
    PREPARE_DELAY_S,
    PREPARE_SLICE,
    REQUEST_WAIT_S,
    LearnedFixes,
    _Pending,
    diag_id,
)
from fixlore.lsp.learning.timeline import diag_info
from tests.abstraction._helpers import code, diag_at, learn
from tests.core.fakes import FakeEditor

URI = "file:///w/probe.py"
TIMEOUT_S = 60
E711 = ("Ruff", "E711", "Comparison to `None` should be `cond is None`")


class Host:
    """What :class:`LearnedFixes` reads of the learning loop's store."""

    def __init__(self, knowledge: Knowledge, server: FakeEditor) -> None:
        self.knowledge = knowledge
        self.server = server
        self.executor = ThreadPoolExecutor(max_workers=1)


@pytest.fixture
def knowledge(tmp_path: Path) -> Iterator[Knowledge]:
    with Knowledge.open(tmp_path / "k", base=False, auto_prune=False) as k:
        yield k


def _raw(text: str, needle: str, source: str, rule: str, message: str) -> dict[str, Any]:
    info = diag_at(text, needle, source, rule, message)
    rng = info.range
    return {
        "range": {
            "start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character},
        },
        "source": source,
        "code": rule,
        "message": message,
    }


def _fixes(knowledge: Knowledge, text: str) -> tuple[LearnedFixes, FakeEditor]:
    editor = FakeEditor()
    editor.open(URI, text)
    return LearnedFixes(Host(knowledge, editor)), editor  # type: ignore[arg-type]


def _learn_e711_by_hand(knowledge: Knowledge) -> None:
    before = code(
        """
        def check(value):
            if value == None:
                return 1
        """
    )
    pattern = learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", *E711))
    for _ in range(2):
        knowledge.record(Event(EventKind.MANUAL, pattern, "w", time.time()))
    knowledge.flush()


def _one_e711(knowledge: Knowledge) -> tuple[str, LearnedFixes, FakeEditor, dict[str, Any]]:
    """E711 fixed by hand before; a document with one E711 (on `None`) open at version 1: text, fixes, editor, raw."""
    _learn_e711_by_hand(knowledge)
    text = "def other(item):\n    return item == None\n"
    fixes, editor = _fixes(knowledge, text)
    return text, fixes, editor, _raw(text, "None", *E711)


@contextmanager
def _prepared(knowledge: Knowledge, text: str) -> Iterator[tuple[LearnedFixes, dict[str, Any], _Pending]]:
    """E711 fixed by hand before; ``text``'s E711 (on `None`) published as version 1: the fixes, it, its job."""
    _learn_e711_by_hand(knowledge)
    fixes, _ = _fixes(knowledge, text)
    raw = _raw(text, "None", *E711)
    try:
        fixes.prepare(URI, 1, [raw])  # a publish (or a pull's answer) of version 1
        yield fixes, raw, fixes._cache[URI][1][diag_id(raw)]
    finally:
        fixes.close()


async def test_fixes_prepared_when_diagnostics_arrive_are_the_ones_the_request_gets(knowledge: Knowledge) -> None:
    text = "def other(item):\n    return item == None\n"
    with _prepared(knowledge, text) as (fixes, raw, prepared):
        await asyncio.wrap_future(prepared.job.result)  # done before the lightbulb is asked for
        found = await fixes.get(URI, 1, raw)
        assert fixes._cache[URI][1][diag_id(raw)] is prepared  # no second job: the prepared one answered
        assert [apply_edits(text, f.edits) for f in found] == ["def other(item):\n    return item is None\n"]


async def test_a_diagnostic_with_nothing_to_try_is_answered_without_the_worker(tmp_path: Path) -> None:
    # Accepting the upstream's own fix stores its rule-level pattern, in the workspace scope
    # with its body: the knowledge lists it for the signature, but it has no shape to instantiate.
    text = "import os\n"
    raw = _raw(text, "os", "Ruff", "F401", "`os` imported but unused")
    fix = abstract_rule_action("python", diag_info(raw, text, len), "Remove unused import: `os`", "quickfix")
    root = tmp_path / "w"
    root.mkdir()
    knowledge = Knowledge.open(tmp_path / "k", workspace_root=root, workspace_scope=True, base=False, auto_prune=False)
    knowledge.record(Event(EventKind.ACCEPTED, fix, knowledge.workspace_id, time.time()))
    knowledge.flush()
    assert [s.pattern for s in knowledge.learned_fixes(fix.signature)] == [fix]  # listed, without a shape
    fixes, _ = _fixes(knowledge, text)
    try:
        fixes.prepare(URI, 1, [raw])
        assert fixes._cache[URI][1][diag_id(raw)].job.result.done()  # settled at once, no job queued
        assert await fixes.get(URI, 1, raw) == []
        assert fixes._jobs._worker.processes() == []  # the worker was never asked (nor started)
    finally:
        fixes.close()
        knowledge.close()


async def test_a_diagnostic_without_any_stored_pattern_is_answered_at_once(knowledge: Knowledge) -> None:
    text = "def f(x):\n    return x == None\n"
    raw = _raw(text, "None", *E711)
    fixes, _ = _fixes(knowledge, text)
    try:
        fixes.prepare(URI, 1, [raw])
        assert diag_id(raw) not in fixes._cache[URI][1]  # nothing prepared: nothing stored for the signature
        assert await fixes.get(URI, 1, raw) == []
        assert fixes._jobs._worker.processes() == []
    finally:
        fixes.close()


async def test_a_large_publish_is_prepared_a_slice_at_a_time_and_a_request_does_not_wait_for_it(
    knowledge: Knowledge,
) -> None:
    _learn_e711_by_hand(knowledge)
    text = "".join(f"def f{i}(item{i}):\n    return item{i} == None\n" for i in range(3 * PREPARE_SLICE))
    raws = [_raw(text, f"item{i} == None", *E711) for i in range(3 * PREPARE_SLICE)]
    for i, raw in enumerate(raws):  # the diagnostic is on `None`, as ruff puts it
        start = raw["range"]["start"]["character"] + len(f"item{i} == ")
        raw["range"]["start"]["character"], raw["range"]["end"]["character"] = start, start + 4
    fixes, _ = _fixes(knowledge, text)
    try:
        fixes.prepare(URI, 1, raws)
        assert len(fixes._cache[URI][1]) == PREPARE_SLICE  # the rest after the loop has turned
        last = raws[-1]
        found = await fixes.get(URI, 1, last)  # asked for before its slice came: prepared by the request
        assert [apply_edits(text, f.edits).count(f"item{len(raws) - 1} is None") for f in found] == [1]
        for _ in range(4):
            await asyncio.sleep(0)
        assert set(fixes._cache[URI][1]) == {diag_id(r) for r in raws}
    finally:
        fixes.close()


async def test_a_list_the_user_asked_for_waits_longer_for_a_fix_still_being_made(knowledge: Knowledge) -> None:
    # A busy machine: the worker's answer comes 0.3 s after the request. The lightbulb the
    # editor asks for as the cursor moves goes without it; the list the user asked for waits.
    text = "def other(item):\n    return item == None\n"
    with _prepared(knowledge, text) as (fixes, raw, pending):
        made = await asyncio.wrap_future(pending.job.result)
        assert made  # the pattern applies; only its timing is held back below
        for wait, expected in ((REQUEST_WAIT_S, []), (INVOKED_WAIT_S, ["def other(item):\n    return item is None\n"])):
            late: Future[Any] = Future()
            pending.job.result = late
            asyncio.get_running_loop().call_later(REQUEST_WAIT_S + 0.2, late.set_result, made)
            found = await fixes.get(URI, 1, raw, wait=wait)
            assert [apply_edits(text, f.edits) for f in found] == expected
            await asyncio.wrap_future(late)


async def test_a_request_does_not_wait_for_patterns_that_cannot_fit_the_code_at_hand(knowledge: Knowledge) -> None:
    # The stored fix rewrites `== None`; this line holds `!= None` (another habit, not learned yet).
    with _prepared(knowledge, "def other(item):\n    return item != None\n") as (fixes, raw, pending):
        assert len(pending.job.patterns) == 1  # a job was made: the signature has a stored pattern
        never: Future[Any] = Future()  # a worker that would never answer
        pending.job.result = never
        found = await asyncio.wait_for(fixes.get(URI, 1, raw, wait=3600), 10)
        assert found == [] and not never.done()  # answered without the worker's word


async def test_a_request_that_prepares_its_own_diagnostic_sends_the_worker_only_what_may_fit(
    knowledge: Knowledge,
) -> None:
    # Asked before the publish's preparation: the request makes the job itself. Where the
    # stored fix cannot fit (`!= None` here, the habit is `== None`), no job goes at all.
    _learn_e711_by_hand(knowledge)
    text = "def other(item):\n    return item != None\n"
    fixes, _ = _fixes(knowledge, text)
    raw = _raw(text, "None", *E711)
    try:
        assert await asyncio.wait_for(fixes.get(URI, 1, raw, wait=3600), TIMEOUT_S) == []
        pending = fixes._cache[URI][1][diag_id(raw)]
        assert pending.job.patterns == [] and pending.job.result.done()  # settled here, nothing to try
        assert fixes._jobs._worker.processes() == []  # the worker was never asked (nor started)
    finally:
        fixes.close()
    # Where it fits, the job carries it, and the fix comes back.
    text = "def other(item):\n    return item == None\n"
    fixes, _ = _fixes(knowledge, text)
    raw = _raw(text, "None", *E711)
    try:
        found = await asyncio.wait_for(fixes.get(URI, 1, raw, wait=TIMEOUT_S), TIMEOUT_S)
        assert [apply_edits(text, f.edits) for f in found] == ["def other(item):\n    return item is None\n"]
        assert len(fixes._cache[URI][1][diag_id(raw)].job.patterns) == 1
    finally:
        fixes.close()


async def test_a_lightbulb_asked_about_a_diagnostic_from_before_the_last_edit_does_not_wait_and_starts_its_fixes(
    knowledge: Knowledge,
) -> None:
    # Typing: the editor still has the diagnostics of version 1 while the text is at version 2.
    # The automatic request answers at once; the fixes for version 2 are made meanwhile,
    # and the next request (as the editor asks again once version 2's diagnostics come) has them.
    text, fixes, editor, raw = _one_e711(knowledge)
    try:
        fixes.prepare(URI, 1, [raw])
        editor.open(URI, text + "\n", version=2)
        started = time.perf_counter()
        assert await fixes.get(URI, 2, raw, start_if_stale=True) == []
        assert time.perf_counter() - started < REQUEST_WAIT_S  # not the automatic request's wait
        await asyncio.sleep(0)  # the loop's next turn: the request's fixes are started
        pending = fixes._cache[URI][1][diag_id(raw)]
        assert fixes._cache[URI][0] == 2
        await asyncio.wrap_future(pending.job.result)
        found = await fixes.get(URI, 2, raw, start_if_stale=True)
        assert [apply_edits(text + "\n", f.edits) for f in found] == ["def other(item):\n    return item is None\n\n"]
    finally:
        fixes.close()


async def test_the_lightbulb_asked_as_diagnostics_arrive_has_the_worker_to_itself_and_the_rest_follow(
    knowledge: Knowledge,
) -> None:
    # VS Code asks for the lightbulb at the cursor as soon as diagnostics change. Its own
    # diagnostic is prepared at once, as the only job; the publish's others come after
    # PREPARE_DELAY_S. The version counts as current at once: the automatic request is
    # not taken for one about an older text (which would answer without learned fixes).
    _learn_e711_by_hand(knowledge)
    text = "".join(f"def f{i}(item{i}):\n    return item{i} == None\n" for i in range(5))
    raws = [_raw(text, f"item{i} == None", *E711) for i in range(5)]
    for i, raw in enumerate(raws):  # the diagnostic is on `None`, as ruff puts it
        start = raw["range"]["start"]["character"] + len(f"item{i} == ")
        raw["range"]["start"]["character"], raw["range"]["end"]["character"] = start, start + 4
    fixes, _ = _fixes(knowledge, text)
    submitted: list[Any] = []
    submit = fixes._jobs.submit
    fixes._jobs.submit = lambda job: submitted.append(job.info.range.start.line) or submit(job)  # type: ignore[method-assign]
    try:
        fixes.published(URI, 1, raws)
        assert fixes._cache[URI] == (1, {}) and submitted == []  # current, nothing started yet
        asked = asyncio.ensure_future(fixes.get(URI, 1, raws[3], wait=TIMEOUT_S, start_if_stale=True))
        await asyncio.sleep(0)  # the automatic lightbulb on `item3` has started its job
        assert submitted == [7]  # its job alone (`item3 == None` is on line 7)
        found = await asyncio.wait_for(asked, TIMEOUT_S)
        assert [apply_edits(text, f.edits).count("item3 is None") for f in found] == [1]
        await asyncio.sleep(PREPARE_DELAY_S * 3)
        assert sorted(submitted) == [1, 3, 5, 7, 9]  # then the others, each once
        assert set(fixes._cache[URI][1]) == {diag_id(r) for r in raws}
    finally:
        fixes.close()


async def test_a_document_closed_before_its_delayed_preparation_starts_nothing(knowledge: Knowledge) -> None:
    _, fixes, editor, raw = _one_e711(knowledge)
    try:
        fixes.published(URI, 1, [raw])
        fixes.forget(URI)  # closed within the delay
        del editor.documents[URI]
        fixes.published(URI, 1, [raw])  # an upstream's late publish for it
        await asyncio.sleep(PREPARE_DELAY_S * 2)
        assert URI not in fixes._cache and fixes._jobs._worker.processes() == []
    finally:
        fixes.close()


def test_the_first_document_loads_the_lookup_tables_before_the_knowledge_is_open() -> None:
    # The store opens on a thread after `initialized`; the session's first document
    # usually comes before it. Ranking the upstream's actions reads the grammar and the
    # words either way: the first lightbulb loaded them on the event loop (~25 ms).
    submitted: list[tuple[Any, tuple[Any, ...]]] = []

    class Recording(ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
            submitted.append((fn, args))
            return super().submit(fn, *args, **kwargs)

    editor = FakeEditor()
    editor.open(URI, "import os\n")
    host = Host.__new__(Host)
    host.knowledge, host.server, host.executor = None, editor, Recording(max_workers=1)  # type: ignore[assignment]
    fixes = LearnedFixes(host)  # type: ignore[arg-type]
    try:
        fixes.opened(URI)
        fixes.opened(URI)  # once per language
        assert [(fn.__name__, args) for fn, args in submitted] == [("load_tables", ("python",))]
    finally:
        fixes.close()
        host.executor.shutdown(wait=True)


async def test_a_document_just_opened_goes_to_the_worker_on_the_loops_next_turn(knowledge: Knowledge) -> None:
    """didOpen hands its text over after the messages read with it (the editor's pull, sent at once, goes first)."""
    fixes, editor = _fixes(knowledge, "x = 1\n")
    warmed: list[str] = []
    fixes._jobs.warm = lambda uri, language, text: warmed.append(uri)  # type: ignore[method-assign]
    try:
        fixes.opened(URI)
        assert warmed == []  # not in the didOpen's own turn
        await asyncio.sleep(0)
        assert warmed == [URI]
        # A document closed, or its text changed, before that turn: nothing goes.
        other = "file:///w/other.py"
        editor.open(other, "y = 2\n")
        fixes.opened(other)
        editor.open(other, "y = 3\n")
        await asyncio.sleep(0)
        assert warmed == [URI]
    finally:
        fixes.close()
