"""fixlore's commands (``workspace/executeCommand``, namespace ``fixlore.``).

``fixlore.accept`` is attached to every code action fixlore returns: the
editor runs it after applying the action's edit, fixlore records the
acceptance, then runs the upstream's own command (if the action had one) at
its owner. The others are the knowledge commands of docs/CONTRACTS.md. Store
work runs in the learning loop's worker threads, never on the event loop.

Serves: ``workspace/executeCommand`` for ``fixlore.*`` (pygls lists them in
``executeCommandProvider``; the proxy adds the upstreams' commands).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from fixlore.knowledge import ExportFilters, InvalidImport, KnowledgeError, PatternStats
from fixlore.lsp.actions.tokens import ACCEPT

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from fixlore.knowledge import Knowledge  # the store's modules load with the store, after `initialize`
    from fixlore.lsp.actions.code_actions import CodeActions
    from fixlore.lsp.hub import DiagnosticsHub
    from fixlore.lsp.learning.loop import LearningLoop
    from fixlore.lsp.proxy.core import Proxy

logger = logging.getLogger(__name__)

T = TypeVar("T")

EXPLAIN = "fixlore.explain"
PATTERNS = "fixlore.patterns"
FORGET = "fixlore.forget"
EXPORT = "fixlore.export"
IMPORT = "fixlore.import"
STATS = "fixlore.stats"
SET_LEARNING = "fixlore.setLearning"
DASHBOARD = "fixlore.dashboard"


def pattern_summary(stats: PatternStats) -> dict[str, Any]:
    """One pattern as the ``fixlore.patterns`` command shows it (abstract text only)."""
    p = stats.pattern
    out: dict[str, Any] = {
        "id": stats.fingerprint,
        "scope": stats.scope.value,
        "counts": asdict(stats.counts),
        "firstSeen": stats.first_seen,
        "lastSeen": stats.last_seen,
    }
    if p is not None:
        sig = p.signature
        out["signature"] = {"language": sig.language, "source": sig.source, "code": sig.code, "message": sig.message}
        out["category"] = p.category.value
        if p.shape is not None:
            out["shape"] = {"anchor": p.shape.anchor.value, "before": p.shape.before, "after": p.shape.after}
        if p.action is not None:
            out["action"] = {"kind": p.action.kind, "title": p.action.title}
    return out


def register(
    server: LanguageServer, actions: CodeActions, learning: LearningLoop, proxy: Proxy, hub: DiagnosticsHub
) -> None:
    """Register fixlore's commands."""
    store = learning.store

    async def knowledge() -> Knowledge:
        found = await store.ready()
        if found is None:
            raise JsonRpcInternalError("fixlore's knowledge store is not open (see the log)")
        return found

    async def in_worker(fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(store.executor, fn, *args)

    @server.command(ACCEPT)
    async def accept_command(*args: Any) -> Any:
        offer = actions.tokens.get(args[0]) if args and isinstance(args[0], str) else None
        if offer is None:
            logger.info("accept with an unknown or expired token")
            return None
        actions.accept(offer)
        original = offer.original
        if not original or not isinstance(original.get("command"), str):
            return None
        return await proxy.execute_command(original["command"], original.get("arguments"))

    @server.command(EXPLAIN)
    async def explain_command(*args: Any) -> Any:
        from fixlore.lsp.actions.explain import explain_at

        if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], dict):
            raise JsonRpcInvalidParams("fixlore.explain expects [uri, {line, character}]")
        return await explain_at(actions, hub, learning, proxy, args[0], args[1])

    @server.command(PATTERNS)
    async def patterns_command(*args: Any) -> Any:
        language = args[0] if args and isinstance(args[0], str) else None
        k = await knowledge()
        found = await in_worker(k.list_patterns, language)
        return [pattern_summary(s) for s in found]

    @server.command(FORGET)
    async def forget_command(*args: Any) -> Any:
        if not args or not isinstance(args[0], str) or not args[0]:
            raise JsonRpcInvalidParams("fixlore.forget expects [pattern id]")
        k = await knowledge()
        forgotten = await in_worker(k.forget, args[0])
        store.schedule_status()
        return {"forgotten": bool(forgotten)}

    @server.command(EXPORT)
    async def export_command(*args: Any) -> Any:
        k = await knowledge()
        filters = _filters(args[1] if len(args) > 1 else None)
        if args and isinstance(args[0], str) and args[0]:
            path = Path(args[0]).expanduser()
            count = await in_worker(k.export, path, filters)
            return {"path": str(path), "count": count}
        text, count = await in_worker(k.export_text, filters)
        return {"path": None, "count": count, "document": text}

    @server.command(IMPORT)
    async def import_command(*args: Any) -> Any:
        if not args or not isinstance(args[0], str) or not args[0]:
            raise JsonRpcInvalidParams("fixlore.import expects [path of an export file]")
        k = await knowledge()
        try:
            report = await in_worker(k.import_file, Path(args[0]).expanduser())
        except InvalidImport as exc:
            raise JsonRpcInvalidParams(f"import refused: {exc}") from exc
        except (OSError, KnowledgeError) as exc:
            raise JsonRpcInternalError(f"import failed: {type(exc).__name__}") from exc
        store.schedule_status()
        return {"imported": report.imported, "merged": report.merged}

    @server.command(STATS)
    async def stats_command(*args: Any) -> Any:
        loop = learning
        k = await knowledge()
        stats = await in_worker(k.stats)
        return {
            "patterns": stats.patterns,
            "events": stats.events,
            "learning": store.learning,
            "refused": stats.refused,
            "counts": asdict(stats.counts),
            "session": {"events": store.events_recorded, "manualFixes": loop.fixes_learned, "settles": loop.settles},
        }

    @server.command(DASHBOARD)
    async def dashboard_command(*args: Any) -> Any:
        # [{"cspSource": webview.cspSource}] optional: the page is self-contained either way.
        options = args[0] if args and isinstance(args[0], dict) else {}
        csp_source = options.get("cspSource") if isinstance(options.get("cspSource"), str) else None
        k = await knowledge()

        def build() -> str:
            from fixlore.knowledge.dashboard import dashboard_data, render_html

            k.flush()
            return render_html(dashboard_data(k), csp_source=csp_source)

        try:
            return {"html": await in_worker(build)}
        except (OSError, KnowledgeError) as exc:
            raise JsonRpcInternalError(f"dashboard failed: {type(exc).__name__}") from exc

    @server.command(SET_LEARNING)
    async def set_learning_command(*args: Any) -> Any:
        if not args or not isinstance(args[0], bool):
            raise JsonRpcInvalidParams("fixlore.setLearning expects [true] or [false]")
        await store.ready()
        return {"learning": store.set_learning(args[0])}


def _filters(raw: Any) -> ExportFilters:
    if not isinstance(raw, dict):
        return ExportFilters()
    try:
        return ExportFilters(
            language=raw.get("language") if isinstance(raw.get("language"), str) else None,
            min_uses=int(raw.get("minUses", 0)),
            min_success=float(raw.get("minSuccess", 0.0)),
            min_workspaces=int(raw.get("minWorkspaces", 0)),
        )
    except (TypeError, ValueError) as exc:
        raise JsonRpcInvalidParams(f"export filters: {exc}") from exc
