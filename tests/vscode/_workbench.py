"""A real VS Code for the end-to-end suite: code-server (VS Code's workbench from npm) and Chromium.

:func:`tools` finds what ``tests/vscode/install.sh`` installed (``.ci/run``
runs it) and Debian's Chromium; under CI a missing tool fails the suite
instead of skipping it. :func:`build_vsix` packages the extension from
``vscode-client/`` as a user's VS Code would install it. :class:`CodeServer`
runs one code-server with its own user data, extensions and knowledge home,
with the packaged extension installed, on a free port; the scenarios in
``workbench.mjs`` drive it with Playwright.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PREFIX = REPO / "tests" / ".npm" / "vscode-e2e"
CLIENT = REPO / "vscode-client"
BIN = Path(sys.executable).parent
ARTEFACTS = Path(os.environ.get("FIXLORE_E2E_ARTEFACTS", "/tmp/fixlore-vscode-e2e"))
"""Where each step's screenshot is kept (the README names it)."""


@dataclass(frozen=True)
class Tools:
    code_server: Path
    chromium: Path
    node: Path


def missing(what: str) -> None:
    """Fail under CI (which installs everything), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI installs it: bash tests/vscode/install.sh, see .ci/run)")
    pytest.skip(what)


def tools() -> Tools:
    code_server = PREFIX / "node_modules" / ".bin" / "code-server"
    if not code_server.exists():
        missing("code-server is not installed: bash tests/vscode/install.sh")
    if not (PREFIX / "node_modules" / "playwright-core").is_dir():
        missing("playwright-core is not installed: bash tests/vscode/install.sh")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        missing("chromium is not installed: apt-get install chromium")
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        missing("node and npm are not installed")
    return Tools(code_server, Path(chromium), Path(node))  # type: ignore[arg-type]


def build_vsix(out: Path) -> Path:
    """Compile and package the extension (``vsce package``) into ``out``."""
    npm = shutil.which("npm")
    assert npm is not None
    env = {**os.environ, "npm_config_yes": "true"}
    steps = [
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        [npm, "run", "-s", "compile"],
        [npm, "exec", "--no", "--", "vsce", "package", "--out", str(out)],
    ]
    if (CLIENT / "node_modules" / ".package-lock.json").exists():
        steps = steps[1:]  # installed already (run-tests.sh, or an earlier run)
    for step in steps:
        done = subprocess.run(
            step, cwd=CLIENT, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0, f"{' '.join(step[1:3])} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class CodeServer:
    """One code-server serving ``workspace`` with the fixlore extension installed."""

    tools: Tools
    vsix: Path
    root: Path
    workspace: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.root / "user-data"

    @property
    def extensions(self) -> Path:
        return self.root / "extensions"

    @property
    def fixlore_home(self) -> Path:
        return self.root / "fixlore-home"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.workspace}"

    def start(self) -> CodeServer:
        home = self.root / "home"
        for d in (self.data / "User", self.extensions, self.fixlore_home, home):
            d.mkdir(parents=True, exist_ok=True)
        (self.data / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2))
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "FIXLORE_HOME": str(self.fixlore_home),
            # fixlore and ruff from this environment, as a user's PATH has them.
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        self.env.pop("VSCODE_IPC_HOOK_CLI", None)
        base = [str(self.tools.code_server), "--user-data-dir", str(self.data)]
        base += ["--extensions-dir", str(self.extensions)]
        done = subprocess.run(
            [*base, "--install-extension", str(self.vsix)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0 and "successfully installed" in done.stdout, done.stdout + done.stderr
        self.port = free_port()
        log = (self.root / "code-server.log").open("wb")
        self.process = subprocess.Popen(
            [
                *base,
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{self.port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                str(self.workspace),
            ],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.wait_healthy()
        return self

    def wait_healthy(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process is not None and self.process.poll() is None, self.log_tail()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"code-server did not answer within {timeout:.0f} s\n{self.log_tail()}")
            time.sleep(0.2)  # polling a port that is not yet listening, not a wait for an effect

    def log_tail(self) -> str:
        path = self.root / "code-server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def extension_log(self) -> str:
        """What the fixlore output channel holds (a LogOutputChannel writes it to a file)."""
        logs = sorted((self.data / "logs").glob("**/fixlore.log"))
        return "\n".join(p.read_text(errors="replace") for p in logs)

    def stop(self) -> None:
        """Stop code-server and everything it started (its own process group: extension host, fixlore, ruff)."""
        if self.process is None:
            return
        group = self.process.pid  # start_new_session: the group's id is code-server's pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        self.process.wait()

    def drive(self, scenario: str, shots: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """Run one scenario of ``workbench.mjs`` against this workbench."""
        shots.mkdir(parents=True, exist_ok=True)
        env = {
            **self.env,
            "NODE_PATH": str(PREFIX / "node_modules"),
            "CHROMIUM": str(self.tools.chromium),
            "WORKBENCH_URL": self.url,
            "WORKSPACE": str(self.workspace),
            "SHOTS": str(shots),
        }
        return subprocess.run(
            [str(self.tools.node), str(Path(__file__).with_name("workbench.mjs")), scenario],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "security.workspace.trust.enabled": False,
    "files.autoSave": "off",
    "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
    "editor.suggestOnTriggerCharacters": False,
    "editor.autoClosingBrackets": "never",
    "editor.autoClosingQuotes": "never",
    "editor.autoIndent": "none",
    "editor.formatOnType": False,
    "editor.acceptSuggestionOnEnter": "off",
    "editor.lightbulb.enabled": "off",
    "chat.commandCenter.enabled": False,
    "window.commandCenter": False,
    "git.enabled": False,
}
