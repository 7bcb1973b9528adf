"""The early front's picture of fixlore's own capabilities is what pygls builds for the server (issue 14)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from typing import Any

import pytest
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder

from fixlore.lsp.config import UpstreamConfig
from fixlore.lsp.server import create_server
from fixlore.lsp.transport.early import Child, choose_encoding, own_result, workspace_root
from fixlore.lsp.transport.framing import encode_message
from fixlore.lsp.transport.handover import Prestarted
from fixlore.lsp.transport.jsonrpc import ConnectionClosed

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


def started_ruff(params: dict[str, Any]) -> Child:
    """`ruff server` started and initialized as the early front does it (a real process)."""
    child = Child("python:ruff", UpstreamConfig(("ruff", "server")), env=dict(os.environ))
    child.sent = encode_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    child.popen = subprocess.Popen(
        ["ruff", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child.env
    )
    assert child.popen.stdin is not None and child.popen.stdout is not None
    os.write(child.popen.stdin.fileno(), child.sent)
    while child.answer() is None:
        chunk = os.read(child.popen.stdout.fileno(), 1 << 16)
        assert chunk, "ruff exited"
        child.received += chunk
    return child


PARAMS = {"processId": None, "rootUri": None, "capabilities": {}}


async def test_the_proxy_adopts_an_upstream_the_front_initialized() -> None:
    child = started_ruff(PARAMS)
    prestarted = Prestarted(child)
    assert prestarted.matches(dict(os.environ), None, subprocess.DEVNULL)
    assert not prestarted.matches({"OTHER": "1"}, None, subprocess.DEVNULL)

    process, conn = await prestarted.adopt()
    result = await conn.request("initialize", PARAMS, timeout=10)  # not written again: the answer read already
    assert result == child.answer()["result"]  # type: ignore[index]
    conn.notify("initialized", {})
    assert await conn.request("shutdown", None, timeout=10) is None  # the connection is live
    conn.notify("exit")
    assert await asyncio.wait_for(process.wait(), 10) == 0
    await conn.close()


async def test_an_upstream_that_heard_other_params_is_killed_not_adopted_wrong() -> None:
    child = started_ruff(PARAMS)
    process, conn = await Prestarted(child).adopt()

    with pytest.raises(ConnectionClosed):
        await conn.request("initialize", {**PARAMS, "rootUri": "file:///elsewhere"}, timeout=10)
    assert await asyncio.wait_for(process.wait(), 10) == -signal.SIGKILL
    await conn.close()
