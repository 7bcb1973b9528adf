"""A language server that, like `biome lsp-proxy`, sets up a shared resource while it starts (stdlib only).

Usage: ``shared_daemon.py DIR``. From its start until it has answered
``initialize`` (0.3 s later) it holds ``DIR/starting``, created exclusively;
finding the file already there, it writes ``overlap`` to ``DIR/log``: another
process with its command was starting at the same time, the moment at which
two `biome lsp-proxy` processes each start a daemon. Every start writes
``started`` to the log.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

DIR = Path(sys.argv[1])
LOCK = DIR / "starting"
out = sys.stdout.buffer
inp = sys.stdin.buffer


def log(line: str) -> None:
    with (DIR / "log").open("a") as fh:
        fh.write(line + "\n")


def read() -> dict[str, Any] | None:
    length = 0
    while True:
        line = inp.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return json.loads(inp.read(length))


def send(msg: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    out.flush()


def main() -> None:
    log("started")
    try:
        fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.close(fd)
        mine = True
    except FileExistsError:
        log("overlap")
        mine = False
    while (msg := read()) is not None:
        method = msg.get("method")
        if method == "initialize":
            time.sleep(0.3)
            if mine:
                LOCK.unlink()
            send({"id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        elif method == "shutdown":
            send({"id": msg["id"], "result": None})
        elif method == "exit":
            return
        elif "id" in msg:
            send({"id": msg["id"], "result": None})


if __name__ == "__main__":
    main()
