"""Learned quick fixes, instantiated in the background and cached per document version.

When diagnostics are published, each one whose signature has learned fixes
gets them instantiated (``abstraction.instantiate``) in a worker process
(:mod:`fixlore.lsp.learning.instantiation`), :data:`PREPARE_DELAY_S` later: a
code-action request in between starts its own diagnostic's at once. A request
then finds them ready; if not, it waits a few milliseconds at most and answers
without them (the next request has them). Cached in memory only, per (document, version, diagnostic).
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
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fixlore.abstraction import (
    DiagnosticInfo,
    Pattern,
    Position,
    Signature,
    TextEdit,
    TextRange,
    abstract_signature,
    load_tables,
    may_apply,
    quoted_names,
)
from fixlore.knowledge import PatternStats
from fixlore.lsp.documents import document_language
from fixlore.lsp.learning.instantiation import Found, Instantiator, Job, made_in_time, on_several_lines, result_of
from fixlore.lsp.learning.recall import Recall, key_of
from fixlore.lsp.learning.timeline import diag_info, diag_key, lines_of
from fixlore.lsp.learning.workspace_imports import WorkspaceImports

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from fixlore.knowledge import Knowledge
    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)


class FixesHost(Protocol):
    """What :class:`LearnedFixes` reads of the learning loop's store: the knowledge, its threads, the documents."""

    knowledge: Knowledge | None
    server: Editor

    @property
    def executor(self) -> Executor:
        """The learning loop's worker threads."""


MAX_TRIED = 64
"""At most this many stored patterns tried per diagnostic, best evidence first.

Fit comes before rank: a pattern that does not fit the code is skipped (its
instantiation stops at the first token that differs), so the three offered
are the best *fitting* ones, not the best three of which none may fit."""
REQUEST_WAIT_S = 0.1
"""How long an automatic code-action request (a lightbulb as the cursor moves) waits for fixes being made.

They start when the diagnostics arrive, in a worker process, and most
stored patterns are dropped by a substring test before any parsing, so they
are usually ready; a lightbulb asked for at once (jumping from the Problems
panel) waits for them rather than going without the fix the user makes."""
INVOKED_WAIT_S = 0.5
"""How long a code-action request the user made (Ctrl+., ``vim.lsp.buf.code_action()``) waits, at most.

The user waits for that menu (VS Code shows its progress), and a menu
without the fix they make by hand, because the machine was busy, costs more
than a fraction of a second: on a loaded machine (a replay of real fixes,
ten sessions on two cores) most learned fixes that the replay missed were
ready a few hundred milliseconds after the 100 ms an automatic request waits.
An editor asks automatically again as the cursor moves, and invokes
explicitly when the user asks, so only the explicit request waits this long.
A request without ``triggerKind`` (LSP before 3.17) counts as one the user made."""

ASKED_FIRST = 4
"""A request's job of more patterns makes these, best evidence first, and any of several lines first (see
:func:`_leading`); the whole job goes on for the menus after. At 1,941 patterns learned from real fixes the
lightbulbs that waited had 14 patterns that may fit on average (12 ms), and the best one applied in most."""

PREPARE_SLICE = 8
"""Diagnostics of one publish prepared per turn of the event loop (see :meth:`LearnedFixes.prepare`)."""

PREPARE_DELAY_S = 0.03
"""How long after diagnostics arrive the learned fixes of all of them are started (see :meth:`LearnedFixes.published`).

A user who opens the quick-fix menu on a diagnostic as soon as it shows (the
replay of real fixes asks ~1 ms after the pull's answer) has that request's own
diagnostic prepared at once; the others wait this long, so the worker and the
event loop are free for the one asked about. VS Code's automatic lightbulb
comes 250 ms after the markers change (its ``CodeActionOracle`` delay), a cursor
moved onto another diagnostic later still: both find theirs made."""

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
    recalled: bool = False
    """It brings in names the user brought in elsewhere this session (:mod:`.recall`): never preferred,
    and a guess, never ranked above the upstream's fixes on the pattern's evidence, unless ``run``."""
    run: bool = False
    """It fits a run of whole statements (learned on several made one): where a recalled name
    belongs, so it ranks on the pattern's evidence (:func:`.instantiation.instantiate_all`)."""


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

    def __init__(self, store: FixesHost) -> None:
        self._store = store
        self.imports = WorkspaceImports()
        """How the workspace imports names (for the fix that adds such an import)."""
        self.recall = Recall()
        """The names learned fixes brought in this session (memory only; see :mod:`.recall`)."""
        self._cache: dict[str, tuple[int | None, dict[DiagId, _Pending]]] = {}
        self._jobs = Instantiator()
        """Instantiation runs in a worker process (the parse holds the GIL); jobs a request asks for go first."""
        self._none: dict[Signature, float] = {}
        """Signature -> when no learned fix was found for it."""
        self._later: dict[str, asyncio.TimerHandle] = {}
        """uri -> the preparation of its latest diagnostics, due :data:`PREPARE_DELAY_S` after they came."""
        self._tables: set[str] = set()
        """Languages whose lookup tables (:func:`~fixlore.abstraction.load_tables`) are loaded, or being loaded."""

    def knowledge_changed(self, signature: Signature | None) -> None:
        """A learned fix for ``signature`` (None: any) may be new: stop believing there is none."""
        if signature is None:
            self._none.clear()
        else:
            self._none.pop(signature, None)

    def close(self) -> None:
        """Stop preparing fixes and reading the workspace (the session ends)."""
        for timer in self._later.values():
            timer.cancel()
        self._later.clear()
        self._jobs.close()
        self.imports.close()
        self.recall.clear()

    def made_by_hand(
        self, pattern: Pattern, message: str, brought: tuple[tuple[str, str], ...], *, broke: bool
    ) -> None:
        """A fix of ``pattern`` was made by hand: the names it brought in are remembered, unless it broke the code.

        A fix that brought an error in next to it is no habit whose names to bring in again.
        """
        if not broke:
            self.recall.remember(key_of(pattern.fingerprint, message), brought)

    def forget(self, uri: str) -> None:
        """Drop the cache of a closed document, and the jobs still queued for it."""
        self._cache.pop(uri, None)
        self._jobs.forget(uri)
        if (timer := self._later.pop(uri, None)) is not None:
            timer.cancel()

    def opened(self, uri: str) -> None:
        """A document was opened: the worker parses it ahead of its diagnostics; its imports are read.

        The text goes to the worker on the event loop's next turn: an editor sends its
        pull with the didOpen, and handing over a text (~0.1-0.4 ms on the loop) before
        that pull went to the upstream made the first pull wait (``bench_first_request.py``
        on an idle machine: the first pull's added p50 2.4-2.6 -> 1.9-2.2 ms, the code
        action's not later).
        """
        doc = self._store.server.open_document(uri)
        language = document_language(doc) if doc is not None else None
        if language is None or doc is None:
            return
        if self._store.knowledge is not None:
            try:
                asyncio.get_running_loop().call_soon(self._warm, uri, language, doc.source)
            except RuntimeError:  # outside the loop (a script, a test): now
                self._warm(uri, language, doc.source)
        if language not in self._tables:
            # Whether or not the knowledge is open yet (the first document of a session
            # usually comes first): ranking the upstream's actions reads the grammar and
            # the words, may_apply() the rest when a request finds its fixes not ready.
            self._tables.add(language)
            self._store.executor.submit(load_tables, language)
        if language == "python":
            self.imports.read_later(uri, doc.source)

    def _warm(self, uri: str, language: str, text: str) -> None:
        doc = self._store.server.open_document(uri)
        if doc is not None and doc.source is text:  # still open, that text
            self._jobs.warm(uri, language, text)

    def saved(self, uri: str) -> None:
        """A document was saved: its imports are read again."""
        doc = self._store.server.open_document(uri)
        if doc is not None and document_language(doc) == "python":
            self.imports.read_later(uri, doc.source)

    def published(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        """Diagnostics of ``version`` arrived: their learned fixes are started :data:`PREPARE_DELAY_S` from now.

        A code-action request before then prepares its own diagnostic at once
        (:meth:`get`), with the worker to itself: preparing a publish's every
        diagnostic first put the lightbulb's job behind another in the worker and
        its request behind the submissions on the event loop (in a replay of real
        fixes, code action p50 7.1 ms that way, 5.5 ms this way). The version
        counts as current from now, so such a request is not taken for one about
        an older text. ``diagnostics`` are the document's all (the hub's merge):
        they replace a preparation still due.
        """
        if (timer := self._later.pop(uri, None)) is not None:
            timer.cancel()
        doc = self._store.server.open_document(uri)
        if doc is None or doc.version != version:
            return  # closed, or a newer text already: nothing of this is asked for
        cached_version, _ = self._cache.get(uri, (None, {}))
        if cached_version != version:
            self._cache[uri] = (version, {})
        if not diagnostics:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the loop (a script, a test): now
            self.prepare(uri, version, diagnostics)
            return
        self._later[uri] = loop.call_later(PREPARE_DELAY_S, self._prepare_later, uri, version, diagnostics)

    def _prepare_later(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        self._later.pop(uri, None)
        self.prepare(uri, version, diagnostics)

    def prepare(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        """Start instantiating learned fixes for ``diagnostics`` (the work goes to the worker).

        :data:`PREPARE_SLICE` diagnostics at a time, the event loop free in between:
        a file's publish of ~70 diagnostics took ~4 ms of the loop in one go, and the
        lightbulb asked for right after it waited that long (its own diagnostic is
        prepared by the request itself if its slice has not come yet).
        """
        head, rest = diagnostics[:PREPARE_SLICE], diagnostics[PREPARE_SLICE:]
        self._prepare(uri, version, head)
        if not rest:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called outside the loop (a script, a test): all at once
            self._prepare(uri, version, rest)
            return
        loop.call_soon(self.prepare, uri, version, rest)

    def _prepare(
        self, uri: str, version: int | None, diagnostics: list[dict[str, Any]], *, asked: bool = False
    ) -> None:
        knowledge = self._store.knowledge
        doc = self._store.server.open_document(uri)
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
        lines: tuple[str, ...] | None = None  # split once, for the first diagnostic with learned fixes
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
                self._store.executor.submit(knowledge.preload, signature.rule_key)
                none[signature] = now
                continue
            found = knowledge.learned_fixes(signature)[:MAX_TRIED]
            if not found:
                none[signature] = now
                continue
            none.pop(signature, None)
            if lines is None:
                lines = lines_of(text)
            info = diag_info(raw, lines, num_units)
            imports = self._imports_for(uri, language, raw)
            latest = knowledge.latest_fix(signature.rule_key) if asked else None
            entries[key] = self._submit(uri, language, text, info, found, imports, asked=asked, latest=latest)

    def _imports_for(self, uri: str, language: str, raw: dict[str, Any]) -> dict[str, str]:
        """How the workspace imports the name the diagnostic's message quotes, if it does."""
        message = raw.get("message")
        if language != "python" or not isinstance(message, str):
            return {}
        name = next(iter(quoted_names(message)), None)
        statement = self.imports.statement_for(name, uri) if name else None
        return {name: statement} if name and statement else {}

    def _submit(
        self,
        uri: str,
        language: str,
        text: str,
        info: Any,
        found: list[PatternStats],
        imports: dict[str, str],
        *,
        asked: bool = False,
        latest: str | None = None,
    ) -> _Pending:
        """The job of one diagnostic, handed to the worker unless nothing is to be tried.

        ``asked``: a code-action request waits for it now. Then only the patterns that
        may fit the code here go (:func:`may_apply`, the checks before any parsing,
        which the request made anyway while it waited), and where none may, no job
        goes at all: most diagnostics have no learned fix that fits (800 of a real-fix
        replay's 1,395), and their round trip to the worker cost the request its
        pickling, two pipe writes and the reader thread's wake-ups for the GIL. ``latest``
        (the fix made last for the rule, which the ranking puts first) is in the first job.
        """
        usable = [
            (stats, stats.pattern, stats.counts.manual + stats.counts.accepted)
            for stats in found
            if stats.pattern is not None and stats.pattern.shape
        ]
        if asked:
            usable = [entry for entry in usable if may_apply(entry[1], language, text, info, seen=entry[2])]
        seen = [(stats.fingerprint, pattern, times) for stats, pattern, times in usable]
        recalled = self.recall.names_of((fp for fp, _, _ in seen), info.message)
        picked = [i for i, (fp, p, _) in enumerate(seen) if i < ASKED_FIRST or on_several_lines(p) or fp == latest]
        first = None
        if asked and len(picked) < len(seen):
            first = Job(uri, language, text, info, [seen[i] for i in picked], imports, recalled, asked=True)
            self._jobs.submit(first)
        job = Job(uri, language, text, info, seen, imports, recalled, asked=asked and first is None)
        if seen:
            self._jobs.submit(job)
        else:  # nothing to try: answered at once, no round trip to the worker
            job.result.set_result([])
        return _Pending(job, [stats for stats, _, _ in usable], fitting=asked, first=first, picked=tuple(picked))

    async def get(
        self,
        uri: str,
        version: int | None,
        raw: dict[str, Any],
        *,
        wait: float = REQUEST_WAIT_S,
        start_if_stale: bool = False,
    ) -> list[LearnedFix]:
        """The learned fixes for one diagnostic, if ready within ``wait`` seconds.

        ``start_if_stale``: when no diagnostics of this version came yet (the light
        bulb as the user types asks about the diagnostics from before the keystroke),
        do not make the fixes for the new text on the request path: start them on
        the loop's next turn, ready when that text's diagnostics come and the
        editor asks again (about 1 ms a keystroke in the session benchmark).
        """
        cached_version, entries = self._cache.get(uri, (None, {}))
        key = diag_id(raw)
        if cached_version != version and start_if_stale:
            asyncio.get_running_loop().call_soon(self.prepare, uri, version, [raw])
            return []
        if cached_version != version or key not in entries:
            self._prepare(uri, version, [raw], asked=True)
            cached_version, entries = self._cache.get(uri, (None, {}))
            if cached_version != version or key not in entries:
                return []
        pending = entries[key]
        if pending.job.imports != self._imports_for(uri, pending.job.language, raw):
            # The workspace's imports of the name changed since (a file saved, the scan done): again.
            del entries[key]
            return await self.get(uri, version, raw, wait=wait)
        future = pending.job.result
        if not future.done():
            job = pending.job
            if not pending.fitting and not any(
                may_apply(p, job.language, job.text, job.info, seen=times) for _, p, times in job.patterns
            ):
                return []  # certain without the worker: none of them fits the code here
            asked = time.perf_counter()
            first = pending.first
            if first is not None:
                self._jobs.hurry(first)
                if await made_in_time(first, wait) and (found := _leading(pending, result_of(first))) is not None:
                    return self._fixes(pending, found, keep=False)  # the whole job's list comes for the next menu
            self._jobs.hurry(job)  # still queued behind the publish's other diagnostics (or the first few)
            if not await made_in_time(job, wait - (time.perf_counter() - asked)):
                return []
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug(
                    "learned fixes: %d patterns, waited %.1f ms for a job started %.1f ms before the request",
                    len(job.patterns),
                    (time.perf_counter() - asked) * 1000,
                    (asked - job.created) * 1000,
                )
        try:
            found = future.result()
        except CancelledError:
            return []
        except Exception as exc:  # noqa: BLE001 - a bug in one pattern must not cost the request
            logger.warning("instantiating learned fixes failed: %s", type(exc).__name__)
            return []
        return self._fixes(pending, found, keep=True)

    @staticmethod
    def _fixes(pending: _Pending, found: list[Found], *, keep: bool) -> list[LearnedFix]:
        """``found`` as learned fixes; ``keep``: the whole job's, kept (asked again, the same objects)."""
        if keep and pending.made:
            return list(pending.made[0])
        made = [
            LearnedFix(pattern=stats.pattern, stats=stats, edits=edits, title=title, recalled=recalled, run=run)
            for index, edits, title, recalled, run in found
            if (stats := pending.stats[index]).pattern is not None
        ]
        if keep:
            pending.made.append(made)
        return list(made)


def _leading(pending: _Pending, found: list[Found] | None) -> list[Found] | None:
    """The first job's fixes (as indices of the whole job's patterns) if they decide the menu's first.

    They do when one applies without recalled names and fits a run of statements (every pattern
    that could is in the first job), or is of the best-evidence few (and none fits a run).
    """
    if not found:
        return None
    found = [(pending.picked[index], edits, title, recalled, run) for index, edits, title, recalled, run in found]
    own = [f for f in found if not f[3]]
    decided = any(f[4] for f in own) or (own and not any(f[4] for f in found) and own[0][0] < ASKED_FIRST)
    return found if decided else None


@dataclass(frozen=True, slots=True)
class _Pending:
    """A diagnostic's job and the evidence of the patterns it tries (the worker gets only the patterns)."""

    job: Job
    stats: list[PatternStats]
    fitting: bool = False
    """Only patterns that may fit were kept (:meth:`LearnedFixes._submit` for a request)."""
    made: list[list[LearnedFix]] = field(default_factory=list)
    """The fixes once made (one list at most): asked again, the same objects (``actions/memo.py`` knows them so)."""
    first: Job | None = None
    """A request's job of the best-evidence :data:`ASKED_FIRST` patterns (and any of several lines), made first."""
    picked: tuple[int, ...] = ()
    """The indices in :attr:`job` of the first job's patterns."""
