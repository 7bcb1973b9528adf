"""Suite-wide fixtures: every test gets its own knowledge home; e2e tests run last."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """End-to-end tests run after the fast layers (STYLE.md)."""
    items.sort(key=lambda item: 1 if item.get_closest_marker("e2e") else 0)


@pytest.fixture(autouse=True)
def fixlore_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private FIXLORE_HOME so no test touches the user's real knowledge."""
    home = tmp_path_factory.mktemp("fixlore-home")
    monkeypatch.setenv("FIXLORE_HOME", str(home))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    yield home


def fixlore_command(*args: str) -> list[str]:
    """The command that starts fixlore from this environment."""
    return [str(BIN / "fixlore"), *args]


def stored_events() -> int:
    """How many events the user store holds, as ``fixlore knowledge stats --json`` says (a real process)."""
    import json
    import subprocess

    stats = subprocess.run(
        fixlore_command("knowledge", "stats", "--json"),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    return int(json.loads(stats.stdout)["events"])


def import_elsewhere(export: Path, home: Path) -> dict[str, int]:
    """``fixlore knowledge import EXPORT --json`` into another, empty home (a real process); its report."""
    import json
    import subprocess

    done = subprocess.run(
        fixlore_command("knowledge", "import", str(export), "--json", "--home", str(home)),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, int] = json.loads(done.stdout)
    return report


@pytest.fixture(scope="session")
def biome() -> Path:
    """The pinned Biome, installed with npm into tests/.npm/ once (skips only without npm)."""
    from tests._biome import NpmMissing, ensure_biome

    try:
        return ensure_biome()
    except NpmMissing:
        pytest.skip("npm is not installed: the Biome tests need it to install @biomejs/biome")
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
