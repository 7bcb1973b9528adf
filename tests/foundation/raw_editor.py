"""A stand-in editor that writes raw bytes to ``fixlore serve`` and collects its answers by id."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, read_body
from tests.conftest import fixlore_command

URI = "file:///w/good.py"


class RawEditor:
    """Writes bytes to the server and collects what it answers, by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.notes: list[tuple[str, Any]] = []
        self.arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while (body := await read_body(self.process.stdout)) is not None:
            message = json.loads(body)
            if "method" not in message:
                self.answers[message.get("id")] = message
            elif "id" not in message:
                self.notes.append((message["method"], message.get("params")))
            self.arrived.set()

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def answer(self, msg_id: Any, timeout: float = 20.0) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while msg_id not in self.answers:
                self.arrived.clear()
                await self.arrived.wait()
            return self.answers[msg_id]

        return await asyncio.wait_for(wait(), timeout)

    async def note(self, predicate: Any, timeout: float = 20.0) -> Any:
        """The params of the first notification for which ``predicate(method, params)`` holds."""

        async def wait() -> Any:
            while True:
                for method, params in self.notes:
                    if predicate(method, params):
                        return params
                self.arrived.clear()
                await self.arrived.wait()

        return await asyncio.wait_for(wait(), timeout)

    async def initialize(self, root_uri: str | None = None) -> dict[str, Any]:
        """The handshake (``initialize`` as request 0, then ``initialized``); the initialize answer."""
        params = {"processId": None, "rootUri": root_uri, "capabilities": {}}
        self.send({"id": 0, "method": "initialize", "params": params})
        answer = await self.answer(0, timeout=30)
        self.send({"method": "initialized", "params": {}})
        return answer

    async def stop(self) -> None:
        """Kill the server if it still runs; stop reading."""
        if self.process.returncode is None:
            self.process.kill()
        self._reader.cancel()
        # Process.wait() also waits for the pipes to close, which a grandchild that
        # inherited them (a worker process of the server) could hold: close our ends.
        transport = self.process._transport  # type: ignore[attr-defined]  # noqa: SLF001
        for fd in (0, 1, 2):
            pipe = transport.get_pipe_transport(fd)
            if pipe is not None:
                pipe.close()
        await self.process.wait()

    async def five_requests_answered(self) -> None:
        """Five code-action requests after the bad frame all get their result."""
        ids = [f"after-{n}" for n in range(5)]
        for msg_id in ids:
            self.send(
                {
                    "id": msg_id,
                    "method": "textDocument/codeAction",
                    "params": {
                        "textDocument": {"uri": URI},
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                        "context": {"diagnostics": []},
                    },
                }
            )
        answers = [await self.answer(msg_id) for msg_id in ids]
        assert [("result" in a, "error" in a) for a in answers] == [(True, False)] * 5, answers
        assert self.process.returncode is None


async def start_raw(*args: str, cwd: str | None = None) -> RawEditor:
    """``fixlore serve ARGS`` over pipes, not yet initialized."""
    process = await asyncio.create_subprocess_exec(
        *fixlore_command("serve", *args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=dict(os.environ),
        cwd=cwd,
        limit=MAX_MESSAGE_BYTES,
    )
    return RawEditor(process)
