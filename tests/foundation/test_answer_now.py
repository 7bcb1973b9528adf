"""A code action's answer is written when its handler ends, not after what the loop had ready then."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from fixlore.lsp.server import create_server
from tests.foundation.in_process import body, initialized


async def test_the_answer_goes_out_before_callbacks_queued_behind_the_handler(tmp_path: Path) -> None:
    out = io.BytesIO()
    server = await initialized(out)
    protocol = server.protocol
    uri = (tmp_path / "a.py").as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    protocol.receive(body({"method": "textDocument/didOpen", "params": {"textDocument": doc}}))
    await asyncio.sleep(0)
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    params = {"textDocument": {"uri": uri}, "range": where, "context": {"diagnostics": []}}
    protocol.receive(body({"id": 7, "method": "textDocument/codeAction", "params": params}))
    # Queued right behind the handler's task: with pygls' done callback the answer came after it.
    seen: list[bool] = []
    asyncio.get_running_loop().call_soon(lambda: seen.append(b'"id":7' in out.getvalue()))
    while not seen:
        await asyncio.sleep(0)
    assert seen == [True]
    for _ in range(20):  # the done callback must not answer a second time
        await asyncio.sleep(0)
    assert out.getvalue().count(b'"id":7') == 1
    assert server.dispatch is not None
    await server.dispatch.farewell()


async def test_outside_a_request_the_result_goes_back_to_pygls() -> None:
    server = create_server()
    assert server.protocol.answer_now([{"title": "t"}]) == [{"title": "t"}]
