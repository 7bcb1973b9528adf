"""fixlore's configuration: one typed schema and one precedence order.

Precedence, lowest first: defaults < the environment (``FIXLORE_TEAM_KNOWLEDGE``,
:func:`env_layer`) < ``pyproject.toml [tool.fixlore]`` <
``workspace/configuration`` (section ``fixlore``) < ``initializationOptions``
(under the ``fixlore`` key) < CLI flags. :func:`merge_layers` implements it as
a pure function. One refinement, in :mod:`fixlore.lsp.lifecycle`: a setting the
user changes while the session runs (a later ``workspace/configuration``
answer) wins over the value the editor sent in
``initializationOptions``. Invalid values never stop the server: :func:`parse_config`
keeps the defaults for what it cannot use and returns the problems, which the
server reports to the user once.

On the wire keys are camelCase (``manualFixPauseMs``); in Python snake_case.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

LOG_LEVELS = ("error", "warning", "info", "debug")


@dataclass(frozen=True, slots=True)
class UpstreamConfig:
    """One upstream language server fixlore starts and fronts."""

    command: tuple[str, ...]
    """The command line, e.g. ``("ruff", "server")``."""
    name: str = ""
    """A short name for messages and logs; defaults to the executable's name."""
    initialization_options: Any = None
    """Sent to this upstream as its ``initializationOptions`` (overrides the editor's)."""
    settings: Any = None
    """Answers this upstream's ``workspace/configuration`` requests (overrides the editor's)."""

    @property
    def label(self) -> str:
        """The name shown to the user."""
        return self.name or Path(self.command[0]).name


def upstream_ids(upstreams: Mapping[str, Sequence[UpstreamConfig]]) -> list[tuple[str, str, UpstreamConfig]]:
    """A stable id for each configured upstream, in configuration order: ``(id, language, config)``.

    The id is ``language:label``, with ``#2``, ``#3``, ... for a repeated one. The
    early front (:mod:`~fixlore.lsp.transport.early`) and the proxy both use it.
    """
    out: list[tuple[str, str, UpstreamConfig]] = []
    seen: dict[str, int] = {}
    for language, configs in upstreams.items():
        for config in configs:
            base = f"{language}:{config.label}"
            seen[base] = seen.get(base, 0) + 1
            out.append((base if seen[base] == 1 else f"{base}#{seen[base]}", language, config))
    return out


@dataclass(frozen=True, slots=True)
class FixloreConfig:
    """Every setting of fixlore, with its default."""

    upstreams: Mapping[str, tuple[UpstreamConfig, ...]] = field(default_factory=dict)
    """Upstream servers per LSP language id."""
    learning: bool = True
    """Learn from accepted and hand-made fixes. Off: nothing is written."""
    workspace_knowledge: bool = False
    """Also keep knowledge in the workspace's ``.fixlore/`` folder (a team may commit it)."""
    base_knowledge: bool = True
    """Use the base knowledge shipped with fixlore."""
    log_level: str = "info"
    """One of error, warning, info, debug. Logs never carry code."""
    diagnostics_debounce_ms: int = 250
    """Wait this long after the last change before publishing syntax diagnostics."""
    manual_fix_pause_ms: int = 2000
    """A vanished diagnostic counts as fixed by hand after this pause (or a save)."""
    format_fixes: bool = True
    """Quick fixes come out formatted by the document's upstream (``ruff format`` for Python, ``biome format``) where
    the code they touch already is, when the editor resolves actions' edits (:mod:`fixlore.lsp.actions.formatting`)."""
    upstream_timeout_ms: int = 3000
    """Per-request timeout for upstream servers; past it fixlore answers with what it has."""
    team_knowledge: str = ""
    """The team store: a PostgreSQL connection string, URI or libpq service name; empty: none.
    Never with a password (libpq reads it from ``.pgpass``, ``PGPASSFILE`` or the environment).
    Also ``FIXLORE_TEAM_KNOWLEDGE``, which every other layer overrides (:func:`env_layer`)."""
    team_min_workspaces: int = 3
    """A team pattern is trusted once seen in this many distinct workspaces ..."""
    team_min_approvals: int = 2
    """... or approved by this many reviewers (and rejected by none)."""


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_FIELDS = {f.name: f for f in dataclasses.fields(FixloreConfig)}


def merge_layers(*layers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge raw settings layers, later ones winning, key by key.

    Keys may be camelCase or snake_case. ``upstreams`` merges per language: a
    later layer that names a language replaces that language's list only.
    """
    merged: dict[str, Any] = {}
    for layer in layers:
        if not layer:
            continue
        for key, value in layer.items():
            name = _snake(str(key))
            if name == "upstreams" and isinstance(value, Mapping) and isinstance(merged.get(name), Mapping):
                merged[name] = {**merged[name], **value}
            else:
                merged[name] = value
    return merged


def parse_config(raw: Mapping[str, Any]) -> tuple[FixloreConfig, list[str]]:
    """Turn merged raw settings into a config; bad values fall back to defaults.

    Returns the config and a list of human-readable problems (empty if none).
    """
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = _snake(str(key))
        spec = _FIELDS.get(name)
        if spec is None:
            problems.append(f"unknown setting `{_camel(name)}` (ignored)")
            continue
        try:
            values[name] = _coerce(name, value)
        except ValueError as exc:
            problems.append(f"setting `{_camel(name)}`: {exc}; using the default")
    return FixloreConfig(**values), problems


def _coerce(name: str, value: Any) -> Any:
    if name == "upstreams":
        return _parse_upstreams(value)
    if name in ("learning", "workspace_knowledge", "base_knowledge", "format_fixes"):
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {type(value).__name__}")
        return value
    if name == "log_level":
        if not isinstance(value, str) or value.lower() not in LOG_LEVELS:
            raise ValueError(f"expected one of {', '.join(LOG_LEVELS)}")
        return value.lower()
    if name == "team_knowledge":
        if not isinstance(value, str):
            raise ValueError(f"expected a connection string or a service name, got {type(value).__name__}")
        from fixlore.knowledge import team_conninfo  # here: the knowledge modules cost `serve` ~0.1 s at start

        return team_conninfo(value)
    if name in ("team_min_workspaces", "team_min_approvals"):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
            raise ValueError("expected a whole number from 1 to 1000")
        return value
    if name.endswith("_ms"):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 600_000:
            raise ValueError("expected a whole number of milliseconds from 0 to 600000")
        return value
    raise ValueError("not a setting")  # pragma: no cover - _FIELDS guards this


def _parse_upstreams(value: Any) -> dict[str, tuple[UpstreamConfig, ...]]:
    if not isinstance(value, Mapping):
        raise ValueError("expected an object mapping a language id to a list of servers")
    out: dict[str, tuple[UpstreamConfig, ...]] = {}
    for language, servers in value.items():
        if isinstance(servers, (str, Mapping)):
            servers = [servers]
        if not isinstance(servers, Sequence):
            raise ValueError(f"upstreams for `{language}` must be a list")
        out[str(language)] = tuple(_parse_upstream(str(language), s) for s in servers)
    return out


def _parse_upstream(language: str, spec: Any) -> UpstreamConfig:
    if isinstance(spec, str):
        spec = {"command": spec}
    if not isinstance(spec, Mapping):
        raise ValueError(f"an upstream for `{language}` must be a command or an object")
    command = spec.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if not isinstance(command, Sequence) or not command or not all(isinstance(c, str) and c for c in command):
        raise ValueError(f"an upstream for `{language}` needs a non-empty `command`")
    name = spec.get("name", "")
    if not isinstance(name, str):
        raise ValueError(f"upstream `name` for `{language}` must be a string")
    return UpstreamConfig(
        command=tuple(command),
        name=name,
        initialization_options=spec.get("initializationOptions", spec.get("initialization_options")),
        settings=spec.get("settings"),
    )


def parse_upstream_flag(flag: str) -> tuple[str, dict[str, Any]]:
    """Parse a CLI ``--upstream LANG='CMD ARGS'`` value into (language, raw spec)."""
    language, sep, command = flag.partition("=")
    if not sep or not language.strip() or not command.strip():
        raise ValueError(f"--upstream expects LANGUAGE='COMMAND ...', got {flag!r}")
    return language.strip(), {"command": shlex.split(command)}


TEAM_ENV = "FIXLORE_TEAM_KNOWLEDGE"


def env_layer(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Settings from the environment, the lowest layer above the defaults: ``FIXLORE_TEAM_KNOWLEDGE``."""
    env = os.environ if environ is None else environ
    value = env.get(TEAM_ENV, "")
    return {"teamKnowledge": value} if value.strip() else {}


def read_pyproject(root: Path | None) -> dict[str, Any]:
    """The ``[tool.fixlore]`` table of ``root/pyproject.toml``, or ``{}``."""
    if root is None:
        return {}
    path = root / "pyproject.toml"
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        logger.warning("cannot read [tool.fixlore] from pyproject.toml: %s", type(exc).__name__)
        return {}
    table = data.get("tool", {}).get("fixlore", {})
    return table if isinstance(table, dict) else {}


def split_init_options(options: Any) -> tuple[dict[str, Any], Any]:
    """Split the editor's ``initializationOptions`` into fixlore's part and the rest.

    fixlore's own settings live under a ``fixlore`` key; everything else is
    the editor's options for the upstream servers and passes on unchanged.
    """
    if not isinstance(options, dict):
        return {}, options
    ours = options.get("fixlore")
    rest = {k: v for k, v in options.items() if k != "fixlore"}
    return (ours if isinstance(ours, dict) else {}), (rest if rest or "fixlore" not in options else None)
