"""The shared editor stand-in (fixlore.lsp.tools.editor_session) without a server: edits, positions, waits."""

from __future__ import annotations

import asyncio

import pytest

from fixlore.lsp.tools.editor_session import EditorSession, apply_lsp_edits, lsp_position

TEXT = "x = 'é😀'\ny = 1\n"


def at(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


def test_edits_after_a_wide_character_land_where_the_server_meant_in_each_encoding() -> None:
    # After `x = 'é😀` : 7 code points, 8 UTF-16 units, 11 UTF-8 bytes.
    for encoding, column in (("utf-16", 8), ("utf-8", 11), ("utf-32", 7)):
        edit = {"range": {"start": at(0, column), "end": at(0, column + 1)}, "newText": '"'}
        assert apply_lsp_edits(TEXT, [edit], encoding) == "x = 'é😀\"\ny = 1\n"
        assert lsp_position(TEXT, TEXT.index("'", 5), encoding) == at(0, column)


def test_edits_apply_in_any_order_and_positions_count_lines() -> None:
    edits = [
        {"range": {"start": at(1, 4), "end": at(1, 5)}, "newText": "2"},
        {"range": {"start": at(0, 0), "end": at(0, 1)}, "newText": "z"},
    ]
    assert apply_lsp_edits(TEXT, edits) == "z = 'é😀'\ny = 2\n"
    assert lsp_position(TEXT, len(TEXT)) == at(2, 0)


def publish(session: EditorSession, uri: str, codes: list[str]) -> None:
    """A publication without a version (counts for whatever version the document has)."""
    params = {"uri": uri, "diagnostics": [{"code": c} for c in codes]}
    session._on_notification("textDocument/publishDiagnostics", params)


async def test_a_wait_ends_on_the_message_that_satisfies_it_and_returns_its_value() -> None:
    session = EditorSession(timeout=5)
    loop = asyncio.get_running_loop()
    # Delivered once the wait below has registered, in this order.
    loop.call_soon(publish, session, "file:///a.py", ["E711"])
    loop.call_soon(publish, session, "file:///a.py", ["E711", "F401"])
    assert await session.diagnostic("file:///a.py", "F401") == {"code": "F401"}
    assert [c["code"] for c in session.diagnostics["file:///a.py"]] == ["E711", "F401"]


async def test_a_wait_that_never_holds_names_what_it_waited_for() -> None:
    session = EditorSession(timeout=5)
    with pytest.raises(TimeoutError, match="F821"):
        await session.diagnostic("file:///a.py", "F821", timeout=0.05)


async def test_a_predicate_that_fails_fails_its_waiter_not_the_reader() -> None:
    session = EditorSession(timeout=5)
    asyncio.get_running_loop().call_soon(publish, session, "file:///a.py", [])
    with pytest.raises(KeyError):
        # Falsy until the first publication, then a KeyError (no b.py) inside the message handler.
        await session.wait_for(lambda: session.diagnostics and session.diagnostics["file:///b.py"])
    publish(session, "file:///b.py", ["F401"])  # the message handler itself goes on working
    assert session.diagnostics["file:///b.py"] == [{"code": "F401"}]
