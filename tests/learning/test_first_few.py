"""A request's learned fixes: the best-evidence few made first, the whole job for the menus after.

A real knowledge store; the instantiation worker is a fake whose jobs the test
answers by hand, so that which job a request waits for, and what it answers
with, is seen at each step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import Position, TextEdit, TextRange
from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.lsp.learning import fixes as fixes_module
from fixlore.lsp.learning.fixes import LearnedFixes, diag_id
from fixlore.lsp.learning.instantiation import Job
from tests.abstraction._helpers import code, diag_at, learn
from tests.core.fakes import FakeEditor
from tests.learning.test_learned_fixes_ready import E711, URI, Host, _raw

TEXT = "def other(item):\n    return item == None\n"


class FakeJobs:
    """The instantiator's interface; jobs wait until the test sets their results."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.hurried: list[Job] = []

    def submit(self, job: Job) -> None:
        self.jobs.append(job)

    def hurry(self, job: Job) -> None:
        self.hurried.append(job)

    def warm(self, *_: Any) -> None:
        pass

    def forget(self, _: str) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture
def knowledge(tmp_path: Path) -> Iterator[Knowledge]:
    with Knowledge.open(tmp_path / "k", base=False, auto_prune=False) as k:
        yield k


def _two_habits(knowledge: Knowledge, *, latest: str = "is None") -> None:
    """Two E711 fixes made by hand, `is None` three times, `is not None` once: both may fit `item == None`.

    ``latest``: the one made last (the ranking puts it first whatever its evidence).
    """
    before = code(
        """
        def check(value):
            if value == None:
                return 1
        """
    )
    habits = [("is None", 3), ("is not None", 1)]
    for after, times in sorted(habits, key=lambda habit: habit[0] == latest):
        pattern = learn("python", before, before.replace("== None", after), diag_at(before, "None", *E711))
        for _ in range(times):
            knowledge.record(Event(EventKind.MANUAL, pattern, "w", time.time()))
    knowledge.flush()


def _with_fake_jobs(knowledge: Knowledge, *, latest: str = "is None") -> tuple[LearnedFixes, FakeJobs]:
    """Two habits learned; learned fixes for :data:`TEXT` whose jobs the test answers."""
    _two_habits(knowledge, latest=latest)
    editor = FakeEditor()
    editor.open(URI, TEXT)
    fixes = LearnedFixes(Host(knowledge, editor))  # type: ignore[arg-type]
    jobs = FakeJobs()
    fixes._jobs.close()
    fixes._jobs = jobs  # type: ignore[assignment]
    return fixes, jobs


def _found(index: int, new: str, *, recalled: bool = False) -> tuple[int, tuple[TextEdit, ...], str, bool, bool]:
    edit = TextEdit(TextRange(Position(1, 16), Position(1, 18)), new)
    return index, (edit,), f"Replace with `{new}`", recalled, False


@pytest.fixture
def asked(knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LearnedFixes, FakeJobs, dict]]:
    """A request's learned fixes with two patterns that may fit and a first job of one."""
    monkeypatch.setattr(fixes_module, "ASKED_FIRST", 1)
    fixes, jobs = _with_fake_jobs(knowledge)
    try:
        yield fixes, jobs, _raw(TEXT, "None", *E711)
    finally:
        fixes.close()


async def _requested(fixes: LearnedFixes, jobs: FakeJobs, raw: dict) -> asyncio.Task[Any]:
    task = asyncio.ensure_future(fixes.get(URI, 1, raw, wait=5.0))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if len(jobs.jobs) == 2:
            return task
    raise AssertionError(f"a first job and the whole one were not both made: {jobs.jobs}")


async def test_a_fix_of_the_first_few_answers_the_request_and_the_whole_job_the_next(asked: Any) -> None:
    fixes, jobs, raw = asked
    task = await _requested(fixes, jobs, raw)
    first, whole = jobs.jobs
    assert first.asked and len(first.patterns) == 1 and len(whole.patterns) == 2
    assert [p.fingerprint for _, p, _ in first.patterns] == [whole.patterns[0][0]]  # the best evidence's
    first.result.set_result([_found(0, "is")])
    found = await asyncio.wait_for(task, 5)
    assert [f.edits[0].new_text for f in found] == ["is"]
    assert not whole.result.done()  # the request did not wait for it
    pending = fixes._cache[URI][1][diag_id(raw)]
    assert not pending.made  # not kept: the whole job's list is the one asked for again
    whole.result.set_result([_found(0, "is"), _found(1, "is not")])
    again = await fixes.get(URI, 1, raw)
    assert [f.edits[0].new_text for f in again] == ["is", "is not"]
    assert [id(f) for f in await fixes.get(URI, 1, raw)] == [id(f) for f in again]  # kept now


async def test_none_of_the_first_few_applying_the_request_waits_for_the_whole_job(asked: Any) -> None:
    fixes, jobs, raw = asked
    for first_found in ([], [_found(0, "is", recalled=True)]):  # nothing, or only a guess from recalled names
        fixes._cache.clear()
        jobs.jobs.clear()
        task = await _requested(fixes, jobs, raw)
        first, whole = jobs.jobs
        first.result.set_result(first_found)
        await asyncio.sleep(0.05)
        assert not task.done() and whole in jobs.hurried  # waiting for the whole job, hurried
        whole.result.set_result([_found(1, "is not")])
        found = await asyncio.wait_for(task, 5)
        assert [f.edits[0].new_text for f in found] == ["is not"]
        assert found[0].pattern.fingerprint == whole.patterns[1][0]


async def test_few_patterns_make_one_job(knowledge: Knowledge) -> None:
    fixes, jobs = _with_fake_jobs(knowledge)  # two patterns, fewer than ASKED_FIRST: no first job
    raw = _raw(TEXT, "None", *E711)
    task = asyncio.ensure_future(fixes.get(URI, 1, raw, wait=5.0))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if jobs.jobs:
            break
    assert len(jobs.jobs) == 1 and jobs.jobs[0].asked and len(jobs.jobs[0].patterns) == 2
    jobs.jobs[0].result.set_result([_found(0, "is")])
    assert [f.edits[0].new_text for f in await asyncio.wait_for(task, 5)] == ["is"]
    fixes.close()


async def test_the_fix_made_last_is_in_the_first_job_whatever_its_evidence(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ranking puts the fix made last for a rule first: a first job without it could answer without it."""
    monkeypatch.setattr(fixes_module, "ASKED_FIRST", 1)
    fixes, jobs = _with_fake_jobs(knowledge, latest="is not None")  # the worse evidence, made last
    task = asyncio.ensure_future(fixes.get(URI, 1, _raw(TEXT, "None", *E711), wait=5.0))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if jobs.jobs:
            break
    # the best-evidence one and the one made last: all there is, so one job
    assert len(jobs.jobs) == 1 and jobs.jobs[0].asked and len(jobs.jobs[0].patterns) == 2, jobs.jobs
    jobs.jobs[0].result.set_result([_found(0, "is"), _found(1, "is not")])
    assert [f.edits[0].new_text for f in await asyncio.wait_for(task, 5)] == ["is", "is not"]
    fixes.close()


def test_the_first_job_decides_the_menu_only_where_the_whole_one_could_not_put_another_fix_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fixes_module, "ASKED_FIRST", 2)
    # The first job holds the whole job's patterns 0 and 1 (the best evidence) and 5 (of several lines).
    pending = fixes_module._Pending(Job(URI, "python", TEXT, None, []), [], first=None, picked=(0, 1, 5))

    def fix(index: int, *, run: bool = False, recalled: bool = False) -> tuple[Any, ...]:
        return (index, (), "", recalled, run)

    leading = fixes_module._leading
    assert leading(pending, [fix(1)]) == [fix(1)]  # of the best few, and no run: the whole job's first too
    assert leading(pending, [fix(2, run=True)]) == [fix(5, run=True)]  # a run goes first: every such one is here
    assert leading(pending, [fix(0), fix(2, run=True)]) == [fix(0), fix(5, run=True)]
    assert leading(pending, [fix(2)]) is None  # pattern 5 fits, but not a run: 2-4 may apply before it
    assert leading(pending, [fix(0, recalled=True)]) is None  # a guess from recalled names: the rest may do better
    assert leading(pending, []) is None and leading(pending, None) is None


def test_the_whole_job_reuses_what_the_first_made_for_the_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from fixlore.lsp.learning import instantiation

    before = code(
        """
        def check(value):
            if value == None:
                return 1
        """
    )
    pattern = learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", *E711))
    calls: list[str] = []
    real = instantiation.instantiate

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(instantiation, "instantiate", counted)
    info = diag_at(TEXT, "None", *E711)
    first = instantiation.instantiate_all([(pattern, 2)], "python", TEXT, info)
    whole = instantiation.instantiate_all([(pattern, 2)], "python", TEXT, info)
    assert first == whole and len(first) == 1 and len(calls) == 1  # made once
    other = "".join(list(TEXT))  # the same characters, another text (another version of the document)
    assert other is not TEXT
    assert instantiation.instantiate_all([(pattern, 2)], "python", other, info) == first and len(calls) == 2
    assert instantiation._made_for[0] is other and len(instantiation._made) == 1  # the latest text's alone
