"""``fixlore serve`` over stdio: the early front (:mod:`.early`, :mod:`.relay`), then the full server, losing nothing.

:func:`serve_stdio` lets the front read and (when it can) answer
``initialize`` and then relay the editor's messages through the upstreams
while a thread (:class:`Loading`) imports and builds the server; then it
hands the server:

* the ``initialize`` the front read: the full server takes it through pygls
  and fixlore's handlers as always (pygls is initialized the ordinary way), and
  its answer, already written by the front, is held back by :class:`Gate`
  (compared with the early one, an error logged if they differ); reading the
  editor's stream resumes only once that answer exists;
* the upstreams the front started: the proxy's ``spawn`` of the same command
  adopts the running process (:class:`Prestarted`); the connection reads the
  child's answer to ``initialize`` first, and drops the proxy's first write, the
  ``initialize`` the front already sent (the same bytes; if not, the child is
  killed and the proxy restarts it);
* the notifications the relay passed on: the server takes them in, in order,
  before anything else the editor sent (``take_in_replayed``); meanwhile each
  adopted connection drops the writes the relay made already, one for one
  (method and params equal), and writes the rest; only then does it read what
  the child wrote during the relay and after it, and the editor's stream
  resumes with the bytes the relay did not serve. The hub's publish of
  diagnostics the relay passed on already is dropped by the :class:`Gate`.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fixlore.lsp import heap
from fixlore.lsp.transport.early import Child, Front, is_stream
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, dumps, loads
from fixlore.lsp.transport.relay import Link, Relay

if TYPE_CHECKING:
    import asyncio

    from fixlore.lsp.transport.jsonrpc import JsonRpcConnection

Server = Any
"""A ``FixloreServer`` (built by the CLI: no part but the tools reaches for the server object)."""

logger = logging.getLogger(__name__)

RELAY_DRAIN_S = 5.0
"""How long the relay waits, once the server has loaded, for the upstreams' answers to what it asked."""


def serve_stdio(
    build: Callable[[], Server],
    preload: Callable[[], None],
    cli_settings: dict[str, Any],
    *,
    prepare: Callable[[list[tuple[str, str]]], None] | None = None,
) -> None:
    """Serve the editor on stdin/stdout, answering ``initialize`` before pygls is loaded when possible.

    ``build`` makes the full server (the CLI's ``create_server``); ``preload`` imports
    what it needs; ``prepare`` loads what the documents the editor opened meanwhile
    will need (``(languageId, uri)`` each). All run on a thread while the front answers
    and then relays (:mod:`.relay`).
    """
    if os.name == "nt" or not is_stream(0):  # a file, a terminal, Windows pipes (no select): the ordinary path
        server = build()
        heap.loaded()
        server.start_io()
        return
    front = Front(cli_settings)
    loading = Loading(preload, build, front, prepare)
    relay = Relay(front, loading.loaded, drain_s=RELAY_DRAIN_S)
    loading.documents = relay.opened
    try:
        front.run()
        loading.front_done.set()
        relay.run()
    except Exception as exc:  # a bug of the front must not cost the session: the full server answers
        if front.answer is not None:
            raise
        front.declined = f"the early front failed ({type(exc).__name__})"
        front.first = None  # whatever it read goes to the full server as it came
    server = loading.server()
    if front.answer is None:
        logger.debug("initialize answered by the full server: %s", front.declined or "no early answer")
    elif relay.served:
        logger.info("the early front relayed %d messages (%s then)", relay.served, relay.stopped)
    _serve(server, front, relay)


class Loading:
    """The thread that imports the server's modules and builds it, then warms it up for the front's ``initialize``.

    :attr:`loaded` (a pipe's reading end) becomes readable when it is done: the relay stops there.
    """

    def __init__(
        self,
        preload: Callable[[], None],
        build: Callable[[], Server],
        front: Front,
        prepare: Callable[[list[tuple[str, str]]], None] | None = None,
    ) -> None:
        self.loaded, self._done = os.pipe()
        self.front_done = threading.Event()
        self._front = front
        self._steps = (preload, build)
        self._prepare = prepare
        self.documents: Callable[[], list[tuple[str, str]]] = list
        """The documents the editor has opened so far (``(languageId, uri)``): the relay's."""
        self._built: Server = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="fixlore-preload", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        preload, build = self._steps
        try:
            preload()
            self._built = build()
            self.front_done.wait()
            first = self._front.first
            if first is not None and self._front.answer is not None:
                self._built.warm_up([loads(first), *WARM_UP])
            if self._prepare is not None:
                # What taking in those documents' didOpen starts on threads at the hand-over,
                # done while the relay still serves (the start-up window's slowest lightbulbs
                # came right after the hand-over, waiting for the GIL).
                try:
                    self._prepare(self.documents())
                except Exception:  # noqa: BLE001 - only a head start: the server loads them when needed
                    logger.warning("preparing the opened documents' tables failed", exc_info=True)
        except BaseException as exc:  # raised again in the main thread
            self._failed = exc
        finally:
            heap.loaded()  # what the server is made of stays for the session (see fixlore.lsp.heap)
            os.write(self._done, b"\0")
            os.close(self._done)

    def server(self) -> Server:
        """The built server (once the thread is done)."""
        self.front_done.set()
        self._thread.join()
        os.close(self.loaded)
        if self._failed is not None:
            raise self._failed
        return self._built


_DOC = {"uri": "file:///warm-up.py"}
WARM_UP = [
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {"textDocument": {**_DOC, "languageId": "python", "version": 1, "text": ""}},
    },
    {"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": _DOC}},
    {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": _DOC}},
]
"""Messages whose types :meth:`PyglsServer.warm_up` prepares besides ``initialize`` (structured, not taken in)."""


def _serve(server: Server, front: Front, relay: Relay) -> None:
    """As ``PyglsServer._start_io_async`` serves a pipe, starting from what the front read."""
    from pygls.io_ import StdoutWriter

    from fixlore.lsp.transport import jsonrpc

    links = {id(link.child): link for link in relay.links}
    adopted: list[Prestarted] = []
    for child in front.children:
        if child.popen is not None:
            entry = Prestarted(child, links.get(id(child)))
            adopted.append(entry)
            jsonrpc.PRESTARTED.setdefault(tuple(child.config.command), []).append(entry)
    gate = Gate(StdoutWriter(sys.stdout.buffer), front.msg_id, front.answer, relay.published)
    try:
        server.serve_stdio(gate, lambda: _session(server, front, relay, gate, adopted))
    finally:  # an `exit` notification's SystemExit goes on: its code is the process's
        _release(jsonrpc.PRESTARTED)


async def _session(server: Server, front: Front, relay: Relay, gate: Gate, adopted: list[Prestarted]) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    rest = front.consumed
    if front.first is not None:
        gate.answered = loop.create_future()
        rest = rest[relay.rest :]  # behind initialize and what the relay served
    session: asyncio.Future[Any] = asyncio.ensure_future(server.serve_session(reader, front.first))
    if gate.answered is not None:  # the editor's next messages wait for the full server's initialize
        waited: list[asyncio.Future[Any]] = [session, gate.answered]
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
    from fixlore.lsp.transport import jsonrpc

    _release(jsonrpc.PRESTARTED)  # upstreams the full server did not want (it never should)
    if relay.replay and not session.done():
        await server.take_in_replayed(relay.replay)  # the upstreams have these: their writes are dropped
    for entry in adopted:
        await entry.relayed()
    reader.feed_data(rest)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    await session


class Gate:
    """The editor's writer, holding back what the front wrote already.

    That is the full server's answer to ``initialize`` when the front gave it,
    and a ``publishDiagnostics`` the same as the last one the relay passed on
    for its document (the hub publishes it when it takes in the upstream's
    push the relay held for it); the document's next publish ends that.
    """

    def __init__(self, writer: Any, msg_id: Any, early: bytes | None, published: dict[str, Any] | None = None) -> None:
        self._writer = writer
        self._msg_id = msg_id
        self._early = early
        self._published = dict(published or {})
        self.answered: asyncio.Future[bool] | None = None
        """Resolved when the full server has answered ``initialize`` (True: the same bytes as the front's)."""

    def write(self, data: bytes) -> None:
        """Write a frame to the editor, unless the front wrote it already."""
        if self._published and b'"textDocument/publishDiagnostics"' in data and self._had(data):
            return
        answered = self.answered
        if answered is None or answered.done() or not self._answers_initialize(data):
            self._writer.write(data)
            return
        same = self._early is None or data == self._early
        if self._early is None:
            self._writer.write(data)
        elif not same:
            logger.error("the early answer to initialize differs from the full server's")
            self._tell_refused(data)
        answered.set_result(same)

    def _had(self, data: bytes) -> bool:
        message = loads(data[data.index(b"\r\n\r\n") + 4 :])
        params = message.get("params") if isinstance(message, dict) else None
        uri = params.get("uri") if isinstance(params, dict) else None
        if message.get("method") != "textDocument/publishDiagnostics" or uri not in self._published:
            return False
        return bool(self._published.pop(uri) == params)

    def _tell_refused(self, data: bytes) -> None:
        """The full server refused the ``initialize`` the front accepted (params pygls cannot read): say so."""
        error = loads(data[data.index(b"\r\n\r\n") + 4 :]).get("error")
        if not isinstance(error, dict):
            return
        text = f"fixlore cannot serve this editor: its initialize request was refused ({error.get('message')})."
        params = {"type": 1, "message": text + " `fixlore serve --late-initialize` answers it with the error."}
        body = dumps({"jsonrpc": "2.0", "method": "window/showMessage", "params": params})
        self._writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        """Close the editor's stream (pygls does at exit)."""
        self._writer.close()

    def _answers_initialize(self, data: bytes) -> bool:
        try:
            message = loads(data[data.index(b"\r\n\r\n") + 4 :])
        except ValueError:
            return False
        return isinstance(message, dict) and "method" not in message and message.get("id") == self._msg_id


class Prestarted:
    """An upstream the front started, for the proxy's :func:`~fixlore.lsp.transport.jsonrpc.spawn` to adopt."""

    def __init__(self, child: Child, link: Link | None = None) -> None:
        self.child = child
        self.link = link
        """What the relay did with it, if it relayed."""
        self._resume: Callable[[], Awaitable[None]] | None = None

    def matches(self, env: dict[str, str] | None, cwd: str | None, stderr: int | None) -> bool:
        """Whether it was started as the proxy would start it now."""
        return env == self.child.env and cwd is None and stderr == subprocess.DEVNULL

    async def adopt(self, **handlers: Any) -> tuple[ChildProcess, JsonRpcConnection]:
        """The running child as ``spawn`` returns it; its connection reads what the child wrote first.

        After a relay, its connection reads only the answer to ``initialize`` until
        :meth:`relayed`: what the child wrote during the relay (diagnostics of
        documents the full server takes in only then) and after it comes next.
        """
        import asyncio

        popen = self.child.popen
        assert popen is not None and popen.stdin is not None and popen.stdout is not None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
        reader.feed_data(self.child.received)
        stdout = popen.stdout

        async def resume() -> None:
            if self.link is not None:
                reader.feed_data(b"".join(self.link.held))
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdout)

        if self.link is None:
            await resume()
        else:
            self._resume = resume
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, popen.stdin)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        process = ChildProcess(popen, loop)
        sent = list(self.link.sent) if self.link is not None else []
        self.conn = _adopted_connection(
            reader, writer, self.child.sent, sent, process, self.child.config.command[0], handlers
        )
        self.conn.start()
        return process, self.conn

    async def relayed(self) -> None:
        """The full server has taken in what the relay passed on: the child's connection reads on."""
        resume, self._resume = self._resume, None
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.in_step()
        if resume is not None:
            await resume()


def _adopted_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    sent: bytes,
    relayed: list[Any],
    process: ChildProcess,
    name: str,
    handlers: dict[str, Any],
) -> JsonRpcConnection:
    from fixlore.lsp.transport.jsonrpc import ConnectionClosed, JsonRpcConnection

    class Adopted(JsonRpcConnection):  # type: ignore[misc,unused-ignore]
        """Starts reading at its first write, which the front made already (the same bytes).

        Until :meth:`in_step`, each notification that is the next of those the
        relay sent (``relayed``: method and params) is dropped: the child has it.
        """

        def __init__(self) -> None:
            super().__init__(reader, writer, name=name, **handlers)
            self._sent: bytes | None = sent
            self._relayed: list[Any] | None = relayed or None

        def start(self) -> None:
            if self._sent is None:
                super().start()

        def send_frame(self, frame: bytes) -> None:
            if self._sent is None:
                if self._relayed is None or not self._had(frame):
                    super().send_frame(frame)
                return
            same, self._sent = frame == self._sent, None
            if not same:  # the child heard another initialize: it cannot serve this session
                logger.error("upstream %s was started with other initialize params (a fixlore bug)", self.name)
                process.kill()
                self._close()
                raise ConnectionClosed(self.name)
            super().start()  # its answer, among the bytes read so far, now has its request waiting

        def _had(self, frame: bytes) -> bool:
            assert self._relayed is not None
            message = loads(frame[frame.index(b"\r\n\r\n") + 4 :])
            if (
                "id" in message
                or not self._relayed
                or (message.get("method"), message.get("params")) != self._relayed[0]
            ):
                return False
            self._relayed.pop(0)
            return True

        def in_step(self) -> None:
            """The full server has taken in what the relay passed on; from now on every write goes out."""
            left, self._relayed = self._relayed, None
            if left:
                logger.error(
                    "upstream %s: the relay sent %d messages the full server did not (first %s)",
                    self.name,
                    len(left),
                    left[0][0],
                )

    return Adopted()


class ChildProcess:
    """A started ``Popen`` with the part of ``asyncio.subprocess.Process`` the proxy uses."""

    def __init__(self, popen: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._popen = popen
        self.pid = popen.pid
        self._done = loop.create_future()
        threading.Thread(target=self._reap, args=(loop,), name=f"reap {popen.pid}", daemon=True).start()

    def _reap(self, loop: asyncio.AbstractEventLoop) -> None:
        code = self._popen.wait()
        try:
            loop.call_soon_threadsafe(self._exited, code)
        except RuntimeError:  # the loop has closed
            pass

    def _exited(self, code: int) -> None:
        if not self._done.done():
            self._done.set_result(code)

    @property
    def returncode(self) -> int | None:
        """The exit code once the child has exited and been reaped, else ``None``."""
        return self._popen.returncode

    async def wait(self) -> int:
        """Wait until the child exits; its exit code."""
        import asyncio

        return int(await asyncio.shield(self._done))

    def kill(self) -> None:
        """SIGKILL, unless it is gone already."""
        if self._popen.returncode is None:
            try:
                self._popen.kill()
            except ProcessLookupError:
                pass


def _release(prestarted: dict[tuple[str, ...], list[Any]]) -> None:
    """Stop the front's upstreams nobody adopted."""
    for waiting in prestarted.values():
        for entry in waiting:
            popen = entry.child.popen
            if popen is not None and popen.poll() is None:
                logger.warning("upstream %s started early was not wanted; stopped", entry.child.uid)
                popen.kill()
                popen.wait()
    prestarted.clear()


__all__ = ["ChildProcess", "Gate", "Prestarted", "serve_stdio"]
