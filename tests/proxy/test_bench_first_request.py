"""``bench/bench_first_request.py`` runs its four paths on real files and prints a row for each."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._bench import BENCH, RUFF

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is not installed")]

_ROW = re.compile(r"^(ruff|hop floor|fixlore, no learning|fixlore, learning)\s+(first pull|code action)\s+(.*)$")


def test_every_path_answers_the_first_requests_about_each_file() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_first_request.py"), "--files", "4", "--rounds", "1", "--load", "1"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    matched = [m for line in done.stdout.splitlines() if (m := _ROW.match(line))]
    rows = {(m.group(1), m.group(2)): m.group(3).split() for m in matched}
    paths = ("ruff", "hop floor", "fixlore, no learning", "fixlore, learning")
    assert set(rows) == {(p, r) for p in paths for r in ("first pull", "code action")}
    for (path, _), figures in rows.items():
        p50, p90, p99, added50, _added90, _added99 = map(float, figures)
        assert 0 < p50 <= p90 <= p99
        if path == "ruff":
            assert added50 == 0.0  # the baseline against itself
    assert "4 files of the standard library" in done.stdout
    assert "1 busy processes beside" in done.stdout
