"""``fixlore serve`` answers ``initialize`` before pygls and lsprotocol are loaded.

Importing ``lsprotocol.types`` alone takes most of a pygls server's start-up
(0.3-1 s here), while an editor waits for the ``initialize`` answer. So the
stdio server first reads the editor's ``initialize`` with the standard library
and orjson only, works out the settings it can see then (the environment, the
workspace's ``pyproject.toml``, ``initializationOptions``, the CLI flags),
starts the upstream servers and sends them their ``initialize``, and writes
the answer: fixlore's own capabilities (fixed per version, :data:`OWN_RESULT`)
merged with the upstreams' exactly as the proxy merges them. Only then is the
server built (:mod:`.handover`), which takes the same ``initialize`` again
through pygls and fixlore's handlers, with the upstreams already started
(their processes and the bytes they sent are handed over), and serves on.

Whenever the front is not sure it gives the very answer the full server would,
it answers nothing and the full server answers as before: settings with
problems (the user is told about them in that answer's turn), an upstream that
cannot start or fails to initialize, an upstream that insists on another
position encoding, a first message that is not ``initialize``, a stdin that is
not a pipe or a socket. The full server compares its answer with the one
written early and logs an error if they ever differ.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from fixlore.lsp import __version__
from fixlore.lsp.config import (
    UpstreamConfig,
    env_layer,
    merge_layers,
    parse_config,
    read_pyproject,
    split_init_options,
    upstream_ids,
)
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, dumps, encode_message, header_length, loads

UTF16 = "utf-16"
_ENCODINGS = ("utf-8", "utf-16", "utf-32")
"""What pygls accepts of the editor's ``general.positionEncodings``, in its order of preference: the editor's."""

_MAX_HEADER = 1 << 16
"""More than this before the first blank line is not a frame header: the full server reads it (and says so)."""

HEADER = b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
"""How pygls frames what the server writes."""

COMMANDS = (
    "fixlore.accept",
    "fixlore.explain",
    "fixlore.patterns",
    "fixlore.forget",
    "fixlore.export",
    "fixlore.import",
    "fixlore.stats",
    "fixlore.dashboard",
    "fixlore.setLearning",
)


def own_result(client_capabilities: Any) -> dict[str, Any]:
    """The initialize result pygls builds for fixlore's features (before the upstreams' are merged in).

    Fixed per version but for what pygls reads of the editor's capabilities: the
    position encoding, and ``willSave``/``willSaveWaitUntil`` (false, since fixlore
    handles neither, wherever the editor mentions them). ``tests/foundation/test_early_answer.py``
    compares it with what pygls' capabilities builder makes of the server ``create_server`` builds.
    """
    text_document = client_capabilities.get("textDocument") if isinstance(client_capabilities, dict) else None
    sync = text_document.get("synchronization") if isinstance(text_document, dict) else None
    said = sync if isinstance(sync, dict) else {}
    text_sync: dict[str, Any] = {"openClose": True, "change": 2}
    text_sync.update({key: False for key in ("willSave", "willSaveWaitUntil") if said.get(key) is not None})
    text_sync["save"] = {"includeText": False}
    return {
        "capabilities": {
            "positionEncoding": choose_encoding(client_capabilities),
            "textDocumentSync": text_sync,
            "codeActionProvider": {"codeActionKinds": ["quickfix"], "resolveProvider": True},
            "executeCommandProvider": {"commands": list(COMMANDS)},
            "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
        },
        "serverInfo": {"name": "fixlore", "version": __version__},
    }


def _capabilities_module() -> ModuleType:
    """:mod:`fixlore.lsp.proxy.capabilities` (standard library only), without its package.

    Importing it by name runs ``fixlore.lsp.proxy``'s ``__init__``, which loads
    pygls; its file is loaded under a private name instead (pure functions: the
    two copies share no state).
    """
    return private_module(Path(__file__).resolve().parent.parent / "proxy" / "capabilities.py")


def private_module(path: Path) -> ModuleType:
    """One of fixlore's modules of pure functions, loaded from its file under a private name (see above)."""
    module = ModuleType(f"fixlore.lsp.transport._early_{path.stem}")
    module.__file__ = str(path)
    exec(compile(path.read_bytes(), path, "exec"), module.__dict__)  # noqa: S102 - fixlore's own file
    return module


@dataclass
class Child:
    """An upstream started by the front: its process and every byte both ways so far."""

    uid: str
    config: UpstreamConfig
    language: str = ""
    popen: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)
    sent: bytes = b""
    """The ``initialize`` request written to it (the full server's first write must be the same)."""
    received: bytes = b""
    """What it wrote so far (handed to the full server's connection, which reads it first)."""
    result: Any = None
    ok: bool = False
    answer_end: int = 0
    """Where its answer to ``initialize`` ends in :attr:`received`."""

    def answer(self) -> dict[str, Any] | None:
        """Its response to ``initialize`` (id 1) if it has come, else ``None``."""
        data, message, start = self.received, None, 0
        while (end := data.find(b"\r\n\r\n", start)) >= 0:
            length = header_length(data[start:end])
            if length is None or len(data) < end + 4 + length:
                return None
            message, start = loads(data[end + 4 : end + 4 + length]), end + 4 + length
            if isinstance(message, dict) and "method" not in message and message.get("id") == 1:
                self.answer_end = start
                return message
        return None


@dataclass
class Front:
    """Reads ``initialize`` and answers it early when it can; what it did goes to :mod:`.handover`."""

    cli_settings: dict[str, Any]
    stdin: int = 0
    stdout: int = 1
    consumed: bytes = b""
    """Every byte read from the editor so far (the full server reads them first)."""
    first: bytes | None = None
    """The ``initialize`` body, if the first message was one."""
    msg_id: Any = None
    children: list[Child] = field(default_factory=list)
    answer: bytes | None = None
    """The frame written to the editor, if any."""
    declined: str = ""
    """Why no early answer was written (for the log)."""
    capabilities: ModuleType | None = None
    """:mod:`fixlore.lsp.proxy.capabilities`, loaded privately."""

    def run(self) -> None:
        """Read the first message; answer it if it is an ``initialize`` the front can answer exactly."""
        message = self._read_first()
        if message is None:
            return
        params = message["params"]
        config = self._config(params)
        if config is None:
            return
        encoding = choose_encoding(params.get("capabilities"))
        caps_module = self.capabilities = _capabilities_module()
        self._start(config.upstreams, params, encoding, caps_module, config.upstream_timeout_ms / 1000)
        if self.declined:
            return
        running = [c.result.get("capabilities") or {} if isinstance(c.result, dict) else {} for c in self.children]
        if encoding != UTF16 and any(caps_module.position_encoding_of(c.result) != encoding for c in self.children):
            self.declined = "an upstream chose another position encoding"
            return
        result = self._result(caps_module, params, encoding, running)
        body = dumps({"jsonrpc": "2.0", "id": self.msg_id, "result": result})
        self.answer = HEADER % len(body) + body
        write_all(self.stdout, self.answer)

    # -- the editor's first message ------------------------------------------------------
    def _read_first(self) -> dict[str, Any] | None:
        while (end := self.consumed.find(b"\r\n\r\n")) < 0 or len(self.consumed) < end + 4 + (
            header_length(self.consumed[:end]) or 0
        ):
            if end >= 0 and header_length(self.consumed[:end]) is None:
                self.declined = "the first frame has no usable Content-Length"
                return None
            if end >= 0 and (header_length(self.consumed[:end]) or 0) > MAX_MESSAGE_BYTES:
                self.declined = "the first message is too large"
                return None
            if end < 0 and (len(self.consumed) > _MAX_HEADER or b"\n\n" in self.consumed):
                self.declined = "no CRLF frame header in the first bytes"  # the full server reads what it can
                return None
            chunk = os.read(self.stdin, 1 << 16)
            if not chunk:
                self.declined = "the editor closed its stream"
                return None
            self.consumed += chunk
        length = header_length(self.consumed[:end]) or 0
        body = self.consumed[end + 4 : end + 4 + length]
        try:
            message = loads(body)
        except ValueError:
            self.declined = "the first message is not JSON"
            return None
        if not (isinstance(message, dict) and message.get("method") == "initialize" and "id" in message):
            self.declined = "the first message is not an initialize request"
            return None
        if not isinstance(message.get("params"), dict):
            self.declined = "initialize without params"
            return None
        self.first, self.msg_id = body, message["id"]
        return message

    def _config(self, params: dict[str, Any]) -> Any:
        """The settings the full server works out during ``initialize`` (:class:`~fixlore.lsp.lifecycle.Lifecycle`)."""
        ours, _ = split_init_options(params.get("initializationOptions"))
        workspace: dict[str, Any] = {}  # the editor's workspace/configuration answer comes after initialized
        layers = (env_layer(), read_pyproject(workspace_root(params)), workspace, ours, self.cli_settings)
        config, problems = parse_config(merge_layers(*layers))
        if problems:
            self.declined = "the settings have problems to report"
            return None
        return config

    # -- upstreams -----------------------------------------------------------------------
    def _start(self, upstreams: Any, params: dict[str, Any], encoding: str, caps: ModuleType, timeout: float) -> None:
        """Start every upstream and send its ``initialize`` as the proxy would; wait for the answers.

        Upstreams with the same command start one after the other (as the proxy
        starts them: several `biome lsp-proxy` at once each start a daemon).
        """
        _, rest = split_init_options(params.get("initializationOptions"))
        queues: dict[tuple[str, ...], list[Child]] = {}
        for uid, language, config in upstream_ids(upstreams):
            child = Child(uid, config, language)
            request = dict(params)
            request["processId"] = os.getpid()
            request["capabilities"] = caps.client_capabilities_for_upstream(params.get("capabilities"), encoding)
            options = config.initialization_options if config.initialization_options is not None else rest
            if options is None:
                request.pop("initializationOptions", None)
            else:
                request["initializationOptions"] = options
            child.sent = encode_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": request})
            queues.setdefault(tuple(config.command), []).append(child)
            self.children.append(child)
        deadline = time.monotonic() + max(2.0, 4 * timeout)
        with selectors.DefaultSelector() as selector:
            for queue in queues.values():
                self._spawn(queue, selector)
            while not self.declined and selector.get_map():
                ready = selector.select(max(0.0, deadline - time.monotonic()))
                if not ready:
                    self.declined = "an upstream took too long to initialize"
                for key, _ in ready:
                    self._heard(key.data, selector, queues[tuple(key.data.config.command)])

    def _spawn(self, queue: list[Child], selector: selectors.BaseSelector) -> None:
        child = next((c for c in queue if c.popen is None), None)
        if child is None or self.declined:
            return
        child.env = dict(os.environ)
        try:
            child.popen = subprocess.Popen(
                list(child.config.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=child.env,
            )
        except OSError:
            self.declined = f"upstream {child.uid} cannot be started"  # the full server tells the user
            return
        assert child.popen.stdin is not None and child.popen.stdout is not None
        try:
            write_all(child.popen.stdin.fileno(), child.sent)
        except OSError:
            self.declined = f"upstream {child.uid} closed its input"
            return
        selector.register(child.popen.stdout.fileno(), selectors.EVENT_READ, child)

    def _heard(self, child: Child, selector: selectors.BaseSelector, queue: list[Child]) -> None:
        assert child.popen is not None and child.popen.stdout is not None
        chunk = os.read(child.popen.stdout.fileno(), 1 << 16)
        child.received += chunk
        answer = child.answer() if chunk else None
        if not chunk or answer is not None:
            selector.unregister(child.popen.stdout.fileno())
        if answer is None:
            if not chunk:
                self.declined = f"upstream {child.uid} exited during initialize"
            return
        if "result" not in answer:
            self.declined = f"upstream {child.uid} refused initialize"
            return
        child.result, child.ok = answer["result"], True
        self._spawn(queue, selector)

    # -- the answer ----------------------------------------------------------------------
    @staticmethod
    def _result(
        caps_module: ModuleType, params: dict[str, Any], encoding: str, upstreams: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """``Proxy.merge_capabilities`` of pygls' result, as the full server computes it."""
        ours = own_result(params.get("capabilities"))
        caps = caps_module.merge_server_capabilities(dict(ours["capabilities"]), upstreams)
        caps["positionEncoding"] = encoding
        editor = params.get("capabilities")
        editor = editor if isinstance(editor, dict) else {}
        text_document = editor.get("textDocument") or {}
        pulls = isinstance(text_document, dict) and text_document.get("diagnostic") is not None
        if pulls and any(c.get("diagnosticProvider") for c in upstreams):
            inter = any(
                isinstance(c.get("diagnosticProvider"), dict) and c["diagnosticProvider"].get("interFileDependencies")
                for c in upstreams
            )
            caps["diagnosticProvider"] = {
                "identifier": "fixlore",
                "interFileDependencies": bool(inter),
                "workspaceDiagnostics": False,
            }
        else:
            caps.pop("diagnosticProvider", None)
        return {**ours, "capabilities": caps}


def choose_encoding(client_capabilities: Any) -> str:
    """The position encoding pygls chooses: the editor's first of utf-8/16/32, else UTF-16."""
    general = client_capabilities.get("general") if isinstance(client_capabilities, dict) else None
    offered = general.get("positionEncodings") if isinstance(general, dict) else None
    for encoding in offered if isinstance(offered, list) else ():
        if encoding in _ENCODINGS:
            return str(encoding)
    return UTF16


def workspace_root(params: dict[str, Any]) -> Path | None:
    """:func:`fixlore.lsp.lifecycle.workspace_root` on the raw params."""
    from pygls.uris import to_fs_path  # standard library only (not pygls' server)

    folders = params.get("workspaceFolders")
    uri = None
    if folders and isinstance(folders, list) and isinstance(folders[0], dict):
        uri = folders[0].get("uri")
    elif params.get("rootUri"):
        uri = params["rootUri"]
    if isinstance(uri, str):
        path = to_fs_path(uri)
        return Path(path) if path else None
    root_path = params.get("rootPath")
    return Path(root_path) if isinstance(root_path, str) and root_path else None


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking file descriptor."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def is_stream(fd: int) -> bool:
    """True if ``fd`` is a pipe or a socket (what editors give a stdio server)."""
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


__all__ = [
    "Child",
    "Front",
    "choose_encoding",
    "is_stream",
    "own_result",
    "private_module",
    "workspace_root",
    "write_all",
]
