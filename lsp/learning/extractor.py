"""Extraction of manual fixes for the learning loop, in a worker process.

:class:`Extractor` runs ``extract_pattern`` (libcst, diffing, abstraction)
in a process of its own, loaded after ``initialized``; :func:`is_token_repair`
says which patterns learned from broken code are repairs rather than the user
finishing a line. Used by :mod:`fixlore.lsp.learning.loop`.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import threading
import time
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor
from typing import Any

from fixlore.abstraction import FixCategory, Pattern, is_placeholder

logger = logging.getLogger(__name__)


_TOKEN_FIXES = frozenset({FixCategory.INSERT_TOKEN, FixCategory.DELETE_TOKEN, FixCategory.REPLACE_TOKEN})
MAX_REPAIR_TOKENS = 2


def is_token_repair(pattern: Pattern) -> bool:
    """A repair of broken code: at most two punctuation/keyword tokens, no new names or values.

    ``def $1 ( $2 )`` -> ``def $1 ( $2 ) :`` is one; ``$1 = (`` -> ``$1 = ( $2 , $3 )``
    is the user finishing a line, not fixing it.
    """
    shape = pattern.shape
    if shape is None or pattern.category not in _TOKEN_FIXES:
        return False
    before, after = shape.before.split(), shape.after.split()
    changed = [
        token
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
        if tag != "equal"
        for token in before[i1:i2] + after[j1:j2]
    ]
    return 0 < len(changed) <= MAX_REPAIR_TOKENS and not any(is_placeholder(t) for t in changed)


def _extract(language: str, before: str, after: str, info: Any) -> Any:
    """Worker: ``extract_pattern``, imported here so start-up does not load libcst."""
    from fixlore.abstraction import extract_pattern

    return extract_pattern(language, before, after, info)


def warm_up() -> float:
    """Worker, after ``initialized``: load the extractor (libcst) before the first fix; ms it took."""
    started = time.perf_counter()
    from fixlore.abstraction import extract_pattern  # noqa: F401 - imported for its side effect

    return (time.perf_counter() - started) * 1000


class Extractor:
    """Extraction (libcst, diffing, abstraction) in a process of its own.

    The abstraction layer is pure, so a fix's texts go to a worker process and
    its pattern comes back: its CPU time and libcst's import never hold the
    GIL the request path needs (a thread did: code actions in the first second
    after start waited for libcst's import). If no process can be started,
    extraction runs in a thread instead.
    """

    def __init__(self) -> None:
        self._pool: Executor | None = None
        self._fallback = False
        self._closed = False
        self._lock = threading.Lock()  # the starting thread and the event loop both may make the pool

    def start(self) -> None:
        """Start the worker and load libcst in it, from a thread of its own (after ``initialized``).

        Starting a process takes its parent ~0.1-0.2 s (multiprocessing's import,
        the spawn): on the event loop, the editor's first requests waited for it.
        """
        threading.Thread(target=self._start, name="fixlore-extractor-start", daemon=True).start()

    def _start(self) -> None:
        try:
            with self._lock:
                if self._closed:
                    return
                future = self._executor_locked().submit(warm_up)
        except (OSError, RuntimeError) as exc:
            logger.warning("extraction worker not started (%s); extracting in a thread", type(exc).__name__)
            self._use_thread()
            return
        future.add_done_callback(_log_warm_up)

    async def extract(self, language: str, before: str, after: str, info: Any) -> Any:
        """The pattern of one fix (or a skip), computed in the worker."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor(), _extract, language, before, after, info)
        except (BrokenExecutor, OSError, RuntimeError) as exc:
            if self._fallback:
                raise
            logger.warning("extraction worker failed (%s); extracting in a thread from now on", type(exc).__name__)
            self._use_thread()
            return await loop.run_in_executor(self._executor(), _extract, language, before, after, info)

    def close(self) -> None:
        """Stop the worker (pending extractions are dropped: the session is ending)."""
        with self._lock:
            self._closed = True
            self._stop_pool()

    def _stop_pool(self) -> None:
        if self._pool is not None:
            # The worker holds nothing to keep: end it now rather than let the exit wait for it.
            for process in list((getattr(self._pool, "_processes", None) or {}).values()):
                process.terminate()
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _executor(self) -> Executor:
        with self._lock:
            return self._executor_locked()

    def _executor_locked(self) -> Executor:
        if self._pool is None:
            if self._fallback:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixlore-extract")
            else:
                from fixlore.lsp.hub import worker_process_pool  # lets go of the editor's pipes

                self._pool = worker_process_pool()
        return self._pool

    def _use_thread(self) -> None:
        with self._lock:
            self._stop_pool()
            self._fallback = True


def _log_warm_up(future: Future[float]) -> None:
    if not future.cancelled() and future.exception() is None:
        logger.debug("extractor loaded in its worker in %.0f ms", future.result())
