"""The editor stand-in of the proxy tests: it drives a real `fixlore serve` process.

The editor itself is :class:`fixlore.lsp.tools.editor_session.EditorSession`
(lossless JSON, every notification and server-to-client request recorded,
requests answered like an editor would, waits on conditions instead of
sleeps). What is particular to these tests: the capabilities announced
(push and pull diagnostics), the command lines of fixlore and of the
misbehaving test servers, connecting over TCP, and reading the edits of a
WorkspaceEdit.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any, ClassVar

from fixlore.lsp.tools.editor_session import EditorSession
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES
from fixlore.lsp.transport.jsonrpc import JsonRpcConnection

BIN = Path(sys.executable).parent
RUFF = str(BIN / "ruff")
SERVERS = Path(__file__).parent / "servers"

PUSH_CAPS: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "publishDiagnostics": {"versionSupport": True},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {"valueSet": ["", "quickfix", "refactor", "source", "source.fixAll"]}
            },
            "resolveSupport": {"properties": ["edit"]},
            "dataSupport": True,
            "isPreferredSupport": True,
        },
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "formatting": {},
        "completion": {"completionItem": {"snippetSupport": False}},
    },
    "workspace": {"applyEdit": True, "configuration": True, "workspaceEdit": {"documentChanges": True}},
    "window": {"workDoneProgress": True, "showMessage": {}},
}

PULL_CAPS: dict[str, Any] = {
    **PUSH_CAPS,
    "textDocument": {**PUSH_CAPS["textDocument"], "diagnostic": {"dynamicRegistration": False}},
    "workspace": {**PUSH_CAPS["workspace"], "diagnostics": {"refreshSupport": True}},
}


def fixlore_cmd(*upstreams: str) -> list[str]:
    """`fixlore serve` with upstream flags (LANG=CMD)."""
    cmd = [str(BIN / "fixlore"), "serve"]
    for up in upstreams:
        cmd += ["--upstream", up]
    return cmd


def server_flag(script: str, *args: str) -> str:
    """An upstream flag value for one of the misbehaving test servers."""
    return " ".join([sys.executable, str(SERVERS / script), *args])


class Editor(EditorSession):
    """One editor session: ``start(command)``, then ``initialize(root)``."""

    CLIENT_CAPABILITIES: ClassVar[dict[str, Any]] = PUSH_CAPS

    def __init__(self) -> None:
        super().__init__(timeout=20.0)

    async def initialize(
        self,
        root: Path | None = None,
        caps: dict[str, Any] | None = None,
        init_options: Any = None,
        *,
        timeout: float | None = 60.0,
    ) -> dict[str, Any]:
        """The handshake, with more time: the upstreams start behind it."""
        return await super().initialize(root, caps, init_options, timeout=timeout)


async def start_over_tcp(editor: Editor, command: list[str]) -> None:
    """Start ``command`` (a ``fixlore serve``) with ``--tcp`` on a free port and connect ``editor`` to it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    editor.process = await asyncio.create_subprocess_exec(*command, "--tcp", f"127.0.0.1:{port}")
    for _ in range(400):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=MAX_MESSAGE_BYTES)
            break
        except OSError:
            await asyncio.sleep(0.05)  # polling for the listening socket, not synchronising on work
    else:
        raise AssertionError("fixlore did not listen on its TCP port")
    editor.conn = JsonRpcConnection(
        reader, writer, on_notification=editor._on_notification, on_request=editor._on_request, name="fixlore"
    )
    editor.conn.start()


def edits_for(workspace_edit: dict[str, Any], uri: str) -> list[dict[str, Any]]:
    """The TextEdits for ``uri`` in a WorkspaceEdit (changes or documentChanges)."""
    if "documentChanges" in workspace_edit:
        return [e for dc in workspace_edit["documentChanges"] if dc["textDocument"]["uri"] == uri for e in dc["edits"]]
    return list(workspace_edit.get("changes", {}).get(uri, []))
