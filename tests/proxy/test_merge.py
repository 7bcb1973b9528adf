"""Pure parts of the proxy: capability union, data wrapping, answer merging."""

from __future__ import annotations

from typing import Any

import pytest

from fixlore.lsp.proxy.capabilities import (
    capable,
    client_capabilities_for_upstream,
    merge_server_capabilities,
    serves_notebook,
)
from fixlore.lsp.proxy.merge import merge_completions, merge_lists, unwrap, wrap_item
from fixlore.lsp.proxy.relays import configuration_from


@pytest.mark.parametrize(
    "action",
    [
        {"title": "fix", "kind": "quickfix", "data": {"deep": [1, {"x": None}]}, "x-new": True},
        {"title": "no data", "edit": {"changes": {}}},
        {"title": "null data", "data": None},
    ],
)
def test_wrapped_data_round_trips_exactly(action: dict[str, Any]) -> None:
    wrapped = wrap_item(action, "python:ruff")
    assert wrapped["data"]["fixlore"] == {"upstream": "python:ruff"}
    assert unwrap(wrapped) == ("python:ruff", action)


def test_bare_commands_are_not_wrapped() -> None:
    command = {"title": "Run", "command": "ruff.applyAutofix", "arguments": [1]}
    assert wrap_item(command, "python:ruff") is command


def test_capabilities_are_united_and_fixlore_keeps_its_own() -> None:
    ours = {
        "positionEncoding": "utf-8",
        "textDocumentSync": {"change": 2},
        "executeCommandProvider": {"commands": ["fixlore.accept"]},
        "codeActionProvider": {"codeActionKinds": ["quickfix"]},
    }
    ruff = {
        "textDocumentSync": {"change": 1},
        "executeCommandProvider": {"commands": ["ruff.applyAutofix"]},
        "codeActionProvider": {"codeActionKinds": ["quickfix", "source.fixAll.ruff"], "resolveProvider": True},
        "hoverProvider": True,
        "notebookDocumentSync": {"notebookSelector": [{"cells": [{"language": "python"}]}]},
    }
    other = {
        "completionProvider": {"triggerCharacters": ["."]},
        "hoverProvider": {"workDoneProgress": True},
        "notebookDocumentSync": {"notebookSelector": [{"notebook": "jupyter-notebook", "cells": [{"language": "r"}]}]},
    }
    merged = merge_server_capabilities(ours, [ruff, other])
    assert merged["textDocumentSync"] == {"change": 2}
    assert merged["executeCommandProvider"]["commands"] == ["fixlore.accept", "ruff.applyAutofix"]
    assert merged["codeActionProvider"] == {
        "codeActionKinds": ["quickfix", "source.fixAll.ruff"],
        "resolveProvider": True,
    }
    assert merged["hoverProvider"] == {"workDoneProgress": True}
    assert merged["completionProvider"] == {"triggerCharacters": ["."]}
    # notebooks are the upstreams' (fixlore forwards them): their selectors united
    assert merged["notebookDocumentSync"]["notebookSelector"] == [
        {"cells": [{"language": "python"}]},
        {"notebook": "jupyter-notebook", "cells": [{"language": "r"}]},
    ]


@pytest.mark.parametrize(
    ("selector", "languages", "expected"),
    [
        ([{"cells": [{"language": "python"}]}], {"python"}, True),
        ([{"cells": [{"language": "python"}]}], {"r"}, False),
        ([{"notebook": "jupyter-notebook"}], {"r"}, True),
        ([], {"python"}, False),
        (None, {"python"}, False),
    ],
)
def test_serves_notebook_reads_the_cells_language(selector: Any, languages: set[str], expected: bool) -> None:
    caps = {} if selector is None else {"notebookDocumentSync": {"notebookSelector": selector}}
    assert serves_notebook(caps, languages) is expected


@pytest.mark.parametrize(
    ("caps", "method", "expected"),
    [
        ({"hoverProvider": True}, "textDocument/hover", True),
        ({"hoverProvider": False}, "textDocument/hover", False),
        ({}, "textDocument/hover", False),
        ({"codeActionProvider": True}, "codeAction/resolve", False),
        ({"codeActionProvider": {"resolveProvider": True}}, "codeAction/resolve", True),
        ({}, "textDocument/someFutureMethod", True),
    ],
)
def test_capable(caps: dict[str, Any], method: str, expected: bool) -> None:
    assert capable(caps, method) is expected


def test_upstream_is_offered_exactly_the_session_encoding() -> None:
    editor = {"general": {"positionEncodings": ["utf-8", "utf-16"], "x": 1}, "textDocument": {}}
    caps = client_capabilities_for_upstream(editor, "utf-16")
    assert caps["general"] == {"positionEncodings": ["utf-16"], "x": 1}
    assert editor["general"]["positionEncodings"] == ["utf-8", "utf-16"]


def test_completion_lists_merge_with_their_defaults_applied() -> None:
    a = {"isIncomplete": False, "items": [{"label": "a"}], "itemDefaults": {"commitCharacters": ["("]}}
    b = [{"label": "b"}]
    merged = merge_completions([a, None, b])
    assert merged == {"isIncomplete": False, "items": [{"label": "a", "commitCharacters": ["("]}, {"label": "b"}]}
    assert merge_completions([None, a]) is a


def test_locations_and_links_merge_as_links() -> None:
    loc = {"uri": "file:///a", "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}}
    link = {"targetUri": "file:///b", "targetRange": loc["range"], "targetSelectionRange": loc["range"]}
    assert merge_lists([loc, [link]]) == [
        {"targetUri": "file:///a", "targetRange": loc["range"], "targetSelectionRange": loc["range"]},
        link,
    ]


def test_own_settings_answer_configuration_by_section() -> None:
    settings = {"ruff": {"lineLength": 100}}
    params = {"items": [{"section": "ruff"}, {"section": "ruff.lineLength"}, {"section": "other"}, {}]}
    assert configuration_from(settings, params) == [{"lineLength": 100}, 100, None, settings]
