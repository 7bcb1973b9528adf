"""Learned quick fixes, instantiated in the background and cached per document version.

When diagnostics are published, each one whose signature has learned fixes
gets them instantiated (``abstraction.instantiate``, libcst) in a worker
thread. A code-action request then finds them ready; if not, it waits a few
milliseconds at most and answers without them (the next request has them).
Cached in memory, per (document, version, diagnostic); nothing is written.
"No learned fix" is cached too, per signature, for :data:`NEGATIVE_TTL_S`
(looking it up again for every diagnostic of every publish cost a large share
of a pull's time through fixlore), so a fix learned meanwhile shows up within
that time.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from fixlore.abstraction import (
    DiagnosticInfo,
    Instantiated,
    Pattern,
    Position,
    Signature,
    TextEdit,
    TextRange,
    abstract_signature,
    instantiate,
)
from fixlore.knowledge import PatternStats
from fixlore.lsp.documents import document_language
from fixlore.lsp.learning.timeline import diag_info, diag_key

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from fixlore.knowledge import Knowledge
    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)


class FixesHost(Protocol):
    """What :class:`LearnedFixes` reads of the learning loop: the store, its worker threads, the documents."""

    knowledge: Knowledge | None
    server: Editor

    @property
    def executor(self) -> Executor:
        """The learning loop's worker threads."""


MAX_LEARNED = 3
"""At most this many learned fixes per diagnostic."""
MAX_TRIED = 64
"""At most this many stored patterns tried per diagnostic, best evidence first.

Fit comes before rank: a pattern that does not fit the code is skipped (its
instantiation stops at the first token that differs), so the three offered
are the best *fitting* ones, not the best three of which none may fit."""
REQUEST_WAIT_S = 0.1
"""How long a code-action request waits, at most, for fixes still being instantiated.

They start when the diagnostics arrive, on a thread of their own, and most
stored patterns are dropped by a substring test before any parsing, so they
are usually ready; a lightbulb asked for at once (jumping from the Problems
panel) waits for them rather than going without the fix the user makes."""

NEGATIVE_TTL_S = 1.0
"""How long "no learned fix for this signature" is believed without asking the knowledge again."""
MAX_NONE = 4096
"""Signatures remembered without a learned fix (forgotten all at once past this)."""

DiagId = tuple[tuple[str, str, str], Any]

_NOWHERE = TextRange(Position(0, 0), Position(0, 0))


@dataclass(frozen=True, slots=True)
class LearnedFix:
    """A learned pattern instantiated on the code at hand (code points)."""

    pattern: Pattern
    stats: PatternStats
    edits: tuple[TextEdit, ...]
    title: str


@functools.lru_cache(maxsize=4096)
def _signature_of(language: str, key: tuple[str, str, str]) -> Signature:
    """A diagnostic's signature from its (source, code, message): the same for every publish."""
    return abstract_signature(language, DiagnosticInfo(*key, _NOWHERE))


def diag_id(raw: dict[str, Any]) -> DiagId:
    """Identity of a raw diagnostic within one document version."""
    return diag_key(raw), _range_key(raw.get("range"))


def _range_key(value: Any) -> Any:
    try:
        start, end = value["start"], value["end"]
        key = (start["line"], start["character"], end["line"], end["character"])
    except (KeyError, TypeError):
        return repr(value)
    return key if type(key[0]) is type(key[1]) is type(key[2]) is type(key[3]) is int else repr(value)


class LearnedFixes:
    """The per-version cache of instantiated learned fixes."""

    def __init__(self, loop: FixesHost) -> None:
        self._loop = loop
        self._cache: dict[str, tuple[int | None, dict[DiagId, Future[list[LearnedFix]]]]] = {}
        self._work: dict[int, tuple[Any, ...]] = {}
        """A queued future's id -> its arguments, to move it ahead when a request asks for it."""
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixlore-fixes")
        """Learned fixes only: never queued behind learning's own work (opening the store, a settle)."""
        self._asked = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixlore-fixes-asked")
        """The diagnostic a request asks for, when its turn in :attr:`_pool` has not come (a publish
        of 80 diagnostics queues 80 instantiations; the lightbulb is for one of them)."""
        self._none: dict[Signature, float] = {}
        """Signature -> when no learned fix was found for it."""

    def knowledge_changed(self, signature: Signature | None) -> None:
        """A learned fix for ``signature`` (None: any) may be new: stop believing there is none."""
        if signature is None:
            self._none.clear()
        else:
            self._none.pop(signature, None)

    def close(self) -> None:
        """Stop preparing fixes (the session ends)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._asked.shutdown(wait=False, cancel_futures=True)

    def forget(self, uri: str) -> None:
        """Drop the cache of a closed document."""
        self._cache.pop(uri, None)

    def prepare(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        """Start instantiating learned fixes for ``diagnostics`` (cheap; work goes to a thread)."""
        knowledge = self._loop.knowledge
        doc = self._loop.server.open_document(uri)
        if knowledge is None or doc is None or doc.version != version or not diagnostics:
            return
        language = document_language(doc)
        if language is None:
            return
        cached_version, entries = self._cache.get(uri, (None, {}))
        if cached_version != version:
            entries = {}
            self._cache[uri] = (version, entries)
        none = self._none
        if len(none) > MAX_NONE:
            none.clear()
        now = time.monotonic()
        text = doc.source
        num_units = doc.position_codec.client_num_units
        for raw in diagnostics:
            # The signature needs no position: the diagnostic is placed only if a fix is found.
            signature = _signature_of(language, diag_key(raw))
            if now - none.get(signature, -NEGATIVE_TTL_S) < NEGATIVE_TTL_S:
                continue
            key = diag_id(raw)
            if key in entries:
                continue
            if not knowledge.ready(signature.rule_key, fixes=True):
                # Never the disk on the loop: a worker reads the rule key, and
                # this signature gets its learned fixes once that is done.
                self._loop.executor.submit(knowledge.preload, signature.rule_key)
                none[signature] = now
                continue
            found = knowledge.learned_fixes(signature)[:MAX_TRIED]
            if not found:
                none[signature] = now
                continue
            none.pop(signature, None)
            info = diag_info(raw, text, num_units)
            work = (found, language, text, info)
            future = self._pool.submit(_instantiate_all, *work)
            self._work[id(future)] = work
            future.add_done_callback(self._forget_work)
            entries[key] = future

    async def get(self, uri: str, version: int | None, raw: dict[str, Any]) -> list[LearnedFix]:
        """The learned fixes for one diagnostic, if ready within :data:`REQUEST_WAIT_S`."""
        cached_version, entries = self._cache.get(uri, (None, {}))
        key = diag_id(raw)
        if cached_version != version or key not in entries:
            self.prepare(uri, version, [raw])
            cached_version, entries = self._cache.get(uri, (None, {}))
            if cached_version != version or key not in entries:
                return []
        future = entries[key]
        work = self._work.get(id(future))
        if work is not None and future.cancel():
            # Still queued behind the publish's other diagnostics: this one is wanted now.
            future = self._asked.submit(_instantiate_all, *work)
            entries[key] = future
        if not future.done():
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), REQUEST_WAIT_S)
            except TimeoutError:
                logger.debug("learned fixes not ready in time; answering without them")
                return []
        try:
            return future.result()
        except Exception as exc:  # noqa: BLE001 - a bug in one pattern must not cost the request
            logger.warning("instantiating learned fixes failed: %s", type(exc).__name__)
            return []

    def _forget_work(self, future: Future[list[LearnedFix]]) -> None:
        self._work.pop(id(future), None)


def _instantiate_all(found: list[PatternStats], language: str, text: str, info: Any) -> list[LearnedFix]:
    """Worker thread: instantiate each learned pattern; keep the ones that apply, no duplicates."""
    out: list[LearnedFix] = []
    seen: set[tuple[TextEdit, ...]] = set()
    for stats in found:
        pattern = stats.pattern
        if pattern is None or pattern.shape is None:
            continue
        counts = stats.counts
        result = instantiate(pattern, language, text, info, seen=counts.manual + counts.accepted)
        if not isinstance(result, Instantiated) or not result.edits:
            continue
        if result.edits in seen:
            continue
        seen.add(result.edits)
        out.append(LearnedFix(pattern=pattern, stats=stats, edits=result.edits, title=result.title))
        if len(out) == MAX_LEARNED:
            break
    return out
