"""``bench/bench_formatted_fixes.py`` runs its three paths on real files, as they are and formatted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._bench import BENCH, RUFF

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is not installed")]

_ROW = re.compile(r"^(ruff|fixlore, off|fixlore, on)\s+(code action|resolve)\s+(.*)$")
_FILES = re.compile(r"^(\d+) files with a fix \((as they are|formatted whole first)\); the formatter changed (\d+) of")


def test_each_path_answers_and_resolves_a_fix_of_each_file() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_formatted_fixes.py"), "--files", "6"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    runs = [m.groups() for line in done.stdout.splitlines() if (m := _FILES.match(line))]
    assert [layout for _, layout, _ in runs] == ["as they are", "formatted whole first"]
    assert all(0 < int(files) <= 6 and 0 <= int(changed) <= int(files) for files, _, changed in runs)
    rows = [m.groups() for line in done.stdout.splitlines() if (m := _ROW.match(line))]
    assert len(rows) == 2 * 6  # per layout: three paths, code action and resolve
    for path, request, figures in rows:
        p50, p90, p99, added50, _added90, _added99 = map(float, figures.split())
        assert 0 < p50 <= p90 <= p99
        if (path, request) in (("ruff", "code action"), ("fixlore, off", "resolve")):
            assert added50 == 0.0  # each request's baseline against itself
