"""Learned fixes instantiated off the event loop: a request's at once in the server, the others in a worker.

Instantiating a learned pattern parses the code at hand (tree-sitter, and for
Python ``compile`` on the statements around the diagnostic): C code that holds
the GIL. The fixes of a publish's every diagnostic, which nobody waits for yet,
are made in a worker process, fed one job at a time, so the server's request
path keeps the GIL. The job of a code-action request, which the request waits
for, is made in the server on a thread of its own (:meth:`Instantiator.run_here`):
the document was parsed there as it opened (:meth:`Instantiator.warm`, a parse
that gives the event loop its turns, see
:func:`~fixlore.abstraction.share_gil_while_parsing`), and the job's answer
needs no trip through the worker's pipe. In a replay of real fixes, that trip
(the job pickled, written, read; the answer back through the reader thread) and
the worker's parse of the just-opened file it queued behind were two thirds of
a lightbulb's wait for its learned fixes (worker's work p50 1.0 ms, the wait 3.0).

What crosses the pipe is kept small: the worker keeps each document's latest
text and every pattern it has been sent, so a document's text goes over once
per version and a pattern once per worker, not once per diagnostic. Jobs wait
in this process, not in the pool, one handed over at a time; a job a request
asks for that is still waiting is made here instead. If no process can be
started, or the worker dies twice, the same jobs run on a thread instead.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import BrokenExecutor, CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fixlore.abstraction import Instantiated, Pattern, TextEdit, instantiate, parsed, share_gil_while_parsing
from fixlore.lsp.workers import REQUEST_IDLE_S, WorkerProcess

logger = logging.getLogger(__name__)

MAX_LEARNED = 3
"""At most this many learned fixes per diagnostic."""

Found = tuple[int, tuple[TextEdit, ...], str, bool]
"""One fix that applies: the index of its pattern in the job, its edits, its title, whether it used recalled names."""


@dataclass(eq=False)
class Job:
    """Learned fixes to instantiate for one diagnostic of one document text."""

    uri: str
    language: str
    text: str
    info: Any
    patterns: list[tuple[str, Pattern, int]]
    """(fingerprint, pattern, times seen), best evidence first."""
    imports: dict[str, str] = field(default_factory=dict)
    """How the workspace imports the name the diagnostic is about (:mod:`.workspace_imports`), if it does."""
    recalled: dict[str, Mapping[str, str]] = field(default_factory=dict)
    """fingerprint -> the names that pattern brought in this session (:mod:`.recall`; memory only)."""
    result: Future[list[Found]] = field(default_factory=Future)
    created: float = field(default_factory=time.perf_counter)
    """When it was made (for the debug log's timings)."""


# --- the worker's side (module state lives in the worker process) -----------------

MAX_TEXTS = 16
MAX_PATTERNS = 50_000
_texts: collections.OrderedDict[str, tuple[int, str]] = collections.OrderedDict()
"""uri -> (the server's token for the text, the text)."""
_patterns: dict[str, Pattern] = {}


def run(
    job: tuple[
        str,
        int,
        str | None,
        str,
        Any,
        list[tuple[str, Pattern | None, int]],
        dict[str, str],
        dict[str, Mapping[str, str]],
    ],
) -> list[Found] | None:
    """Worker: one job; ``None`` when it came without the text and the worker no longer has it."""
    uri, token, text, language, info, items, imports, recalled = job
    if text is not None:
        _texts[uri] = (token, text)
        _texts.move_to_end(uri)
        while len(_texts) > MAX_TEXTS:
            _texts.popitem(last=False)
    known = _texts.get(uri)
    if known is None or known[0] != token:
        return None
    if len(_patterns) > MAX_PATTERNS:
        _patterns.clear()
    patterns: list[tuple[Pattern, int]] = []
    for fingerprint, sent, times in items:
        pattern = sent if sent is not None else _patterns.get(fingerprint)
        if pattern is None:
            return None
        _patterns[fingerprint] = pattern
        patterns.append((pattern, times))
    return instantiate_all(patterns, language, known[1], info, imports, recalled)


def instantiate_all(
    patterns: list[tuple[Pattern, int]],
    language: str,
    text: str,
    info: Any,
    imports: dict[str, str] | None = None,
    recalled: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Found]:
    """The first :data:`MAX_LEARNED` patterns that apply to ``text`` at ``info``, no two with the same edits.

    ``recalled``: by fingerprint, the names a pattern brought in this session
    (:mod:`.recall`). They are the fallback, tried only when no pattern applies
    without them: a name the user brought in elsewhere is a guess beside a fix
    made of the code at hand (a replay of real fixes: a refactoring's helper
    method recalled at the next `raise IOError(...)` outranked the fix the user
    makes there).
    """
    out: list[Found] = []
    seen: set[tuple[TextEdit, ...]] = set()
    _add(out, seen, ((i, p, times, None) for i, (p, times) in enumerate(patterns)), language, text, info, imports)
    if not out and recalled:
        tried = ((i, p, times, recalled.get(p.fingerprint)) for i, (p, times) in enumerate(patterns))
        _add(out, seen, (entry for entry in tried if entry[3]), language, text, info, imports)
    return out


def _add(
    out: list[Found],
    seen: set[tuple[TextEdit, ...]],
    tried: Iterable[tuple[int, Pattern, int, Mapping[str, str] | None]],
    language: str,
    text: str,
    info: Any,
    imports: dict[str, str] | None,
) -> None:
    """Add to ``out`` the fixes of ``tried`` (index, pattern, times, recalled names) that apply, until it is full."""
    for index, pattern, times, names in tried:
        if len(out) == MAX_LEARNED:
            return
        result = instantiate(pattern, language, text, info, seen=times, imports=imports, recalled=names)
        if not isinstance(result, Instantiated) or not result.edits or result.edits in seen:
            continue
        seen.add(result.edits)
        out.append((index, result.edits, result.title, names is not None))


# --- the server's side --------------------------------------------------------------


class Instantiator:
    """Makes :class:`Job` s: the worker's one at a time, in order; a request's here at once (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a thread pool's job may finish before its callback is added
        self._queue: collections.deque[Job] = collections.deque()
        self._current: Job | None = None
        """The job the worker has now (None: the worker is free for the next)."""
        self._worker = WorkerProcess("instantiator", processes=2, idle_stop_s=REQUEST_IDLE_S)
        self._closed = False
        self._texts: dict[str, tuple[int, str]] = {}
        """What the worker holds: uri -> (token, text) (a guess; the worker says when it is wrong).

        The text itself, not the document's version, says whether the worker has it:
        a document closed and opened again starts its versions over."""
        self._tokens = itertools.count()
        self._patterns: set[str] = set()
        share_gil_while_parsing()  # this is the server: its parses here must not stall the event loop
        self._here = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixlore-instantiate-now")
        """Parses documents as they open and makes the jobs requests wait for, in this process, in order."""
        self._latest: dict[str, str] = {}
        """uri -> the text of its newest job: a job still queued for another text (or a closed document) is dropped."""

    def submit(self, job: Job) -> Future[list[Found]]:
        """Queue ``job`` for the worker; its :attr:`Job.result` is set when the worker is done with it."""
        with self._lock:
            if self._closed:
                job.result.cancel()
                return job.result
            self._queue.append(job)
            self._latest[job.uri] = job.text
            self._feed_locked()
        return job.result

    def forget(self, uri: str) -> None:
        """``uri`` was closed: the jobs still queued for it are dropped when their turn comes."""
        with self._lock:
            self._latest.pop(uri, None)

    def warm(self, uri: str, language: str, text: str) -> None:
        """Parse a document just opened, here, before its diagnostics arrive.

        The upstream takes a while to lint a file it has just been sent; the
        thread that makes the requests' jobs parses it meanwhile (a file of 500
        lines ~2 ms, of 1,500 ~5 ms, sharing the GIL with the event loop), and
        the first lightbulb's job finds the tree made.
        """
        with self._lock:
            if not self._closed:
                self._here.submit(_parse_here, language, text)

    def run_here(self, job: Job) -> Future[list[Found]]:
        """Make ``job`` in this process now, after what the thread has before it (a document's parse, as it opened).

        For a code-action request's job: the request waits for it, and the event
        loop with it, so the GIL it holds costs nothing that a trip to the worker
        would not cost more.
        """
        with self._lock:
            if self._closed:
                job.result.cancel()
            else:
                self._here.submit(_run_here, job)
        return job.result

    def hurry(self, job: Job) -> None:
        """``job`` is wanted now (a code-action request): made here if still waiting for the worker.

        One the worker has already is left to it: its answer is on the way.
        """
        with self._lock:
            try:
                self._queue.remove(job)
            except ValueError:
                return  # handed over already, or done
        self.run_here(job)

    def close(self) -> None:
        """Stop (the session ends): waiting jobs are dropped, the worker ended."""
        with self._lock:
            self._closed = True
            waiting = list(self._queue)
            self._queue.clear()
        for job in waiting:
            job.result.cancel()
        self._here.shutdown(wait=False, cancel_futures=True)
        self._worker.close()

    def _feed_locked(self) -> None:
        while self._current is None and not self._closed and self._queue:
            job = self._queue.popleft()
            if (latest := self._latest.get(job.uri)) is not job.text and latest != job.text:
                # Made for a text the document no longer has (typing goes on), or a closed one:
                # nobody asks for it. (A request's job is made here, whatever comes after it.)
                job.result.cancel()
                continue
            if not job.result.set_running_or_notify_cancel():
                continue
            self._hand_over_locked(job, force=False)

    def _hand_over_locked(self, job: Job, *, force: bool) -> None:
        held = self._texts.get(job.uri)
        if force or held is None or held[1] is not job.text:
            send_text, token = True, next(self._tokens)
        else:
            send_text, token = False, held[0]
        items = [
            (fp, None if fp in self._patterns and not force else pattern, times) for fp, pattern, times in job.patterns
        ]
        try:
            future = self._worker.submit(
                run,
                (
                    job.uri,
                    token,
                    job.text if send_text else None,
                    job.language,
                    job.info,
                    items,
                    job.imports,
                    job.recalled,
                ),
            )
        except (BrokenExecutor, OSError, RuntimeError) as exc:  # the worker replaced, and failed again; or closed
            job.result.set_exception(exc)
            self._feed_locked()
            return
        self._current = job
        self._texts[job.uri] = (token, job.text)
        if len(self._texts) > MAX_TEXTS:
            del self._texts[next(iter(self._texts))]
        self._patterns.update(fp for fp, _, _ in job.patterns)
        future.add_done_callback(lambda done: self._done(job, done, force))

    def _done(self, job: Job, done: Future[list[Found] | None], forced: bool) -> None:
        with self._lock:
            self._current = None
            if self._closed:
                job.result.set_exception(CancelledError())  # handed over already: cancel() cannot stop it
                return
            try:
                found = done.result()
            except BrokenExecutor:  # the worker died (it is replaced): what it held went with it
                self._texts.clear()
                self._patterns.clear()
                self._hand_over_locked(job, force=True)
                return
            except Exception as exc:  # noqa: BLE001 - a bug in one pattern must not stop the others
                job.result.set_exception(exc)
                self._feed_locked()
                return
            if found is None and not forced and not self._closed:
                self._hand_over_locked(job, force=True)  # the worker had forgotten the text or a pattern
                return
            job.result.set_result(found or [])
            self._feed_locked()


def _parse_here(language: str, text: str) -> None:
    try:
        parsed(language, text)
    except Exception as exc:  # noqa: BLE001 - a job for this text parses it again, and says what failed
        logger.debug("parsing a document as it opened failed: %s", type(exc).__name__)


def _run_here(job: Job) -> None:
    if not job.result.set_running_or_notify_cancel():
        return
    try:
        found = instantiate_all(
            [(p, times) for _, p, times in job.patterns], job.language, job.text, job.info, job.imports, job.recalled
        )
    except Exception as exc:  # noqa: BLE001 - a bug in one pattern must not stop the others
        job.result.set_exception(exc)
    else:
        job.result.set_result(found)
