"""A small, lossless JSON-RPC 2.0 connection over LSP's base protocol.

Messages stay plain ``dict``s end to end: nothing is structured, so unknown
fields survive. Used for fixlore's upstream servers and by the demo and
benchmarks as an editor stand-in. Runs on asyncio streams; one reader task
per connection dispatches responses to waiting futures and incoming
requests/notifications to the handlers given. A request sent with
``raw=True`` gets its success answer undecoded (:class:`RawResult`), so that a
caller expecting the same large answer again can compare bytes first.

Frames (``Content-Length``) and the JSON codec are in :mod:`fixlore.lsp.transport.framing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, encode_message, loads, read_body

logger = logging.getLogger(__name__)

RequestHandler = Callable[[Any, str, Any], Awaitable[Any]]
"""(id, method, params) -> result; raise :class:`RpcError` to answer with an error."""
NotificationHandler = Callable[[str, Any], None]


_RESULT_PREFIX = re.compile(rb'\{(?:"jsonrpc":"2\.0",)?"id":(\d+),(?:"jsonrpc":"2\.0",)?"result":')
"""The compact opening of a success response (serde's and orjson's member order)."""


@dataclass(slots=True)
class RawResult:
    """A response kept as the bytes it came in, for callers that compare answers.

    ``key`` is everything from the result's first byte to the end of the
    message: two answers with the same key have the same result (only the id
    differs). It is ``None`` when the peer framed the answer differently; the
    result was then decoded already.
    """

    body: bytes
    start: int
    decoded: Any = None

    @property
    def key(self) -> bytes | None:
        """The bytes that determine the result, or ``None`` if unknown."""
        return self.body[self.start :] if self.start >= 0 else None

    def value(self) -> Any:
        """The decoded ``result``."""
        if self.start < 0:
            return self.decoded
        message = loads(self.body)
        return message.get("result") if isinstance(message, dict) else None

    @property
    def passable(self) -> bool:
        """Whether :attr:`key` can answer another request as it is.

        ``b'{"jsonrpc":"2.0","id":' + id + b',"result":' + key`` is then the same answer
        under another id (see ``FixloreProtocol.send_result_tail``): the response opened
        with ``jsonrpc`` and ``id``, so nothing after the result can repeat them.
        """
        return self.start >= 0 and b'"jsonrpc"' in self.body[: self.start]


class Answered:
    """What a request handler returns when it has written its answer itself."""


ANSWERED = Answered()


class RpcError(Exception):
    """A JSON-RPC error response (from the peer, or to send to it)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        """The ``error`` member of a response."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


class ConnectionClosed(Exception):
    """The peer went away (EOF, broken pipe, or the connection was closed)."""


async def answer_of(future: asyncio.Future[Any], *, raw: bool = False) -> Any:
    """The result of a request sent by :meth:`JsonRpcConnection.start_request`.

    With ``raw`` always a :class:`RawResult` (decoded already if the peer framed it differently).
    """
    result = await future
    if raw and not isinstance(result, RawResult):
        return RawResult(b"", -1, result)
    return result


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class JsonRpcConnection:
    """One JSON-RPC peer over a pair of asyncio streams."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        name: str = "peer",
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_request = on_request
        self._on_notification = on_notification
        self.name = name
        self._ids = itertools.count(1)
        self.last_id = 0
        """The id of the latest request sent (0: none yet)."""
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._raw_ids: set[int] = set()
        self._on_raw: dict[int, Callable[[RawResult], None]] = {}
        self._corked: list[bytes] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()
        self.bad_frames = 0

    def start(self) -> None:
        """Start reading (call once, inside the running loop)."""
        self._task = asyncio.ensure_future(self._read_loop())

    @property
    def closed(self) -> bool:
        """True once the peer went away."""
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        """Wait until the peer goes away."""
        await self._closed.wait()

    def send(self, message: dict[str, Any]) -> None:
        """Write a raw message (``jsonrpc`` is added if missing)."""
        if self.closed:
            raise ConnectionClosed(self.name)
        message.setdefault("jsonrpc", "2.0")
        self.send_frame(encode_message(message))

    def send_frame(self, frame: bytes) -> None:
        """Write one framed message (header and body) as it is."""
        if self.closed:
            raise ConnectionClosed(self.name)
        if self._corked is not None:
            self._corked.append(frame)
            return
        self._write(frame)

    def _write(self, data: bytes) -> None:
        try:
            self._writer.write(data)
        except (ConnectionError, RuntimeError) as exc:
            self._close()
            raise ConnectionClosed(self.name) from exc

    @contextlib.contextmanager
    def corked(self) -> Iterator[None]:
        """Messages sent inside go out in one write at the end: one wake-up of the peer, not several."""
        if self._corked is not None:
            yield  # nested: the outer one writes
            return
        self._corked = []
        try:
            yield
        finally:
            frames, self._corked = self._corked, None
            if frames and not self.closed:
                with contextlib.suppress(ConnectionClosed):  # noticed by the next send or the reader
                    self._write(b"".join(frames))

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def new_id(self) -> int:
        """A fresh request id for this connection."""
        self.last_id = next(self._ids)
        return self.last_id

    def unanswered_since(self, mark: int) -> list[asyncio.Future[Any]]:
        """The answers still awaited of the requests sent after request ``mark`` (:attr:`last_id` then)."""
        return [f for i, f in self._pending.items() if isinstance(i, int) and i > mark and not f.done()]

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        msg_id: Any = None,
        raw: bool = False,
    ) -> Any:
        """Send a request and wait for its result (raises :class:`RpcError`).

        With ``raw`` the answer is a :class:`RawResult`: a success response
        is handed over undecoded, so the caller can compare it with an earlier
        one before paying for the decoding.
        """
        return await answer_of(self.start_request(method, params, timeout=timeout, msg_id=msg_id, raw=raw), raw=raw)

    def start_request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        msg_id: Any = None,
        raw: bool = False,
        on_raw: Callable[[RawResult], None] | None = None,
    ) -> asyncio.Future[Any]:
        """Send a request now; its answer arrives in the returned future (see :func:`answer_of`).

        Cancelling the future forgets the request (a late answer is dropped).
        ``on_raw`` (with ``raw``): called with a success answer framed as usual the
        moment it is read, before the future is resolved, so the caller can pass it
        on in the same turn of the event loop; it must not raise. Other answers
        (errors, unusual framing) reach the future only.
        """
        msg_id = self.new_id() if msg_id is None else msg_id
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending[msg_id] = future
        if raw and isinstance(msg_id, int):
            self._raw_ids.add(msg_id)
            if on_raw is not None:
                self._on_raw[msg_id] = on_raw
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        # A timer instead of asyncio.wait_for, whose extra waiter future costs
        # two turns of the event loop on every answer.
        timer = None if timeout is None else loop.call_later(max(0.0, timeout), _expire, future)

        def forget(done: asyncio.Future[Any]) -> None:
            if not done.cancelled():
                done.exception()  # retrieved: an answer nobody waits for any more is not an error
            if timer is not None:
                timer.cancel()
            if self._pending.get(msg_id) is future:
                del self._pending[msg_id]
            self._raw_ids.discard(msg_id)
            self._on_raw.pop(msg_id, None)

        future.add_done_callback(forget)
        try:
            self.send(message)
        except BaseException:
            future.cancel()
            raise
        return future

    async def close(self) -> None:
        """Close the connection and fail pending requests."""
        self._close()
        with contextlib.suppress(Exception):
            self._writer.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    def _close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(self.name))
        self._pending.clear()

    async def _read_loop(self) -> None:
        try:
            while True:
                try:
                    body = await read_body(self._reader)
                    if body is None:
                        break
                    if self._raw_ids and self._deliver_raw(body):
                        continue
                    message = loads(body)
                    if not isinstance(message, dict):
                        raise ValueError("a JSON-RPC message must be an object")
                except (ValueError, UnicodeDecodeError) as exc:
                    self.bad_frames += 1
                    logger.warning("%s sent a malformed message (%s)", self.name, type(exc).__name__)
                    continue
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._close()

    def _deliver_raw(self, body: bytes) -> bool:
        """Hand a success response to a raw request undecoded; False if it is not one."""
        match = _RESULT_PREFIX.match(body)
        if match is None:
            return False
        msg_id = int(match.group(1))
        if msg_id not in self._raw_ids:
            return False
        future = self._pending.pop(msg_id, None)
        if future is not None and not future.done():
            result = RawResult(body, match.end())
            on_raw = self._on_raw.pop(msg_id, None)
            if on_raw is not None:
                try:
                    on_raw(result)
                except Exception:
                    logger.exception("%s: handling an answer as it came failed", self.name)
            future.set_result(result)
        return True

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            future = self._pending.pop(message.get("id"), None)
            if future is None or future.done():
                return  # late or unknown answer: dropped
            if "error" in message and isinstance(message["error"], dict):
                err = message["error"]
                future.set_exception(
                    RpcError(int(err.get("code", -32603)), str(err.get("message", "")), err.get("data"))
                )
            else:
                future.set_result(message.get("result"))
            return
        if "id" in message:
            asyncio.ensure_future(self._answer(message["id"], method, message.get("params")))
        elif self._on_notification is not None:
            try:
                self._on_notification(method, message.get("params"))
            except Exception:
                logger.exception("notification handler for %s failed", method)

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if self._on_request is None:
            response["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        else:
            try:
                response["result"] = await self._on_request(msg_id, method, params)
            except RpcError as exc:
                response["error"] = exc.to_json()
            except Exception as exc:
                logger.exception("request handler for %s failed", method)
                response["error"] = {"code": -32603, "message": f"{type(exc).__name__} in {method}"}
        with contextlib.suppress(ConnectionClosed):
            self.send(response)


PRESTARTED: dict[tuple[str, ...], list[Any]] = {}
"""Children started by `serve`'s early front, per command, for :func:`spawn` to adopt (:mod:`.handover`)."""


async def spawn(
    command: list[str] | tuple[str, ...],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    stderr: int | None = asyncio.subprocess.DEVNULL,
    **handlers: Any,
) -> tuple[asyncio.subprocess.Process, JsonRpcConnection]:
    """Start ``command`` and connect to its stdio. Raises ``OSError`` if it cannot start.

    A child `fixlore serve` started before the server was built (:mod:`.handover`) is adopted instead.
    """
    waiting = PRESTARTED.get(tuple(command))
    if waiting and waiting[0].matches(env, cwd, stderr):
        return await waiting.pop(0).adopt(**handlers)  # type: ignore[no-any-return,unused-ignore]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=cwd,
        limit=MAX_MESSAGE_BYTES,
    )
    assert process.stdin is not None and process.stdout is not None
    conn = JsonRpcConnection(process.stdout, process.stdin, name=str(command[0]), **handlers)  # type: ignore[arg-type]
    conn.start()
    return process, conn
