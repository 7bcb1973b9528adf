"""The learning loop: acceptances, manual fixes, verification.

* The knowledge store side (opening, recording, other windows, status) is in
  :mod:`fixlore.lsp.learning.store`.
* Keeps a :class:`~fixlore.lsp.learning.timeline.DocTimeline` per open document
  from the document events and every diagnostics publish (both from
  :class:`~fixlore.lsp.dispatch.Dispatch`). When the user pauses (or saves)
  and the file parses, the document *settles*: diagnostics that
  vanished since the last settled state are fix events, unless an accepted
  code action explains them.
* A document settles only once every source with diagnostics in the last
  settled state has reported for the current version (or
  :data:`SOURCE_WAIT_S` passed): a slow upstream's "not reported yet" is not
  "fixed".
* Verifies accepted actions and manual fixes at the next settle (gone and no
  new error near it: succeeded; otherwise failed) and watches for undo
  (:mod:`fixlore.lsp.learning.verification`).
* A manual fix's pattern is extracted in a worker process
  (:mod:`fixlore.lsp.learning.extractor`); a fix under verification is a
  :class:`~fixlore.lsp.learning.watch.Watch`.

Everything slow (parsing, libcst, the store) runs in worker threads; handlers
only touch memory. Logs carry pattern ids and counts, never code.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from concurrent.futures import BrokenExecutor
from typing import TYPE_CHECKING, Any

from fixlore.abstraction import Extracted, Pattern, Signature, syntax_problems
from fixlore.knowledge import EventKind
from fixlore.lsp.documents import document_language
from fixlore.lsp.in_flight import InFlight
from fixlore.lsp.learning.clock import Clock, LoopClock
from fixlore.lsp.learning.extractor import Extractor, is_token_repair
from fixlore.lsp.learning.fixes import INVOKED_WAIT_S, REQUEST_WAIT_S, LearnedFixes
from fixlore.lsp.learning.schedule import SettleSchedule
from fixlore.lsp.learning.store import StoreSide
from fixlore.lsp.learning.timeline import (
    DocTimeline,
    Tracked,
    absorb_broken,
    as_it_was,
    diag_info,
    diag_line,
)
from fixlore.lsp.learning.verification import Verification
from fixlore.lsp.learning.watch import Offers, Settled, Watch, near

if TYPE_CHECKING:
    from pathlib import Path

    from fixlore.lsp.config import FixloreConfig
    from fixlore.lsp.hub import DiagnosticsHub
    from fixlore.lsp.learning.fixes import LearnedFix
    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)

BASELINE_WAIT_S = 2.0
"""The longest a file's first settle waits for the editor's requests to quiet down (:meth:`InFlight.quiet`)."""
SOURCE_WAIT_S = 10.0
"""How long a settle waits for every source to report for the current version.

Past it, the document settles without the late sources: their diagnostics
are kept as they were, neither fixed nor new, until they report."""


SyntaxCheck = Callable[[str, str], Awaitable[Collection[object]]]
"""(language, text) -> its syntax problems (:meth:`fixlore.lsp.hub.SyntaxChecker.problems`)."""


class LearningLoop:
    """One per server, built by ``create_server`` with the editor and the diagnostics hub it reads.

    Its parts: ``store`` (the knowledge store, :class:`StoreSide`), ``fixes``
    (learned fixes per publish), ``extractor`` (manual fixes' patterns).
    """

    def __init__(
        self,
        editor: Editor,
        hub: DiagnosticsHub,
        *,
        clock: Clock | None = None,
        extractor: Extractor | None = None,
        syntax: SyntaxCheck | None = None,
        in_flight: InFlight | None = None,
    ) -> None:
        self._editor = editor
        self._in_flight = in_flight or InFlight()
        """The code actions being answered: a settle compares its texts after them (:mod:`~fixlore.lsp.in_flight`)."""
        self._syntax = syntax or self._syntax_in_thread
        """Whether a settled text parses: the diagnostics' syntax check (one parse per text, off the GIL)."""
        self.store = StoreSide(editor, follower=self)
        self._diagnostics = hub
        self._clock = clock or LoopClock()
        """Every reading of the time and every timer of the loop (a test passes a fake)."""
        self.timelines: dict[str, DocTimeline] = {}
        self.fixes = LearnedFixes(self.store)
        self.extractor = extractor or Extractor()
        self._offers = Offers()
        self._schedule: SettleSchedule[Settled] = SettleSchedule(self._clock, self._try_settle)
        self.verification = Verification(editor, self.store, self._clock, self._schedule, self.timelines, self.pause_s)
        """The fixes taken or made, judged at the settles and watched for undo."""
        self._closing: dict[str, DocTimeline] = {}
        """Documents closed while their settle ran: it finishes, then their offers and watches go."""
        self.fixes_learned = 0
        self.settles = 0
        """Settle checks run this session (parsing or not): lets tests wait for one."""

    async def _syntax_in_thread(self, language: str, text: str) -> Collection[object]:
        return await asyncio.get_running_loop().run_in_executor(self.store.executor, syntax_problems, language, text)

    def config_changed(self, old: FixloreConfig, new: FixloreConfig, root: Path | None) -> None:
        """The settings changed: the store opens, or reopens when its scopes changed."""
        self.store.config_changed(old, new, root)

    def read_folders(self, folders: list[Path]) -> None:
        """Read the workspace folders' files for their imports and definitions (once per folder, on a thread)."""
        for folder in folders:
            self.fixes.imports.start_scan(folder)

    def knowledge_changed(self, signature: Signature | None) -> None:
        """A learned fix may be new: the learned-fix cache stops believing there is none."""
        self.fixes.knowledge_changed(signature)

    async def learned_fixes(
        self, uri: str, version: int | None, diagnostic: dict[str, Any], *, invoked: bool = False
    ) -> list[LearnedFix]:
        """The learned fixes for one diagnostic of a code-action request (a brief wait, longer if ``invoked``)."""
        wait = INVOKED_WAIT_S if invoked else REQUEST_WAIT_S
        return await self.fixes.get(uri, version, diagnostic, wait=wait, start_if_stale=not invoked)

    def documents_open(self) -> bool:
        """Whether any document is open."""
        return bool(self.timelines)

    def shutdown(self) -> None:
        """Stop the timers, then flush and close the store."""
        self._schedule.close()
        self.extractor.close()
        self.fixes.close()
        self.store.close_store()

    # -- events --------------------------------------------------------------------------
    def accepted(
        self,
        pattern: Pattern | None,
        siblings: tuple[Pattern, ...],
        invoked: bool,
        uri: str,
        version: int | None,
        diag: dict[str, Any] | None,
        before_text: str,
        twins: tuple[Pattern, ...] = (),
    ) -> None:
        """The user chose an action fixlore offered: record it and start verifying it.

        ``twins`` make the same edit here (a learned fix and the upstream action it
        equals): not turned down, and not taken either. Here they agree; where they
        differ (ruff's removal of every unused name of a statement, the learned
        removal of one) this choice says nothing about which the user wants.
        """
        if pattern is None:
            return
        self.store.record(EventKind.ACCEPTED, pattern)
        same_edit = {pattern.fingerprint, *(twin.fingerprint for twin in twins)}
        if invoked:
            for other in siblings:
                if other.fingerprint not in same_edit:
                    self.store.record(EventKind.REJECTED, other)
        timeline = self.timelines.get(uri)
        if diag is None or timeline is None:
            return
        line = timeline.line_now(diag_line(diag), version)
        tracked = Tracked(raw=diag, version=version, text=before_text, line=diag_line(diag) if line is None else line)
        timeline.followed.append(tracked)
        doc = self._editor.open_document(uri)
        applied = doc is None or doc.source != before_text
        if doc is not None and applied:
            timeline.explain_edit(version, before_text, doc.source)
        self.verification.watch(
            uri, Watch(tracked, pattern, before_text, self._clock.now(), accepted=True, applied=applied)
        )
        if applied:
            # An accepted action leaves a state made by a tool, not half-typed: it settles
            # as soon as its diagnostics are in (the user may fix the next thing at once).
            self._schedule.want(uri, delay=0.0)

    def saw_offers(
        self,
        uri: str,
        version: int | None,
        groups: list[tuple[dict[str, Any], tuple[Pattern, ...], dict[str, str]]],
    ) -> None:
        """The user was shown these actions for these diagnostics (an invoked list).

        Per group: the diagnostic, the candidates' patterns, and for upstream actions
        whose edit came with them, a digest of the text that edit makes (by fingerprint).
        """
        self._offers.saw(uri, version, groups)

    def _rejected_by_hand(self, uri: str, tracked: Tracked, after: str, timeline: DocTimeline) -> None:
        """A diagnostic the user was offered actions for, fixed by hand: each of them was turned down."""
        line_now = timeline.line_now if self.timelines.get(uri) is timeline else as_it_was
        for pattern in self._offers.turned_down(uri, tracked, after, line_now):
            self.store.record(EventKind.REJECTED, pattern)

    # -- document events (from Dispatch) ---------------------------------------------------------------
    def pause_s(self) -> float:
        """The configured pause after which a vanished diagnostic counts as fixed."""
        return self._editor.config.manual_fix_pause_ms / 1000

    def did_open(self, uri: str, raw: Any) -> None:
        """A new timeline; the first settle happens after a pause, once every source reported."""
        doc = self._editor.open_document(uri)
        self.timelines[uri] = DocTimeline(uri, changed_at=self._clock.now(), text=doc.source if doc else None)
        self._schedule.want(uri, delay=self.pause_s())
        self.fixes.opened(uri)

    def did_change(self, uri: str, raw: Any) -> None:
        """Shift what is followed; restart the pause; notice an undo."""
        timeline = self.timelines.setdefault(uri, DocTimeline(uri))
        changes = raw.get("contentChanges", []) if isinstance(raw, dict) else []
        version = (raw.get("textDocument") or {}).get("version") if isinstance(raw, dict) else None
        doc = self._editor.open_document(uri)
        new_text = doc.source if doc is not None else None
        timeline.apply_change(version, changes, timeline.text, new_text)
        timeline.text = new_text
        timeline.changed_at = self._clock.now()
        self._schedule.stop_waiting(uri)
        self.verification.check_undo(uri)
        self._schedule.want(uri, delay=0.0 if self.verification.applied(uri) else self.pause_s())

    def did_save(self, uri: str, raw: Any) -> None:
        """A save settles the document at once (if its diagnostics are current)."""
        self._schedule.want(uri, delay=0.0)
        self.fixes.saved(uri)

    def did_close(self, uri: str, raw: Any) -> None:
        """Forget the document (memory only); a settle under way finishes first.

        Fix, save, close: the save's settle may still be parsing the text when the
        close comes, and that state is the user's fix; it is compared as settled,
        with the offers it turns down, and only then forgotten.
        """
        timeline = self.timelines.pop(uri, None)
        self._schedule.forget(uri)
        self.fixes.forget(uri)
        if timeline is not None and uri in self._schedule.settling:
            self._closing[uri] = timeline
            return
        self._forget(uri)

    def _forget(self, uri: str) -> None:
        if uri in self.timelines:
            return  # opened again meanwhile: what is remembered is the new one's too
        self.verification.forget(uri)
        self._offers.forget(uri)

    def published(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        """Every merged publish: remember it; settle if one is due; precompute learned fixes."""
        timeline = self.timelines.get(uri)
        if timeline is None:
            return
        timeline.published(version, diagnostics)
        self.fixes.published(uri, version, diagnostics)
        if timeline.settled_version is None and not timeline.changes:
            # The text as opened, and what the editor was shown of it: that is the
            # baseline at once (a user who fixes what the lightbulb or the Problems
            # panel showed, right after opening, is making a fix to learn from).
            # Now, not on a timer: an edit read in the same turn would cancel it.
            self._schedule.want_now(uri)
        self._schedule.if_due(uri)

    # -- settling ------------------------------------------------------------------------
    def _try_settle(self, uri: str) -> None:
        timeline = self.timelines.get(uri)
        doc = self._editor.open_document(uri)
        if timeline is None or doc is None:
            return
        if timeline.latest_version != doc.version:
            return  # this version's diagnostics are not in yet: the next publish settles
        lagging = self._lagging(uri, timeline)
        if lagging:
            left = SOURCE_WAIT_S - (self._clock.now() - timeline.changed_at)
            if left > 0:
                self._schedule.wait_for_sources(uri, left)
                return  # a source's list is for an older version: its next publish settles
            logger.info("settling without %d source(s) that did not report within %.0f s", len(lagging), SOURCE_WAIT_S)
        running = uri in self._schedule.settling
        self._schedule.started(uri)
        # The state is taken now, when it was found settled: the task may start after
        # the next edit, whose diagnostics are not in yet (a baseline of none lost a fix).
        state = Settled(doc.version, doc.source, self._diagnostics.current_by_source(uri), lagging, self._clock.now())
        if running:
            self._schedule.queue(uri, state)  # settled after the one running, whatever is typed meanwhile
            return
        self._editor.spawn(self._settle(uri, state), name="settle")

    def _lagging(self, uri: str, timeline: DocTimeline) -> set[str]:
        """Sources not reported for the current version yet that could make a diagnostic seem fixed.

        Only a source with diagnostics in the baseline can: one that had none
        (or has stopped reporting, as fixlore's own syntax check does once an
        upstream serves the document) need not be waited for. A source that
        went away (:meth:`DiagnosticsHub.drop_source`) counts as not reported.
        """
        hub = self._diagnostics
        lagging = hub.lagging(uri)
        reported = hub.source_versions(uri)
        return {t.origin for t in timeline.baseline if t.origin and (t.origin in lagging or t.origin not in reported)}

    async def _settle(self, uri: str, state: Settled) -> None:
        """Settle ``state``, then each state of ``uri`` found due while it ran, one at a time."""
        queued: Settled | None = state
        try:
            while queued is not None:
                try:
                    await self._settle_once(uri, queued)
                finally:
                    self.settles += 1
                queued = self._schedule.next_queued(uri)
        finally:
            self._schedule.settling.discard(uri)
            if self._closing.pop(uri, None) is not None:
                self._forget(uri)
        self._schedule.if_due(uri)  # asked again while this one ran

    async def _settle_once(self, uri: str, state: Settled) -> None:
        timeline = self.timelines.get(uri)
        doc = self._editor.open_document(uri)
        if timeline is None or doc is None:
            return
        num_units = doc.position_codec.client_num_units
        language = document_language(doc)
        if language is None:
            return
        version, text, by_source, lagging, taken = (
            state.version,
            state.text,
            state.by_source,
            state.lagging,
            state.taken,
        )
        diagnostics = [d for diags in by_source.values() for d in diags]
        origins = [key for key, diags in by_source.items() for _ in diags]
        if timeline.settled_version is None:
            # The text as opened: its check waits for the editor's first requests about it
            # (they are what the user waits for); the states after it are queued behind it.
            await self._in_flight.quiet(BASELINE_WAIT_S)
        problems = await self._syntax_of(language, text)
        if problems is None:
            return  # not settled: the next pause or save tries again
        await self._in_flight.wait()
        closed = self._closing.get(uri) is timeline  # the state taken is the document's last
        current = self._editor.open_document(uri)
        if not closed and (current is None or self.timelines.get(uri) is not timeline):
            return
        moved = not closed and current is not None and current.version != version
        if problems:
            # Not a state to learn from; but a syntax error left standing for the
            # whole pause joins the baseline, so fixing it later can be learned.
            if not moved:
                absorb_broken(timeline, version, text, diagnostics, origins)
            return
        # The state was settled (a pause, a save, an accepted action) even if the
        # user typed on while it was parsed: it is compared and becomes the
        # baseline, its lines carried through the edits made since.
        result = timeline.settle(version, text, diagnostics, origins=origins, lagging=lagging)
        if moved:
            timeline.carry_to_now(version)
        # A fix accepted while this state was being parsed is not in it: its turn is the next settle.
        watches = self.verification.started_by(uri, taken)
        unknown = {t.key for t in timeline.baseline if t.origin in lagging}
        claimed = self.verification.judge(timeline, watches, diagnostics, result.new, unknown)
        for tracked in result.vanished:
            if any(tracked.same_as(w.tracked) for w in claimed):
                continue
            if tracked.explained:
                # On lines an accepted action rewrote ("Disable for this line" silencing its
                # neighbours too, a removal of every unused name of the statement): the tool's
                # fix, neither one the user made by hand nor their refusal of what it was offered.
                continue
            if not tracked.broken:
                # Whatever fixlore makes of the fix (an import it cannot keep, a rewrite it
                # cannot see), the user made it instead of the actions they were offered; said
                # now, while the offers are known (a close forgets them, extraction takes a while).
                self._rejected_by_hand(uri, tracked, text, timeline)
            info = diag_info(tracked.raw, tracked.text, num_units)
            new_errors = [d for d in result.new if near(d, tracked.line)]
            self._editor.spawn(
                self._learn_manual(uri, language, tracked, text, info, bool(new_errors)), name="learn-manual"
            )

    async def _syntax_of(self, language: str, text: str) -> Collection[object] | None:
        """A settled text's syntax problems; a check whose process died is made again (in a new one).

        ``None`` once the session is ending, or when the second check's process
        died too (said in the log: a settle is never dropped unheard of).
        """
        for attempt in (1, 2):
            try:
                return await self._syntax(language, text)
            except BrokenExecutor:  # a RuntimeError too: first
                logger.warning("a settle's syntax check lost its process; %s", "again" if attempt < 2 else "unsettled")
            except RuntimeError:  # closed: the session is ending
                return None
        return None

    async def _learn_manual(
        self, uri: str, language: str, tracked: Tracked, after: str, info: Any, broke: bool
    ) -> None:
        result = await self.extractor.extract(language, tracked.text, after, info)
        if not isinstance(result, Extracted):
            logger.info("vanished diagnostic not learned: %s", getattr(result, "reason", "failed"))
            return
        pattern = result.pattern
        if tracked.broken and not is_token_repair(pattern):
            # From broken code only token-sized repairs are fixes; anything larger
            # is the user finishing what they were typing.
            logger.info("syntax repair not learned: category %s", pattern.category.value)
            return
        self.fixes_learned += 1
        self.fixes.made_by_hand(pattern, info.message, result.brought, broke=broke)
        self.store.record(EventKind.MANUAL, pattern)
        self.store.record(EventKind.FAILED if broke else EventKind.SUCCEEDED, pattern)
        timeline = self.timelines.get(uri)
        if timeline is None:
            return
        follow = Tracked(raw=tracked.raw, version=tracked.version, text=tracked.text, line=tracked.line)
        watch = Watch(follow, pattern, tracked.text, self._clock.now(), accepted=False, verified=True)
        self.verification.watch(uri, watch)
        logger.info("learned a manual fix: pattern %s", pattern.fingerprint)
