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


# -- a slower source's list is carried over the edits typed since ----------------------------
SLOW = {"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 9}}, "code": "reportX"}


def at(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


def type_change(
    hub: DiagnosticsHub, editor: FakeEditor, start: tuple[int, int], end: tuple[int, int], text: str
) -> int:
    """An incremental didChange as the dispatch hands it to the hub (the text applied first)."""
    from fixlore.lsp.transport.text_sync import apply_change

    doc = editor.documents[URI]
    change = {"range": {"start": at(*start), "end": at(*end)}, "text": text}
    editor.edit(URI, apply_change(doc.source, change, doc.position_codec.client_num_units))
    version = editor.documents[URI].version
    hub.changed(URI, version, [change])
    return version


def moved(diagnostic: dict[str, Any], start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    return {**diagnostic, "range": {"start": at(*start), "end": at(*end)}}


def two_sources() -> tuple[DiagnosticsHub, FakeEditor, Follower]:
    editor = FakeEditor()
    editor.open(URI, "import os\nx = value\n", version=1)
    hub = DiagnosticsHub(editor)  # type: ignore[arg-type]
    follower = hub.follower = Follower()
    hub.set(URI, "upstream:ruff", 1, [F401])
    hub.set(URI, "upstream:pyright", 1, [SLOW])
    return hub, editor, follower


def test_a_lagging_sources_diagnostics_stay_on_the_editor_moved_with_the_text() -> None:
    hub, editor, follower = two_sources()
    type_change(hub, editor, (0, 0), (0, 0), "import re\n")  # a line above: everything moves down one
    version = type_change(hub, editor, (2, 0), (2, 0), "yy")  # two letters before the slow one's range
    hub.set(URI, "upstream:ruff", version, [F401])
    assert published(editor)[-1] == (version, [F401, moved(SLOW, (2, 6), (2, 11))])
    # The learning loop hears only lists computed for this text, as before.
    assert follower.heard[-1] == (version, [F401])
    assert hub.current(URI) == [F401] and hub.lagging(URI) == {"upstream:pyright"}
    hub.set(URI, "upstream:pyright", version, [])  # it catches up: its own word replaces the carried one
    assert published(editor)[-1] == (version, [F401])


def test_an_edit_inside_a_carried_range_keeps_it_over_the_new_text() -> None:
    hub, editor, _ = two_sources()
    version = type_change(hub, editor, (1, 5), (1, 7), "ALUE\nmore")  # `al` of `value` replaced, a line added
    hub.set(URI, "upstream:ruff", version, [F401])
    assert published(editor)[-1] == (version, [F401, moved(SLOW, (1, 4), (2, 6))])


def test_a_list_that_cannot_be_carried_is_held_back() -> None:
    hub, editor, _ = two_sources()
    type_change(hub, editor, (0, 0), (0, 0), "import re\n")
    editor.edit(URI, "whole new text\n")  # a whole-text change: where the slow one's range went is unknown
    hub.changed(URI, editor.documents[URI].version, [{"text": "whole new text\n"}])
    hub.set(URI, "upstream:ruff", editor.documents[URI].version, [])
    assert published(editor)[-1] == (3, [])


def test_a_carried_range_moves_by_the_editors_units() -> None:
    hub, editor, _ = two_sources()
    version = type_change(hub, editor, (1, 0), (1, 0), "😀 ")  # two UTF-16 units and a space
    hub.set(URI, "upstream:ruff", version, [F401])
    assert published(editor)[-1] == (version, [F401, moved(SLOW, (1, 7), (1, 12))])


def test_a_line_typed_right_where_a_carried_range_starts_pushes_it_down() -> None:
    hub, editor, _ = two_sources()
    version = type_change(hub, editor, (1, 4), (1, 4), "\n    ")  # Enter right before `value`
    hub.set(URI, "upstream:ruff", version, [F401])
    assert published(editor)[-1] == (version, [F401, moved(SLOW, (2, 4), (2, 9))])
