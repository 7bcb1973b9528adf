"""The proxy's routing with fake upstreams: fan-out and merge, first capable, errors, per-upstream context."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from fixlore.lsp.hub import DiagnosticsHub
from fixlore.lsp.proxy import Proxy
from fixlore.lsp.proxy.merge import origin
from fixlore.lsp.transport.jsonrpc import RpcError

from .fakes import FakeEditor

URI = "file:///w/a.py"
POSITION = {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 1}}


class FakeUpstream:
    """An upstream whose answers are given per method (an exception is raised as the upstream's failure)."""

    def __init__(
        self, uid: str, capabilities: dict[str, Any], answers: dict[str, Any], language: str = "python"
    ) -> None:
        self.id = uid
        self.language = language
        self.running = True
        self.capabilities = capabilities
        self.dynamic_methods: set[str] = set()
        self.open_documents: set[str] = set()
        self.answers = answers
        self.asked: list[tuple[str, Any]] = []

    async def _answer(self, method: str) -> Any:
        answer = self.answers[method]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        self.asked.append((method, params))
        return await self._answer(method)

    def request_now(self, method: str, params: Any, timeout: float) -> Any:
        self.asked.append((method, params))
        return self._answer(method)


def proxy_with(*upstreams: FakeUpstream) -> Proxy:
    editor = FakeEditor()
    editor.open(URI, "x = 1\n")
    proxy = Proxy(editor, DiagnosticsHub(editor))  # type: ignore[arg-type]
    proxy.upstreams.update((u.id, u) for u in upstreams)  # type: ignore[misc]
    return proxy


async def test_completion_fans_out_and_merges_in_upstream_order() -> None:
    first = FakeUpstream("python:a", {"completionProvider": {}}, {"textDocument/completion": [{"label": "one"}]})
    second = FakeUpstream(
        "python:b",
        {"completionProvider": {}},
        {"textDocument/completion": {"isIncomplete": True, "items": [{"label": "two"}]}},
    )
    answer = await proxy_with(first, second).handle_request(1, "textDocument/completion", POSITION)
    assert [item["label"] for item in answer["items"]] == ["one", "two"]
    assert answer["isIncomplete"] is True
    assert [origin(item) for item in answer["items"]] == ["python:a", "python:b"]  # resolve finds the owner


async def test_a_request_goes_to_the_first_capable_upstream_and_its_error_reaches_the_editor() -> None:
    silent = FakeUpstream("python:a", {}, {})
    hover = FakeUpstream("python:b", {"hoverProvider": True}, {"textDocument/hover": RpcError(-32803, "no")})
    later = FakeUpstream("python:c", {"hoverProvider": True}, {"textDocument/hover": {"contents": "c"}})
    with pytest.raises(JsonRpcException) as raised:
        await proxy_with(silent, hover, later).handle_request(1, "textDocument/hover", POSITION)
    assert raised.value.code == -32803
    assert silent.asked == [] and later.asked == []


async def test_an_upstream_that_times_out_answers_nothing() -> None:
    slow = FakeUpstream("python:a", {"hoverProvider": True}, {"textDocument/hover": TimeoutError()})
    assert await proxy_with(slow).handle_request(1, "textDocument/hover", POSITION) is None


async def test_a_document_no_upstream_serves_gets_an_empty_answer() -> None:
    biome = FakeUpstream("typescript:biome", {"hoverProvider": True}, {"textDocument/hover": {"x": 1}}, "typescript")
    assert await proxy_with(biome).handle_request(1, "textDocument/hover", POSITION) is None
    assert biome.asked == []


async def test_each_upstream_is_asked_for_actions_on_its_own_diagnostics_only() -> None:
    mine = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "code": "A"}
    theirs = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "code": "B"}
    a = FakeUpstream("python:a", {"codeActionProvider": True}, {"textDocument/codeAction": [{"title": "fix A"}]})
    b = FakeUpstream(
        "python:b", {"codeActionProvider": True}, {"textDocument/codeAction": [{"title": "fix B", "data": 7}]}
    )
    proxy = proxy_with(a, b)
    proxy.diagnostics.put("python:a", URI, 1, [mine])
    proxy.diagnostics.put("python:b", URI, 1, [theirs])
    params = {"textDocument": {"uri": URI}, "range": mine["range"], "context": {"diagnostics": [mine, theirs]}}
    answers = await proxy.start_code_actions(params).answers()
    assert [d["code"] for d in a.asked[0][1]["context"]["diagnostics"]] == ["A"]
    assert [d["code"] for d in b.asked[0][1]["context"]["diagnostics"]] == ["B"]
    assert [(uid, action["title"]) for uid, action in answers] == [("python:a", "fix A"), ("python:b", "fix B")]
    assert answers[1][1]["data"] == {"fixlore": {"upstream": "python:b"}, "data": 7}
