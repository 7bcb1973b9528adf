"""Learned fixes instantiated off the event loop: right answers, a request's made at once, a dead worker replaced."""

from __future__ import annotations

import os
import signal

import pytest

from fixlore.abstraction import apply_edits, parsed
from fixlore.lsp.learning.instantiation import Found, Instantiator, Job
from tests.abstraction._helpers import code, diag_at, learn

E711 = ("Ruff", "E711", "Comparison to `None` should be `cond is None`")
TIMEOUT_S = 60


def _pattern():  # type: ignore[no-untyped-def]
    before = code(
        """
        def check(value):
            if value == None:
                return 1
        """
    )
    return learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", *E711))


def _job(pattern, uri: str = "file:///w/a.py", name: str = "item") -> Job:  # type: ignore[no-untyped-def]
    text = f"def other({name}):\n    return {name} == None\n"
    return Job(uri, "python", text, diag_at(text, "None", *E711), [("fp-e711", pattern, 2)])


def _applied(job: Job, found: list[Found]) -> list[str]:
    return [apply_edits(job.text, edits) for _, edits, *_ in found]


@pytest.fixture
def instantiator():  # type: ignore[no-untyped-def]
    jobs = Instantiator()
    yield jobs
    jobs.close()


def test_a_job_is_instantiated_in_a_worker_process(instantiator: Instantiator) -> None:
    pattern = _pattern()
    job = _job(pattern)
    found = instantiator.submit(job).result(TIMEOUT_S)
    assert _applied(job, found) == ["def other(item):\n    return item is None\n"]
    processes = instantiator._worker.processes()
    assert [p.pid != os.getpid() for p in processes] == [True]
    # Same version, other diagnostic: the text and the pattern are not sent again, the answer is the same.
    again = _job(pattern)
    assert instantiator.submit(again).result(TIMEOUT_S) == found


def test_a_documents_text_goes_to_the_worker_once_per_version(instantiator: Instantiator) -> None:
    """The worker keeps the text: the second job on it sends only the token."""
    sent: list[str | None] = []
    submit = instantiator._worker.submit

    def spy(fn, job):  # type: ignore[no-untyped-def]
        sent.append(job[2])  # the text, or None when the worker holds it
        return submit(fn, job)

    instantiator._worker.submit = spy  # type: ignore[method-assign]
    pattern = _pattern()
    job = _job(pattern)
    instantiator.submit(job).result(TIMEOUT_S)
    again = Job(job.uri, "python", job.text, job.info, job.patterns)  # the document's same text, another diagnostic
    found = instantiator.submit(again).result(TIMEOUT_S)
    assert _applied(again, found) == ["def other(item):\n    return item is None\n"]
    assert sent == [job.text, None]


def test_a_requests_job_is_made_here_on_the_parse_made_as_the_document_opened(instantiator: Instantiator) -> None:
    """didOpen parses the text in the server; the lightbulb's job finds that tree and never goes to the worker."""
    sent: list[object] = []
    instantiator._worker.submit = lambda fn, job: sent.append(job)  # type: ignore[assignment,method-assign,misc,return-value]
    job = _job(_pattern(), name="opened")
    parsed.cache_clear()
    instantiator.warm(job.uri, "python", job.text)
    found = instantiator.run_here(job).result(TIMEOUT_S)
    assert _applied(job, found) == ["def other(opened):\n    return opened is None\n"]
    info = parsed.cache_info()
    assert (info.misses, info.hits >= 1) == (1, True)  # parsed once, as it opened; the job read that tree
    assert sent == []


def test_a_new_version_of_the_document_is_instantiated_on_its_own_text(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern, name="first")).result(TIMEOUT_S)
    second = _job(pattern, name="second")
    assert _applied(second, instantiator.submit(second).result(TIMEOUT_S)) == [
        "def other(second):\n    return second is None\n"
    ]


def test_a_worker_that_forgot_the_text_is_sent_it_again(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern, uri="file:///w/warm.py")).result(TIMEOUT_S)
    job = _job(pattern, uri="file:///w/b.py")
    instantiator._texts[job.uri] = (999, job.text)  # as if the worker had it (it evicted it, say)
    assert _applied(job, instantiator.submit(job).result(TIMEOUT_S)) == ["def other(item):\n    return item is None\n"]


def test_a_job_asked_for_while_it_waits_for_the_worker_is_made_here_at_once(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern)).result(TIMEOUT_S)  # the worker is up
    with instantiator._lock:
        instantiator._current = _job(pattern, uri="file:///w/big.py")  # as if a large file's job held the worker
    queued = [_job(pattern, uri=f"file:///w/q{i}.py", name=f"n{i}") for i in range(3)]
    for job in queued:
        instantiator.submit(job)
    wanted = queued[-1]
    instantiator.hurry(wanted)
    assert _applied(wanted, wanted.result.result(TIMEOUT_S)) == ["def other(n2):\n    return n2 is None\n"]
    with instantiator._lock:
        assert list(instantiator._queue) == queued[:-1]  # the others still wait for the worker
        assert all(not job.result.done() for job in queued[:-1])
        instantiator._current = None  # let the queue go on
        instantiator._feed_locked()
    for job in queued[:-1]:
        job.result.result(TIMEOUT_S)


def test_a_job_the_worker_has_already_is_left_to_it(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern)).result(TIMEOUT_S)  # the worker is up
    here: list[Job] = []
    instantiator._here.submit = lambda fn, j: here.append(j)  # type: ignore[assignment,method-assign,misc,return-value]
    job = _job(pattern, uri="file:///w/handed.py", name="handed")
    with instantiator._lock:  # handed over at once (the worker is idle); its answer waits for the lock
        instantiator.submit(job)
        assert instantiator._current is job or job.result.done()
        instantiator.hurry(job)
    assert _applied(job, job.result.result(TIMEOUT_S)) == ["def other(handed):\n    return handed is None\n"]
    assert here == []


def test_a_killed_worker_is_replaced_and_the_job_still_answered(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern)).result(TIMEOUT_S)
    (process,) = instantiator._worker.processes()
    os.kill(process.pid, signal.SIGKILL)
    process.join(TIMEOUT_S)
    job = _job(pattern, name="after")
    assert _applied(job, instantiator.submit(job).result(TIMEOUT_S)) == [
        "def other(after):\n    return after is None\n"
    ]


def test_closing_cancels_what_is_waiting() -> None:
    jobs = Instantiator()
    pattern = _pattern()
    waiting = [_job(pattern, uri=f"file:///w/c{i}.py") for i in range(5)]
    for job in waiting:
        jobs.submit(job)
    jobs.close()
    for job in waiting:
        try:
            job.result.result(TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - cancelled, or the worker was ended under it
            assert type(exc).__name__ in {"CancelledError", "WorkerEnded"}
    assert jobs.submit(_job(pattern)).cancelled()


def test_a_document_opened_again_with_the_same_version_is_instantiated_on_its_new_text(
    instantiator: Instantiator,
) -> None:
    # Versions start over when an editor closes and opens a file again: the text, not the version, counts.
    pattern = _pattern()
    instantiator.submit(_job(pattern, name="old")).result(TIMEOUT_S)
    reopened = _job(pattern, name="new")
    assert _applied(reopened, instantiator.submit(reopened).result(TIMEOUT_S)) == [
        "def other(new):\n    return new is None\n"
    ]
