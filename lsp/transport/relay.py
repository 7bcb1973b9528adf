"""``fixlore serve``'s early front, part two: serving through the upstreams while the server loads.

After the early answer to ``initialize`` (:mod:`.early`), loading pygls,
lsprotocol and fixlore still takes 0.5-5 s on a busy machine (lsprotocol.types
above all). Until it is done, :class:`Relay` serves the editor with the
upstreams alone, in the main thread, with the standard library and orjson:

* ``initialized``, ``didOpen``, ``didChange``, ``didSave`` and ``didClose`` go
  to the upstreams as the proxy sends them (the document's upstreams by
  language, the editor's bytes, ``didSave`` only where wanted), and are kept
  for the full server, which takes them in as if they came now
  (:mod:`.handover` drops its writes of what the upstreams already have, one
  for one: :attr:`Link.sent`);
* a ``textDocument/codeAction`` that one upstream serves goes to it under an
  id of the relay's, and its answer back to the editor as the full server
  would give an upstream's alone (tagged with their upstream for
  ``codeAction/resolve``; no learned fix, no ``fixlore.accept``: fixes
  accepted from these answers reach the learning loop as edits only; and no
  ``isPreferred``, which the full server keeps on a fix that deletes code
  only once this user has taken it); so does an editor's diagnostic pull of
  a document one upstream alone serves, when that upstream answers pulls:
  its report goes to the editor as it is (as the full server passes a lone
  upstream's), and a full report is held for the full server's hub as that
  upstream's diagnostics for the version pulled (the baseline of what the
  editor was shown), as its pushes are; ``$/cancelRequest`` of such a
  request follows it;
* the upstreams' notifications go to the editor as the proxy passes them,
  raw, but diagnostics: of each document's pushes the latest is held for the
  full server's hub (each replaces the one before), and goes to the editor at
  once when it is for the document's current version and the editor does not
  pull, as the hub publishes an upstream's alone (the hub's own publish of the
  same list after the hand-over is not sent again: :attr:`Relay.published`,
  ``handover.Gate``); an upstream's request is held for the full server (it
  answers some itself, records registrations, relays the rest), and so is
  everything that upstream writes after it, so the editor hears it all in the
  order it was written.

The first message the relay does not serve (any other method, a response, a
code action two upstreams or none would answer, a pull of a document two
upstreams serve, anything before ``initialized``) ends it: that message and every later one are the full
server's, so each document's messages keep their order. The relay ends as
well when the server has loaded (``loaded`` becomes readable), once the
upstreams have answered what it asked; an answer that takes longer than
``drain_s`` is given up (the editor gets no actions, or an error for a pull,
as from the proxy on a timeout).

This module serves the editor's side and runs the loop; what the upstreams
write, and the answers to the relay's requests, are read in
:mod:`.relay_upstreams`.
"""

from __future__ import annotations

import os
import selectors
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from fixlore.lsp.transport.early import Child, Front, private_module
from fixlore.lsp.transport.framing import encode_message, loads
from fixlore.lsp.transport.relay_upstreams import Asked, Link, UpstreamSide, split_frames

SWITCH_S = 0.0005
"""The interpreter's thread switch interval while relaying: the loading thread holds the GIL
for up to this long before the relay's thread, woken by a message, gets it (5 ms by default)."""

SYNC = ("textDocument/didOpen", "textDocument/didChange", "textDocument/didSave", "textDocument/didClose")
INCREMENTAL = 2


class Relay(UpstreamSide):
    """Serves the editor through the front's upstreams until the server has loaded (see the module)."""

    def __init__(self, front: Front, loaded: int, drain_s: float) -> None:
        super().__init__(front)
        self.loaded = loaded
        self.drain_s = drain_s
        self.replay: list[bytes] = []
        """The editor's notifications the relay passed on, for the full server to take in."""
        self.rest = 0
        """Where the editor's bytes the full server reads start in ``front.consumed`` (behind ``initialize``)."""
        self.served = 0
        self._initialized = False
        self._next = 0
        self._languages: ModuleType | None = None
        self._docs: dict[str, str | None] = {}
        """uri -> the editor's languageId of the documents opened during the relay."""

    def opened(self) -> list[tuple[str, str]]:
        """The documents opened during the relay so far, ``(languageId, uri)`` (read from the loading thread)."""
        return [(language_id or "", uri) for uri, language_id in list(self._docs.items())]

    def run(self) -> None:
        """Serve until the server has loaded (or the relay cannot go on), then let the answers in flight land."""
        if self.front.first is None:
            return
        self.rest = self.front.consumed.find(b"\r\n\r\n") + 4 + len(self.front.first)
        caps = self.front.capabilities
        if self.front.answer is None or caps is None:
            return
        children = [c for c in self.front.children if c.ok and c.popen is not None]
        self.links = [Link(c, _caps(c), caps.text_sync_of(_caps(c))) for c in children]
        for link in self.links:  # what came after the answer to initialize is the full server's
            link.inbox = link.child.received[link.child.answer_end :]
            link.child.received = link.child.received[: link.child.answer_end]
        if not self.links:
            self.stopped = "no upstream"
            return
        self.editor_pulls = _editor_pulls(self.front)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_S)
        try:
            self._loop()
        finally:
            sys.setswitchinterval(switch)
            for link in self.links:
                link.held.append(link.inbox)
                link.inbox = b""

    def _loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.front.stdin, selectors.EVENT_READ, "editor")
            selector.register(self.loaded, selectors.EVENT_READ, "loaded")
            for link in self.links:
                selector.register(link.fd, selectors.EVENT_READ, link)
                self._heard(link)  # what it wrote behind its answer to initialize
            self._editor_messages()
            deadline = None
            while not self.stopped or self._asked:
                if self.stopped and deadline is None:
                    deadline = time.monotonic() + self.drain_s
                    for key in ("editor", "loaded"):
                        _unregister(selector, key)
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready = selector.select(wait)
                if not ready and deadline is not None:
                    self._give_up()
                    return
                for entry, _ in ready:
                    self._ready(selector, entry.data)

    def _ready(self, selector: selectors.BaseSelector, what: Any) -> None:
        if what == "loaded":
            self._stop("the server has loaded")
        elif what == "editor":
            chunk = os.read(self.front.stdin, 1 << 16)
            if not chunk:
                self._stop("the editor closed its stream")
                return
            self.front.consumed += chunk
            self._editor_messages()
        else:
            chunk = os.read(what.fd, 1 << 16)
            if not chunk:
                selector.unregister(what.fd)
                self._gone(what)
                return
            what.inbox += chunk
            self._heard(what)

    # -- the editor ----------------------------------------------------------------------
    def _editor_messages(self) -> None:
        data = self.front.consumed
        frames, _, bad = split_frames(data[self.rest :])
        for start, end, body in frames:
            if self.stopped:
                return
            try:
                message = loads(body)
            except ValueError:
                message = None
            if not isinstance(message, dict) or not self._serve(message, body):
                self._stop(f"the editor sent {_what(message)}")
                return
            self.rest += end - start
            self.served += 1
        if bad:
            self._stop("a frame without a usable header")

    def _serve(self, message: dict[str, Any], body: bytes) -> bool:
        method = message.get("method")
        params = message.get("params")
        if not isinstance(method, str) or (not self._initialized and method != "initialized"):
            return False
        if "id" in message:
            return self._ask(message["id"], method, params)
        if method == "initialized":
            self._initialized = True
            return self._notify_all(lambda link: True, "initialized", {}, None, body)
        if method == "$/cancelRequest":
            return self._cancel(params)
        if method in SYNC and isinstance(params, dict):
            return self._sync(method, params, body)
        return False

    def _sync(self, method: str, params: dict[str, Any], body: bytes) -> bool:
        document = params.get("textDocument")
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str) or not isinstance(document, dict):
            return False
        if method == "textDocument/didOpen":
            if uri in self._docs or not isinstance(document.get("languageId"), str):
                return False
            self._docs[uri] = document["languageId"]
            self._versions[uri] = document.get("version")
            return self._notify_all(lambda link: self._serves(link, uri), method, params, uri, body)
        if uri not in self._docs:
            return False  # opened before the relay: not this relay's
        if method == "textDocument/didChange":
            self._versions[uri] = document.get("version")
            if any(link.sync[0] != INCREMENTAL for link in self._open_in(uri)):
                return False  # a full-sync upstream needs the text, which the relay does not keep
            return self._notify_all(lambda link: uri in link.open, method, params, None, body)
        if method == "textDocument/didSave":
            links = [link for link in self._open_in(uri) if link.sync[1]]
            if any(link.sync[2] and "text" not in params for link in links):
                return False
            return self._notify_all(lambda link: link in links, method, params, None, body)
        self._docs.pop(uri)
        for link in self._open_in(uri):
            link.open.discard(uri)
            self._send(link, method, params, body)
        self.replay.append(body)
        return True

    def _notify_all(self, which: Any, method: str, params: Any, opened: str | None, body: bytes) -> bool:
        """Send a notification to each link ``which`` picks (raw bytes when the params are the editor's)."""
        for link in self.links:
            if not which(link):
                continue
            if opened is not None:
                link.open.add(opened)
            self._send(link, method, params, body)
        self.replay.append(body)
        return True

    def _send(self, link: Link, method: str, params: Any, body: bytes) -> None:
        """Write a notification to one upstream; one that is gone ends the relay after this message.

        The message is the full server's to take in either way: the others have it.
        """
        if method == "initialized":
            frame = encode_message({"jsonrpc": "2.0", "method": method, "params": params})
        else:
            frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        link.sent.append((method, params))
        if not link.write(frame):
            self._stop(f"upstream {link.child.uid} closed its input")

    def _open_in(self, uri: str) -> list[Link]:
        return [link for link in self.links if uri in link.open]

    def _serves(self, link: Link, uri: str) -> bool:
        """``UpstreamSet.upstreams_for``: the editor's languageId or fixlore's language for it.

        The languageId alone decides when it is the upstream's language, as it is for
        most documents: reading fixlore's language table for them held the first
        lightbulb of a session behind it (5 ms while the loading thread ran beside it).
        """
        language_id = self._docs.get(uri)
        if language_id is not None and language_id == link.child.language:
            return True
        if self._languages is None:
            self._languages = private_module(Path(__file__).resolve().parents[2] / "abstraction" / "languages.py")
        return link.child.language in {language_id, self._languages.language_for(language_id, uri)} - {None}

    # -- requests ------------------------------------------------------------------------
    def _ask(self, editor_id: Any, method: str, params: Any) -> bool:
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str) or uri not in self._docs or editor_id in self._by_editor_id:
            return False
        if method == "textDocument/codeAction":
            targets = [link for link in self._open_in(uri) if link.capabilities.get("codeActionProvider")]
        elif method == "textDocument/diagnostic" and self.editor_pulls:
            # The full server answers a lone upstream's pull with its answer as it came;
            # with a second upstream on the document it merges, and that is its to do.
            serving = self._open_in(uri)
            targets = serving if len(serving) == 1 and serving[0].capabilities.get("diagnosticProvider") else []
        else:
            return False
        if len(targets) != 1:
            return False  # none (learned fixes only) or several (merged): the full server's
        self._next += 1
        our_id = f"fixlore-early-{self._next}"
        frame = encode_message({"jsonrpc": "2.0", "id": our_id, "method": method, "params": params})
        if not targets[0].write(frame):
            self._stop(f"upstream {targets[0].child.uid} closed its input")
            return False
        self._asked[our_id] = Asked(editor_id, method, targets[0], uri, self._versions.get(uri))
        self._by_editor_id[editor_id] = our_id
        return True

    def _cancel(self, params: Any) -> bool:
        """Cancel a request the relay passed on; one it answered already has nothing to cancel."""
        editor_id = params.get("id") if isinstance(params, dict) else None
        our_id = self._by_editor_id.get(editor_id)
        asked = self._asked.get(our_id) if our_id is not None else None
        if asked is not None:
            asked.link.write(encode_message({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": our_id}}))
        return True


def _caps(child: Child) -> dict[str, Any]:
    caps = child.result.get("capabilities") if isinstance(child.result, dict) else None
    return caps if isinstance(caps, dict) else {}


def _editor_pulls(front: Front) -> bool:
    """Whether the early answer advertised pulled diagnostics (the editor pulls, fixlore does not publish)."""
    answer = front.answer or b""
    body = loads(answer[answer.index(b"\r\n\r\n") + 4 :])
    return bool(body["result"]["capabilities"].get("diagnosticProvider"))


def _what(message: Any) -> str:
    if not isinstance(message, dict):
        return "a message the relay cannot read"
    method = message.get("method")
    if isinstance(method, str):
        return f"{method} ({'request' if 'id' in message else 'notification'})"
    return "a response"


def _unregister(selector: selectors.BaseSelector, key: str) -> None:
    for fd, entry in list(selector.get_map().items()):
        if entry.data == key:
            selector.unregister(fd)


__all__ = ["Link", "Relay", "split_frames"]
