"""Nothing learned is lost however the editor leaves: ``shutdown``, ``exit`` alone, closing the pipe, SIGTERM, SIGHUP.

The store is checked afterwards with ``fixlore knowledge stats``, as a user would.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import fixlore_command, stored_events
from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("leave", "code"), [("shutdown", 0), ("exit", 1), ("eof", 0), ("sigterm", 0), ("sighup", 0)])
async def test_every_acknowledged_event_is_stored(tmp_path: Path, leave: str, code: int) -> None:
    editor = Editor(tmp_path, ruff=False)
    await editor.__aenter__()
    process = editor.process
    assert process is not None and process.stdin is not None
    try:
        for k in range(3):
            header = f"def total_{k}(rows, start)"

            def add_colon(uri: str, at: int = len(header)) -> None:
                editor.insert(uri, at, ":")

            await fix_by_hand(editor, f"c{k}.py", f"{header}\n    return len(rows)\n", "python-syntax", add_colon)
        acknowledged = (await editor.stats())["session"]["events"]

        if leave == "shutdown":
            await editor.request("shutdown", None)
            editor.notify("exit")
        elif leave == "exit":
            editor.notify("exit")
        elif leave == "eof":
            process.stdin.close()
        elif leave == "sighup":  # the terminal of a terminal editor (Vim, Emacs -nw, Helix) was closed
            process.send_signal(signal.SIGHUP)
        else:
            process.terminate()
        assert await asyncio.wait_for(process.wait(), 30) == code
    finally:
        await editor.kill()

    assert stored_events() == acknowledged


async def test_no_learning_with_a_relative_home_still_opens_the_store(tmp_path: Path) -> None:
    made = subprocess.run(
        fixlore_command("knowledge", "prune"),
        cwd=tmp_path,
        env=dict(os.environ, FIXLORE_HOME="rel"),
        capture_output=True,
        timeout=60,
    )
    assert made.returncode == 0

    # Editor waits for fixlore/status, which follows the store's opening.
    async with Editor(tmp_path, ruff=False, flags=("--no-learning",), env={"FIXLORE_HOME": "rel"}) as editor:
        assert (await editor.stats())["learning"] is False


def test_exit_on_a_socket_pair_ends_the_process_while_the_editor_keeps_its_end_open(tmp_path: Path) -> None:
    """Node (VS Code, code-server) gives a stdio server a Unix socket pair, not a pipe.

    The editor waits for the process to end before it closes its end; a server
    still reading stdin on a thread after ``exit`` was killed 15 s later.
    """
    import socket

    editor_end, server_end = socket.socketpair()
    process = subprocess.Popen(
        fixlore_command("serve", "--stdio"),
        stdin=server_end.fileno(),
        stdout=server_end.fileno(),
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, FIXLORE_HOME=str(tmp_path / "home")),
    )
    server_end.close()
    try:
        stream = editor_end.makefile("rwb", buffering=0)

        def send(message: dict[str, object]) -> None:
            body = json.dumps(message).encode()
            stream.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

        def answer_to(msg_id: int) -> dict[str, object]:
            while True:
                length = 0
                while (line := stream.readline().strip()) != b"":
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                message = json.loads(stream.read(length))
                if message.get("id") == msg_id and "method" not in message:
                    return message

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}})
        assert "capabilities" in answer_to(1)["result"]
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
        assert answer_to(2)["result"] is None
        send({"jsonrpc": "2.0", "method": "exit", "params": None})
        assert process.wait(timeout=10) == 0  # the editor's end is still open
    finally:
        process.kill()
        process.wait()
        editor_end.close()
