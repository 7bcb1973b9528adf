"""The early front's picture of fixlore's own capabilities is what pygls builds for the server (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder

from fixlore.lsp.server import create_server
from fixlore.lsp.transport.early import choose_encoding, own_result, workspace_root

RICH = {  # what a full-featured editor says it can do (the parts pygls' builder reads)
    "general": {"positionEncodings": ["utf-32", "utf-16"]},
    "textDocument": {
        "synchronization": {"willSave": True, "willSaveWaitUntil": True, "didSave": True},
        "rename": {"prepareSupport": True},
        "diagnostic": {"dynamicRegistration": False},
    },
    "workspace": {
        "fileOperations": {"willCreate": True, "didCreate": True, "willRename": True, "didDelete": True},
        "configuration": True,
    },
    "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
}


def built_by_pygls(client: dict[str, Any]) -> dict[str, Any]:
    """pygls' ``lsp_initialize`` result for the server fixlore builds (its capabilities builder, as it calls it)."""
    server = create_server()
    protocol = server.protocol
    converter = protocol._converter  # noqa: SLF001
    capabilities = converter.structure(client, types.ClientCapabilities)
    encoding = ServerCapabilitiesBuilder.choose_position_encoding(capabilities)
    fm = protocol.fm
    built = ServerCapabilitiesBuilder(
        capabilities,
        set({**fm.features, **fm.builtin_features}.keys()),
        fm.feature_options,
        list(fm.commands.keys()),
        server._text_document_sync_kind,  # noqa: SLF001
        server._notebook_document_sync,  # noqa: SLF001
        encoding,
    ).build()
    result = converter.unstructure(types.InitializeResult(capabilities=built, server_info=protocol.server_info))
    assert isinstance(result, dict)
    return result


WILL_SAVE_OFF = {"textDocument": {"synchronization": {"willSave": False}}}


@pytest.mark.parametrize("client", [{}, RICH, WILL_SAVE_OFF, {"general": {"positionEncodings": ["utf-8"]}}])
def test_own_result_is_what_pygls_builds(client: dict[str, Any]) -> None:
    expected = built_by_pygls(client)

    assert own_result(client) == expected
    assert [list(own_result(client)["capabilities"][k]) for k in ("textDocumentSync",)] == [
        list(expected["capabilities"]["textDocumentSync"])
    ]
    assert list(own_result(client)["capabilities"]) == list(expected["capabilities"])  # member order too


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (None, "utf-16"),
        (["utf-8"], "utf-8"),
        (["utf-32", "utf-8"], "utf-32"),
        (["klingon", "utf-8"], "utf-8"),
        ([], "utf-16"),
    ],
)
def test_the_encoding_is_the_one_pygls_chooses(offered: list[str] | None, chosen: str) -> None:
    client = {} if offered is None else {"general": {"positionEncodings": offered}}
    pygls_choice = ServerCapabilitiesBuilder.choose_position_encoding(
        types.ClientCapabilities(
            general=None if offered is None else types.GeneralClientCapabilities(position_encodings=offered)
        )
    )

    assert choose_encoding(client) == chosen == str(getattr(pygls_choice, "value", pygls_choice))


def test_the_root_is_the_one_the_lifecycle_finds(tmp_path: Any) -> None:
    from fixlore.lsp.lifecycle import workspace_root as lifecycle_root

    cases = [
        {"workspaceFolders": [{"uri": tmp_path.as_uri(), "name": "w"}], "rootUri": "file:///elsewhere"},
        {"workspaceFolders": [], "rootUri": (tmp_path / "a b").as_uri()},
        {"rootPath": str(tmp_path)},
        {},
    ]
    converter = create_server().protocol._converter  # noqa: SLF001
    for raw in cases:
        params = converter.structure({"processId": None, "capabilities": {}, **raw}, types.InitializeParams)
        assert workspace_root({"capabilities": {}, **raw}) == lifecycle_root(params)
