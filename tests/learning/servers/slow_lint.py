"""A tiny, slow linter language server for the learning tests (stdlib only).

Reports one warning (source ``slowlint``, code ``SL1``) on every line that
contains ``legacy_call(``. The first report of a document comes at once;
every later one (after a change) only after ``--delay SECONDS`` (default 2),
as a slow type checker would. Full text sync, push diagnostics, and one
quick fix per warning ("Use modern_call") whose edit comes only through
``codeAction/resolve``, as lazily resolved actions do.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

DELAY = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 2.0
TOKEN = "legacy_call("

out = sys.stdout.buffer
inp = sys.stdin.buffer
write_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    with write_lock:
        out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        out.flush()


def read() -> dict[str, Any] | None:
    length = None
    while True:
        line = inp.readline()
        if not line:
            return None
        if line.strip() == b"":
            if length is not None:
                break
            continue
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(inp.read(length))


def diagnostics(text: str) -> list[dict[str, Any]]:
    out_list = []
    for n, line in enumerate(text.split("\n")):
        at = line.find(TOKEN)
        if at >= 0:
            start, end = {"line": n, "character": at}, {"line": n, "character": at + len(TOKEN) - 1}
            out_list.append(
                {
                    "range": {"start": start, "end": end},
                    "severity": 2,
                    "source": "slowlint",
                    "code": "SL1",
                    "message": "legacy call",
                }
            )
    return out_list


def publish(uri: str, version: int, text: str, delay: float) -> None:
    params = {"uri": uri, "version": version, "diagnostics": diagnostics(text)}
    message = {"method": "textDocument/publishDiagnostics", "params": params}
    if delay <= 0:
        send(message)
    else:
        threading.Timer(delay, send, args=(message,)).start()


def main() -> None:
    while True:
        msg = read()
        if msg is None:
            return
        method, params, msg_id = msg.get("method"), msg.get("params") or {}, msg.get("id")
        if method == "initialize":
            caps = {
                "textDocumentSync": {"openClose": True, "change": 1},
                "positionEncoding": "utf-16",
                "codeActionProvider": {"codeActionKinds": ["quickfix"], "resolveProvider": True},
            }
            send({"id": msg_id, "result": {"capabilities": caps, "serverInfo": {"name": "slowlint"}}})
        elif method == "textDocument/didOpen":
            doc = params["textDocument"]
            publish(doc["uri"], doc["version"], doc["text"], 0.0)
        elif method == "textDocument/didChange":
            doc = params["textDocument"]
            publish(doc["uri"], doc["version"], params["contentChanges"][-1]["text"], DELAY)
        elif method == "textDocument/codeAction":
            uri = params["textDocument"]["uri"]
            found = [d for d in params["context"]["diagnostics"] if d.get("source") == "slowlint"]
            title = "Use modern_call"
            actions = [
                {"title": title, "kind": "quickfix", "diagnostics": [d], "data": {"uri": uri, "r": d["range"]}}
                for d in found
            ]
            send({"id": msg_id, "result": actions})
        elif method == "codeAction/resolve":
            data = params["data"]
            edit = {"changes": {data["uri"]: [{"range": data["r"], "newText": "modern_call"}]}}
            send({"id": msg_id, "result": {**params, "edit": edit}})
        elif method == "shutdown":
            send({"id": msg_id, "result": None})
        elif method == "exit":
            return
        elif msg_id is not None and method is not None:
            send({"id": msg_id, "error": {"code": -32601, "message": f"unknown {method}"}})


if __name__ == "__main__":
    main()
