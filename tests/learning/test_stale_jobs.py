"""Jobs still queued for a text the document no longer has, or for a closed document, are dropped, not made."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from fixlore.lsp.learning.instantiation import Instantiator, Job


class _HeldWorker:
    """Stands in for the worker process: each job is held until the test answers it."""

    answering = True

    def __init__(self) -> None:
        self.sent: list[tuple[Any, Future[Any]]] = []

    def submit(self, fn: Any, job: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.sent.append((job, future))
        return future

    def close(self) -> None:
        pass


def _instantiator() -> tuple[Instantiator, _HeldWorker]:
    jobs = Instantiator()
    jobs._worker.close()
    held = _HeldWorker()
    jobs._worker = held  # type: ignore[assignment]
    return jobs, held


def _text_sent(held: _HeldWorker, n: int) -> tuple[str, str | None]:
    """The document and the text of the ``n``-th job sent (``None``: the worker holds that text already)."""
    job = held.sent[n][0]
    return job[0], job[2]


def test_jobs_for_an_older_text_are_dropped_when_their_turn_comes() -> None:
    jobs, held = _instantiator()
    try:
        first = jobs.submit(Job("file:///a.py", "python", "x = 1\n", None, []))  # the worker is busy with it
        old = [jobs.submit(Job("file:///a.py", "python", "x = 12\n", None, [])) for _ in range(3)]
        other = jobs.submit(Job("file:///b.py", "python", "y = 1\n", None, []))
        new = jobs.submit(Job("file:///a.py", "python", "x = 123\n", None, []))
        held.sent[0][1].set_result([])
        assert first.result(0) == []
        assert all(f.cancelled() for f in old)  # typing went on: nobody asks for them
        assert _text_sent(held, 1) == ("file:///b.py", "y = 1\n")  # another document's job is made
        held.sent[1][1].set_result([])
        assert other.result(0) == []
        assert _text_sent(held, 2) == ("file:///a.py", "x = 123\n")
        held.sent[2][1].set_result([])
        assert new.result(0) == []
        assert len(held.sent) == 3
    finally:
        jobs.close()


def test_a_closed_documents_jobs_are_dropped_but_a_requested_one_is_made() -> None:
    jobs, held = _instantiator()
    text = "z = 1\n"
    try:
        jobs.submit(Job("file:///c.py", "python", text, None, []))  # the document just opened, parsing
        queued = jobs.submit(Job("file:///b.py", "python", "y = 1\n", None, []))
        asked = Job("file:///c.py", "python", text, None, [])
        jobs.submit(asked)
        jobs.submit(Job("file:///c.py", "python", "z = 12\n", None, []))  # c changes after the request
        jobs.hurry(asked)  # a code action waits for this one: next, made for its text
        jobs.forget("file:///b.py")
        held.sent[0][1].set_result([])
        assert _text_sent(held, 1) == ("file:///c.py", None)  # the text the worker parsed
        held.sent[1][1].set_result([])
        assert asked.result.result(0) == []
        assert queued.cancelled()
        assert _text_sent(held, 2) == ("file:///c.py", "z = 12\n")
        assert len(held.sent) == 3
    finally:
        jobs.close()
