"""A raw JSON-RPC editor stand-in that drives a real `fixlore serve` process.

It speaks lossless JSON (fixlore.lsp.jsonrpc), records every notification and
server-to-client request, answers those requests like an editor would, and
lets tests wait for a condition instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixlore.lsp.jsonrpc import JsonRpcConnection, spawn

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


class Editor:
    """One editor session."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.conn: JsonRpcConnection | None = None
        self.notifications: list[tuple[str, Any]] = []
        self.requests: list[tuple[str, Any]] = []
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self.answers: dict[str, Callable[[Any], Any]] = {}
        self.applied_edits: list[Any] = []
        self.documents: dict[str, tuple[int, str]] = {}
        self._changed = asyncio.Condition()
        self.init_result: Any = None

    async def start(self, command: list[str]) -> None:
        self.process, self.conn = await spawn(
            command, on_request=self._on_request, on_notification=self._on_notification
        )

    def _poke(self) -> None:
        async def notify() -> None:
            async with self._changed:
                self._changed.notify_all()

        asyncio.ensure_future(notify())

    def _on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[params["uri"]] = params["diagnostics"]
        self._poke()

    async def _on_request(self, msg_id: Any, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        self._poke()
        if method in self.answers:
            return self.answers[method](params)
        if method == "workspace/configuration":
            return [None for _ in params["items"]]
        if method == "workspace/applyEdit":
            self.applied_edits.append(params["edit"])
            return {"applied": True}
        return None

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked on every message)."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                while not (value := predicate()):
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), 0.5)
                return value

    async def request(self, method: str, params: Any, timeout: float = 20.0) -> Any:
        assert self.conn is not None
        return await self.conn.request(method, params, timeout=timeout)

    def notify(self, method: str, params: Any) -> None:
        assert self.conn is not None
        self.conn.notify(method, params)

    async def initialize(
        self, root: Path, caps: dict[str, Any] | None = None, init_options: Any = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "processId": None,
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": caps if caps is not None else PUSH_CAPS,
        }
        if init_options is not None:
            params["initializationOptions"] = init_options
        self.init_result = await self.request("initialize", params, timeout=60)
        self.notify("initialized", {})
        return self.init_result

    def open(self, path: Path, text: str | None = None, language_id: str = "python") -> str:
        uri = path.as_uri()
        text = path.read_text() if text is None else text
        self.documents[uri] = (1, text)
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}},
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        version = self.documents[uri][0] + 1
        self.documents[uri] = (version, text)
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )
        return version

    async def close(self) -> int | None:
        """shutdown + exit; returns fixlore's exit code."""
        if self.conn is None or self.process is None:
            return None
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
        try:
            return await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            return await self.process.wait()
        finally:
            await self.conn.close()


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP TextEdits (UTF-8 positions on ASCII text are code points)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(pos: dict[str, int]) -> int:
        return offsets[min(pos["line"], len(lines))] + pos["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
    return text


def edits_for(workspace_edit: dict[str, Any], uri: str) -> list[dict[str, Any]]:
    """The TextEdits for ``uri`` in a WorkspaceEdit (changes or documentChanges)."""
    if "documentChanges" in workspace_edit:
        return [e for dc in workspace_edit["documentChanges"] if dc["textDocument"]["uri"] == uri for e in dc["edits"]]
    return list(workspace_edit.get("changes", {}).get(uri, []))
