"""Learned fixes instantiated in a worker process: right answers, most wanted first, a dead worker replaced."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import Future

import pytest

from fixlore.abstraction import apply_edits
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


def test_a_document_warmed_when_opened_is_not_sent_again_with_its_first_job(instantiator: Instantiator) -> None:
    """didOpen sends the text and the worker parses it; the job for its diagnostics sends only the token."""
    sent: list[str | None] = []
    submit = instantiator._worker.submit

    def spy(fn, job):  # type: ignore[no-untyped-def]
        sent.append(job[2])  # the text, or None when the worker holds it
        return submit(fn, job)

    instantiator._worker.submit = spy  # type: ignore[method-assign]
    job = _job(_pattern())
    instantiator.warm(job.uri, "python", job.text)
    found = instantiator.submit(job).result(TIMEOUT_S)
    assert _applied(job, found) == ["def other(item):\n    return item is None\n"]
    assert sent == [job.text, None]


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


def test_a_job_asked_for_goes_before_the_ones_still_waiting(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern)).result(TIMEOUT_S)  # the worker is up
    order: list[str] = []
    lock = threading.Lock()
    jobs = [_job(pattern, uri=f"file:///w/q{i}.py", name=f"n{i}") for i in range(12)]

    def note(uri: str):  # type: ignore[no-untyped-def]
        def done(_: Future[list[Found]]) -> None:
            with lock:
                order.append(uri)

        return done

    for job in jobs:
        instantiator.submit(job).add_done_callback(note(job.uri))
    with instantiator._lock:  # the worker's answers wait: which jobs are still queued is fixed
        still = [j.uri for j in jobs[:-1] if not j.result.running() and not j.result.done()]
        instantiator.hurry(jobs[-1])
    for job in jobs:
        job.result.result(TIMEOUT_S)
    assert len(still) >= 5, still  # submitting takes microseconds, one job a millisecond or more
    assert all(order.index(jobs[-1].uri) < order.index(uri) for uri in still), order


def test_a_job_asked_for_behind_a_long_worker_job_runs_on_a_thread_of_the_server(instantiator: Instantiator) -> None:
    pattern = _pattern()
    instantiator.submit(_job(pattern)).result(TIMEOUT_S)  # the worker is up
    with instantiator._lock:
        instantiator._current = _job(pattern, uri="file:///w/big.py")  # as if a large file's job held the worker
    job = _job(pattern, uri="file:///w/wanted.py", name="wanted")
    instantiator.submit(job)
    instantiator.hurry(job)
    assert _applied(job, job.result.result(TIMEOUT_S)) == ["def other(wanted):\n    return wanted is None\n"]
    with instantiator._lock:
        assert not instantiator._urgent and not instantiator._queue
        instantiator._current = None  # the job never reached the worker: it ran on the server's thread


def test_a_job_asked_for_while_the_worker_parses_its_own_text_waits_for_the_worker(
    instantiator: Instantiator,
) -> None:
    """A document opened, its diagnostics in, the lightbulb asked for at once: the worker is still
    parsing that very text (warmed at didOpen); the job goes next to the worker, which holds the
    parse then, instead of a second parse on a server thread (whose GIL the event loop needs)."""
    pattern = _pattern()
    assert not instantiator._worker.answering  # no process yet: a job would wait for its spawn
    instantiator.submit(_job(pattern)).result(TIMEOUT_S)  # the worker is up
    assert instantiator._worker.answering
    # A file the worker takes a while to parse: the warm-up is still running when the job comes.
    filler = "".join(f"value_{i} = {i}\n" for i in range(20_000))
    text = "def other(opened):\n    return opened == None\n" + filler
    job = Job("file:///w/opened.py", "python", text, diag_at(text, "None", *E711), [("fp-e711", pattern, 2)])
    here: list[Job] = []
    instantiator._here.submit = lambda fn, j: here.append(j)  # type: ignore[assignment,method-assign,misc,return-value]
    with instantiator._lock:  # the warm-up is handed over; its answer waits until the lock is let go
        instantiator.warm(job.uri, "python", job.text)
        # None only if the worker answered before the hand-over attached its callback (then it is idle:
        # the job goes to it all the same).
        warming = instantiator._current
        assert warming is None or warming.text is job.text
        instantiator.submit(job)
        instantiator.hurry(job)
        if warming is not None:
            assert list(instantiator._urgent) == [job]  # next in the worker, which holds the parse
    assert _applied(job, job.result.result(TIMEOUT_S)) == ["def other(opened):\n    return opened is None\n" + filler]
    assert here == []  # nothing ran on the server's thread
    # Busy with another document's text: the wanted job still runs on the server's thread.
    other = _job(pattern, uri="file:///w/other.py", name="other")
    with instantiator._lock:
        instantiator.warm("file:///w/big.py", "python", filler)
        busy = instantiator._current is not None  # (as above: not if it answered before its callback was attached)
        instantiator.submit(other)
        instantiator.hurry(other)
    assert here == ([other] if busy else [])
    other.result.cancel()


def test_a_job_asked_for_while_the_worker_process_starts_runs_on_a_thread_of_the_server(
    instantiator: Instantiator,
) -> None:
    """A session's first lightbulb with a learned fix: the worker process is starting (0.2-1 s, the
    spawn and its imports), or none runs yet; the request's job does not wait for it, the publish's do."""
    pattern = _pattern()
    here: list[Job] = []
    instantiator._here.submit = lambda fn, j: here.append(j)  # type: ignore[assignment,method-assign,misc,return-value]
    with instantiator._lock:  # (a spawn takes a tenth of a second at least: it is still starting here)
        published = _job(pattern, uri="file:///w/published.py", name="published")
        instantiator.submit(published)  # a publish's job: the process starts for it, the job waits there
        assert instantiator._current is published and not instantiator._worker.answering
        asked = Job(*_job_args(pattern, "file:///w/asked.py", "asked"), asked=True)
        instantiator.submit(asked)
        instantiator.hurry(asked)
        first = Job(*_job_args(pattern, "file:///w/first.py", "first"), asked=True)
        instantiator._current = None  # as if nothing were handed over yet: the first job ever is an asked one
        instantiator.submit(first)
        assert instantiator._current is None
        instantiator._current = published
        instantiator.hurry(published)  # a publish's job the request finds handed to the starting process
    assert here == [asked, first, published]  # the asked ones went to the server's thread, published as well
    assert _applied(published, published.result.result(TIMEOUT_S)) == [
        "def other(published):\n    return published is None\n"
    ]
    assert instantiator._worker.answering
    # Once the process is up, an asked job goes to it like any other.
    again = Job(*_job_args(pattern, "file:///w/again.py", "again"), asked=True)
    assert _applied(again, instantiator.submit(again).result(TIMEOUT_S)) == [
        "def other(again):\n    return again is None\n"
    ]
    assert here == [asked, first, published]
    asked.result.cancel()
    first.result.cancel()


def test_a_job_made_both_here_and_by_a_worker_that_was_starting_is_answered_once(instantiator: Instantiator) -> None:
    """The thread of the server and the worker process race; whichever ends first answers, the other is dropped."""
    pattern = _pattern()
    job = _job(pattern, uri="file:///w/raced.py", name="raced")
    with instantiator._lock:
        instantiator.submit(job)  # the process starts for it
        assert instantiator._current is job and not instantiator._worker.answering
        instantiator.hurry(job)  # and it is made here as well
    assert _applied(job, job.result.result(TIMEOUT_S)) == ["def other(raced):\n    return raced is None\n"]
    after = _job(pattern, uri="file:///w/after.py", name="after")  # the worker goes on with the next job
    assert _applied(after, instantiator.submit(after).result(TIMEOUT_S)) == [
        "def other(after):\n    return after is None\n"
    ]
    with instantiator._lock:
        assert instantiator._current is None and not instantiator._queue


def _job_args(pattern, uri: str, name: str) -> tuple:  # type: ignore[no-untyped-def,type-arg]
    job = _job(pattern, uri=uri, name=name)
    return job.uri, job.language, job.text, job.info, job.patterns


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
