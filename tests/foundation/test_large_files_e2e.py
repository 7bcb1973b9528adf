"""A file too large to parse quickly is passed on, not parsed: the session stays responsive (issue 15)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from fixlore.lsp.dispatch import LARGE_DOCUMENT_CHARS
from tests.foundation.raw_editor import RawEditor, start_raw

pytestmark = pytest.mark.e2e

BIG = "file:///w/generated.py"
SMALL = "file:///w/small.py"


def did_open(uri: str, text: str) -> dict[str, object]:
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    return {"method": "textDocument/didOpen", "params": {"textDocument": doc}}


@pytest.fixture
async def editor() -> AsyncIterator[RawEditor]:
    ed = await start_raw()
    await ed.initialize("file:///w")
    ed.send({"id": "loaded", "method": "fixlore/ping"})  # initialize is answered before the server has loaded
    await ed.answer("loaded", timeout=60)
    yield ed
    await ed.stop()


async def test_a_file_past_the_limit_is_not_parsed_and_the_user_is_told_once(editor: RawEditor) -> None:
    chunk = "def f(a, b):\n    return a + b\n\n"
    text = chunk * (LARGE_DOCUMENT_CHARS // len(chunk) + 1) + "def broken(:\n    pass\n"

    editor.send(did_open(BIG, text))

    shown = await editor.note(lambda m, p: m == "window/showMessage")
    assert "too large" in shown["message"] and "generated.py" not in shown["message"]  # no file names
    for n in range(5):  # answered at once: nothing holds the event loop (or the GIL) for seconds
        editor.send({"id": f"ping-{n}", "method": "fixlore/ping"})
        assert "error" in await editor.answer(f"ping-{n}", timeout=5)  # method not found, promptly
    editor.send(did_open(SMALL, "def broken(:\n    pass\n"))
    await editor.note(lambda m, p: m == "textDocument/publishDiagnostics" and p["uri"] == SMALL)
    assert not [p for m, p in editor.notes if m == "textDocument/publishDiagnostics" and p["uri"] == BIG]
    editor.send(did_open("file:///w/also-big.py", text))
    editor.send({"id": "after", "method": "fixlore/ping"})
    await editor.answer("after")
    assert [m for m, _ in editor.notes].count("window/showMessage") == 1


async def test_a_big_file_under_the_limit_is_checked_without_stalling_requests(editor: RawEditor) -> None:
    chunk = "def f(a, b):\n    return a + b\n\n"
    copies = 5_000_000 // len(chunk)
    editor.send(did_open(BIG, chunk * copies + "def broken(:\n    pass\n"))

    for n in range(5):  # a parse in a thread held the GIL: these waited 7-14 s for a 5 MB file
        editor.send({"id": f"ping-{n}", "method": "fixlore/ping"})
        await editor.answer(f"ping-{n}", timeout=3)
    published = await editor.note(
        lambda m, p: m == "textDocument/publishDiagnostics" and p["uri"] == BIG and p["diagnostics"], timeout=90
    )
    assert [d["range"]["start"]["line"] for d in published["diagnostics"]] == [copies * 3]
