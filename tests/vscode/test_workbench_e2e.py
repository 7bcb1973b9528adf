"""The VS Code extension in a real VS Code: code-server's workbench in headless Chromium.

The packaged ``.vsix`` is installed into code-server as a user installs it;
fixlore (``fixlore serve``, fronting ``ruff server``) comes from this
environment's PATH. Each scenario of ``workbench.mjs`` drives its own
workbench with Playwright and checks the DOM; a screenshot of every step is
kept in ``$FIXLORE_E2E_ARTEFACTS`` (default ``/tmp/fixlore-vscode-e2e``).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.vscode._workbench import ARTEFACTS, BIN, CodeServer, Tools, build_vsix, tools

pytestmark = pytest.mark.e2e

FILES = {
    "a.py": "import os\n",
    **{f"p{k}.py": "import os\n" for k in range(1, 5)},
    "m1.py": "def check(value):\n    return value == None\n",
    "m2.py": "def same(value):\n    return value == None\n",
    "m3.py": "def empty(count):\n    return count == None\n",
}


@pytest.fixture(scope="module")
def workbench_tools() -> Tools:
    return tools()


@pytest.fixture(scope="module")
def vsix(workbench_tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_vsix(tmp_path_factory.mktemp("vsix") / "fixlore.vsix")


@pytest.fixture
def workbench(workbench_tools: Tools, vsix: Path, tmp_path: Path) -> Iterator[CodeServer]:
    workspace = tmp_path / "project"
    (workspace / ".vscode").mkdir(parents=True)
    # E711 (`== None`) is not in ruff's default rules; the manual-fix scenario uses it.
    (workspace / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
    for name, text in FILES.items():
        (workspace / name).write_text(text)
    settings = {
        # VS Code's server gives extensions the login shell's PATH, not this one: name the server.
        "fixlore.path": str(BIN / "fixlore"),
        "fixlore.upstreams": {"python": [{"command": [str(BIN / "ruff"), "server"]}]},
        "fixlore.manualFixPauseMs": 300,
    }
    (workspace / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
    server = CodeServer(workbench_tools, vsix, tmp_path, workspace).start()
    try:
        yield server
    finally:
        server.stop()


def drive(workbench: CodeServer, scenario: str) -> str:
    shots = ARTEFACTS / scenario
    shutil.rmtree(shots, ignore_errors=True)
    done = workbench.drive(scenario, shots)
    log = workbench.extension_log()
    assert done.returncode == 0, (
        f"{done.stdout}\n{done.stderr[-4000:]}\n--- fixlore output channel ---\n{log[-3000:]}\n"
        f"--- code-server ---\n{workbench.log_tail()}\nscreenshots: {shots}"
    )
    # Logs editors do not show as errors: at the default level nothing fixlore says is an error
    # (its records arrive as window/logMessage; stderr lines would show as [error] too).
    errors = [
        line for line in log.splitlines() if re.search(r"\[error\].*\bfixlore\.(lsp|knowledge|abstraction)", line)
    ]
    assert errors == [], errors
    return log


def test_ruff_diagnostics_reach_the_problems_panel_through_fixlore(workbench: CodeServer) -> None:
    log = drive(workbench, "diagnostics")
    assert f"Starting {BIN / 'fixlore'} serve" in log, log


def test_a_quick_fix_chosen_three_times_comes_first(workbench: CodeServer) -> None:
    drive(workbench, "preference")


def test_the_palette_commands_explain_list_patterns_and_restart(workbench: CodeServer) -> None:
    log = drive(workbench, "commands")
    assert log.count("Starting ") == 2, log


def test_a_fix_made_by_hand_twice_is_offered_in_a_new_file(workbench: CodeServer) -> None:
    drive(workbench, "manual")


def test_show_dashboard_opens_the_page_in_a_webview(workbench: CodeServer) -> None:
    drive(workbench, "dashboard")
