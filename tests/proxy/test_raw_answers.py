"""Raw answers on the lossless JSON-RPC connection: compare before decoding, decode the same."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from fixlore.lsp.transport.jsonrpc import JsonRpcConnection, RawResult, RpcError

REPORT = {"kind": "full", "items": [{"code": "F401", "data": {"édition": 2**40, "nested": [None, True]}}]}


class Peer:
    """The answering side: a real connection whose answers the test decides."""

    def __init__(self) -> None:
        self.answer: Any = REPORT
        self.writer: asyncio.StreamWriter | None = None

    async def on_request(self, msg_id: Any, method: str, params: Any) -> Any:
        if method == "fail":
            raise RpcError(-32001, "nope")
        if method == "odd-order":
            # A peer that puts the id last: no fast path, same answer
            assert self.writer is not None
            body = b'{"result":{"kind":"full","items":[]},"id":%d,"jsonrpc":"2.0"}' % msg_id
            self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            return "a second answer with the same id, dropped"
        return self.answer


@pytest.fixture
async def pair() -> AsyncIterator[tuple[JsonRpcConnection, Peer]]:
    left, right = socket.socketpair()
    peer = Peer()
    r1, w1 = await asyncio.open_connection(sock=left)
    r2, w2 = await asyncio.open_connection(sock=right)
    peer.writer = w2
    client = JsonRpcConnection(r1, w1, name="client")
    server = JsonRpcConnection(r2, w2, on_request=peer.on_request, name="server")
    client.start()
    server.start()
    yield client, peer
    await client.close()
    await server.close()


async def test_equal_answers_have_equal_keys_and_decode_losslessly(pair: tuple[JsonRpcConnection, Peer]) -> None:
    client, peer = pair
    first = await client.request("textDocument/diagnostic", {}, timeout=5, raw=True)
    second = await client.request("textDocument/diagnostic", {}, timeout=5, raw=True)
    assert isinstance(first, RawResult) and first.key is not None
    assert first.key == second.key  # the ids differ, the keys do not
    assert first.value() == REPORT == second.value()
    peer.answer = {"kind": "full", "items": []}
    third = await client.request("textDocument/diagnostic", {}, timeout=5, raw=True)
    assert third.key != first.key
    assert third.value() == {"kind": "full", "items": []}
    # a plain request on the same connection still gets the decoded result
    assert await client.request("textDocument/diagnostic", {}, timeout=5) == {"kind": "full", "items": []}


async def test_errors_and_other_framings_behave_as_before(pair: tuple[JsonRpcConnection, Peer]) -> None:
    client, _ = pair
    with pytest.raises(RpcError) as caught:
        await client.request("fail", {}, timeout=5, raw=True)
    assert caught.value.code == -32001
    odd = await client.request("odd-order", {}, timeout=5, raw=True)
    assert odd.key is None
    assert odd.value() == {"kind": "full", "items": []}


async def test_on_raw_sees_a_success_answer_before_its_future_and_nothing_else(
    pair: tuple[JsonRpcConnection, Peer],
) -> None:
    client, _ = pair
    seen: list[tuple[bytes | None, bool]] = []
    future: asyncio.Future[Any] | None = None

    def on_raw(result: RawResult) -> None:
        assert future is not None
        seen.append((result.key, future.done()))

    future = client.start_request("textDocument/diagnostic", {}, timeout=5, raw=True, on_raw=on_raw)
    result = await future
    assert seen == [(result.key, False)]  # called as the answer was read, before the future resolved
    assert result.value() == REPORT

    for method in ("fail", "odd-order"):  # an error, and a framing without the fast path: the future only
        future = client.start_request(method, {}, timeout=5, raw=True, on_raw=on_raw)
        with pytest.raises(RpcError) if method == "fail" else contextlib.nullcontext():
            await future
    assert len(seen) == 1

    def broken(result: RawResult) -> None:
        raise RuntimeError("a caller's bug")

    future = client.start_request("textDocument/diagnostic", {}, timeout=5, raw=True, on_raw=broken)
    assert (await future).value() == REPORT  # the answer still arrives
