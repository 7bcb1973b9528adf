"""One upstream language server: start, initialize, restart with back-off, stop.

An :class:`Upstream` owns one child process and its lossless JSON-RPC
connection. It reports to its :class:`UpstreamHost` (the proxy): messages the
child sends, and that it came (back) up so the open documents can be re-sent.

Faults: a child that cannot be started (missing from PATH) gives one clear
message and stays down; a child that dies is restarted with exponential
back-off, and after :data:`MAX_CRASHES` crashes within :data:`CRASH_WINDOW`
seconds it is given up on, telling the user once. Requests carry a timeout;
a timed-out or cancelled request is cancelled upstream (``$/cancelRequest``)
and its late answer dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from enum import StrEnum
from typing import Any, Protocol

from fixlore.lsp.config import UpstreamConfig
from fixlore.lsp.proxy.capabilities import position_encoding_of, text_sync_of
from fixlore.lsp.transport.jsonrpc import ConnectionClosed, JsonRpcConnection, RawResult, RpcError, answer_of, spawn

logger = logging.getLogger(__name__)

UpstreamId = str
"""``language:label`` (``python:ruff``; a second ruff for Python is ``python:ruff#2``)."""

MAX_CRASHES = 5
CRASH_WINDOW = 180.0
BACKOFF_FIRST = 0.25
BACKOFF_MAX = 8.0
STOP_GRACE = 1.5


class State(StrEnum):
    """Where an upstream is in its life."""

    STARTING = "starting"
    RUNNING = "running"
    RESTARTING = "restarting"
    FAILED = "failed"
    STOPPED = "stopped"


class Unavailable(Exception):
    """The upstream is not running (starting, restarting, failed or stopped)."""


class UpstreamHost(Protocol):
    """What an upstream needs from the proxy."""

    def upstream_notification(self, upstream: Upstream, method: str, params: Any) -> None:
        """The child sent a notification."""

    def upstream_request(self, upstream: Upstream, method: str, params: Any) -> Awaitable[Any]:
        """The child sent a request; the result goes back to it."""

    def upstream_ready(self, upstream: Upstream, restarted: bool) -> None:
        """The child is initialized (again); re-send what it must know."""

    def init_params(self, upstream: Upstream) -> dict[str, Any]:
        """The raw ``initialize`` params for this child."""

    def tell_user(self, message: str, key: str) -> None:
        """One short message to the user."""


class Upstream:
    """One upstream server process and its connection."""

    def __init__(self, uid: UpstreamId, language: str, config: UpstreamConfig, host: UpstreamHost) -> None:
        self.id = uid
        self.language = language
        self.config = config
        self._host = host
        self.state = State.STOPPED
        self.process: asyncio.subprocess.Process | None = None
        self.conn: JsonRpcConnection | None = None
        self._capabilities: dict[str, Any] = {}
        self.sync: tuple[int, bool, bool] = text_sync_of({})
        """(change kind, wants didSave, wants text on save), worked out when the capabilities are set."""
        self.encoding = "utf-16"
        self.dynamic: dict[str, str] = {}
        """Dynamic registrations of the running child: registration id -> method."""
        self.dynamic_methods: frozenset[str] = frozenset()
        """Methods the child registered dynamically (kept in step with :attr:`dynamic`)."""
        self.open_documents: set[str] = set()
        self.open_notebooks: set[str] = set()
        """Notebook URIs the child has open (their cells are not in :attr:`open_documents`)."""
        self.timeout = 3.0
        self.init_timeout = 10.0
        self._crashes: deque[float] = deque()
        self._watcher: asyncio.Task[None] | None = None
        self._restart: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.epoch = 0
        """Bumped by everything that may change what the child reports: a (re)start, every
        notification sent to it, every request of its own, every request to it that is not
        a query about a document (see :func:`changes_state`)."""

    # -- state -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True if requests can go to the child now."""
        return self.state is State.RUNNING and self.conn is not None and not self.conn.closed

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server capabilities the child answered ``initialize`` with."""
        return self._capabilities

    @capabilities.setter
    def capabilities(self, capabilities: dict[str, Any]) -> None:
        self._capabilities = capabilities
        self.sync = text_sync_of(capabilities)

    # -- start / stop ------------------------------------------------------------
    async def start(self) -> bool:
        """Start and initialize the child; False if it could not be started."""
        self.state = State.STARTING
        self.ready.clear()
        # A new child has registered nothing yet; the old one's registrations died with it.
        self.dynamic.clear()
        self.dynamic_methods = frozenset()
        try:
            process, conn = await spawn(
                list(self.config.command),
                on_request=self._on_request,
                on_notification=self._on_notification,
                env=dict(os.environ),
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            self.state = State.FAILED
            reason = "was not found on PATH" if isinstance(exc, FileNotFoundError) else "cannot be run"
            logger.error("upstream %s: command %s", self.id, reason)
            self._host.tell_user(
                f"fixlore: the {self.language} server `{self.config.command[0]}` {reason}; "
                "fixlore goes on without it. Check the `upstreams` setting or install it.",
                key=f"missing:{self.id}",
            )
            return False
        conn.name = self.id
        self.process, self.conn = process, conn
        self.epoch += 1
        try:
            result = await conn.request("initialize", self._host.init_params(self), timeout=self.init_timeout)
        except (TimeoutError, RpcError, ConnectionClosed) as exc:
            logger.error("upstream %s failed to initialize: %s", self.id, type(exc).__name__)
            self._kill()
            self._crashed()
            return False
        self.capabilities = dict(result.get("capabilities") or {}) if isinstance(result, dict) else {}
        self.encoding = position_encoding_of(result)
        self.state = State.RUNNING
        self._watcher = asyncio.ensure_future(self._watch(conn))
        logger.info("upstream %s initialized (pid %s)", self.id, process.pid)
        return True

    def send_initialized(self, *, restarted: bool = False) -> None:
        """Tell the child the editor is ready, then let the host re-send documents."""
        if not self.running:
            return
        self._notify("initialized", {})
        self.ready.set()
        self._host.upstream_ready(self, restarted)

    async def stop(self) -> None:
        """Shut the child down politely, then make sure it is gone."""
        self.state = State.STOPPED
        self.ready.clear()
        for task in (self._restart, self._watcher):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        conn, process = self.conn, self.process
        if conn is not None and not conn.closed:
            with contextlib.suppress(TimeoutError, RpcError, ConnectionClosed):
                await conn.request("shutdown", None, timeout=STOP_GRACE)
            with contextlib.suppress(ConnectionClosed):
                conn.notify("exit")
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), STOP_GRACE)
            except TimeoutError:
                self._kill()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), STOP_GRACE)
        if conn is not None:
            await conn.close()
        self.open_documents.clear()
        self.open_notebooks.clear()

    def kill_now(self) -> None:
        """Last resort at interpreter exit: no child may outlive fixlore."""
        self.state = State.STOPPED
        self._kill()

    def _kill(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    # -- crashes -------------------------------------------------------------------
    async def _watch(self, conn: JsonRpcConnection) -> None:
        await conn.wait_closed()
        if self.state is not State.RUNNING or conn is not self.conn:
            return  # stopped on purpose, or an older connection
        logger.warning("upstream %s went away", self.id)
        self._kill()
        self._crashed()

    def _crashed(self) -> None:
        now = time.monotonic()
        self._crashes.append(now)
        while self._crashes and now - self._crashes[0] > CRASH_WINDOW:
            self._crashes.popleft()
        self.ready.clear()
        self.open_documents.clear()
        self.open_notebooks.clear()
        if len(self._crashes) >= MAX_CRASHES:
            self.state = State.FAILED
            logger.error("upstream %s crashed %d times; giving up", self.id, len(self._crashes))
            self._host.tell_user(
                f"fixlore: the {self.language} server `{self.config.label}` crashed {len(self._crashes)} times "
                "in 3 minutes and was stopped; fixlore goes on without it.",
                key=f"crashes:{self.id}",
            )
            return
        self.state = State.RESTARTING
        delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (len(self._crashes) - 1))
        self._restart = asyncio.ensure_future(self._restart_after(delay))

    async def _restart_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        if self.state is not State.RESTARTING:
            return
        if await self.start():
            logger.info("upstream %s restarted", self.id)
            self.send_initialized(restarted=True)

    # -- traffic -------------------------------------------------------------------
    async def request(self, method: str, params: Any, *, timeout: float | None = None, raw: bool = False) -> Any:
        """Send a request; on timeout or cancellation cancel it upstream too.

        ``raw``: answer with a :class:`~fixlore.lsp.transport.jsonrpc.RawResult` (see
        :meth:`~fixlore.lsp.transport.jsonrpc.JsonRpcConnection.request`).
        """
        return await self.request_now(method, params, timeout=timeout, raw=raw)

    def request_now(
        self,
        method: str,
        params: Any,
        *,
        timeout: float | None = None,
        raw: bool = False,
        on_raw: Callable[[RawResult], None] | None = None,
    ) -> Coroutine[Any, Any, Any]:
        """Like :meth:`request`, but the request is written before this returns; await the result.

        ``on_raw``: see :meth:`~fixlore.lsp.transport.jsonrpc.JsonRpcConnection.start_request`.
        """
        conn = self.conn
        if conn is None or not self.running:
            raise Unavailable(self.id)
        if changes_state(method):
            self.epoch += 1
        msg_id = conn.new_id()
        future = conn.start_request(
            method, params, timeout=self.timeout if timeout is None else timeout, msg_id=msg_id, raw=raw, on_raw=on_raw
        )
        return self._answer(conn, msg_id, future, raw)

    async def _answer(self, conn: JsonRpcConnection, msg_id: Any, future: asyncio.Future[Any], raw: bool) -> Any:
        """Await an answer; on timeout or cancellation cancel the request upstream too."""
        try:
            return await answer_of(future, raw=raw)
        except (TimeoutError, asyncio.CancelledError):
            with contextlib.suppress(ConnectionClosed):
                conn.notify("$/cancelRequest", {"id": msg_id})
            raise

    def corked(self) -> contextlib.AbstractContextManager[None]:
        """Messages sent to the child inside go out in one write (see JsonRpcConnection.corked)."""
        conn = self.conn
        return conn.corked() if conn is not None else contextlib.nullcontext()

    def forward(self, body: bytes) -> None:
        """Send the editor's notification as the bytes it came in (JSON body, no header)."""
        conn = self.conn
        if conn is None or not self.running:
            return
        self.epoch += 1
        try:
            conn.send_frame(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        except ConnectionClosed:
            logger.info("upstream %s: a notification was not delivered (connection closed)", self.id)

    def notify(self, method: str, params: Any) -> None:
        """Send a notification if the child is up (else it is re-synced on restart)."""
        if self.running:
            self._notify(method, params)

    def _notify(self, method: str, params: Any) -> None:
        conn = self.conn
        if conn is None:
            return
        self.epoch += 1
        try:
            conn.notify(method, params)
        except ConnectionClosed:
            logger.info("upstream %s: %s not delivered (connection closed)", self.id, method)

    def _on_notification(self, method: str, params: Any) -> None:
        self._host.upstream_notification(self, method, params)

    async def _on_request(self, msg_id: Any, method: str, params: Any) -> Any:
        self.epoch += 1  # e.g. workspace/configuration: its answer changes the child's settings
        if method in ("client/registerCapability", "client/unregisterCapability") and isinstance(params, dict):
            self._registrations_changed(method, params)
        return await self._host.upstream_request(self, method, params)

    def _registrations_changed(self, method: str, params: dict[str, Any]) -> None:
        if method == "client/registerCapability":
            for reg in params.get("registrations") or []:
                if isinstance(reg, dict) and isinstance(reg.get("method"), str):
                    self.dynamic[str(reg.get("id"))] = reg["method"]
        else:
            for reg in params.get("unregisterations") or params.get("unregistrations") or []:
                if isinstance(reg, dict):
                    self.dynamic.pop(str(reg.get("id")), None)
        self.dynamic_methods = frozenset(self.dynamic.values())


def changes_state(method: str) -> bool:
    """Whether a request may change what a server reports (all but document queries and resolves)."""
    return not method.startswith("textDocument/") and not method.endswith("/resolve")
