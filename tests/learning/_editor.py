"""A scripted editor for learning tests: real ``fixlore serve`` with real ``ruff server``.

Talks raw JSON-RPC (``fixlore.lsp.jsonrpc``) so code actions arrive exactly
as sent (lsprotocol mis-structures actions that carry a command). Keeps each
document's text, applies workspace edits the way an editor does (edit first,
then the action's command) and waits on notifications, never on sleeps.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixlore.lsp.jsonrpc import JsonRpcConnection, spawn

BIN = Path(sys.executable).parent
TIMEOUT = 20.0
INVOKED = 1


def offset(text: str, pos: dict[str, int]) -> int:
    """String index of an LSP position (ASCII test texts: UTF-16 units = code points)."""
    lines = text.split("\n")
    line = min(pos["line"], len(lines))
    base = sum(len(x) + 1 for x in lines[:line])
    if line >= len(lines):
        return len(text)
    return base + min(pos["character"], len(lines[line]))


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP TextEdits to ``text``."""
    spans = sorted(
        ((offset(text, e["range"]["start"]), offset(text, e["range"]["end"]), e["newText"]) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


class Editor:
    """One editor session against one fixlore server."""

    def __init__(
        self,
        root: Path,
        *,
        ruff: bool = True,
        settings: dict[str, Any] | None = None,
        upstreams: tuple[str, ...] = (),
        flags: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.ruff = ruff
        self.upstreams = upstreams
        """More ``--upstream`` flag values (``python=CMD ...``)."""
        self.flags = flags
        """More ``fixlore serve`` flags (``--no-learning``)."""
        self.env = env
        self.settings = {"manualFixPauseMs": 300, **(settings or {})}
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.diagnostics: dict[str, tuple[int | None, list[dict[str, Any]]]] = {}
        self.notifications: list[tuple[str, Any]] = []
        self.applied_edits: list[Any] = []
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self.conn: JsonRpcConnection | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.capabilities: dict[str, Any] = {}

    async def __aenter__(self) -> Editor:
        pyproject = self.root / "pyproject.toml"
        if not pyproject.exists():
            # E711 (`== None`) is not in ruff's default rules; the tests use it.
            pyproject.write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
        command = [str(BIN / "fixlore"), "serve"]
        if self.ruff:
            command += ["--upstream", f"python={BIN / 'ruff'} server"]
        for flag in self.upstreams:
            command += ["--upstream", flag]
        command += list(self.flags)
        self.process, self.conn = await spawn(
            command, cwd=str(self.root), env={**os.environ, **(self.env or {})},
            on_notification=self._on_notification, on_request=self._on_request,
        )
        result = await self.conn.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self.root.as_uri(),
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "workspace": {"applyEdit": True, "executeCommand": {}},
                    "textDocument": {
                        "synchronization": {"didSave": True},
                        "publishDiagnostics": {"versionSupport": True},
                        "codeAction": {
                            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "source"]}},
                            "resolveSupport": {"properties": ["edit"]},
                            "dataSupport": True,
                            "isPreferredSupport": True,
                        },
                    },
                },
                "initializationOptions": {"fixlore": self.settings},
            },
            timeout=TIMEOUT,
        )
        self.capabilities = result["capabilities"]
        self.conn.notify("initialized", {})
        # fixlore/status follows the knowledge store's opening: from then on
        # what the session teaches is visible to ranking at once.
        await self.wait_for(lambda: any(m == "fixlore/status" for m, _ in self.notifications), what="fixlore/status")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.conn is not None and self.process is not None
        try:
            if not self.conn.closed:
                await self.conn.request("shutdown", None, timeout=TIMEOUT)
                self.conn.notify("exit")
            await asyncio.wait_for(self.process.wait(), TIMEOUT)
        finally:
            if self.process.returncode is None:
                self.process.kill()
            await self.conn.close()

    # -- server -> editor ------------------------------------------------------------------
    def _on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[params["uri"]] = (params.get("version"), params["diagnostics"])
        for predicate, future in list(self._waiters):
            if not future.done() and predicate():
                future.set_result(None)

    async def _on_request(self, msg_id: Any, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            return [None for _ in params.get("items", [])]
        if method == "workspace/applyEdit":
            self.applied_edits.append(params)
            self.apply_workspace_edit(params["edit"])
            return {"applied": True}
        return None

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = TIMEOUT, what: str = "") -> None:
        """Wait until ``predicate`` holds after some notification (AssertionError on timeout)."""
        if predicate():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what or 'a condition'}") from None
        finally:
            self._waiters.remove(entry)

    # -- documents -------------------------------------------------------------------------
    def uri(self, name: str) -> str:
        """The URI of a file in the workspace."""
        return (self.root / name).as_uri()

    def open(self, name: str, text: str) -> str:
        """didOpen a Python document."""
        uri = self.uri(name)
        self.texts[uri], self.versions[uri] = text, 1
        assert self.conn is not None
        self.conn.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        return uri

    def change(self, uri: str, edits: list[dict[str, Any]]) -> None:
        """Apply TextEdits locally and send them as one incremental didChange."""
        text = self.texts[uri]
        ordered = sorted(edits, key=lambda e: offset(text, e["range"]["start"]), reverse=True)
        self.texts[uri] = apply_text_edits(text, edits)
        self.versions[uri] += 1
        assert self.conn is not None
        self.conn.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in ordered],
            },
        )

    def replace(self, uri: str, old: str, new: str) -> None:
        """Replace the first occurrence of ``old`` (as a user typing would)."""
        text = self.texts[uri]
        at = text.index(old)
        rng = {"start": position(text, at), "end": position(text, at + len(old))}
        self.change(uri, [{"range": rng, "newText": new}])

    def insert(self, uri: str, at: int, new: str) -> None:
        """Insert ``new`` at string index ``at``."""
        pos = position(self.texts[uri], at)
        self.change(uri, [{"range": {"start": pos, "end": pos}, "newText": new}])

    def save(self, uri: str) -> None:
        """didSave."""
        assert self.conn is not None
        self.conn.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

    def apply_workspace_edit(self, edit: dict[str, Any]) -> None:
        """Apply a WorkspaceEdit (``changes`` or ``documentChanges``) like an editor."""
        for uri, edits in (edit.get("changes") or {}).items():
            self.change(uri, edits)
        for doc_change in edit.get("documentChanges") or []:
            self.change(doc_change["textDocument"]["uri"], doc_change["edits"])

    # -- diagnostics and actions ---------------------------------------------------------------
    def current(self, uri: str) -> list[dict[str, Any]]:
        """The diagnostics last published for the current version."""
        version, diags = self.diagnostics.get(uri, (None, []))
        return diags if version in (None, self.versions.get(uri)) else []

    async def diagnostic(self, uri: str, code: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Wait for a diagnostic with ``code`` in the current version."""
        await self.wait_for(lambda: any(d.get("code") == code for d in self.current(uri)), timeout, f"{code}")
        return next(d for d in self.current(uri) if d.get("code") == code)

    async def gone(self, uri: str, code: str, timeout: float = TIMEOUT) -> None:
        """Wait until the current version's diagnostics have none with ``code``."""
        await self.wait_for(
            lambda: self.diagnostics.get(uri, (None, []))[0] == self.versions[uri]
            and not any(d.get("code") == code for d in self.current(uri)),
            timeout,
            f"{code} to go",
        )

    async def code_actions(self, uri: str, diag: dict[str, Any], trigger: int = INVOKED) -> list[dict[str, Any]]:
        """textDocument/codeAction for one diagnostic."""
        assert self.conn is not None
        result = await self.conn.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": diag["range"],
                "context": {"diagnostics": [diag], "triggerKind": trigger},
            },
            timeout=TIMEOUT,
        )
        return result or []

    async def apply(self, action: dict[str, Any]) -> Any:
        """Apply an action as an editor does: resolve if needed, edit, then run its command."""
        assert self.conn is not None
        if "edit" not in action and "data" in action:
            action = await self.conn.request("codeAction/resolve", action, timeout=TIMEOUT)
        if "edit" in action:
            self.apply_workspace_edit(action["edit"])
        command = action.get("command")
        if isinstance(command, dict):
            return await self.execute(command["command"], command.get("arguments"))
        return None

    async def execute(self, command: str, arguments: Any = None) -> Any:
        """workspace/executeCommand."""
        assert self.conn is not None
        params: dict[str, Any] = {"command": command}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.conn.request("workspace/executeCommand", params, timeout=TIMEOUT)

    async def stats(self) -> dict[str, Any]:
        """fixlore.stats."""
        return await self.execute("fixlore.stats", [])

    async def until_stats(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """Poll fixlore.stats (the store writes in the background) until ``predicate`` holds."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            stats = await self.stats()
            if predicate(stats):
                return stats
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"stats never matched: {stats}")
            await asyncio.sleep(0.1)  # polling interval of a query, not synchronisation by sleep


def position(text: str, at: int) -> dict[str, int]:
    """The LSP position of string index ``at``."""
    line = text.count("\n", 0, at)
    return {"line": line, "character": at - (text.rfind("\n", 0, at) + 1)}
