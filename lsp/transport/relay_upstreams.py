"""The upstream side of the early front's relay (:mod:`.relay`): the upstreams, what they write, the answers.

:class:`Link` is one upstream the front started; :class:`UpstreamSide` holds
the relay's state that both sides share and reads what the upstreams write:
their notifications go to the editor as the proxy passes them, or are held
for the full server (:attr:`Link.held`), and the answers to the requests the
relay passed on go back to the editor as the full server would give them (or
as on a timeout, when an upstream goes away or takes too long).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from fixlore.lsp.transport.early import HEADER, Child, Front, private_module, write_all
from fixlore.lsp.transport.framing import dumps, encode_message, header_length, loads


@dataclass
class Link:
    """One upstream the front started, during the relay."""

    child: Child
    capabilities: dict[str, Any]
    sync: tuple[int, bool, bool]
    """``capabilities.text_sync_of``: (change kind, wants didSave, wants its text)."""
    open: set[str] = field(default_factory=set)
    inbox: bytes = b""
    """What it wrote that is not split into messages yet."""
    held: list[bytes] = field(default_factory=list)
    """What it wrote for the full server (all but the answers to the relay's requests), frame by frame, in order."""
    pushed: dict[str, int] = field(default_factory=dict)
    """uri -> where in :attr:`held` its latest ``publishDiagnostics`` is (the ones before it are dropped)."""
    sent: list[Any] = field(default_factory=list)
    """(method, params) of every notification written to it: the full server's same writes are dropped."""
    opaque: bool = False
    """A frame the relay cannot split or read came: everything from there on is held as it is."""
    blocked: bool = False
    """A message was held for the full server: everything after it is held too, in order."""

    @property
    def fd(self) -> int:
        """Its stdout."""
        popen = self.child.popen
        assert popen is not None and popen.stdout is not None
        return popen.stdout.fileno()

    def write(self, frame: bytes) -> bool:
        """Write to its stdin; False if it is gone."""
        popen = self.child.popen
        assert popen is not None and popen.stdin is not None
        try:
            write_all(popen.stdin.fileno(), frame)
        except OSError:
            return False
        return True


@dataclass
class Asked:
    """A request of the editor's the relay passed to an upstream under its own id."""

    editor_id: Any
    method: str
    link: Link
    uri: str = ""
    version: Any = None
    """The document's version when it was asked (what a pull's report describes)."""


def split_frames(data: bytes) -> tuple[list[tuple[int, int, bytes]], int, bool]:
    """The complete frames in ``data``: ((start, end, body), ...), where the rest starts, and whether it is bad."""
    frames: list[tuple[int, int, bytes]] = []
    pos = 0
    while (end := data.find(b"\r\n\r\n", pos)) >= 0:
        length = header_length(data[pos:end])
        if length is None:
            return frames, pos, True
        if len(data) < end + 4 + length:
            break
        frames.append((pos, end + 4 + length, data[end + 4 : end + 4 + length]))
        pos = end + 4 + length
    return frames, pos, False


class UpstreamSide:
    """What the relay knows of the upstreams and what it asked them, and how it reads what they write."""

    def __init__(self, front: Front) -> None:
        self.front = front
        self.links: list[Link] = []
        """The upstreams the front started (once it has answered)."""
        self.editor_pulls = False
        self.stopped = ""
        """Why the relay stopped serving the editor's messages."""
        self.published: dict[str, Any] = {}
        """uri -> the params of the last ``publishDiagnostics`` passed to the editor."""
        self._asked: dict[str, Asked] = {}
        self._by_editor_id: dict[Any, str] = {}
        self._versions: dict[str, Any] = {}
        """uri -> the version of the documents opened during the relay, as the editor's sync left it."""
        self._merge: ModuleType | None = None

    def _stop(self, why: str) -> None:
        if not self.stopped:
            self.stopped = why

    def _heard(self, link: Link) -> None:
        if link.opaque:
            link.held.append(link.inbox)
            link.inbox = b""
            return
        frames, rest, bad = split_frames(link.inbox)
        for start, end, body in frames:
            answer = self._answer_of(body)
            if answer is None:
                self._from_upstream(link, body, link.inbox[start:end])
            else:
                self._answered(answer)
        link.inbox = link.inbox[rest:]
        if bad:
            link.opaque = True
            self._heard(link)

    def _from_upstream(self, link: Link, body: bytes, frame: bytes) -> None:
        """Pass an upstream's notification on as the proxy does, or hold it; from the first held on, hold all.

        The proxy passes notifications to the editor raw, but diagnostics (the hub's),
        which go at once only when they are for the current version of the document.
        A request of the upstream's is the full server's; holding everything after
        it keeps the order the upstream wrote in.
        """
        try:
            message = loads(body)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str) or "id" in message:
            link.blocked = True
        elif method == "textDocument/publishDiagnostics":
            self._pushed(link, message)
        elif not link.blocked:
            write_all(self.front.stdout, HEADER % len(body) + body)
            return
        link.held.append(frame)

    def _pushed(self, link: Link, message: dict[str, Any]) -> None:
        """Diagnostics: the latest per document is held (for the hub); to the editor if current."""
        params = message.get("params")
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str) or not isinstance(params, dict):
            return
        if uri in link.pushed:
            link.held[link.pushed[uri]] = b""  # replaced by this one
        link.pushed[uri] = len(link.held)
        current = uri in self._versions and params.get("version") in (None, self._versions[uri])
        if current and not link.blocked and not self.editor_pulls:
            self._to_editor(message)
            self.published[uri] = params

    def _answer_of(self, body: bytes) -> dict[str, Any] | None:
        """The message if it answers one of the relay's requests."""
        if not self._asked or b'"fixlore-early-' not in body:
            return None
        try:
            message = loads(body)
        except ValueError:
            return None
        if isinstance(message, dict) and "method" not in message and message.get("id") in self._asked:
            return message
        return None

    def _answered(self, message: dict[str, Any]) -> None:
        asked = self._asked.pop(message["id"])
        self._by_editor_id.pop(asked.editor_id, None)
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": asked.editor_id}
        if asked.method == "textDocument/codeAction":  # as PendingActions and CodeActions answer
            result = message.get("result")
            if self._merge is None:
                self._merge = private_module(Path(__file__).resolve().parents[1] / "proxy" / "merge.py")
            uid = asked.link.child.uid
            actions = (
                [self._merge.wrap_item(_unmarked(a), uid) for a in result if isinstance(a, dict)]
                if isinstance(result, list)
                else []
            )
            out["result"] = actions or None
        elif "error" in message:
            out["error"] = message["error"]
        else:
            out["result"] = message.get("result")
            if asked.method == "textDocument/diagnostic":
                self._pulled(asked, message.get("result"))
        self._to_editor(out)

    def _pulled(self, asked: Asked, report: Any) -> None:
        """Hold a full report the editor pulled for the hub, as the upstream's push of it would be.

        The full server takes it in as the upstream's diagnostics for the version
        pulled: the hub has what the editor was shown (the learning loop's
        baseline). An "unchanged" report adds nothing to the full one before it.
        """
        if not isinstance(report, dict) or report.get("kind") != "full" or not isinstance(report.get("items"), list):
            return
        params: dict[str, Any] = {"uri": asked.uri, "diagnostics": report["items"]}
        if isinstance(asked.version, int):
            params["version"] = asked.version
        message = {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}
        self._pushed(asked.link, message)
        asked.link.held.append(encode_message(message))

    def _to_editor(self, message: dict[str, Any]) -> None:
        body = dumps(message)
        write_all(self.front.stdout, HEADER % len(body) + body)

    def _gone(self, link: Link) -> None:
        """An upstream closed its output: the relay stops; what it was asked is answered as on a timeout."""
        self._stop(f"upstream {link.child.uid} went away")
        for our_id, asked in list(self._asked.items()):
            if asked.link is link:
                self._unanswered(our_id)

    def _give_up(self) -> None:
        for our_id in list(self._asked):
            self._unanswered(our_id)

    def _unanswered(self, our_id: str) -> None:
        asked = self._asked.pop(our_id)
        self._by_editor_id.pop(asked.editor_id, None)
        if asked.method == "textDocument/codeAction":
            self._to_editor({"jsonrpc": "2.0", "id": asked.editor_id, "result": None})
        else:
            error = {"code": -32803, "message": f"upstream {asked.link.child.uid} did not answer in time"}
            self._to_editor({"jsonrpc": "2.0", "id": asked.editor_id, "error": error})


def _unmarked(action: dict[str, Any]) -> dict[str, Any]:
    """An upstream's action without its ``isPreferred``: nothing can vouch for it yet.

    The full server keeps a tool's mark on a fix that deletes code only once this
    user has taken it (``actions/preferred.keep_vouched_marks``), which needs the
    knowledge the relay runs without; an editor applies a preferred fix unasked
    (VS Code's Auto Fix), so until the server has loaded no action is marked.
    """
    if "isPreferred" not in action:
        return action
    return {k: v for k, v in action.items() if k != "isPreferred"}
