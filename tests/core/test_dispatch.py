"""Dispatch: each event reaches its parts in the written order; a too-large document reaches the upstreams only."""

from __future__ import annotations

from typing import Any

from fixlore.lsp import dispatch as dispatch_module
from fixlore.lsp.dispatch import Dispatch
from fixlore.lsp.lifecycle import Lifecycle

from .fakes import FakeEditor

URI = "file:///w/a.py"


class Journal:
    """Every call any fake part receives, in order: ``part.method``."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def part(self, name: str, **answers: Any) -> Any:
        journal = self

        class Part:
            def __getattr__(self, method: str) -> Any:
                if method in answers:
                    return answers[method]

                def call(*args: Any, **kwargs: Any) -> None:
                    journal.calls.append(f"{name}.{method}")

                return call

        return Part()


def build(journal: Journal, editor: FakeEditor, *, upstream_running: bool = False) -> Dispatch:
    class Upstream:
        running = upstream_running

    proxy = journal.part(
        "proxy",
        upstreams_for=lambda uri: [Upstream()],
        diagnostics=journal.part("bridge"),
        documents=journal.part("proxy"),  # its document sync: the upstreams' side of every document event
    )
    return Dispatch(
        editor,  # type: ignore[arg-type]
        Lifecycle(editor),  # type: ignore[arg-type]
        journal.part("hub"),
        journal.part("checker"),
        proxy,
        journal.part("learning"),
    )


def test_a_change_reaches_the_upstreams_the_hub_the_timeline_then_the_syntax_check() -> None:
    journal, editor = Journal(), FakeEditor()
    editor.open(URI, "x = 1\n")
    events = build(journal, editor)
    events.changed(URI, {})
    # The hub hears of the edit before anything can publish for the new version.
    assert journal.calls == ["proxy.did_change", "hub.changed", "learning.did_change", "checker.schedule"]


def test_no_own_syntax_check_where_a_running_upstream_serves_the_document() -> None:
    journal, editor = Journal(), FakeEditor()
    editor.open(URI, "x = 1\n")
    build(journal, editor, upstream_running=True).opened(URI, {})
    assert journal.calls == ["proxy.did_open", "learning.did_open"]


def test_a_publish_reaches_the_bridge_then_learning() -> None:
    journal, editor = Journal(), FakeEditor()
    build(journal, editor).published(URI, 1, [])
    assert journal.calls == ["bridge.published", "learning.published"]


def test_a_document_grown_too_large_is_passed_on_only(monkeypatch: Any) -> None:
    monkeypatch.setattr(dispatch_module, "LARGE_DOCUMENT_CHARS", 10)
    journal, editor = Journal(), FakeEditor()
    editor.open(URI, "x = 1\n")
    events = build(journal, editor)
    editor.edit(URI, "x = 1\n" * 5)
    events.changed(URI, {})
    # learning lets go of it and its diagnostics are cleared, once; the upstreams keep it
    assert journal.calls == ["learning.did_close", "checker.cancel", "hub.forget", "proxy.did_change"]
    assert editor.told == ["large-document"]
    journal.calls.clear()
    events.saved(URI, {})
    events.closed(URI, {})
    assert journal.calls == ["proxy.did_save", "proxy.did_close", "checker.cancel", "hub.forget"]


def test_notebook_cells_are_documents_after_the_whole_notebook() -> None:
    journal, editor = Journal(), FakeEditor()
    cell = {"uri": "vscode-notebook-cell:/n#a", "languageId": "python", "version": 1, "text": ""}
    raw = {"notebookDocument": {"uri": "file:///n.ipynb"}, "cellTextDocuments": [cell]}
    events = build(journal, editor)
    events.notebook("notebookDocument/didOpen", raw)
    events.notebook("notebookDocument/didClose", raw)
    assert journal.calls == [
        "proxy.notebook_event",
        "proxy.cell_opened",
        "learning.did_open",
        "proxy.notebook_event",
        "proxy.cell_closed",
        "learning.did_close",
        "hub.forget",
    ]


async def test_farewell_runs_each_step_once_even_if_one_fails() -> None:
    journal, editor = Journal(), FakeEditor()

    def broken() -> None:
        journal.calls.append("checker.close")
        raise RuntimeError("a bug")

    events = build(journal, editor)
    events._checker = journal.part("checker", close=broken)  # noqa: SLF001
    await events.farewell()
    await events.farewell()  # exit after shutdown
    assert journal.calls == ["checker.close", "proxy.shutdown", "learning.shutdown"]
