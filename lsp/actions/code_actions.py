"""Code actions: the upstreams' actions and learned quick fixes, ranked by what the user does.

For each diagnostic of the request's context, the candidates are the
upstreams' actions for it plus the learned fixes instantiated from patterns
(:mod:`fixlore.lsp.learning.fixes`). :mod:`fixlore.lsp.actions.assemble` ranks
them with the knowledge and gives every action fixlore's ``fixlore.accept``
command, whose token (kept here, in memory) says what was offered, so the
acceptance is recorded when the editor applies the action (every client runs
an action's command after its edit). A ``codeAction/resolve`` is no
acceptance: clients may resolve actions they only show or preview, and a
replay that resolved every action made each of them "accepted".

Only memory is touched on the request path: the upstreams are asked through
the proxy, learned fixes come from a cache filled in the background.

Serves: ``textDocument/codeAction``, ``codeAction/resolve``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types
from pygls.uris import to_fs_path

from fixlore.abstraction import apply_edits
from fixlore.lsp.actions.assemble import Assembly, Plan, assemble
from fixlore.lsp.actions.formatting import FixFormatter, formatter_command, replacing_lines, with_edits
from fixlore.lsp.actions.memo import AssemblyMemo
from fixlore.lsp.actions.preferred import own_edits, title_suppresses
from fixlore.lsp.actions.tokens import ACCEPT, MAX_TOKENS, Offer, Tokens, token_of
from fixlore.lsp.documents import document_language
from fixlore.lsp.hub import from_lsp_edits
from fixlore.lsp.in_flight import InFlight
from fixlore.lsp.learning.timeline import text_digest

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from fixlore.abstraction import Pattern
    from fixlore.knowledge import EventKind, Knowledge
    from fixlore.lsp.learning.fixes import LearnedFix
    from fixlore.lsp.ports import Editor
    from fixlore.lsp.proxy.core import PendingActions
    from fixlore.lsp.transport.pygls_adapter import PyglsServer

logger = logging.getLogger(__name__)

INVOKED = 1
AUTOMATIC = 2
MAX_OFFER_DOCUMENTS = 256
"""Documents whose counted offers are remembered (all forgotten at once past this: a menu is counted again)."""


class UpstreamActions(Protocol):
    """The upstreams' side of code actions (the proxy)."""

    def start_code_actions(self, params: Any) -> PendingActions:
        """Ask every upstream for its code actions now; await the answers later."""

    async def resolve_code_action(self, action: Any) -> Any:
        """Resolve an action with the upstream that made it."""


class KnowledgeSide(Protocol):
    """The knowledge store as code actions use it (the learning loop's ``store``)."""

    knowledge: Knowledge | None

    @property
    def executor(self) -> Executor:
        """The worker threads store work runs in."""

    def record(self, kind: EventKind, pattern: Pattern) -> None:
        """Queue one event."""


class LearnedSide(Protocol):
    """The learning side of code actions (the learning loop)."""

    async def learned_fixes(
        self, uri: str, version: int | None, diagnostic: dict[str, Any], *, invoked: bool = False
    ) -> list[LearnedFix]:
        """The learned fixes for one diagnostic (waits briefly at most; longer when the user asked)."""

    def saw_offers(
        self, uri: str, version: int | None, groups: list[tuple[dict[str, Any], tuple[Pattern, ...], dict[str, str]]]
    ) -> None:
        """The user was shown these actions for these diagnostics."""

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
        """The user chose an action fixlore offered (``twins``: others that make the same edit)."""


class CodeActions:
    """Assembles code-action answers from the upstreams' actions and the learned fixes."""

    def __init__(
        self,
        editor: Editor,
        upstreams: UpstreamActions,
        learning: LearnedSide,
        store: KnowledgeSide,
        in_flight: InFlight | None = None,
        resolves_edits: Callable[[], bool] = lambda: False,
    ) -> None:
        self._editor = editor
        self._resolves_edits = resolves_edits
        """Whether the editor resolves an action's edit (then a fix's layout can wait for the pick)."""
        self._formatters: dict[tuple[str, ...], FixFormatter] = {}
        self._in_flight = in_flight or InFlight()
        """The code actions being answered (:mod:`~fixlore.lsp.in_flight`): what nobody waits for runs after."""
        self._upstreams = upstreams
        self._learning = learning
        self._store = store
        self.tokens = Tokens()
        """What each ``fixlore.accept`` token offered (memory only)."""
        self.memo: AssemblyMemo[Plan] = AssemblyMemo()
        """The same question asked again ranks as before (:mod:`~fixlore.lsp.actions.memo`)."""
        self._offered: dict[str, tuple[int | None, set[tuple[Any, ...]]]] = {}
        """uri -> the version and the (diagnostic, pattern) offers already counted for it."""

    async def code_action(self, raw: dict[str, Any]) -> list[dict[str, Any]] | None:
        """``textDocument/codeAction``: the ranked actions; an invoked list counts as offered.

        The offers are recorded right after the answer is sent (the loop's next
        turn), not before it: ~0.5 ms of every invoked list the editor does not
        wait for. An acceptance comes a round trip later, after them.
        """
        with self._in_flight.answering():
            assembly = await self.build(raw, self.tokens)
        if assembly.offered:
            asyncio.get_running_loop().call_soon(self._record_offers_later, assembly)
        if assembly.actions and self._formats(assembly):
            return [self._withhold(action, assembly.uri) for action in assembly.actions]
        return assembly.actions or None

    def formatter(self, uri: str) -> FixFormatter | None:
        """The formatter of ``uri``'s fixes the settings name now (:mod:`~fixlore.lsp.actions.formatting`), if any.

        ``None`` for a notebook's cell or an untitled buffer (no file whose
        settings apply) and for an editor that takes edits inline.
        """
        doc = self._editor.open_document(uri) if uri.startswith("file:") else None
        if doc is None or not self._resolves_edits():
            return None
        command = formatter_command(self._editor.config, doc.language_id or "")
        if command is None:
            return None
        formatter = self._formatters.get(command)
        if formatter is None:
            formatter = self._formatters[command] = FixFormatter(command)
        return formatter

    def _formats(self, assembly: Assembly) -> bool:
        """Whether the quick fixes of this answer are formatted when the editor resolves them."""
        return self.formatter(assembly.uri) is not None

    def _withhold(self, action: dict[str, Any], uri: str) -> dict[str, Any]:
        """``action`` without its edit of ``uri``, kept behind its token for ``codeAction/resolve`` to format."""
        token = token_of(action)
        offer = self.tokens.get(token) if token else None
        if offer is None or not _formattable(action, uri):
            return action
        offer.withheld = action["edit"]
        out = {key: value for key, value in action.items() if key != "edit"}
        out.setdefault("data", WITHHELD)  # `data` is what says "resolve me" to some clients
        return out

    async def _formatted(self, out: dict[str, Any], offer: Offer) -> dict[str, Any]:
        """``out`` (an action with its edit) with the lines the edit writes formatted, where the code there was."""
        formatter = self.formatter(offer.uri)
        doc = self._editor.open_document(offer.uri)
        if (
            formatter is None
            or doc is None
            or not _formattable(out, offer.uri)
            or doc.version != offer.version
            or doc.source != offer.text
        ):
            return out  # no formatter now, not one document's text edits, or the document moved on: as it came
        try:
            edits = from_lsp_edits(offer.text, own_edits(out, offer.uri), doc.position_codec.client_num_units)
            made = await formatter.formatted(_path(offer.uri), offer.text, apply_edits(offer.text, edits))
        except (KeyError, TypeError, ValueError):  # an edit the upstream got wrong
            return out
        replacement = None if made is None else replacing_lines(offer.text, made)
        if replacement is not None:
            out["edit"] = with_edits(out["edit"], offer.uri, [replacement])
        return out

    def _record_offers_later(self, assembly: Assembly) -> None:
        try:
            self.record_offers(assembly)
        except Exception:  # a bug here must not stop the loop's other work; the answer is out
            logger.exception("recording offers failed")

    def _start_upstream(self, raw: dict[str, Any]) -> PendingActions | None:
        """Ask the upstreams for their code actions for ``raw`` params now."""
        try:
            return self._upstreams.start_code_actions(raw)
        except Exception as exc:  # one failing source must not cost the others (STYLE.md)
            logger.warning("upstream code actions failed: %s", type(exc).__name__)
            return None

    async def _learned(
        self, uri: str, version: int | None, diagnostics: list[dict[str, Any]], *, asked: bool
    ) -> list[list[LearnedFix]]:
        """The learned fixes per context diagnostic (each waits briefly at most, longer when ``asked``)."""
        if not diagnostics:
            return []
        fixes = self._learning.learned_fixes
        if len(diagnostics) == 1:  # the usual case: no task
            return [await fixes(uri, version, diagnostics[0], invoked=asked)]
        return list(await asyncio.gather(*(fixes(uri, version, d, invoked=asked) for d in diagnostics)))

    async def build(self, raw: dict[str, Any], tokens: Tokens, *, count: bool = True) -> Assembly:
        """Everything a code-action answer needs, ranked; shared by the handler and explain."""
        uri = str(((raw.get("textDocument") or {}).get("uri")) or "")
        context = raw.get("context") or {}
        diagnostics = [d for d in context.get("diagnostics") or [] if isinstance(d, dict)]
        invoked = context.get("triggerKind") == INVOKED
        doc = self._editor.open_document(uri)
        version = None if doc is None else doc.version
        # The upstreams are asked first and answer while the learned fixes are looked up.
        started = time.perf_counter()
        pending = self._start_upstream(raw)
        try:
            # A list the user asked for (or an editor that does not say) waits longer for learned fixes.
            learned = await self._learned(uri, version, diagnostics, asked=context.get("triggerKind") != AUTOMATIC)
        except BaseException:
            if pending is not None:
                pending.drop()
            raise
        waited = time.perf_counter()
        upstream = await upstream_actions(pending)
        answered = time.perf_counter()
        assembly = assemble(
            uri=uri,
            doc=doc,
            language=None if doc is None else document_language(doc),
            diagnostics=diagnostics,
            upstream=upstream,
            learned=learned,
            knowledge=self._store.knowledge,
            executor=self._store.executor,
            tokens=tokens,
            invoked=invoked and count,
            now=time.time(),
            memo=self.memo,
        )
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "code action: %d diagnostics, learned fixes %.1f ms (%d), upstreams %.1f ms more, assembly %.1f ms",
                len(diagnostics),
                (waited - started) * 1000,
                sum(map(len, learned)),
                (answered - waited) * 1000,
                (time.perf_counter() - answered) * 1000,
            )
        return assembly

    def record_offers(self, assembly: Assembly) -> None:
        """An invoked list was seen: each candidate of each diagnostic was offered (once per version)."""
        if not assembly.offered:
            return
        from fixlore.knowledge import EventKind

        for pattern in self._not_counted(assembly):
            self._store.record(EventKind.OFFERED, pattern)
        groups = [(g.diag, g.patterns, {fp: text_digest(t) for fp, t in g.made().items()}) for g in assembly.groups]
        self._learning.saw_offers(assembly.uri, assembly.version, groups)

    def _not_counted(self, assembly: Assembly) -> list[Pattern]:
        """The offers of ``assembly`` not counted yet for its document's version (a menu opened twice is one offer).

        Counting them again would also change the rule's evidence, and with it
        every plan of the rule (:mod:`~fixlore.lsp.actions.memo`), at each menu.
        """
        entry = self._offered.get(assembly.uri)
        if entry is None or entry[0] != assembly.version:
            if len(self._offered) >= MAX_OFFER_DOCUMENTS:
                self._offered.clear()
            entry = self._offered[assembly.uri] = (assembly.version, set())
        seen = entry[1]
        out = []
        for group in assembly.groups:
            where = (group.diag.get("code"), repr(group.diag.get("range")))
            for pattern in group.patterns:
                key = (*where, pattern.fingerprint)
                if key not in seen:
                    seen.add(key)
                    out.append(pattern)
        return out

    async def resolve(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Resolve at the owner, keeping fixlore's command (which records the acceptance when run)."""
        token = token_of(raw)
        offer = self.tokens.get(token) if token else None
        if offer is not None and offer.withheld is not None:
            return await self._formatted({**raw, "edit": offer.withheld}, offer)
        if offer is None and _withheld_mark(raw):
            logger.warning("an action resolved too late: its edit is forgotten (over %d actions since)", MAX_TOKENS)
            return raw
        if offer is not None and offer.learned:
            return raw
        upstream_raw = dict(raw)
        upstream_raw.pop("command", None)
        if offer is not None and offer.original is not None:
            upstream_raw["command"] = offer.original
        resolved = await self._upstreams.resolve_code_action(upstream_raw)
        if not isinstance(resolved, dict):
            return raw
        out = dict(resolved)
        if token is not None:
            if offer is not None:
                offer.original = out.get("command") if isinstance(out.get("command"), dict) else offer.original
            out["command"] = raw.get("command") or {
                "title": out.get("title", ""),
                "command": ACCEPT,
                "arguments": [token],
            }
        if offer is not None and "edit" in out:  # an upstream's fix whose edit came only now (Biome's)
            return await self._formatted(out, offer)
        return out

    def accept(self, offer: Offer) -> None:
        """Record an acceptance once per offer (an editor may run the command twice)."""
        if offer.done:
            return
        offer.done = True
        self._learning.accepted(
            offer.pattern, offer.siblings, offer.invoked, offer.uri, offer.version, offer.diag, offer.text, offer.twins
        )


def _formattable(action: dict[str, Any], uri: str) -> bool:
    """A quick fix (not a suppression) whose edit is text edits of ``uri`` alone."""
    edit = action.get("edit")
    return (
        isinstance(edit, dict)
        and str(action.get("kind", "")).startswith("quickfix")
        and bool(own_edits(action, uri))
        and not set(edit) - {"changes", "documentChanges"}  # annotated changes: as they came
        and not title_suppresses(str(action.get("title", "")))
    )


WITHHELD = {"fixlore": {"withheld": True}}
"""The ``data`` of an action fixlore holds the edit of (and that had no ``data`` of its own)."""


def _withheld_mark(raw: dict[str, Any]) -> bool:
    return raw.get("data") == WITHHELD


def _path(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


async def upstream_actions(pending: PendingActions | None) -> list[Any]:
    """The upstreams' code actions asked for by :meth:`CodeActions.build` (``[]`` on failure)."""
    if pending is None:
        return []
    try:
        result = await pending.answers()
    except Exception as exc:  # one failing source must not cost the others (STYLE.md)
        logger.warning("upstream code actions failed: %s", type(exc).__name__)
        return []
    if not isinstance(result, list):
        return []
    # The proxy answers (upstream id, action) pairs, actions' ``data`` already wrapped.
    return [item[1] if isinstance(item, tuple) else item for item in result]


def register(server: PyglsServer, actions: CodeActions) -> None:
    """Register the code-action handlers (raw params: see ``fixlore.lsp.transport.protocol.RAW_PARAMS``)."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True),
    )
    async def code_action(params: dict[str, Any]) -> Any:
        return server.protocol.answer_now(await actions.code_action(params))

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(params: dict[str, Any]) -> dict[str, Any]:
        return await actions.resolve(params)


__all__ = ["CodeActions", "register", "upstream_actions"]
