"""A diagnostic pull the relay passed on: its report to the editor as it came, a full one held for the hub."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from fixlore.lsp.transport.framing import loads
from fixlore.lsp.transport.relay_upstreams import Asked, Link, UpstreamSide, split_frames

URI = "file:///w/a.py"
ITEM = {"range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 9}}, "code": "F401"}


@pytest.fixture
def side() -> Iterator[tuple[UpstreamSide, Link, int]]:
    read, write = os.pipe()
    relay = UpstreamSide(SimpleNamespace(stdout=write))  # type: ignore[arg-type]
    relay.editor_pulls = True
    link = Link(SimpleNamespace(uid="python:ruff"), {"diagnosticProvider": {}}, (2, False, False))  # type: ignore[arg-type]
    try:
        yield relay, link, read
    finally:
        os.close(read)
        os.close(write)


def _answer(relay: UpstreamSide, link: Link, our_id: str, editor_id: int, report: Any, version: int) -> None:
    relay._asked[our_id] = Asked(editor_id, "textDocument/diagnostic", link, URI, version)  # noqa: SLF001
    relay._answered({"jsonrpc": "2.0", "id": our_id, "result": report})  # noqa: SLF001


def _messages(data: bytes) -> list[dict[str, Any]]:
    frames, _, bad = split_frames(data)
    assert not bad
    return [loads(body) for _, _, body in frames]


def test_the_editor_gets_the_report_and_the_hub_the_full_one_as_a_push_of_that_version(
    side: tuple[UpstreamSide, Link, int],
) -> None:
    relay, link, editor = side
    full = {"kind": "full", "resultId": "r1", "items": [ITEM]}
    _answer(relay, link, "fixlore-early-1", 7, full, version=1)
    [to_editor] = _messages(os.read(editor, 1 << 16))
    assert to_editor == {"jsonrpc": "2.0", "id": 7, "result": full}  # as the upstream answered
    [held] = _messages(b"".join(link.held))
    assert held["method"] == "textDocument/publishDiagnostics"
    assert held["params"] == {"uri": URI, "version": 1, "diagnostics": [ITEM]}
    # An "unchanged" report adds nothing; a newer full one replaces the held one.
    _answer(relay, link, "fixlore-early-2", 8, {"kind": "unchanged", "resultId": "r1"}, version=1)
    _answer(relay, link, "fixlore-early-3", 9, {"kind": "full", "resultId": "r2", "items": []}, version=2)
    assert [m["id"] for m in _messages(os.read(editor, 1 << 16))] == [8, 9]
    [held] = _messages(b"".join(link.held))
    assert held["params"] == {"uri": URI, "version": 2, "diagnostics": []}


def test_an_error_goes_to_the_editor_and_nothing_is_held(side: tuple[UpstreamSide, Link, int]) -> None:
    relay, link, editor = side
    relay._asked["fixlore-early-1"] = Asked(3, "textDocument/diagnostic", link, URI, 1)  # noqa: SLF001
    error = {"code": -32800, "message": "cancelled"}
    relay._answered({"jsonrpc": "2.0", "id": "fixlore-early-1", "error": error})  # noqa: SLF001
    assert _messages(os.read(editor, 1 << 16)) == [{"jsonrpc": "2.0", "id": 3, "error": error}]
    assert link.held == []
