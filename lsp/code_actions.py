"""Code actions: the upstreams' actions and learned quick fixes, ranked by what the user does.

For each diagnostic of the request's context, the candidates are the
upstreams' actions for it plus the learned fixes instantiated from patterns
(:mod:`fixlore.lsp.learning_fixes`). :mod:`fixlore.lsp.learning_actions` ranks
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
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from fixlore.lsp.documents import document_language
from fixlore.lsp.learning_actions import ACCEPT, Assembly, Offer, Tokens, assemble, token_of
from fixlore.lsp.text_sync import is_range

if TYPE_CHECKING:
    from fixlore.lsp.learning import LearningLoop
    from fixlore.lsp.learning_fixes import LearnedFix
    from fixlore.lsp.proxy.core import PendingActions
    from fixlore.lsp.server import FixloreServer

logger = logging.getLogger(__name__)

INVOKED = 1


def start_upstream_actions(server: FixloreServer, raw: dict[str, Any]) -> PendingActions | None:
    """Ask the upstreams for their code actions for ``raw`` params now (None without a proxy)."""
    proxy = server.features.get("proxy")
    try:
        return None if proxy is None else proxy.start_code_actions(raw)
    except Exception as exc:  # one failing source must not cost the others (STYLE.md)
        logger.warning("upstream code actions failed: %s", type(exc).__name__)
        return None


async def upstream_actions(pending: PendingActions | None) -> list[Any]:
    """The upstreams' code actions asked for by :func:`start_upstream_actions` (``[]`` on failure)."""
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


async def learned_actions(
    learning: LearningLoop | None, uri: str, version: int | None, diagnostics: list[dict[str, Any]]
) -> list[list[LearnedFix]]:
    """The learned fixes per context diagnostic (each waits briefly at most)."""
    if learning is None or not diagnostics:
        return [[] for _ in diagnostics]
    if len(diagnostics) == 1:  # the usual case: no task
        return [await learning.fixes.get(uri, version, diagnostics[0])]
    found = await asyncio.gather(*(learning.fixes.get(uri, version, d) for d in diagnostics))
    return list(found)


async def build(server: FixloreServer, raw: dict[str, Any], tokens: Tokens, *, count: bool = True) -> Assembly:
    """Everything a code-action answer needs, ranked; shared by the handler and explain."""
    uri = str(((raw.get("textDocument") or {}).get("uri")) or "")
    context = raw.get("context") or {}
    diagnostics = [d for d in context.get("diagnostics") or [] if isinstance(d, dict)]
    invoked = context.get("triggerKind") == INVOKED
    doc = server.open_document(uri)
    learning: LearningLoop | None = server.features.get("learning")
    version = None if doc is None else doc.version
    # The upstreams are asked first and answer while the learned fixes are looked up.
    pending = start_upstream_actions(server, raw)
    try:
        learned = await learned_actions(learning, uri, version, diagnostics)
    except BaseException:
        if pending is not None:
            pending.drop()
        raise
    upstream = await upstream_actions(pending)
    language = None if doc is None else document_language(doc)
    knowledge = None if learning is None else learning.knowledge
    return assemble(
        uri=uri,
        doc=doc,
        language=language,
        diagnostics=diagnostics,
        upstream=upstream,
        learned=learned,
        knowledge=knowledge,
        executor=None if learning is None else learning.executor,
        tokens=tokens,
        invoked=invoked and count,
        now=time.time(),
    )


def record_offers(learning: LearningLoop | None, assembly: Assembly) -> None:
    """An invoked list was seen: each candidate of each diagnostic was offered (once per version)."""
    if learning is None:
        return
    from fixlore.knowledge import EventKind

    for pattern in assembly.offered:
        learning.record(EventKind.OFFERED, pattern)
    if assembly.offered:
        learning.saw_offers(assembly.uri, assembly.version, [(g.diag, g.patterns, g.results) for g in assembly.groups])


def register(server: FixloreServer) -> None:
    """Register the code-action handlers; fixlore owns them (the proxy's interim ones step aside)."""
    tokens = Tokens()
    server.features["action_tokens"] = tokens

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True),
    )
    async def code_action(params: dict[str, Any]) -> list[dict[str, Any]] | None:
        assembly = await build(server, params, tokens)
        record_offers(server.features.get("learning"), assembly)
        return assembly.actions or None

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(params: dict[str, Any]) -> dict[str, Any]:
        return await resolve(server, params, tokens)

    # Both handlers read the raw JSON (forwarded losslessly); structuring it
    # with cattrs first cost about a millisecond per request.
    server.protocol.raw_params[types.TEXT_DOCUMENT_CODE_ACTION] = check_code_action_params
    server.protocol.raw_params[types.CODE_ACTION_RESOLVE] = check_resolve_params


def check_code_action_params(params: Any) -> str | None:
    """Why raw ``textDocument/codeAction`` params are unusable, or ``None`` if they are fine."""
    if not isinstance(params, dict):
        return "params must be an object"
    document = params.get("textDocument")
    if not isinstance(document, dict) or not isinstance(document.get("uri"), str):
        return "textDocument must be an object with a string uri"
    if not is_range(params.get("range")):
        return "range must be a range"
    context = params.get("context")
    if not isinstance(context, dict) or not isinstance(context.get("diagnostics"), list):
        return "context must be an object with a diagnostics list"
    if not all(isinstance(d, dict) and is_range(d.get("range")) for d in context["diagnostics"]):
        return "each context diagnostic must be an object with a range"
    if context.get("triggerKind") not in (None, 1, 2):
        return "context.triggerKind must be 1 or 2"
    return None


def check_resolve_params(params: Any) -> str | None:
    """Why raw ``codeAction/resolve`` params are unusable, or ``None`` if they are fine."""
    if not isinstance(params, dict) or not isinstance(params.get("title"), str):
        return "params must be a code action with a string title"
    return None


async def resolve(server: FixloreServer, raw: dict[str, Any], tokens: Tokens) -> dict[str, Any]:
    """Resolve at the owner, keeping fixlore's command (which records the acceptance when run)."""
    token = token_of(raw)
    offer = tokens.get(token) if token else None
    upstream_raw = dict(raw)
    upstream_raw.pop("command", None)
    if offer is not None and offer.original is not None:
        upstream_raw["command"] = offer.original
    proxy = server.features.get("proxy")
    if proxy is None or (offer is not None and offer.learned):
        return raw
    resolved = await proxy.resolve_code_action(upstream_raw)
    if not isinstance(resolved, dict):
        return raw
    out = dict(resolved)
    if token is not None:
        if offer is not None:
            offer.original = out.get("command") if isinstance(out.get("command"), dict) else offer.original
        out["command"] = raw.get("command") or {"title": out.get("title", ""), "command": ACCEPT, "arguments": [token]}
    return out


def accept(server: FixloreServer, offer: Offer) -> None:
    """Record an acceptance once per offer (an editor may run the command twice)."""
    if offer.done:
        return
    offer.done = True
    learning: LearningLoop | None = server.features.get("learning")
    if learning is None:
        return
    learning.accepted(offer.pattern, offer.siblings, offer.invoked, offer.uri, offer.version, offer.diag, offer.text)
