"""The proxy: fixlore in front of the user's language servers.

:class:`Proxy` is the :class:`~fixlore.lsp.transport.protocol.Router` of the protocol and
the host of every :class:`~fixlore.lsp.proxy.upstream.Upstream`. It starts the
upstreams inside ``initialize`` (so their capabilities can be merged into
fixlore's answer), routes requests and notifications, and offers the async API
the code-action layer uses (see the package docstring). Document sync comes
from :class:`~fixlore.lsp.proxy.documents.DocumentSync`, server-to-client
relays from :class:`~fixlore.lsp.proxy.relays.Relays`, diagnostics from
:class:`~fixlore.lsp.proxy.diagnostics.DiagnosticsBridge`: parts the proxy
builds and holds (``documents``, ``relays``, ``diagnostics``), each given the
:class:`~fixlore.lsp.proxy.upstream_set.UpstreamSet` and the parts it calls.

Routing: a request goes to the running upstreams that serve its document's
language and have the capability. Completion and list answers (locations,
references, workspace symbols) fan out and merge; code actions fan out
(:meth:`Proxy.code_actions`); everything else goes to the first capable
upstream, and its answer — or its error — reaches the editor unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound

from fixlore.lsp.config import FixloreConfig, upstream_ids
from fixlore.lsp.in_flight import InFlight
from fixlore.lsp.proxy import merge
from fixlore.lsp.proxy.capabilities import (
    UTF16,
    capable,
    client_capabilities_for_upstream,
    merge_server_capabilities,
)
from fixlore.lsp.proxy.diagnostics import DiagnosticsBridge
from fixlore.lsp.proxy.documents import DocumentSync
from fixlore.lsp.proxy.pending import FAILURES, Pending, PendingActions
from fixlore.lsp.proxy.relays import Relays, configuration_from
from fixlore.lsp.proxy.upstream import State, Unavailable, Upstream, UpstreamId
from fixlore.lsp.proxy.upstream_set import UpstreamSet
from fixlore.lsp.transport.jsonrpc import ConnectionClosed, RpcError
from fixlore.lsp.transport.pygls_adapter import use_position_encoding

if TYPE_CHECKING:
    from fixlore.lsp.hub import DiagnosticsHub
    from fixlore.lsp.ports import ProxyEditor

logger = logging.getLogger(__name__)

FIXLORE_COMMAND_PREFIX = "fixlore."


def _uri_of(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    for holder in (params.get("textDocument"), params.get("item")):
        if isinstance(holder, dict) and isinstance(holder.get("uri"), str):
            return holder["uri"]
    uri = params.get("uri")
    return uri if isinstance(uri, str) else None


async def _one_by_one(upstreams: list[Upstream]) -> None:
    """Start ``upstreams`` in turn, each once the one before has answered ``initialize`` (or failed)."""
    for upstream in upstreams:
        await upstream.start()


class Proxy:
    """Routes between the editor and the upstream servers."""

    def __init__(self, editor: ProxyEditor, hub: DiagnosticsHub, in_flight: InFlight | None = None) -> None:
        self.editor = editor
        self.served = UpstreamSet(editor)
        self.upstreams = self.served.upstreams
        """The same dict as ``served.upstreams`` (changed in place only)."""
        self.encoding = UTF16
        self.relays = Relays(editor)
        self.diagnostics = DiagnosticsBridge(self.served, self.relays, hub, in_flight)
        self.documents = DocumentSync(self.served, self.diagnostics)
        self._init_raw: dict[str, Any] = {}
        self._init_options: Any = None
        """The editor's initializationOptions without fixlore's section."""
        self._editor_caps: dict[str, Any] = {}
        self._started = False
        self._editor_ready = False

    # -- helpers ---------------------------------------------------------------------
    def timeout(self) -> float:
        """The per-request upstream timeout in seconds."""
        return self.served.timeout()

    def upstreams_for(self, uri: str) -> list[Upstream]:
        """The upstreams (any state) that serve the document's language, in order."""
        return self.served.upstreams_for(uri)

    def _targets(self, method: str, params: Any) -> list[Upstream]:
        uri = _uri_of(params)
        pool: Iterable[Upstream] = self.upstreams_for(uri) if uri is not None else self.upstreams.values()
        return [u for u in pool if u.running and capable(u.capabilities, method, u.dynamic_methods)]

    # -- lifecycle ---------------------------------------------------------------------
    async def on_initialize(self, raw: dict[str, Any], init_options: Any) -> None:
        """Start every configured upstream and settle the position encoding.

        ``init_options``: the editor's initializationOptions without fixlore's section.
        """
        caps = raw.get("capabilities")
        self._init_raw = raw
        self._init_options = init_options
        self._editor_caps = caps if isinstance(caps, dict) else {}
        chosen = self.editor.workspace.position_encoding or UTF16
        self.encoding = str(getattr(chosen, "value", chosen))
        for uid, language, config in upstream_ids(self.editor.config.upstreams):
            self.upstreams[uid] = Upstream(uid, language, config, self)
        await self._start_all(list(self.upstreams.values()))
        self.diagnostics.configure(self._editor_caps, list(self.upstreams.values()))
        self._started = True

    async def _launch(self, upstreams: list[Upstream]) -> None:
        for upstream in upstreams:
            self._apply_timeouts(upstream)
        # Upstreams with the same command start one after the other. Several
        # `biome lsp-proxy` started at once (TypeScript, JavaScript, …) each
        # find no daemon and start one; the extra daemons never stop.
        by_command: dict[tuple[str, ...], list[Upstream]] = {}
        for upstream in upstreams:
            by_command.setdefault(tuple(upstream.config.command), []).append(upstream)
        await asyncio.gather(*(_one_by_one(same) for same in by_command.values()))

    async def _start_all(self, upstreams: list[Upstream]) -> None:
        await self._launch(upstreams)
        running = [u for u in upstreams if u.running]
        if self.encoding != UTF16 and any(u.encoding != self.encoding for u in running):
            # One encoding end to end: the session falls back to UTF-16, which
            # every server must support; upstreams that took the other one restart.
            logger.info("an upstream cannot use %s; the session uses utf-16", self.encoding)
            self._set_encoding(UTF16)
            redo = [u for u in running if u.encoding != UTF16]
            for upstream in redo:
                await upstream.stop()
            await asyncio.gather(*(u.start() for u in redo))
        for upstream in upstreams:
            if upstream.running and upstream.encoding != self.encoding:
                logger.error("upstream %s insists on %s; positions may be off", upstream.id, upstream.encoding)

    def _apply_timeouts(self, upstream: Upstream) -> None:
        upstream.timeout = self.timeout()
        upstream.init_timeout = max(2.0, 4 * self.timeout())

    def _set_encoding(self, encoding: str) -> None:
        self.encoding = encoding
        use_position_encoding(self.editor.workspace, encoding)

    def merge_capabilities(self, result: dict[str, Any]) -> dict[str, Any]:
        """Merge the upstreams' capabilities into fixlore's initialize result."""
        caps = merge_server_capabilities(
            dict(result.get("capabilities") or {}), [u.capabilities for u in self.upstreams.values() if u.running]
        )
        caps["positionEncoding"] = self.encoding
        provider = self.diagnostics.provider(list(self.upstreams.values()))
        if provider is not None:
            caps["diagnosticProvider"] = provider
        else:
            caps.pop("diagnosticProvider", None)
        return {**result, "capabilities": caps}

    def on_initialized(self) -> None:
        """The editor is ready: upstreams get ``initialized`` and may talk to it now."""
        self._editor_ready = True
        for upstream in self.upstreams.values():
            upstream.send_initialized()

    def on_config_change(self, old: FixloreConfig, new: FixloreConfig) -> None:
        """Start and stop upstreams when the ``upstreams`` setting changes."""
        if not self._started:
            return
        for upstream in self.upstreams.values():
            self._apply_timeouts(upstream)
        if old.upstreams == new.upstreams:
            return
        wanted = {uid: (language, config) for uid, language, config in upstream_ids(new.upstreams)}
        for uid in [uid for uid, u in self.upstreams.items() if wanted.get(uid) != (u.language, u.config)]:
            upstream = self.upstreams.pop(uid)
            self.diagnostics.forget_upstream(uid)
            self.editor.spawn(upstream.stop(), name=f"stop {uid}")
        fresh = [Upstream(uid, lang, cfg, self) for uid, (lang, cfg) in wanted.items() if uid not in self.upstreams]
        self.upstreams.update((u.id, u) for u in fresh)
        if fresh:
            self.editor.spawn(self._start_fresh(fresh), name="start upstreams")

    async def _start_fresh(self, upstreams: list[Upstream]) -> None:
        await self._launch(upstreams)
        if self._editor_ready:
            for upstream in upstreams:
                upstream.send_initialized()

    async def shutdown(self) -> None:
        """Stop every child process."""
        await asyncio.gather(*(u.stop() for u in self.upstreams.values()), return_exceptions=True)

    def kill_all(self) -> None:
        """At interpreter exit: no child outlives fixlore."""
        for upstream in self.upstreams.values():
            upstream.kill_now()

    # -- UpstreamHost ------------------------------------------------------------------
    def init_params(self, upstream: Upstream) -> dict[str, Any]:
        """The editor's initialize params, raw, for one upstream."""
        params = dict(self._init_raw)
        params["processId"] = os.getpid()
        params["capabilities"] = client_capabilities_for_upstream(self._editor_caps, self.encoding)
        options = upstream.config.initialization_options
        if options is None:
            options = self._init_options
        if options is None:
            params.pop("initializationOptions", None)
        else:
            params["initializationOptions"] = options
        return params

    def tell_user(self, message: str, key: str) -> None:
        """One short, rate-limited message to the user."""
        self.editor.notify_user(message, key=key)

    def upstream_ready(self, upstream: Upstream, restarted: bool) -> None:
        """An upstream came (back) up: it is sent the open documents of its language."""
        self.documents.upstream_ready(upstream, restarted)

    def upstream_notification(self, upstream: Upstream, method: str, params: Any) -> None:
        """Diagnostics go to the hub; everything else to the editor, raw."""
        if method == "textDocument/publishDiagnostics":
            self.diagnostics.pushed(upstream, params)
            return
        self.editor.protocol.send_raw_notification(method, params)

    async def upstream_request(self, upstream: Upstream, method: str, params: Any) -> Any:
        """Answer an upstream's request: locally where fixlore must, else relay it to the editor.

        ``workspace/configuration`` is answered from the upstream's own ``settings``
        when it has some; a diagnostic refresh is the diagnostics bridge's.
        """
        if method == "workspace/configuration" and upstream.config.settings is not None:
            return configuration_from(upstream.config.settings, params)
        if method == "workspace/diagnostic/refresh":
            await self.diagnostics.refresh_requested(upstream)
            return None
        return await self.relays.relay_to_editor(method, params)

    # -- Router ---------------------------------------------------------------------
    def claims_method(self, method: str) -> bool:
        """Every method fixlore has no handler for, except cancellation (pygls does it)."""
        return method != "$/cancelRequest"

    def claims_response(self, msg_id: Any) -> bool:
        """Responses to requests relayed for an upstream."""
        return self.relays.claims_response(msg_id)

    def handle_response(self, raw: dict[str, Any]) -> None:
        """The editor answered a relayed request."""
        self.relays.handle_response(raw)

    def change_arrived(self, params: Any, body: bytes | None = None, next_method: str | None = None) -> None:
        """A didChange, before fixlore takes it in: incremental upstreams get it at once."""
        self.documents.change_arrived(params, body, next_method)

    def handle_notification(self, method: str, params: Any) -> None:
        """Forward a notification to the upstreams it concerns."""
        self.broadcast(method, params)

    def broadcast(self, method: str, params: Any) -> None:
        """Send a notification to the document's upstreams, or to all without a document."""
        uri = _uri_of(params)
        targets = self.upstreams_for(uri) if uri is not None else self.upstreams.values()
        for upstream in targets:
            upstream.notify(method, params)

    async def handle_request(self, msg_id: Any, method: str, params: Any) -> Any:
        """Answer a request fixlore has no handler for."""
        if method == "textDocument/diagnostic":
            return await self.diagnostics.pull_for_editor(msg_id, params)
        if method in merge.RESOLVE_METHODS:
            return await self._resolve(method, params)
        targets = self._targets(method, params)
        if not targets:
            if method.startswith(("textDocument/", "workspace/", "callHierarchy/", "typeHierarchy/")):
                return None
            raise JsonRpcMethodNotFound(f"Method not found: {method}")
        if method == "textDocument/completion":
            answers = await self._fan_out(targets, method, params)
            return merge.merge_completions(self._wrapped(method, answers))
        if method in merge.LIST_METHODS:
            answers = await self._fan_out(targets, method, params)
            return merge.merge_lists(self._wrapped(method, answers))
        result = await self._first(targets[0], method, params)
        if method in merge.RESOLVABLE and len(self.upstreams) > 1:
            result = merge.wrap_result(method, result, targets[0].id)
        return result

    def _wrapped(self, method: str, answers: list[tuple[Upstream, Any]]) -> list[Any]:
        if method not in merge.RESOLVABLE or len(self.upstreams) < 2:
            return [a for _, a in answers]
        return [merge.wrap_result(method, a, u.id) for u, a in answers]

    async def _first(self, upstream: Upstream, method: str, params: Any, timeout: float | None = None) -> Any:
        """One upstream's answer; its error is passed on, a timeout answers ``None``."""
        try:
            return await upstream.request(method, params, timeout=self.timeout() if timeout is None else timeout)
        except RpcError as exc:
            raise JsonRpcException(exc.message, exc.code, exc.data) from None
        except (TimeoutError, ConnectionClosed, Unavailable) as exc:
            logger.warning("upstream %s: %s gave no answer (%s)", upstream.id, method, type(exc).__name__)
            return None

    async def _fan_out(self, targets: list[Upstream], method: str, params: Any) -> list[tuple[Upstream, Any]]:
        """Every target's answer (``None`` for one that failed), in upstream order."""
        return await self._send_each(targets, method, lambda upstream: params).answers()

    def _send_each(self, targets: list[Upstream], method: str, params_of: Callable[[Upstream], Any]) -> Pending:
        """Write ``method`` to every target now; their answers are awaited later.

        Written in the order the editor's messages came (see ``FixloreServer._serve_reader``).
        """
        sent: list[tuple[Upstream, Coroutine[Any, Any, Any] | None]] = []
        for upstream in targets:
            try:
                sent.append((upstream, upstream.request_now(method, params_of(upstream), timeout=self.timeout())))
            except FAILURES as exc:
                logger.warning("upstream %s: %s failed (%s)", upstream.id, method, type(exc).__name__)
                sent.append((upstream, None))
        return Pending(method, sent)

    async def _resolve(self, method: str, item: Any) -> Any:
        source, original = merge.unwrap(item)
        upstream = self.upstreams.get(source) if source is not None else None
        if upstream is None:
            candidates = [u for u in self.upstreams.values() if u.running and capable(u.capabilities, method)]
            if not candidates:
                return item
            upstream = candidates[0]
        result = await self._first(upstream, method, original)
        if source is None or not isinstance(result, dict):
            return result
        return merge.wrap_item(result, source)

    # -- the API of the code-action layer ------------------------------------------------
    def start_code_actions(self, params: Any) -> PendingActions:
        """Ask every upstream for its code actions for ``params`` (raw); the requests are written now.

        Each upstream sees only the context diagnostics that are its own (or whose
        owner is unknown). The caller does its own work meanwhile (the learned fixes)
        and then awaits :meth:`PendingActions.answers`, without a task per upstream:
        each task costs turns of the event loop on every request.
        """
        targets = self._targets("textDocument/codeAction", params)
        owners = self._owners(params) if len(targets) > 1 else None

        def own(upstream: Upstream) -> Any:
            return params if owners is None else context_for(upstream.id, params, owners)

        return PendingActions(self._send_each(targets, "textDocument/codeAction", own))

    def _owners(self, params: Any) -> list[str | None] | None:
        """Which upstream published each context diagnostic (worked out once per request)."""
        context = params.get("context") if isinstance(params, dict) else None
        diagnostics = context.get("diagnostics") if isinstance(context, dict) else None
        uri = _uri_of(params)
        if not diagnostics or uri is None:
            return None
        return [self.diagnostics.owner_of(uri, d) for d in diagnostics]

    async def resolve_code_action(self, action: Any) -> Any:
        """Resolve an action with the upstream that made it (its own ``data`` restored)."""
        return await self._resolve("codeAction/resolve", action)

    def command_owner(self, command: str) -> Upstream | None:
        """The running upstream that offers ``command``."""
        for upstream in self.upstreams.values():
            provider = upstream.capabilities.get("executeCommandProvider")
            commands = provider.get("commands") if isinstance(provider, dict) else None
            if upstream.running and isinstance(commands, list) and command in commands:
                return upstream
        return None

    async def execute_command(self, command: str, arguments: Any = None) -> Any:
        """Run an upstream's command with the upstream that offers it."""
        if command.startswith(FIXLORE_COMMAND_PREFIX):
            raise JsonRpcInvalidParams(f"`{command}` is one of fixlore's own commands and is not forwarded")
        upstream = self.command_owner(command)
        if upstream is None:
            raise JsonRpcInvalidParams(f"No server offers the command `{command}`")
        params: dict[str, Any] = {"command": command}
        if arguments is not None:
            params["arguments"] = arguments
        return await self._first(upstream, "workspace/executeCommand", params, timeout=4 * self.timeout())


__all__ = ["FIXLORE_COMMAND_PREFIX", "Proxy", "State"]


def context_for(upstream_id: UpstreamId, params: Any, owners: list[str | None]) -> Any:
    """``params`` with only the context diagnostics that are ``upstream_id``'s own (or nobody's)."""
    context = params["context"]
    diagnostics = context["diagnostics"]
    kept = [d for d, owner in zip(diagnostics, owners, strict=True) if owner in (None, upstream_id)]
    if len(kept) == len(diagnostics):
        return params
    return {**params, "context": {**context, "diagnostics": kept}}
