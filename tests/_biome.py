"""Biome for the TypeScript e2e tests: a pinned ``@biomejs/biome`` installed with npm into ``tests/.npm/``.

The npm package carries Biome's platform binary, so one ``npm install`` (the
only step that needs the registry) gives a working ``biome lsp-proxy``; later
runs reuse the folder. The tests skip only when npm itself is missing; an
install that fails fails the tests, loudly, with npm's output.
"""

from __future__ import annotations

import fcntl
import json
import shlex
import shutil
import subprocess
from pathlib import Path

BIOME_VERSION = "2.6.8"
"""The pinned Biome release the TypeScript e2e tests run against."""

PREFIX = Path(__file__).resolve().parent / ".npm"
"""The project-local npm prefix (gitignored)."""

CONFIG = {
    "linter": {
        "enabled": True,
        "rules": {
            "preset": "none",
            "style": {"useConst": "error", "useTemplate": "error"},
            "suspicious": {"noDoubleEquals": "error"},
        },
    },
}
"""The ``biome.json`` of the tests' workspaces: the rules they use, nothing else."""

USE_CONST = "lint/style/useConst"
NO_DOUBLE_EQUALS = "lint/suspicious/noDoubleEquals"
USE_TEMPLATE = "lint/style/useTemplate"


class NpmMissing(Exception):
    """npm is not on PATH: the Biome tests cannot install Biome."""


def _runs(binary: Path) -> bool:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return out.returncode == 0 and BIOME_VERSION in out.stdout


def _installed() -> Path | None:
    """The pinned Biome's executable in :data:`PREFIX`, if it is there and runs.

    The platform package's own binary (``@biomejs/cli-linux-x64/biome``, …)
    comes first: ``.bin/biome`` is a node script that only finds and starts
    it, one more process in front of the language server.
    """
    modules = PREFIX / "node_modules" / "@biomejs"
    try:
        version = json.loads((modules / "biome" / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        return None
    if version != BIOME_VERSION:
        return None
    native = sorted(p for p in modules.glob("cli-*/biome*") if p.is_file() and p.suffix in ("", ".exe"))
    return next((b for b in [*native, PREFIX / "node_modules" / ".bin" / "biome"] if b.exists() and _runs(b)), None)


def ensure_biome() -> Path:
    """The ``biome`` executable of the pinned version, installed into :data:`PREFIX` if needed.

    Raises :class:`NpmMissing` without npm, and ``RuntimeError`` (npm's output
    in the message) when the install does not give a working Biome.
    """
    PREFIX.mkdir(exist_ok=True)
    with (PREFIX / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs at once install once
        binary = _installed()
        if binary is not None:
            return binary
        npm = shutil.which("npm")
        if npm is None:
            raise NpmMissing("npm is not on PATH")
        command = [
            npm,
            "install",
            "--prefix",
            str(PREFIX),
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"@biomejs/biome@{BIOME_VERSION}",
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        binary = _installed()
        if done.returncode != 0 or binary is None:
            raise RuntimeError(
                f"installing @biomejs/biome@{BIOME_VERSION} with npm failed (exit {done.returncode}):\n"
                f"{done.stdout}\n{done.stderr}"
            )
        return binary


def write_config(root: Path) -> None:
    """Put the tests' ``biome.json`` into the workspace ``root``."""
    (root / "biome.json").write_text(json.dumps(CONFIG, indent=2) + "\n")


def upstream_flags(biome: Path, languages: tuple[str, ...] = ("typescript",)) -> tuple[str, ...]:
    """``--upstream`` values giving ``languages`` to ``biome lsp-proxy`` (one proxy process each)."""
    return tuple(f"{language}={shlex.quote(str(biome))} lsp-proxy" for language in languages)
