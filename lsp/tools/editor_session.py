"""An editor stand-in over raw JSON-RPC: the one used by ``fixlore demo``, ``fixlore explain`` and the e2e tests.

It starts a language server as a child process (``fixlore serve``), does the
LSP handshake, keeps each open document's text and version, sends
``didOpen``/``didChange``/``didSave`` as an editor does, applies workspace
edits (the action's edit first, then its command) and records everything the
server sends: notifications, server-to-client requests, and the diagnostics
published per document. Waiting is on conditions: a predicate is re-checked
each time a message arrives, never after a sleep.

Messages stay plain dicts (``fixlore.lsp.transport.jsonrpc``), so code actions arrive
exactly as the server sent them. Positions are converted with the position
encoding the server chose, through the product's own edit functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from fixlore.abstraction import apply_edits
from fixlore.abstraction.languages import language_for
from fixlore.lsp.hub import from_lsp_edits
from fixlore.lsp.transport.jsonrpc import ConnectionClosed, JsonRpcConnection, spawn

T = TypeVar("T")

INVOKED = 1
"""``CodeActionTriggerKind.Invoked``: the user asked for actions."""

EDITOR_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {"configuration": True, "applyEdit": True},
    "textDocument": {
        "publishDiagnostics": {"versionSupport": True},
        "codeAction": {
            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "source"]}},
            "resolveSupport": {"properties": ["edit"]},
            "dataSupport": True,
            "isPreferredSupport": True,
        },
    },
}
"""What a plain editor announces: UTF-16 positions, code-action literals with resolve."""


def _utf8_units(text: str) -> int:
    return len(text.encode("utf-8"))


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_UNITS: dict[str, Callable[[str], int]] = {"utf-8": _utf8_units, "utf-16": _utf16_units, "utf-32": len}


def apply_lsp_edits(text: str, edits: list[dict[str, Any]], encoding: str = "utf-16") -> str:
    """Apply raw LSP TextEdits to ``text`` as an editor would (positions in ``encoding``)."""
    return apply_edits(text, from_lsp_edits(text, edits, _UNITS[encoding]))


def lsp_position(text: str, offset: int, encoding: str = "utf-16") -> dict[str, int]:
    """The LSP position of string index ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return {"line": text.count("\n", 0, offset), "character": _UNITS[encoding](text[line_start:offset])}


class EditorSession:
    """One editor session against one language server process."""

    CLIENT_CAPABILITIES: ClassVar[dict[str, Any]] = EDITOR_CAPABILITIES
    """Sent in ``initialize`` unless the call gives others."""

    def __init__(self, root: Path | None = None, *, timeout: float = 15.0) -> None:
        self.root = root
        self.timeout = timeout
        """Default limit, in seconds, of every wait and request."""
        self.process: asyncio.subprocess.Process | None = None
        self.conn: JsonRpcConnection | None = None
        self.init_result: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        """The server's capabilities, from its ``initialize`` answer."""
        self.encoding = "utf-16"
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        """The last list published per URI."""
        self.diagnostic_versions: dict[str, int | None] = {}
        """The document version that list was published for (``None`` if the server gave none)."""
        self.notifications: list[tuple[str, Any]] = []
        self.requests: list[tuple[str, Any]] = []
        self.answers: dict[str, Callable[[Any], Any]] = {}
        """Answers to server-to-client requests by method, before the built-in ones."""
        self._waiters: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []

    # -- process ---------------------------------------------------------------------------
    async def start(self, command: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None) -> None:
        """Start the server and connect to its stdio."""
        self.process, self.conn = await spawn(
            command, cwd=cwd, env=env, on_notification=self._on_notification, on_request=self._on_request
        )

    async def close(self) -> int | None:
        """``shutdown`` and ``exit``, then the server's exit code (it is killed if it does not exit in time)."""
        if self.conn is None or self.process is None:
            return None
        try:
            if not self.conn.closed:
                with contextlib.suppress(ConnectionClosed):  # it went away on its own: nothing to shut down
                    await self.request("shutdown", None)
                    self.notify("exit")
            try:
                return await asyncio.wait_for(self.process.wait(), self.timeout)
            except TimeoutError:
                self.process.kill()
                return await self.process.wait()
        finally:
            await self.kill()  # a failed shutdown leaves no process behind

    async def kill(self) -> None:
        """Kill the server if it still runs and drop the connection (for ``finally`` blocks)."""
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
        if self.conn is not None:
            await self.conn.close()

    # -- messages --------------------------------------------------------------------------
    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """A request to the server (its result; ``RpcError`` on an error answer)."""
        assert self.conn is not None, "start() first"
        return await self.conn.request(method, params, timeout=self.timeout if timeout is None else timeout)

    def notify(self, method: str, params: Any = None) -> None:
        """A notification to the server."""
        assert self.conn is not None, "start() first"
        self.conn.notify(method, params)

    def _on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[params["uri"]] = params["diagnostics"]
            self.diagnostic_versions[params["uri"]] = params.get("version")
        self._wake()

    async def _on_request(self, msg_id: Any, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        self._wake()
        if method in self.answers:
            return self.answers[method](params)
        if method == "workspace/configuration":
            return [None for _ in params.get("items", [])]
        if method == "workspace/applyEdit":
            self.apply_workspace_edit(params["edit"])
            return {"applied": True}
        return None

    def _wake(self) -> None:
        for predicate, future in list(self._waiters):
            if future.done():
                continue
            try:
                value = predicate()
            except Exception as exc:  # the waiter's own bug: it belongs to the waiter, not to the reader
                future.set_exception(exc)
                continue
            if value:
                future.set_result(value)

    async def wait_for(self, predicate: Callable[[], T], timeout: float | None = None, what: str = "") -> T:
        """Wait until ``predicate()`` is truthy, re-checked on every message; returns its value.

        Raises ``TimeoutError`` (naming ``what``) if it does not hold in time.
        """
        value = predicate()
        if value:
            return value
        limit = self.timeout if timeout is None else timeout
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(future, limit)
        except TimeoutError:
            raise TimeoutError(f"timed out after {limit:g} s waiting for {what or 'a condition'}") from None
        finally:
            self._waiters.remove(entry)

    async def next_message(self, timeout: float | None = None) -> None:
        """Wait for the server's next notification or request."""
        seen = len(self.notifications) + len(self.requests)
        await self.wait_for(lambda: len(self.notifications) + len(self.requests) > seen, timeout, "a message")

    # -- lifecycle -------------------------------------------------------------------------
    async def initialize(
        self,
        root: Path | None = None,
        caps: dict[str, Any] | None = None,
        init_options: Any = None,
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """The LSP handshake (``initialize``, then ``initialized``) for the workspace ``root``."""
        if root is not None:
            self.root = root
        assert self.root is not None, "a workspace root is needed"
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": self.root.as_uri(),
            "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
            "capabilities": self.CLIENT_CAPABILITIES if caps is None else caps,
        }
        if init_options is not None:
            params["initializationOptions"] = init_options
        self.init_result = await self.request("initialize", params, timeout)
        self.capabilities = self.init_result.get("capabilities", {})
        self.encoding = self.capabilities.get("positionEncoding", "utf-16")
        self.notify("initialized", {})
        return self.init_result

    # -- documents -------------------------------------------------------------------------
    def path(self, name: Path | str) -> Path:
        """A file's path; a relative ``name`` is taken from the workspace root."""
        path = Path(name)
        if path.is_absolute():
            return path
        assert self.root is not None, "a relative path needs a workspace root"
        return self.root / path

    def uri(self, name: Path | str) -> str:
        """A file's URI; a relative ``name`` is taken from the workspace root."""
        return self.path(name).as_uri()

    def open(self, name: Path | str, text: str | None = None, language_id: str | None = None) -> str:
        """``didOpen`` of a file with ``text`` (default: the file's own); returns its URI."""
        uri = self.uri(name)
        if text is None:
            text = self.path(name).read_text()
        language_id = language_id or language_for(None, uri) or "plaintext"
        self.texts[uri], self.versions[uri] = text, 1
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}},
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        """``didChange`` with the whole new text; returns the new version."""
        self.texts[uri] = text
        self.versions[uri] += 1
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self.versions[uri]}, "contentChanges": [{"text": text}]},
        )
        return self.versions[uri]

    def edit(self, uri: str, edits: list[dict[str, Any]]) -> int:
        """Apply TextEdits locally and send them as one incremental ``didChange``; returns the new version."""
        text = self.texts[uri]
        starts = [e.range.start for e in from_lsp_edits(text, edits, _UNITS[self.encoding])]
        # Last first: each change's range is then still valid when the server applies it.
        ordered = [edits[i] for i in sorted(range(len(edits)), key=starts.__getitem__, reverse=True)]
        self.texts[uri] = apply_lsp_edits(text, edits, self.encoding)
        self.versions[uri] += 1
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in ordered],
            },
        )
        return self.versions[uri]

    def replace(self, uri: str, old: str, new: str) -> int:
        """Replace the first occurrence of ``old`` (as a user typing would)."""
        text = self.texts[uri]
        at = text.index(old)
        rng = {"start": lsp_position(text, at, self.encoding), "end": lsp_position(text, at + len(old), self.encoding)}
        return self.edit(uri, [{"range": rng, "newText": new}])

    def insert(self, uri: str, at: int, new: str) -> int:
        """Insert ``new`` at string index ``at``."""
        pos = lsp_position(self.texts[uri], at, self.encoding)
        return self.edit(uri, [{"range": {"start": pos, "end": pos}, "newText": new}])

    def save(self, uri: str) -> None:
        """``didSave``."""
        self.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

    def apply_workspace_edit(self, edit: dict[str, Any]) -> None:
        """Apply a WorkspaceEdit (``changes`` or ``documentChanges``) to the open documents."""
        for uri, edits in (edit.get("changes") or {}).items():
            self.edit(uri, edits)
        for doc_change in edit.get("documentChanges") or []:
            self.edit(doc_change["textDocument"]["uri"], doc_change["edits"])

    # -- diagnostics and actions -----------------------------------------------------------
    def current(self, uri: str) -> list[dict[str, Any]]:
        """The diagnostics last published, if they are for the document's current version."""
        version = self.diagnostic_versions.get(uri)
        return self.diagnostics.get(uri, []) if version in (None, self.versions.get(uri)) else []

    async def published(self, uri: str, timeout: float | None = None) -> list[dict[str, Any]]:
        """Wait until diagnostics of ``uri`` were published (an empty list counts); returns them."""
        await self.wait_for(lambda: uri in self.diagnostics, timeout, f"diagnostics of {uri}")
        return self.diagnostics[uri]

    async def diagnostic(self, uri: str, code: str, timeout: float | None = None) -> dict[str, Any]:
        """Wait for a diagnostic with ``code`` in the current version; returns it."""
        found = await self.wait_for(
            lambda: next((d for d in self.current(uri) if d.get("code") == code), None), timeout, code
        )
        assert found is not None
        return found

    async def gone(self, uri: str, code: str, timeout: float | None = None) -> None:
        """Wait until the current version's diagnostics have none with ``code``."""
        await self.wait_for(
            lambda: (
                self.diagnostic_versions.get(uri) == self.versions[uri]
                and not any(d.get("code") == code for d in self.current(uri))
            ),
            timeout,
            f"{code} to go",
        )

    async def code_actions(self, uri: str, diag: dict[str, Any], trigger: int = INVOKED) -> list[dict[str, Any]]:
        """``textDocument/codeAction`` for one diagnostic."""
        context = {"diagnostics": [diag], "triggerKind": trigger}
        result = await self.request(
            "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag["range"], "context": context}
        )
        return result or []

    async def resolved(self, action: dict[str, Any]) -> dict[str, Any]:
        """``action`` with its edit, resolved as an editor does when it lacks one."""
        if "edit" not in action and "data" in action:
            return dict(await self.request("codeAction/resolve", action))
        return action

    async def apply(self, action: dict[str, Any]) -> Any:
        """Apply an action as an editor does: resolve it if needed, edit, then run its command."""
        action = await self.resolved(action)
        if "edit" in action:
            self.apply_workspace_edit(action["edit"])
        command = action.get("command")
        if isinstance(command, dict):
            return await self.execute(command["command"], command.get("arguments"))
        return None

    async def execute(self, command: str, arguments: Any = None) -> Any:
        """``workspace/executeCommand``."""
        params: dict[str, Any] = {"command": command}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("workspace/executeCommand", params)
