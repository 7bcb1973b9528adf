"""End to end over stdio with pytest-lsp: fixlore standalone, as VS Code and Neovim see it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.e2e

FIXLORE = str(Path(sys.executable).parent / "fixlore")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[FIXLORE, "serve"]),
    params=["visual-studio-code", "neovim"],
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    params = types.InitializeParams(capabilities=client_capabilities(request.param))
    result = await lsp_client.initialize_session(params)
    lsp_client.position_encoding = result.capabilities.position_encoding  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def diagnostics_for(
    client: LanguageClient,
    uri: str,
    until: Callable[[Sequence[types.Diagnostic]], bool],
    timeout: float = 10.0,
) -> Sequence[types.Diagnostic]:
    """Wait for published diagnostics of ``uri`` that satisfy ``until``."""

    async def wait() -> Sequence[types.Diagnostic]:
        while True:
            current = client.diagnostics.get(uri)
            if current is not None and until(current):
                return current
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


def open_doc(client: LanguageClient, uri: str, language: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )


def insert(client: LanguageClient, uri: str, version: int, at: types.Position, text: str) -> None:
    """An incremental didChange inserting ``text`` at ``at``."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text)],
        )
    )


async def test_broken_python_gets_python_parser_diagnostic(client: LanguageClient) -> None:
    uri = "file:///ws/report.py"
    open_doc(client, uri, "python", "def summarise(rows)\n    return len(rows)\n")

    [diag] = await diagnostics_for(client, uri, lambda d: len(d) > 0)

    assert diag.source == "fixlore"
    assert diag.message == "Expected ':'"
    assert diag.severity == types.DiagnosticSeverity.Error
    assert diag.range.start == types.Position(line=0, character=19)


async def test_broken_javascript_gets_tree_sitter_diagnostic(client: LanguageClient) -> None:
    uri = "file:///ws/cart.js"
    open_doc(client, uri, "javascript", "function add(cart, item) {\n  cart.items.push(item;\n}\n")

    [diag] = await diagnostics_for(client, uri, lambda d: len(d) > 0)

    assert diag.source == "fixlore"
    assert diag.message == "Syntax error: missing `)`"
    assert diag.range.start == types.Position(line=1, character=22)


async def test_fixing_the_text_clears_diagnostics(client: LanguageClient) -> None:
    uri = "file:///ws/fix.py"
    open_doc(client, uri, "python", "if ready\n    go()\n")
    await diagnostics_for(client, uri, lambda d: len(d) == 1)

    insert(client, uri, 2, types.Position(line=0, character=8), ":")

    assert await diagnostics_for(client, uri, lambda d: len(d) == 0) == []


async def test_full_document_sync_also_works(client: LanguageClient) -> None:
    uri = "file:///ws/full.js"
    open_doc(client, uri, "javascript", "let x = 1;\n")
    await diagnostics_for(client, uri, lambda d: len(d) == 0)

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="let x = (1;\n")],
        )
    )

    [diag] = await diagnostics_for(client, uri, lambda d: len(d) == 1)
    assert diag.range.start.line == 0


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the code units of an LSP position encoding."""
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    return len(text.encode(codec)) // {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]


@pytest.mark.parametrize("line", ['s = "é😋"; x = (', "ñandú = [1,"])
async def test_non_ascii_line_gets_ranges_in_the_negotiated_encoding(client: LanguageClient, line: str) -> None:
    uri = "file:///ws/unicode.py"
    open_doc(client, uri, "python", f"{line}\n")

    [diag] = await diagnostics_for(client, uri, lambda d: len(d) > 0)

    # Python reports the unclosed bracket itself: the last bracket of the line.
    bracket = max(line.rfind("("), line.rfind("["))
    encoding = client.position_encoding or "utf-16"  # type: ignore[attr-defined]
    assert "was never closed" in diag.message
    assert diag.range.start == types.Position(line=0, character=units(line[:bracket], encoding))
    assert diag.range.end == types.Position(line=0, character=units(line[: bracket + 1], encoding))


async def test_edit_after_non_ascii_text_lands_at_the_right_column(client: LanguageClient) -> None:
    uri = "file:///ws/edit_unicode.py"
    text = 'name = ("😋", x\n'
    open_doc(client, uri, "python", text)
    await diagnostics_for(client, uri, lambda d: len(d) == 1)
    encoding = client.position_encoding or "utf-16"  # type: ignore[attr-defined]
    before_colon = text.index("x") + 1
    column = units(text[:before_colon], encoding)

    # closing the tuple after `x` makes it valid; the column is in client units
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=column), end=types.Position(line=0, character=column)
                    ),
                    text=")",
                )
            ],
        )
    )

    assert await diagnostics_for(client, uri, lambda d: len(d) == 0) == []


async def test_an_edit_below_a_form_feed_lands_on_the_editors_line(client: LanguageClient) -> None:
    # Editors end lines at \n, \r\n and \r only; pygls also split at the form feed and
    # put this colon on the wrong line, so the error stayed and fixlore's text drifted.
    uri = "file:///ws/paged.py"
    open_doc(client, uri, "python", "x = 1\x0c\nif ready\n    go()\n")
    await diagnostics_for(client, uri, lambda d: len(d) == 1)

    insert(client, uri, 2, types.Position(line=1, character=8), ":")

    assert await diagnostics_for(client, uri, lambda d: len(d) == 0) == []


async def test_a_quoted_uri_gets_diagnostics(client: LanguageClient) -> None:
    uri = "file:///ws/my%20report.py"
    open_doc(client, uri, "python", "def summarise(rows)\n    return len(rows)\n")

    [diag] = await diagnostics_for(client, uri, lambda d: len(d) > 0)
    assert diag.message == "Expected ':'"
