"""Learned fixes instantiated in a worker process, fed one job at a time, most wanted first.

Instantiating a learned pattern parses the code at hand (tree-sitter, and for
Python ``compile`` on the statements around the diagnostic): C code that holds
the GIL. On a thread of the server, a 143 KB file's parse (~30 ms) stalled the
event loop and every request behind it. The abstraction layer is pure, so the
work goes to a process of its own, and the server's request path keeps the GIL.

What crosses the pipe is kept small: the worker keeps each document's latest
text and every pattern it has been sent, so a document's text goes over once
per version and a pattern once per worker, not once per diagnostic. Jobs wait
in this process, not in the pool, one handed over at a time; a job a code-action
request asks for goes ahead of the publish's others, or, when the worker is
busy with another or its process is still starting (a session's first lightbulb
with a learned fix waited ~0.3 s for the spawn), runs at once on a thread of the
server. If no process can be started, or the worker dies twice, the same jobs
run on a thread instead.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import BrokenExecutor, CancelledError, Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fixlore.abstraction import Failed, Instantiated, Pattern, Skipped, TextEdit, instantiate, load_tables, parsed
from fixlore.lsp.pipe_worker import when_idle
from fixlore.lsp.workers import REQUEST_IDLE_S, WorkerProcess

logger = logging.getLogger(__name__)

MAX_LEARNED = 3
"""At most this many learned fixes per diagnostic."""

Found = tuple[int, tuple[TextEdit, ...], str, bool, bool]
"""One fix that applies: the index of its pattern in the job, its edits, its title, whether it used recalled
names, and whether it fits a run of whole statements (see :func:`instantiate_all`)."""
Tried = Callable[[Pattern, Instantiated | Skipped | Failed, float], object]
"""Told of each instantiation :func:`instantiate_all` makes: the pattern, the result, the seconds it took."""


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
    asked: bool = False
    """A code-action request waits for it: never handed to a process still starting (``Instantiator._feed_locked``)."""
    result: Future[list[Found]] = field(default_factory=Future)
    created: float = field(default_factory=time.perf_counter)
    """When it was made (for the debug log's timings)."""


# --- the worker's side (module state lives in the worker process) -----------------

MAX_TEXTS = 16
MAX_PATTERNS = 50_000
_texts: collections.OrderedDict[str, tuple[int, str]] = collections.OrderedDict()
"""uri -> (the server's token for the text, the text)."""
_patterns: dict[str, Pattern] = {}
_loaded: set[str] = set()
"""Languages whose lookup tables this worker loads (or has loaded) when idle."""


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
    if not items:  # a document just opened: parse it now, before its diagnostics come (see warm())
        parsed(language, known[1])
        if language not in _loaded:
            _loaded.add(language)
            when_idle(functools.partial(load_tables, language))  # a first job of a kind no longer loads them
        return []
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
    *,
    most: int | None = MAX_LEARNED,
    tried: Tried | None = None,
) -> list[Found]:
    """The first ``most`` patterns that apply to ``text`` at ``info``, no two with the same edits.

    ``most``: how many to find (:data:`MAX_LEARNED`; ``None``: every one that applies, as the offline
    replay, ``bench/humanfix_offline.py``, judges them all). ``tried`` is told of
    each instantiation, its result and the seconds it took (the offline
    replay's timings and reasons), in the order they were made.

    ``recalled``: by fingerprint, the names a pattern brought in this session
    (:mod:`.recall`). They are the fallback, kept only when no pattern applies
    without them: a name the user brought in elsewhere is a guess beside a fix
    made of the code at hand (a replay of real fixes: a refactoring's helper
    method recalled at the next `raise IOError(...)` outranked the fix the user
    makes there). Except where the pattern fits a run of whole statements: the
    same several statements the user made one call to a helper of theirs
    (``if isinstance(key, …): key = key.encode(…)`` / ``if self.prefix: key =
    self.prefix + key`` -> ``key = self._normalize(key)``) are the place the
    name was brought to, not a guess; such a fix goes first, as does a fix on a
    run made of the code at hand.
    """
    out: list[Found] = []
    seen: set[tuple[TextEdit, ...]] = set()
    add = functools.partial(_add, seen=seen, language=language, text=text, info=info, imports=imports, tried=tried)
    add(out, ((i, p, times, None) for i, (p, times) in enumerate(patterns)), most)
    if recalled and (most is None or len(out) < most):
        entries = (
            (i, p, times, recalled.get(p.fingerprint))
            for i, (p, times) in enumerate(patterns)
            if not out or on_several_lines(p)  # beside fixes made here, only a fix of several statements is kept
        )
        more: list[Found] = []
        add(more, (entry for entry in entries if entry[3]), most)
        out += more if not out else [found for found in more if found[4]]
    out.sort(key=lambda found: not found[4])  # stable: fixes of a run first, each kind in its order
    return out[:most]


def on_several_lines(pattern: Pattern) -> bool:
    """Whether the pattern's before-shape is on several lines (only such a one fits a run of statements)."""
    return pattern.shape is not None and "\n" in pattern.shape.before


def _add(
    out: list[Found],
    entries: Iterable[tuple[int, Pattern, int, Mapping[str, str] | None]],
    most: int | None,
    *,
    seen: set[tuple[TextEdit, ...]],
    language: str,
    text: str,
    info: Any,
    imports: dict[str, str] | None,
    tried: Tried | None,
) -> None:
    """Add to ``out`` the fixes of ``entries`` (index, pattern, times, recalled names) that apply, up to ``most``."""
    for index, pattern, times, names in entries:
        if most is not None and len(out) >= most:
            return
        began = time.perf_counter()
        result = _instantiated(pattern, language, text, info, times, imports, names)
        if tried is not None:
            tried(pattern, result, time.perf_counter() - began)
        if not isinstance(result, Instantiated) or not result.edits or result.edits in seen:
            continue
        seen.add(result.edits)
        out.append((index, result.edits, result.title, names is not None, result.statements > 1))


MADE_KEPT = 256
"""Instantiations remembered for the latest text (:func:`_instantiated`)."""
_made: dict[tuple[Any, ...], tuple[Pattern, Instantiated | Skipped | Failed]] = {}
_made_for: list[str] = []
"""The one text :data:`_made` is about (held here, not once per entry: a text's size stays one text's)."""


def _instantiated(
    pattern: Pattern,
    language: str,
    text: str,
    info: Any,
    times: int,
    imports: dict[str, str] | None,
    names: Mapping[str, str] | None,
) -> Instantiated | Skipped | Failed:
    """:func:`~fixlore.abstraction.instantiate`, remembered for the latest text (a pure function of its arguments).

    A request's first job (:data:`~fixlore.lsp.learning.fixes.ASKED_FIRST`) and the whole
    job after it try the same best patterns at the same diagnostic, one after the other.
    """
    if not _made_for or _made_for[0] is not text:
        _made.clear()
        _made_for[:] = [text]
    key = (
        id(pattern),
        language,
        info,
        times,
        tuple(sorted(imports.items())) if imports else (),
        tuple(sorted(names.items())) if names else None,
    )
    known = _made.get(key)
    if known is not None and known[0] is pattern:
        return known[1]
    result = instantiate(pattern, language, text, info, seen=times, imports=imports, recalled=names)
    if len(_made) < MADE_KEPT:
        _made[key] = (pattern, result)  # the pattern held: its id is no other's while remembered
    return result


# --- the server's side --------------------------------------------------------------


async def made_in_time(job: Job, wait: float) -> bool:
    """Wait up to ``wait`` seconds for ``job``: whether it was made (not late, not dropped)."""
    future = job.result
    try:
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), max(wait, 0.0))
    except TimeoutError:
        logger.debug("learned fixes not ready in time; answering without them")
        return False
    except asyncio.CancelledError:
        if not future.cancelled():
            raise  # the request itself was cancelled
        return False  # the job was dropped: the document changed since, or the session ends
    return True


def result_of(job: Job) -> list[Found] | None:
    """What a job made (it is done), or ``None`` if it was dropped or failed."""
    try:
        return job.result.result()
    except Exception:  # noqa: BLE001 - cancelled, or a bug in one pattern: another job decides
        return None


class Instantiator:
    """Feeds :class:`Job` s to one worker process, most wanted first (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a thread pool's job may finish before its callback is added
        self._queue: collections.deque[Job] = collections.deque()
        self._urgent: collections.deque[Job] = collections.deque()
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
        self._here = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixlore-instantiate-now")
        self._latest: dict[str, str] = {}
        """uri -> the text of its newest job: a job still queued for another text (or a closed document) is dropped."""

    def submit(self, job: Job) -> Future[list[Found]]:
        """Queue ``job``; its :attr:`Job.result` is set when the worker is done with it."""
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
        """Send the worker a document just opened, to hold and parse before its diagnostics arrive.

        The upstream takes a while to lint a file it has just been sent; the
        worker parses it meanwhile (a file of 500 lines takes it ~2 ms, of 1,500
        ~5 ms), and the learned fixes of the first lightbulb wait that much less.
        """
        self.submit(Job(uri, language, text, None, []))

    def hurry(self, job: Job) -> None:
        """``job`` is wanted now (a code-action request): hand it over before the others still waiting."""
        with self._lock:
            try:
                self._queue.remove(job)
            except ValueError:
                if job is self._current and not self._worker.answering and not job.result.done():
                    # Handed to a process still starting (a publish's job, before the request
                    # came): made here as well, and the first answer is the one kept.
                    self._here.submit(_run_here, job)
                return  # already handed over, or done
            current = self._current
            if current is None or (current.uri == job.uri and current.text is job.text and self._worker.answering):
                # Idle, or busy with this very text (most often parsing the document just
                # opened, whose diagnostics came before that parse ended) in a process that
                # is up: next in the worker, which holds the parse then, rather than a second
                # parse here. A process still starting (0.2-1 s) is not waited for.
                self._urgent.append(job)
                self._feed_locked()
                return
        # The worker is busy with another document or text: the one the user waits for
        # runs here, on a thread of its own, on the other core. (Queueing it next instead,
        # with a thread only after 15 ms, was tried twice and measured no better.)
        self._here.submit(_run_here, job)

    def close(self) -> None:
        """Stop (the session ends): waiting jobs are dropped, the worker ended."""
        with self._lock:
            self._closed = True
            waiting = [*self._urgent, *self._queue]
            self._urgent.clear()
            self._queue.clear()
        for job in waiting:
            job.result.cancel()
        self._here.shutdown(wait=False, cancel_futures=True)
        self._worker.close()

    def _feed_locked(self) -> None:
        while self._current is None and not self._closed and (self._urgent or self._queue):
            urgent = bool(self._urgent)
            job = (self._urgent or self._queue).popleft()
            if not urgent and (latest := self._latest.get(job.uri)) is not job.text and latest != job.text:
                # Made for a text the document no longer has (typing goes on), or a closed one:
                # nobody asks for it. (A request's job, hurried, is made whatever comes after it.)
                job.result.cancel()
                continue
            if (urgent or job.asked) and not self._worker.answering:
                # A process starting (0.2-1 s: the spawn, its imports) or none yet: the
                # request's job runs here at once rather than wait for it (a session's first
                # lightbulb with a learned fix waited ~0.3 s in the worker's start).
                self._here.submit(_run_here, job)
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
                with contextlib.suppress(InvalidStateError):  # (made on a thread of the server meanwhile)
                    job.result.set_exception(CancelledError())  # handed over already: cancel() cannot stop it
                return
            try:
                found = done.result()
            except BrokenExecutor:  # the worker died (it is replaced): what it held went with it
                self._texts.clear()
                self._patterns.clear()
                if job.result.done():  # made on a thread of the server meanwhile (see hurry)
                    self._feed_locked()
                else:
                    self._hand_over_locked(job, force=True)
                return
            except Exception as exc:  # noqa: BLE001 - a bug in one pattern must not stop the others
                with contextlib.suppress(InvalidStateError):  # made on a thread of the server meanwhile
                    job.result.set_exception(exc)
                self._feed_locked()
                return
            if job.result.done():  # made on a thread of the server meanwhile (see hurry)
                self._feed_locked()
                return
            if found is None and not forced and not self._closed:
                self._hand_over_locked(job, force=True)  # the worker had forgotten the text or a pattern
                return
            with contextlib.suppress(InvalidStateError):  # the thread of the server may end first still
                job.result.set_result(found or [])
            self._feed_locked()


def _run_here(job: Job) -> None:
    """Make ``job`` on this thread.

    One the worker has too (handed to a process still starting) is answered by whichever ends first.
    """
    if not job.result.running() and not job.result.set_running_or_notify_cancel():
        return
    try:
        found = instantiate_all(
            [(p, times) for _, p, times in job.patterns], job.language, job.text, job.info, job.imports, job.recalled
        )
    except Exception as exc:  # noqa: BLE001 - a bug in one pattern must not stop the others
        with contextlib.suppress(InvalidStateError):  # the worker answered first
            job.result.set_exception(exc)
        return
    with contextlib.suppress(InvalidStateError):  # the worker answered first
        job.result.set_result(found)
