"""``bench/bench_growth.py`` learns real-fix events step by step and times code actions at each step.

The events here are made up for the test (two kinds of fix, several files each), in the
format of the real-fix sets (``../shared/humanfix/README.md``).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._bench import BENCH, RUFF

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is not installed")]

NAMES = ["alpha", "beta", "gamma", "delta"]


def _event(when: int, before: str, after: str, rule: str, message: str, row: int, col: int, end: int) -> dict:
    rng = {"start": {"row": row, "column": col}, "end": {"row": row, "column": end}}
    return {"time": when, "rule": rule, "message": message, "range": rng, "before": before, "after": after}


def events_file(tmp_path: Path) -> Path:
    events = []
    for i, name in enumerate(NAMES):
        used = f"import os\nimport json\n\n\ndef {name}(value):\n    return json.dumps(value)\n"
        events.append(
            _event(2 * i, used, used.replace("import os\n", ""), "F401", "`os` imported but unused", 1, 8, 10)
        )
        compared = f"def {name}_check(value):\n    if value == None:\n        return 0\n    return 1\n"
        fixed = compared.replace("== None", "is None")
        message = "Comparison to `None` should be `cond is None`"
        events.append(_event(2 * i + 1, compared, fixed, "E711", message, 2, 14, 16))
    path = tmp_path / "events.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in events)
    return path


_STEP = re.compile(r"^\s*(\d+) patterns \((\d+) fixes learned\), learned fixes offered (\d+):$")
_ROW = re.compile(
    r"^\s*(first lightbulb|asked again|cursor over them)\s+p50 / p90 / p99 "
    r"(\S+) / (\S+) / (\S+) against (\S+) / (\S+) / (\S+)"
)


def test_each_step_learns_more_and_times_both_paths(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_growth.py"), "--events", str(events_file(tmp_path)), "--step", "1"]
        + ["--files", "4", "--diagnostics", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    steps = [(int(m.group(1)), int(m.group(2)), int(m.group(3))) for line in lines if (m := _STEP.match(line))]
    rows = [m for line in lines if (m := _ROW.match(line))]
    assert [patterns for patterns, _, _ in steps[:3]] == [0, 1, 2]  # one pattern per kind of fix, learned in turn
    learned = [fixes for _, fixes, _ in steps]
    assert learned[0] == 0 and learned == sorted(learned) and learned[-1] >= 2  # more fixes learned at each step
    assert steps[-1][2] > 0  # learned fixes offered on the workload's files
    assert len(rows) == 3 * len(steps)
    for row in rows:
        ours, alone = list(map(float, row.groups()[1:4])), list(map(float, row.groups()[4:7]))
        assert 0 < ours[0] <= ours[1] <= ours[2] and 0 < alone[0] <= alone[1] <= alone[2]
    assert "8 real fixes" in done.stdout
