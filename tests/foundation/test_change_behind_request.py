"""A keystroke's light bulb: the request read behind a change starts before the learning loop takes the change in.

The loop's part of a ``didChange`` (the timeline, the pause) waits for the first
step of the request read with it (which writes to the upstreams), and is done
before the server reads the next message.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.actions.code_actions import CodeActions
from fixlore.lsp.dispatch import Dispatch
from tests.foundation.in_process import body, initialized


def frame(message: dict[str, Any]) -> bytes:
    data = body(message)
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


@pytest.mark.parametrize("behind", ["textDocument/codeAction", "textDocument/didSave"])
async def test_the_loop_takes_a_change_in_after_the_request_behind_it_and_before_the_next_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behind: str
) -> None:
    server = await initialized(io.BytesIO())
    assert server.dispatch is not None
    learning = server.dispatch._learning  # noqa: SLF001
    order: list[str] = []
    took = learning._did_change  # noqa: SLF001

    def taking(uri: str, raw: Any, text: str | None, at: float) -> None:
        order.append(f"timeline v{raw['textDocument']['version']}: {text!r}")
        took(uri, raw, text, at)

    monkeypatch.setattr(learning, "_did_change", taking)
    build = CodeActions.build

    async def building(self: CodeActions, raw: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        order.append("code action")
        return await build(self, raw, *args, **kwargs)

    monkeypatch.setattr(CodeActions, "build", building)
    saved = Dispatch.saved

    def saving(self: Dispatch, uri: str, raw: Any) -> None:
        order.append("save")
        saved(self, uri, raw)

    monkeypatch.setattr(Dispatch, "saved", saving)

    uri = (tmp_path / "a.py").as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    edit = {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 5}}
    change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": edit, "text": "0"}]}
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    second = {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}}
    if behind == "textDocument/codeAction":
        params = {"textDocument": {"uri": uri}, "range": where, "context": {"diagnostics": []}}
        second = {"id": 7, "method": behind, "params": params}
    reader = asyncio.StreamReader()
    reader.feed_data(
        frame({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
        + frame({"method": "textDocument/didChange", "params": change})  # the editor wrote both at once
        + frame(second)
        + frame({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
    )
    reader.feed_eof()
    await server._serve_reader(reader)  # noqa: SLF001
    first = (
        ["code action", "timeline v2: 'x = 10\\n'"]
        if behind == "textDocument/codeAction"
        else [
            "timeline v2: 'x = 10\\n'",
            "save",
        ]
    )
    assert order == [*first, "save"]
    assert learning.timelines[uri].text == "x = 10\n"
    await server.dispatch.farewell()
