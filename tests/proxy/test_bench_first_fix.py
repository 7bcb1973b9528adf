"""``bench/bench_first_fix.py`` starts each path on a fresh store and times its first quick-fix menu."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._bench import BENCH, RUFF

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is not installed")]

_ROW = re.compile(
    r"^\s+(ruff|fixlore)\s+p50\s+([\d.]+) ms\s+max\s+([\d.]+) ms\s+learned fix in the menu (\d+) of (\d+)$"
)


def test_a_sessions_first_menu_is_timed_and_holds_the_base_knowledge_fix_through_fixlore_only() -> None:
    # 4 s: the server loads its parts and opens the store in the first ~1-1.5 s (longer on a busy machine).
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_first_fix.py"), "--runs", "1", "--think", "4"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {m.group(1): m.groups()[1:] for line in done.stdout.splitlines() if (m := _ROW.match(line))}
    assert set(rows) == {"ruff", "fixlore"}, done.stdout
    for p50, top, _learned, runs in rows.values():
        assert 0 < float(p50) <= float(top) and runs == "1"
    assert rows["fixlore"][2] == "1"  # the UP031 `%d` fix only the base knowledge has
    assert rows["ruff"][2] == "0"
    assert "4.00 s after the file opened (1 runs each)" in done.stdout
