"""`fixlore serve` answers ``initialize`` before pygls loads, with the bytes the full server would write (issue 14).

Real processes throughout: `fixlore serve` (early answer) against `fixlore serve
--late-initialize` (the full server answers, as before), with the real `ruff server`
upstream; the answers are compared byte for byte, header included.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, encode_message
from tests.conftest import fixlore_command

pytestmark = pytest.mark.e2e

RUFF = ["--upstream", "python=ruff server"]
PULL_UTF8 = {"textDocument": {"diagnostic": {}}, "general": {"positionEncodings": ["utf-8", "utf-16"]}}
FULL_SERVER = "initialize answered by the full server"
NOT_ADOPTED = "was not wanted"  # an upstream the front started, which the proxy did not adopt


def troubles(log: list[str]) -> list[str]:
    """Log lines saying the answer was not early, differed, or an early upstream went unused."""
    return [line for line in log if FULL_SERVER in line or "differs" in line or NOT_ADOPTED in line]


class Wire:
    """`fixlore serve ARGS` over pipes, every frame it writes kept as bytes (header and body)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.frames: list[bytes] = []

    @classmethod
    async def start(cls, *args: str, cwd: Path) -> Wire:
        process = await asyncio.create_subprocess_exec(
            *fixlore_command("serve", "--log-level", "debug", *args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=dict(os.environ),
            cwd=str(cwd),
            limit=MAX_MESSAGE_BYTES,
        )
        return cls(process)

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(encode_message({"jsonrpc": "2.0", **m}) for m in messages))

    async def frame(self, predicate: Any, timeout: float = 60) -> tuple[bytes, dict[str, Any]]:
        """The first frame (bytes, message) written so far or later for which ``predicate(message)`` holds."""
        for frame in self.frames:
            if predicate(_message(frame)):
                return frame, _message(frame)
        return await asyncio.wait_for(self._next(predicate), timeout)

    async def _next(self, predicate: Any) -> tuple[bytes, dict[str, Any]]:
        assert self.process.stdout is not None
        while True:
            header = await self.process.stdout.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            frame = header + await self.process.stdout.readexactly(length)
            self.frames.append(frame)
            if predicate(_message(frame)):
                return frame, _message(frame)

    def logs(self) -> list[str]:
        return [m["params"]["message"] for m in map(_message, self.frames) if m.get("method") == "window/logMessage"]

    async def stop(self) -> int:
        self.send({"id": "bye", "method": "shutdown"})
        await self.frame(lambda m: m.get("id") == "bye")
        self.send({"method": "exit"})
        assert self.process.stdin is not None
        self.process.stdin.close()
        return await asyncio.wait_for(self.process.wait(), 30)


def _message(frame: bytes) -> dict[str, Any]:
    message = json.loads(frame[frame.index(b"\r\n\r\n") + 4 :])
    assert isinstance(message, dict)
    return message


def initialize(root: Path, capabilities: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities, **extra}
    return {"id": 1, "method": "initialize", "params": params}


async def answer_of(
    root: Path, args: list[str], message: dict[str, Any], code: int | None = 0
) -> tuple[bytes, list[str]]:
    """The initialize answer's frame and the log (debug) of a session that initializes, then says goodbye."""
    wire = await Wire.start(*args, cwd=root)
    try:
        wire.send(message)
        frame, _ = await wire.frame(lambda m: m.get("id") == 1)
        wire.send({"method": "initialized", "params": {}})
        assert await wire.stop() == code or code is None
    finally:
        if wire.process.returncode is None:
            wire.process.kill()
    return frame, wire.logs()


EDITOR = {  # the parts of a full-featured editor's capabilities the answer depends on
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"willSave": True, "willSaveWaitUntil": True, "didSave": True},
        "diagnostic": {},
    },
    "workspace": {
        "configuration": True,
        "diagnostics": {"refreshSupport": True},
        "fileOperations": {"willRename": True},
    },
    "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
}
CASES = {
    "standalone": ([], {}, {}),
    "ruff": (RUFF, {}, {}),
    "ruff, an editor that pulls and prefers utf-8": (RUFF, PULL_UTF8, {}),
    "options for fixlore and for ruff": (
        RUFF,
        {"workspace": {"configuration": True}},
        {"initializationOptions": {"fixlore": {"manualFixPauseMs": 900}, "settings": {"lineLength": 100}}},
    ),
    "ruff, a full-featured editor": (RUFF, EDITOR, {}),
    "standalone, a full-featured editor": ([], EDITOR, {}),
    "two ruff servers (started one after the other)": ([*RUFF, *RUFF], PULL_UTF8, {}),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_the_early_answer_is_the_full_servers_byte_for_byte(case: str, tmp_path: Path) -> None:
    args, capabilities, extra = CASES[case]
    message = initialize(tmp_path, capabilities, **extra)

    early, early_log = await answer_of(tmp_path, args, message)
    late, _ = await answer_of(tmp_path, [*args, "--late-initialize"], message)

    assert early == late
    assert troubles(early_log) == []  # answered early, and equal


async def test_upstreams_from_pyproject_are_started_early(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.fixlore]\nupstreams = { python = ["ruff server"] }\n')
    message = initialize(tmp_path, PULL_UTF8, workspaceFolders=[{"uri": tmp_path.as_uri(), "name": "w"}])

    early, early_log = await answer_of(tmp_path, [], message)
    late, _ = await answer_of(tmp_path, ["--late-initialize"], message)

    assert early == late and b"ruff.applyAutofix" in early
    assert troubles(early_log) == []


DECLINED = {
    "a setting with a problem (the answer's turn tells the user)": (
        [],
        {"initializationOptions": {"fixlore": {"diagnosticsDebounceMs": -5}}},
        "settings have problems",
    ),
    "an upstream missing from PATH": (["--upstream", "python=no-such-server-xyz"], {}, "cannot be started"),
    "an upstream that exits at once": (["--upstream", f"python={sys.executable} -c pass"], {}, "exited"),
}


@pytest.mark.parametrize("case", list(DECLINED))
async def test_when_unsure_the_full_server_answers_as_before(case: str, tmp_path: Path) -> None:
    args, extra, reason = DECLINED[case]
    message = initialize(tmp_path, {}, **extra)

    early, early_log = await answer_of(tmp_path, args, message)
    late, _ = await answer_of(tmp_path, [*args, "--late-initialize"], message)

    assert early == late
    assert [line for line in early_log if FULL_SERVER in line and reason in line], early_log


async def test_what_the_editor_sends_behind_initialize_is_served_in_order(tmp_path: Path) -> None:
    """initialize, initialized, didOpen, didChange and codeAction in one write, before any answer.

    ruff exits when a didOpen reaches it before `initialized`; the code action's
    fixes are for the changed text only if the didChange came before it.
    """
    uri = (tmp_path / "a.py").as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "import os\nx = 1\n"}]}
    action = {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 9}},
        "context": {"diagnostics": []},
    }
    wire = await Wire.start(*RUFF, cwd=tmp_path)
    try:
        wire.send(
            initialize(tmp_path, {}),
            {"method": "initialized", "params": {}},
            {"method": "textDocument/didOpen", "params": {"textDocument": doc}},
            {"method": "textDocument/didChange", "params": change},
            {"id": 2, "method": "textDocument/codeAction", "params": action},
        )
        _, answer = await wire.frame(lambda m: m.get("id") == 2)
        _, published = await wire.frame(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["diagnostics"]
        )
        assert await wire.stop() == 0
    finally:
        if wire.process.returncode is None:
            wire.process.kill()

    fix_all = next(a for a in answer["result"] if a["kind"] == "source.fixAll.ruff")
    removal = {"newText": "", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}
    assert fix_all["edit"]["changes"][uri] == [removal]  # ruff fixed the changed text: `import os` goes
    assert "F401" in [d["code"] for d in published["params"]["diagnostics"]]
    assert published["params"]["version"] == 2
    assert troubles(wire.logs()) == []
    ids = [m.get("id") for m in map(_message, wire.frames) if "method" not in m]
    assert ids.index(1) < ids.index(2)  # initialize answered first, once
    assert ids.count(1) == 1


FRONT_ONLY = """
import os, sys
from fixlore.lsp.transport.early import Front
front = Front({"upstreams": {"python": [{"command": ["ruff", "server"]}]}})
front.run()
heavy = sorted(m for m in ("asyncio", "lsprotocol", "cattrs", "pygls.lsp", "pygls.protocol") if m in sys.modules)
print(repr((front.answer is not None, front.declined, heavy)), file=sys.stderr)
for child in front.children:
    child.popen.kill()
"""


def test_the_front_answers_without_pygls_lsprotocol_or_asyncio(tmp_path: Path) -> None:
    message = encode_message(initialize(tmp_path, PULL_UTF8))
    proc = subprocess.run(
        [sys.executable, "-c", FRONT_ONLY], input=message, capture_output=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.decode().strip().splitlines()[-1] == "(True, '', [])"
    assert proc.stdout.startswith(b"Content-Length: ") and b'"diagnosticProvider"' in proc.stdout


async def test_an_initialize_pygls_refuses_is_reported_to_the_user(tmp_path: Path) -> None:
    """The front cannot check params as pygls does (cattrs): it answers, and the user hears of the refusal."""
    message = initialize(tmp_path, {"notebookDocument": {}})  # `synchronization` is required
    late, _ = await answer_of(tmp_path, ["--late-initialize"], message, code=None)  # a session pygls refused
    assert "error" in _message(late)  # the full server refuses it, as before

    wire = await Wire.start(cwd=tmp_path)
    try:
        wire.send(message)
        _, shown = await wire.frame(lambda m: m.get("method") == "window/showMessage")
        await wire.stop()  # its shutdown is refused too (not initialized)
    finally:
        if wire.process.returncode is None:
            wire.process.kill()
    assert shown["params"]["type"] == 1 and "initialize request was refused" in shown["params"]["message"]
    assert "result" in _message(wire.frames[0])  # the early answer had gone out first


async def test_a_header_with_bare_newlines_goes_to_the_full_server(tmp_path: Path) -> None:
    """The full server's reader takes LF-only headers; the front must not wait for a CRLF that never comes."""
    body = json.dumps({"jsonrpc": "2.0", **initialize(tmp_path, {})}).encode()
    wire = await Wire.start(cwd=tmp_path)
    try:
        assert wire.process.stdin is not None
        wire.process.stdin.write(b"Content-Length: %d\n\n%s" % (len(body), body))
        _, answer = await wire.frame(lambda m: m.get("id") == 1)
        assert await wire.stop() == 0
    finally:
        if wire.process.returncode is None:
            wire.process.kill()
    assert "capabilities" in answer["result"]
    assert [line for line in wire.logs() if FULL_SERVER in line and "CRLF" in line]
