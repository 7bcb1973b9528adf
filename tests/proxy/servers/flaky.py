"""A deliberately misbehaving language server for the proxy's fault tests (stdlib only).

Behaviour, triggered by the word on the hovered line:
  CRASH   -> the process exits at once (mid-session crash)
  HANG    -> the hover is never answered; a later $/cancelRequest is logged
  GARBAGE -> junk frames first (no header, bad JSON, a JSON array), then the answer
Otherwise hover answers "flaky hover" with an unknown field kept for the
lossless check. Every open/change publishes one diagnostic with rich `data`
and an unknown field (and a second, whose message holds a lone surrogate,
when the text holds SURROGATE). Code actions come without an edit and are resolved
only if their `data` comes back exactly as sent. The command `flaky.ask`
sends server-to-client requests (configuration, applyEdit, showMessageRequest,
workDoneProgress/create, registerCapability) and returns what the editor said.
The commands `flaky.register` / `flaky.unregister` register and unregister
`textDocument/documentSymbol` dynamically; document symbols are answered only
while registered (an error otherwise), and a restarted process has no
registration.

With --pull it is a pull-only diagnostics server instead: it publishes
nothing and answers each `textDocument/diagnostic` with one diagnostic whose
message counts the pulls it has answered and the settings changes it has seen,
so a test can tell whether an answer came from it or from fixlore's memory.
A document containing MALFORMED gets a pull answer that is not JSON. The
first pull of a document containing HOLD is answered late: after the next
pull's answer (answers out of order, as a server that lints on several threads sends them).

With --incremental it asks for incremental text sync and logs every didChange
it gets ("changed to version N") instead of keeping the text. Every hover and
completion is logged ("hover", "completion"), so a test can see the order
messages came in.

With --notebooks it syncs notebooks of Python cells: it logs their opening
("notebook opened with N cells", then "cells" and their texts as JSON) and closing, and treats the cells as documents.

Flags: --crash-after-init (exit right after `initialized`), --utf16-only, --pull, --incremental,
--notebooks, --name NAME.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

NAME = sys.argv[sys.argv.index("--name") + 1] if "--name" in sys.argv else "flaky"
CRASH_AFTER_INIT = "--crash-after-init" in sys.argv
UTF16_ONLY = "--utf16-only" in sys.argv
PULL = "--pull" in sys.argv
INCREMENTAL = "--incremental" in sys.argv
NOTEBOOKS = "--notebooks" in sys.argv
seen = {"pulls": 0, "settings": 0, "held": 0}
held: list[dict[str, Any]] = []
"""A pull answer held back (HOLD), sent after the next one."""
registered: set[str] = set()
DATA = {"secret": 42, "nested": {"list": [1, "two", None]}, "origin": NAME}

out = sys.stdout.buffer
inp = sys.stdin.buffer
docs: dict[str, str] = {}
next_id = 1000


def write_raw(data: bytes) -> None:
    out.write(data)
    out.flush()


def send(message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    write_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


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


def request(method: str, params: Any) -> Any:
    """Send a server-to-client request and wait for its answer (queueing other traffic)."""
    global next_id
    next_id += 1
    my_id = next_id
    send({"id": my_id, "method": method, "params": params})
    while True:
        msg = read()
        if msg is None:
            sys.exit(0)
        if msg.get("id") == my_id and "method" not in msg:
            return msg.get("error") or msg.get("result")
        handle(msg)


def publish(uri: str, version: int | None) -> None:
    if PULL:
        return
    diagnostics = [diag()]
    if "SURROGATE" in docs.get(uri, ""):  # a second diagnostic whose message holds a lone surrogate
        diagnostics.append({**diag(), "code": "FLK2", "message": "half a pair: \ud83d."})
    send(
        {
            "method": "textDocument/publishDiagnostics",
            "params": {"uri": uri, "version": version, "diagnostics": diagnostics},
        }
    )


def diag() -> dict[str, Any]:
    return {
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
        "severity": 2,
        "source": NAME,
        "code": "FLK1",
        "message": f"{NAME} says hi",
        "data": DATA,
        "x-unknown-field": {"kept": True},
    }


def log(text: str) -> None:
    send({"method": "window/logMessage", "params": {"type": 3, "message": f"{NAME}: {text}"}})


def handle(msg: dict[str, Any]) -> None:
    method = msg.get("method")
    params = msg.get("params") or {}
    msg_id = msg.get("id")
    if method == "initialize":
        encodings = (params.get("capabilities", {}).get("general") or {}).get("positionEncodings") or []
        caps = {
            "textDocumentSync": {"openClose": True, "change": 2 if INCREMENTAL else 1, "save": {"includeText": True}},
            "hoverProvider": True,
            "codeActionProvider": {"codeActionKinds": ["quickfix"], "resolveProvider": True},
            "executeCommandProvider": {"commands": ["flaky.ask", "flaky.register", "flaky.unregister"]},
            "completionProvider": {"triggerCharacters": ["@"], "resolveProvider": True},
            "positionEncoding": "utf-16" if UTF16_ONLY or not encodings else encodings[0],
            "experimental": {"flaky": True},
        }
        if NOTEBOOKS:
            caps["notebookDocumentSync"] = {"notebookSelector": [{"cells": [{"language": "python"}]}]}
        if PULL:
            caps["diagnosticProvider"] = {
                "identifier": NAME,
                "interFileDependencies": False,
                "workspaceDiagnostics": False,
            }
        send({"id": msg_id, "result": {"capabilities": caps, "serverInfo": {"name": NAME}}})
    elif method == "initialized":
        if CRASH_AFTER_INIT:
            os._exit(3)
        encodings = (INIT.get("capabilities", {}).get("general") or {}).get("positionEncodings")
        log(f"pid={os.getpid()} encodings={json.dumps(encodings)}")
        log(f"initializationOptions={json.dumps(INIT.get('initializationOptions'))}")
    elif method == "textDocument/didOpen":
        doc = params["textDocument"]
        docs[doc["uri"]] = doc["text"]
        log(f"opened languageId={doc['languageId']}")
        publish(doc["uri"], doc["version"])
    elif method == "textDocument/didChange":
        doc = params["textDocument"]
        if INCREMENTAL:
            log(f"changed to version {doc['version']}")
        else:
            docs[doc["uri"]] = params["contentChanges"][-1]["text"]
        publish(doc["uri"], doc["version"])
    elif method == "notebookDocument/didOpen":
        cells = params["cellTextDocuments"]
        log(f"notebook opened with {len(cells)} cells")
        log(f"cells {json.dumps([cell['text'] for cell in cells])}")
        for cell in cells:
            docs[cell["uri"]] = cell["text"]
            publish(cell["uri"], cell["version"])
    elif method == "notebookDocument/didClose":
        log("notebook closed")
        for cell in params["cellTextDocuments"]:
            docs.pop(cell["uri"], None)
    elif method == "textDocument/didSave":
        log(f"saved with text={'text' in params}")
    elif method == "textDocument/didClose":
        docs.pop(params["textDocument"]["uri"], None)
    elif method == "textDocument/diagnostic":
        seen["pulls"] += 1
        text = docs.get(params["textDocument"]["uri"], "")
        message = f"pull {seen['pulls']} settings {seen['settings']} chars {len(text)}"
        log(message)
        if "MALFORMED" in text:
            body = b'{"jsonrpc":"2.0","id":%d,"result":{"kind":"full","items":[}' % msg_id
            write_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            return
        answer = {
            "id": msg_id,
            "result": {"kind": "full", "resultId": str(seen["pulls"]), "items": [{**diag(), "message": message}]},
        }
        if "HOLD" in text and not seen["held"]:
            seen["held"] += 1
            held.append(answer)
            return
        send(answer)
        while held:
            send(held.pop())
    elif method == "workspace/didChangeConfiguration":
        seen["settings"] += 1
    elif method == "$/cancelRequest":
        log(f"cancelled {params.get('id')}")
    elif method == "textDocument/hover":
        log("hover")
        line = docs.get(params["textDocument"]["uri"], "").splitlines()[params["position"]["line"]]
        if "CRASH" in line:
            os._exit(1)
        if "HANG" in line:
            log(f"hanging on {msg_id}")
            return
        if "GARBAGE" in line:
            write_raw(b"this is not a header\r\n\r\n")
            write_raw(b"Content-Length: 9\r\n\r\n{not json")
            write_raw(b"Content-Length: 2\r\n\r\n[]")
        contents = {"kind": "plaintext", "value": f"{NAME} hover"}
        send({"id": msg_id, "result": {"contents": contents, "x-extra": [1, 2]}})
    elif method == "textDocument/codeAction":
        log("codeAction")
        action = {"title": f"{NAME}: fix it", "kind": "quickfix", "data": DATA, "x-unknown": "kept"}
        send({"id": msg_id, "result": [action]})
    elif method == "codeAction/resolve":
        if params.get("data") != DATA or params.get("x-unknown") != "kept":
            send({"id": msg_id, "error": {"code": -32602, "message": "data did not round-trip"}})
            return
        uri = next(iter(docs))
        edit = {"changes": {uri: [{"range": params.get("range") or _origin(), "newText": "# fixed\n"}]}}
        send({"id": msg_id, "result": {**params, "edit": edit}})
    elif method == "textDocument/completion":
        log("completion")
        send({"id": msg_id, "result": {"isIncomplete": False, "items": [{"label": f"{NAME}_item", "data": 7}]}})
    elif method == "completionItem/resolve":
        send({"id": msg_id, "result": {**params, "detail": f"resolved by {NAME} data={params.get('data')}"}})
    elif method == "workspace/executeCommand" and params.get("command") == "flaky.register":
        registration = {"id": "symbols", "method": "textDocument/documentSymbol"}
        answer = request("client/registerCapability", {"registrations": [registration]})
        registered.add("textDocument/documentSymbol")
        send({"id": msg_id, "result": answer})
    elif method == "workspace/executeCommand" and params.get("command") == "flaky.unregister":
        registered.discard("textDocument/documentSymbol")
        unregistration = {"id": "symbols", "method": "textDocument/documentSymbol"}
        send({"id": msg_id, "result": request("client/unregisterCapability", {"unregisterations": [unregistration]})})
    elif method == "textDocument/documentSymbol" and method in registered:
        symbol = {"name": f"{NAME} symbol", "kind": 13, "range": _origin(), "selectionRange": _origin()}
        send({"id": msg_id, "result": [symbol]})
    elif method == "workspace/executeCommand":
        answers = {
            "configuration": request("workspace/configuration", {"items": [{"section": "flaky"}]}),
            "progress": request("window/workDoneProgress/create", {"token": f"{NAME}-tok"}),
            "register": request(
                "client/registerCapability",
                {"registrations": [{"id": "w1", "method": "workspace/didChangeWatchedFiles"}]},
            ),
            "choice": request("window/showMessageRequest", {"type": 3, "message": "pick", "actions": [{"title": "A"}]}),
            "applied": request("workspace/applyEdit", {"edit": {"changes": {}}}),
            "arguments": params.get("arguments"),
        }
        send({"id": msg_id, "result": answers})
    elif method == "shutdown":
        send({"id": msg_id, "result": None})
    elif method == "exit":
        sys.exit(0)
    elif msg_id is not None and method is not None:
        send({"id": msg_id, "error": {"code": -32601, "message": f"unknown {method}"}})


def _origin() -> dict[str, Any]:
    return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


INIT: dict[str, Any] = {}


def main() -> None:
    while True:
        msg = read()
        if msg is None:
            return
        if msg.get("method") == "initialize":
            INIT.update(msg.get("params") or {})
        handle(msg)


if __name__ == "__main__":
    main()
