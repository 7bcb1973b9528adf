"""``fixlore demo``: drive fixlore over LSP, as an editor would, on a sample workspace.

The shipped sample workspace is copied to a temporary folder (the original is
never touched) and a private knowledge home is used, so the demo leaves
nothing behind. It starts ``fixlore serve`` as a child process over stdio
(with ``ruff server`` as the Python upstream when ruff is installed), opens
each file, and prints the diagnostics it receives.
"""

from __future__ import annotations

import asyncio
import functools
import operator
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixlore.abstraction import apply_edits
from fixlore.abstraction.languages import language_for
from fixlore.lsp.diagnostics import from_lsp_edits
from fixlore.lsp.jsonrpc import JsonRpcConnection, spawn

SAMPLE = Path(__file__).resolve().parent / "sample_workspace"
_SKIP = {"README.md", "pyproject.toml"}
_TIMEOUT = 15.0


class EditorSession:
    """A minimal editor: opens documents and collects what the server publishes."""

    def __init__(self, conn: JsonRpcConnection, root: Path) -> None:
        self.conn = conn
        self.root = root
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self.messages: list[str] = []
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []

    def on_notification(self, method: str, params: Any) -> None:
        """Record what the server tells the editor."""
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[params["uri"]] = params["diagnostics"]
        elif method == "window/showMessage":
            self.messages.append(str(params.get("message", "")))
        for predicate, future in list(self._waiters):
            if not future.done() and predicate():
                future.set_result(None)

    async def on_request(self, msg_id: Any, method: str, params: Any) -> Any:
        """Answer the server's requests as a plain editor would."""
        if method == "workspace/configuration":
            return [None for _ in params.get("items", [])]
        if method == "workspace/applyEdit":
            return {"applied": False}
        return None

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = _TIMEOUT) -> bool:
        """Wait until ``predicate`` holds after some notification (False on timeout)."""
        if predicate():
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self._waiters.remove(entry)

    async def initialize(self, init_options: dict[str, Any] | None = None) -> dict[str, Any]:
        """The LSP handshake."""
        result = await self.conn.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self.root.as_uri(),
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
                "capabilities": {
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
                },
                "initializationOptions": init_options or {},
            },
            timeout=_TIMEOUT,
        )
        self.conn.notify("initialized", {})
        return result

    def open(self, path: Path, version: int = 1) -> str:
        """Send didOpen for ``path``; returns its URI."""
        uri = path.as_uri()
        language = language_for(None, uri) or "plaintext"
        self.conn.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": version, "text": path.read_text()}},
        )
        return uri

    async def shutdown(self) -> None:
        """The LSP goodbye."""
        await self.conn.request("shutdown", None, timeout=_TIMEOUT)
        self.conn.notify("exit")


def _is_text(path: Path) -> bool:
    """Only text files are opened, as an editor would (no byte code, no binaries)."""
    try:
        path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return False
    return True


def _describe(diag: dict[str, Any]) -> str:
    start = diag["range"]["start"]
    code = diag.get("code")
    where = f"{start['line'] + 1}:{start['character'] + 1}"
    label = f"{diag.get('source', '?')}{f' {code}' if code else ''}"
    # Some servers put a help text after a blank line; one line per diagnostic here.
    message = " / ".join(line.strip() for line in str(diag.get("message", "")).splitlines() if line.strip())
    return f"  {where:>6}  {label:<24} {message}"


async def _demo(workspace: Path, use_ruff: bool, out: Callable[[str], None]) -> int:
    command = [sys.executable, "-m", "fixlore.lsp", "serve"]
    beside = Path(sys.executable).parent / "ruff"  # a venv's ruff, even when the venv is not on PATH
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if use_ruff and ruff:
        command += ["--upstream", f"python={ruff} server"]
    process, conn = await spawn(command, cwd=str(workspace))
    session = EditorSession(conn, workspace)
    conn._on_notification = session.on_notification  # noqa: SLF001 - wired after spawn on purpose
    conn._on_request = session.on_request  # noqa: SLF001
    try:
        result = await session.initialize()
        info = result.get("serverInfo", {})
        out(f"Connected to {info.get('name', '?')} {info.get('version', '?')} in {workspace}")
        out(f"Upstream for Python: {'ruff server' if use_ruff and ruff else 'none (standalone)'}\n")
        files = sorted(p for p in workspace.rglob("*") if p.is_file() and p.name not in _SKIP and _is_text(p))
        for path in files:
            uri = session.open(path)
            await session.wait_for(functools.partial(operator.contains, session.diagnostics, uri))
            await asyncio.sleep(0.3 if use_ruff and path.suffix == ".py" else 0)  # let a second source report
            diags = session.diagnostics.get(uri, [])
            out(f"{path.relative_to(workspace)}: {len(diags)} problem(s)")
            for diag in sorted(diags, key=lambda d: (d["range"]["start"]["line"], d["range"]["start"]["character"])):
                out(_describe(diag))
        if use_ruff and ruff:
            await _show_learning(session, workspace, out)
        for message in session.messages:
            out(f"[editor message] {message}")
        await session.shutdown()
        code = await asyncio.wait_for(process.wait(), _TIMEOUT)
        out(f"\nServer exited with code {code}.")
        return 0 if code == 0 else 1
    finally:
        if process.returncode is None:
            process.kill()
        await conn.close()


_LEARN_MODULES = ("json", "shutil", "textwrap", "base64")
_DISABLE = "Disable for this line"


def _learning_text(module: str) -> str:
    return f"import {module}\n\n\ndef main():\n    return 1\n"


async def _actions_for(session: EditorSession, uri: str, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    await session.wait_for(lambda: any(d.get("code") == code for d in session.diagnostics.get(uri, [])))
    diag = next(d for d in session.diagnostics.get(uri, []) if d.get("code") == code)
    params = {
        "textDocument": {"uri": uri},
        "range": diag["range"],
        "context": {"diagnostics": [diag], "triggerKind": 1},
    }
    actions = await session.conn.request("textDocument/codeAction", params, timeout=_TIMEOUT) or []
    return diag, [a for a in actions if a.get("kind") == "quickfix"]


def _show_actions(actions: list[dict[str, Any]], out: Callable[[str], None]) -> None:
    for n, action in enumerate(actions, 1):
        mark = "  <- preferred" if action.get("isPreferred") else ""
        out(f"    {n}. {action['title']}{mark}")


async def _show_learning(session: EditorSession, workspace: Path, out: Callable[[str], None]) -> None:
    """The same diagnostic before and after three accepted fixes: the order changes."""
    out("\nLearning: a user who silences unused imports (F401) instead of removing them")
    for k, module in enumerate(_LEARN_MODULES):
        path = workspace / f"learning_{k}.py"
        path.write_text(_learning_text(module))
        uri = session.open(path)
        _, actions = await _actions_for(session, uri, "F401")
        if k == 0:
            out("  Before any choice, fixlore keeps ruff's order:")
            _show_actions(actions, out)
        if k == len(_LEARN_MODULES) - 1:
            out(f"  After {k} choices of '{_DISABLE}', for `import {module}`:")
            _show_actions(actions, out)
            explained = await session.conn.request(
                "workspace/executeCommand",
                {"command": "fixlore.explain", "arguments": [uri, {"line": 0, "character": 7}]},
                timeout=_TIMEOUT,
            )
            for entry in explained.get("diagnostics", []):
                for row in entry["actions"][:2]:
                    out(f"    why '{row['title']}': {row['explanation'][0]}")
            break
        chosen = next(a for a in actions if _DISABLE in a["title"])
        out(f"  [{k + 1}] picks: {chosen['title']}")
        new_text = _apply_edits(path.read_text(), chosen["edit"]["changes"][uri])
        session.conn.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": new_text}]},
        )
        command = chosen["command"]
        await session.conn.request(
            "workspace/executeCommand",
            {"command": command["command"], "arguments": command.get("arguments", [])},
            timeout=_TIMEOUT,
        )


def _apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply an action's edits as the editor would (this session speaks UTF-16)."""
    return apply_edits(text, from_lsp_edits(text, edits, _utf16_units))


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def run_demo(workspace: str | None = None, use_ruff: bool = True, out: Callable[[str], None] = print) -> int:
    """Run the demo; returns the exit code."""
    with tempfile.TemporaryDirectory(prefix="fixlore-demo-") as tmp:
        root = Path(tmp) / "workspace"
        # An installed copy of the sample has byte-compiled __pycache__ beside it.
        shutil.copytree(
            Path(workspace) if workspace else SAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        os.environ["FIXLORE_HOME"] = str(Path(tmp) / "home")
        return asyncio.run(_demo(root, use_ruff, out))
