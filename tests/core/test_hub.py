"""The diagnostics hub's publishes: what reaches the editor, and when, as the text moves on under the sources."""

from __future__ import annotations

from typing import Any

from fixlore.lsp.hub import DiagnosticsHub

from .fakes import FakeEditor

URI = "file:///w/a.py"
F401 = {"range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 9}}, "code": "F401"}
F821 = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}, "code": "F821"}
OWN = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}, "code": "E999"}


class Follower:
    def __init__(self) -> None:
        self.heard: list[tuple[int | None, list[dict[str, Any]]]] = []

    def published(self, uri: str, version: int | None, merged: list[dict[str, Any]]) -> None:
        self.heard.append((version, merged))


def hub_at(version: int) -> tuple[DiagnosticsHub, FakeEditor, Follower]:
    editor = FakeEditor()
    editor.open(URI, "import os\n", version=version)
    hub = DiagnosticsHub(editor)  # type: ignore[arg-type]
    follower = hub.follower = Follower()
    return hub, editor, follower


def published(editor: FakeEditor) -> list[tuple[int | None, list[dict[str, Any]]]]:
    return [(p.get("version"), p["diagnostics"]) for m, p in editor.sent if m == "textDocument/publishDiagnostics"]


def type_on(editor: FakeEditor, keystrokes: int) -> None:
    for _ in range(keystrokes):
        editor.edit(URI, editor.documents[URI].source + "x")


def test_a_typing_burst_publishes_once_for_the_final_version_and_clears_nothing_before() -> None:
    hub, editor, follower = hub_at(1)
    hub.set(URI, "upstream:ruff", 1, [F401])
    type_on(editor, 13)  # versions 2..14 reach the upstream, which reports each one after the burst
    for version in range(2, 14):
        hub.set(URI, "upstream:ruff", version, [F401])
    assert published(editor) == [(1, [F401])]  # the editor still shows what it showed
    assert follower.heard == [(1, [F401])]  # the learning loop heard of no merge without ruff either
    assert hub.lagging(URI) == {"upstream:ruff"} and hub.source_versions(URI) == {"upstream:ruff": 13}
    hub.set(URI, "upstream:ruff", 14, [F401, F821])
    assert published(editor) == [(1, [F401]), (14, [F401, F821])]
    assert hub.current(URI) == [F401, F821] and hub.lagging(URI) == frozenset()


def test_an_out_of_date_list_never_takes_another_sources_current_one_off_the_editor() -> None:
    hub, editor, _ = hub_at(1)
    type_on(editor, 1)
    hub.set(URI, "fixlore", 2, [OWN])
    hub.set(URI, "upstream:ruff", 1, [F401])  # ruff's report of the text before the keystroke
    assert published(editor) == [(2, [OWN])]
    hub.set(URI, "upstream:ruff", 2, [F401])
    assert published(editor) == [(2, [OWN]), (2, [OWN, F401])]


def test_an_out_of_date_list_after_the_current_one_is_dropped() -> None:
    hub, editor, _ = hub_at(1)
    type_on(editor, 2)
    hub.set(URI, "upstream:ty", 3, [F821])
    hub.set(URI, "upstream:ty", 2, [])  # an answer for version 2 that came after the one for 3
    assert hub.current(URI) == [F821] and hub.reported(URI, "upstream:ty") == (3, [F821])
    assert published(editor) == [(3, [F821])]


def test_versions_that_start_over_are_published() -> None:
    hub, editor, _ = hub_at(1)
    type_on(editor, 2)
    hub.set(URI, "upstream:ruff", 3, [F821])
    editor.open(URI, "import os\n", version=1)  # opened again (no close between): its versions start over
    hub.set(URI, "upstream:ruff", 1, [F401])
    assert published(editor) == [(3, [F821]), (1, [F401])] and hub.current(URI) == [F401]


def test_a_list_without_a_version_is_taken_for_the_current_text_and_published() -> None:
    hub, editor, _ = hub_at(4)
    hub.set(URI, "upstream:pyright", None, [F821])
    hub.set(URI, "upstream:pyright", None, [])
    assert published(editor) == [(4, [F821]), (4, [])]
    assert hub.source_versions(URI) == {"upstream:pyright": 4}
