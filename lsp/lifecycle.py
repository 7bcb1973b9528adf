"""Lifecycle and configuration: initialize, initialized, didChangeConfiguration, shutdown.

Configuration layers (see :mod:`fixlore.lsp.config`) are gathered here:
``pyproject.toml`` of the workspace root, the editor's ``workspace/configuration``
answer for section ``fixlore``, ``initializationOptions.fixlore`` and the CLI
flags. Each change re-merges them and hands (old, new) to
:meth:`~fixlore.lsp.dispatch.Dispatch.config_changed`; problems are shown to
the user once and logged.

Serves: ``initialize``, ``initialized``, ``workspace/didChangeConfiguration``, ``workspace/didChangeWorkspaceFolders``,
``shutdown``, ``exit``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types
from pygls.uris import to_fs_path

from fixlore.lsp.config import (
    FixloreConfig,
    env_layer,
    merge_layers,
    parse_config,
    read_pyproject,
    split_init_options,
)
from fixlore.lsp.transport import logs
from fixlore.lsp.transport.protocol import current_raw_params

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)

_MISSING = object()


def _norm(key: str) -> str:
    return key.replace("_", "").lower()


class Lifecycle:
    """Holds the configuration layers; installs their merge as the editor's ``config``.

    Who reacts to a change is :meth:`Dispatch.config_changed`'s business: every
    method that re-merges returns ``(old, new)``.
    """

    def __init__(self, editor: Editor, cli_settings: dict[str, Any] | None = None) -> None:
        self._editor = editor
        self.layers: dict[str, dict[str, Any]] = {"pyproject": {}, "workspace": {}, "init": {}, "cli": {}}
        self.layers["cli"] = dict(cli_settings or {})
        self.root: Path | None = None
        self.folders: list[Path] = []
        """Every workspace folder (the root alone when the editor names none), as the editor changes them."""
        self.upstream_init_options: Any = None
        """The editor's initializationOptions without fixlore's section (for upstreams)."""
        self._reported: set[str] = set()
        self._settled = False
        editor.config, _ = parse_config(merge_layers(self.layers["cli"]))

    def take_initialize(self, params: types.InitializeParams, raw: dict[str, Any]) -> None:
        """Keep what ``initialize`` says: fixlore's options, the rest for upstreams, the root's pyproject."""
        ours, rest = split_init_options(raw.get("initializationOptions"))
        self.upstream_init_options = rest
        self.layers["init"] = ours
        self.root = workspace_root(params)
        self.folders = _paths(folder.uri for folder in params.workspace_folders or ())
        if not self.folders and self.root is not None:
            self.folders = [self.root]
        self.layers["pyproject"] = read_pyproject(self.root)

    def change_folders(self, raw: dict[str, Any]) -> list[Path]:
        """A ``workspace/didChangeWorkspaceFolders`` (raw params): the folders now; returns those added."""
        found = raw.get("event")
        event: dict[str, Any] = found if isinstance(found, dict) else {}
        added, removed = (
            _paths(f.get("uri") for f in event.get(key) or () if isinstance(f, dict)) for key in ("added", "removed")
        )
        new = [path for path in added if path not in self.folders]
        self.folders = [path for path in self.folders if path not in removed] + new
        return new

    def set_workspace_layer(self, settings: dict[str, Any]) -> tuple[FixloreConfig, FixloreConfig]:
        """Install the editor's ``workspace/configuration`` answer and re-apply.

        The first answer (right after ``initialized``) ranks below
        ``initializationOptions``, as documented. Later answers are the user
        changing a setting while the session runs: a key whose value changed
        then wins over the value the editor sent at start, so a live change
        is never silently ignored.
        """
        previous = self.layers["workspace"]
        if self._settled:
            changed = {_norm(k) for k, v in settings.items() if previous.get(k, _MISSING) != v}
            changed |= {_norm(k) for k in previous if k not in settings}
            self.layers["init"] = {k: v for k, v in self.layers["init"].items() if _norm(k) not in changed}
        self.layers["workspace"] = settings
        return self.apply()

    def settle(self) -> None:
        """The start-up exchange is over: from now on settings changes are live."""
        self._settled = True

    def apply(self) -> tuple[FixloreConfig, FixloreConfig]:
        """Re-merge every layer and install the result; returns (old, new)."""
        merged = merge_layers(
            env_layer(), self.layers["pyproject"], self.layers["workspace"], self.layers["init"], self.layers["cli"]
        )
        config, problems = parse_config(merged)
        fresh = [p for p in problems if p not in self._reported]
        if fresh:
            self._reported.update(fresh)
            for problem in fresh:
                logger.warning("configuration: %s", problem)
            self._editor.notify_user(
                "fixlore: some settings are invalid and their defaults are used: " + "; ".join(fresh),
                key="config:" + "|".join(sorted(fresh)),
            )
        old, self._editor.config = self._editor.config, config
        logs.set_level(config.log_level)
        return old, config


def _paths(uris: Iterable[Any]) -> list[Path]:
    """The local paths of ``file:`` URIs (others skipped)."""
    out = []
    for uri in uris:
        path = to_fs_path(uri) if isinstance(uri, str) and uri.startswith("file:") else None
        if path:
            out.append(Path(path))
    return out


def workspace_root(params: types.InitializeParams) -> Path | None:
    """The first workspace folder (or rootUri/rootPath) as a local path."""
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    if uri is not None:
        path = to_fs_path(uri)
        return Path(path) if path else None
    return Path(params.root_path) if params.root_path else None


class SessionEvents(Protocol):
    """What the lifecycle handlers call (:class:`~fixlore.lsp.dispatch.Dispatch`)."""

    async def initialize(self, params: types.InitializeParams, raw: dict[str, Any]) -> None:
        """The editor's ``initialize`` (typed and raw)."""

    def initialized(self) -> None:
        """The editor's ``initialized``."""

    def settings_notified(self, raw: Any) -> None:
        """A ``workspace/didChangeConfiguration`` (raw params)."""

    def folders_changed(self, raw: dict[str, Any]) -> None:
        """A ``workspace/didChangeWorkspaceFolders`` (raw params)."""

    def workspace_settings(self, settings: dict[str, Any]) -> None:
        """The editor's section ``fixlore`` of the workspace settings."""

    async def farewell(self) -> None:
        """``shutdown`` or ``exit``: save what was learned, stop the upstreams."""


def register(server: LanguageServer, life: Lifecycle, dispatch: SessionEvents) -> None:
    """Register the lifecycle handlers: each unpacks its message and calls ``dispatch``."""

    @server.feature(types.INITIALIZE)
    async def initialize(params: types.InitializeParams) -> None:
        await dispatch.initialize(params, current_raw_params() or {})

    @server.feature(types.INITIALIZED)
    def initialized(params: types.InitializedParams) -> None:
        dispatch.initialized()  # synchronous on purpose (see Dispatch.initialized)
        logs.spawn(_configure(), name="workspace-configuration")

    async def _configure() -> None:
        await pull_workspace_configuration(server, dispatch)
        life.settle()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        raw = current_raw_params() or {}
        dispatch.settings_notified(raw)
        settings = raw.get("settings")
        if isinstance(settings, dict) and isinstance(settings.get("fixlore"), dict):
            dispatch.workspace_settings(settings["fixlore"])
        else:
            await pull_workspace_configuration(server, dispatch)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        dispatch.folders_changed(current_raw_params() or {})

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: None) -> None:
        await dispatch.farewell()

    @server.feature(types.EXIT)
    async def exit_(params: None) -> None:
        await dispatch.farewell()  # an editor that sends `exit` without `shutdown` loses nothing either


async def pull_workspace_configuration(server: LanguageServer, dispatch: SessionEvents) -> None:
    """Ask the editor for section ``fixlore`` if it can answer, then re-apply."""
    caps = server.client_capabilities
    if not (caps and caps.workspace and caps.workspace.configuration):
        return
    try:
        result = await server.protocol.send_request_async(
            types.WORKSPACE_CONFIGURATION,
            types.ConfigurationParams(items=[types.ConfigurationItem(section="fixlore")]),
        )
    except Exception as exc:  # the editor may refuse; keep what we have
        logger.info("workspace/configuration unavailable: %s", type(exc).__name__)
        return
    section = result[0] if isinstance(result, list) and result else None
    dispatch.workspace_settings(section if isinstance(section, dict) else {})
