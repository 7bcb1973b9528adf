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
import time
from concurrent.futures import BrokenExecutor, Future
from typing import Any

from fixlore.abstraction import FixCategory, Pattern, is_placeholder
from fixlore.lsp.workers import BACKGROUND_IDLE_S, WorkerProcess

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
    after start waited for libcst's import). If no process can be started, or
    the worker dies, extraction runs in a thread instead.
    """

    def __init__(self) -> None:
        self._worker = WorkerProcess("extractor", processes=1, idle_stop_s=BACKGROUND_IDLE_S, background=True)

    def start(self) -> None:
        """Start the worker and load libcst in it ahead of the first fix (the server lets the first fix start it)."""
        self._worker.start(warm_up, _log_warm_up)

    async def extract(self, language: str, before: str, after: str, info: Any) -> Any:
        """The pattern of one fix (or a skip), computed in the worker; ``None`` once closed."""
        try:
            return await asyncio.wrap_future(self._worker.submit(_extract, language, before, after, info))
        except BrokenExecutor:  # a RuntimeError too: first
            if self._worker.on_thread:
                raise
            logger.warning("extraction worker failed; extracting in a thread from now on")
            return await asyncio.wrap_future(self._worker.submit(_extract, language, before, after, info))
        except RuntimeError:  # closed: the session is ending
            return None

    def close(self) -> None:
        """Stop the worker (pending extractions are dropped: the session is ending)."""
        self._worker.close()


def _log_warm_up(future: Future[float]) -> None:
    if not future.cancelled() and future.exception() is None:
        logger.debug("extractor loaded in its worker in %.0f ms", future.result())
