"""Lifecycle and configuration: initialize, initialized, didChangeConfiguration, shutdown.

Configuration layers (see :mod:`fixlore.lsp.config`) are gathered here:
``pyproject.toml`` of the workspace root, the editor's ``workspace/configuration``
answer for section ``fixlore``, ``initializationOptions.fixlore`` and the CLI
flags. Each change re-merges them and tells listeners; problems are shown to
the user once and logged.

Serves: ``initialize``, ``initialized``, ``workspace/didChangeConfiguration``,
``shutdown``, ``exit``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from fixlore.lsp import logs
from fixlore.lsp.config import (
    FixloreConfig,
    env_layer,
    merge_layers,
    parse_config,
    read_pyproject,
    split_init_options,
)
from fixlore.lsp.protocol import current_raw_params

if TYPE_CHECKING:
    from fixlore.lsp.server import FixloreServer

logger = logging.getLogger(__name__)

_MISSING = object()


def _norm(key: str) -> str:
    return key.replace("_", "").lower()


ConfigListener = Callable[[FixloreConfig, FixloreConfig], None]
ShutdownHook = Callable[[], Any]
InitializeHook = Callable[[dict[str, Any]], Awaitable[None]]
"""Awaited inside ``initialize`` (after the config is applied) with the raw params."""


class Lifecycle:
    """Holds the configuration layers and the listeners of config changes."""

    def __init__(self, server: FixloreServer) -> None:
        self._server = server
        self.layers: dict[str, dict[str, Any]] = {"pyproject": {}, "workspace": {}, "init": {}, "cli": {}}
        self.listeners: list[ConfigListener] = []
        self.shutdown_hooks: list[ShutdownHook] = []
        self._farewell: asyncio.Future[None] | None = None
        self.initialize_hooks: list[InitializeHook] = []
        """Awaited before the initialize result is built (the proxy starts upstreams here)."""
        self.initialized_hooks: list[Callable[[], None]] = []
        """Called when the editor sends ``initialized``."""
        self.configuration_hooks: list[Callable[[Any], None]] = []
        """Called with the raw params of every ``workspace/didChangeConfiguration``."""
        self.root: Path | None = None
        self.upstream_init_options: Any = None
        """The editor's initializationOptions without fixlore's section (for upstreams)."""
        self._reported: set[str] = set()
        self._settled = False

    async def farewell(self) -> None:
        """Run the shutdown hooks (flush the store, stop the upstreams), once, however the session ends.

        Called by ``shutdown``, by ``exit`` without it, and by the server when the
        editor's stream ends or on SIGTERM.
        """
        if self._farewell is None:  # a second caller (exit, then the stream's end) waits for the first
            self._farewell = asyncio.ensure_future(self._run_shutdown_hooks())
        await asyncio.shield(self._farewell)

    async def _run_shutdown_hooks(self) -> None:
        for hook in self.shutdown_hooks:
            try:
                result = hook()
                if hasattr(result, "__await__"):
                    await result
            except Exception:
                logger.exception("shutdown hook failed")

    def set_workspace_layer(self, settings: dict[str, Any]) -> FixloreConfig:
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

    def apply(self) -> FixloreConfig:
        """Re-merge every layer, install the result and tell the listeners."""
        merged = merge_layers(
            env_layer(), self.layers["pyproject"], self.layers["workspace"], self.layers["init"], self.layers["cli"]
        )
        config, problems = parse_config(merged)
        fresh = [p for p in problems if p not in self._reported]
        if fresh:
            self._reported.update(fresh)
            for problem in fresh:
                logger.warning("configuration: %s", problem)
            self._server.notify_user(
                "fixlore: some settings are invalid and their defaults are used: " + "; ".join(fresh),
                key="config:" + "|".join(sorted(fresh)),
            )
        old, self._server.config = self._server.config, config
        logs.set_level(config.log_level)
        for listener in self.listeners:
            listener(old, config)
        return config


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


def register(server: FixloreServer) -> None:
    """Register the lifecycle handlers."""
    life = Lifecycle(server)
    life.layers["cli"] = dict(server.options.cli_settings)
    server.features["lifecycle"] = life
    server.config, _ = parse_config(merge_layers(life.layers["cli"]))

    @server.feature(types.INITIALIZE)
    async def initialize(params: types.InitializeParams) -> None:
        raw = current_raw_params() or {}
        ours, rest = split_init_options(raw.get("initializationOptions"))
        life.upstream_init_options = rest
        life.layers["init"] = ours
        life.root = workspace_root(params)
        life.layers["pyproject"] = read_pyproject(life.root)
        life.apply()
        for hook in life.initialize_hooks:
            await hook(raw)

    @server.feature(types.INITIALIZED)
    def initialized(params: types.InitializedParams) -> None:
        # Synchronous on purpose: the hooks (the proxy sends `initialized` to
        # each upstream) must run before the next message is handled, or a
        # didOpen right behind this notification reaches an upstream before
        # its `initialized`, which ruff answers by exiting.
        for hook in life.initialized_hooks:
            hook()
        server.spawn(_configure(), name="workspace-configuration")

    async def _configure() -> None:
        await pull_workspace_configuration(server, life)
        life.settle()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        raw = current_raw_params() or {}
        for hook in life.configuration_hooks:
            hook(raw)
        settings = raw.get("settings")
        if isinstance(settings, dict) and isinstance(settings.get("fixlore"), dict):
            life.set_workspace_layer(settings["fixlore"])
        else:
            await pull_workspace_configuration(server, life)

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: None) -> None:
        await life.farewell()

    @server.feature(types.EXIT)
    async def exit_(params: None) -> None:
        await life.farewell()  # an editor that sends `exit` without `shutdown` loses nothing either


async def pull_workspace_configuration(server: FixloreServer, life: Lifecycle) -> None:
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
    life.set_workspace_layer(section if isinstance(section, dict) else {})
