"""``fixlore knowledge ...``: tables, --json, exit codes scripts can rely on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.knowledge.cli import main

from ._patterns import FIX, LEARNED, NOQA


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A store with three patterns."""
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        now = time.time()
        for kind in (EventKind.ACCEPTED, EventKind.ACCEPTED, EventKind.SUCCEEDED):
            k.record(Event(kind, FIX, "w1", now))
        k.record(Event(EventKind.REJECTED, NOQA, "w1", now))
        k.record(Event(EventKind.MANUAL, LEARNED, "w1", now))
    return tmp_path


def cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process; exit code, stdout, stderr."""
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_list_table_and_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli("knowledge", "list", "--home", str(home), "--no-base", capsys=capsys)
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:3] == ["ID", "SCOPE", "LANG"]
    assert len(rows) == 3 and all(r.startswith(tuple(p.fingerprint[:12] for p in (FIX, NOQA, LEARNED))) for r in rows)
    code, out, _ = cli("knowledge", "list", "--home", str(home), "--no-base", "--json", capsys=capsys)
    data = {d["id"]: d for d in json.loads(out)}
    assert data[FIX.fingerprint]["counts"]["accepted"] == 2
    assert data[LEARNED.fingerprint]["kind"] == "fix"
    code, out, _ = cli("knowledge", "list", "--home", str(home), "--no-base", "--language", "go", capsys=capsys)
    assert (code, out) == (0, "no patterns\n")  # an empty list is an answer, not an error


def test_show_stats_and_not_found(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli("knowledge", "show", FIX.fingerprint[:10], "--home", str(home), capsys=capsys)
    assert code == 0 and "accepted 2" in out and "Replace with" in out and "trend" in out
    code, out, _ = cli("knowledge", "show", LEARNED.fingerprint, "--home", str(home), "--json", capsys=capsys)
    assert json.loads(out)["pattern"]["shape"]["after"] == "$1 is None"
    code, _, err = cli("knowledge", "show", "ffffffffff", "--home", str(home), capsys=capsys)
    assert code == 1 and "no pattern" in err
    code, out, _ = cli("knowledge", "stats", "--home", str(home), "--json", capsys=capsys)
    assert code == 0 and json.loads(out)["patterns"] == 3 and json.loads(out)["events"] == 5


def test_prune_dry_run_then_export_import_forget_reset(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli("knowledge", "prune", "--dry-run", "--home", str(home), capsys=capsys)
    assert code == 0 and "would archive 0 patterns" in out  # nothing to do is success
    out_file = tmp_path / "x.json"
    code, out, _ = cli(
        "knowledge", "export", "-o", str(out_file), "--min-uses", "2", "--home", str(home), "--json", capsys=capsys
    )
    assert code == 0 and json.loads(out)["count"] == 1
    code, out, _ = cli("knowledge", "export", "--min-uses", "-1", "--home", str(home), capsys=capsys)
    assert code == 2
    other = tmp_path / "other"
    code, out, _ = cli("knowledge", "import", str(out_file), "--home", str(other), "--json", capsys=capsys)
    assert code == 0 and json.loads(out) == {"imported": 1, "merged": 0, "unchanged": 0}
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fixlore-knowledge", "version": 1, "patterns": [{}]}')
    code, _, err = cli("knowledge", "import", str(bad), "--home", str(other), capsys=capsys)
    assert code == 3 and "nothing was changed" in err and "patterns[0]: missing field" in err
    code, out, _ = cli("knowledge", "forget", NOQA.fingerprint, "--home", str(home), capsys=capsys)
    assert code == 0
    code, out, _ = cli("knowledge", "forget", NOQA.fingerprint, "--home", str(home), capsys=capsys)
    assert code == 1
    code, _, err = cli("knowledge", "reset", "--home", str(home), capsys=capsys)
    assert code == 2 and "--yes" in err
    code, _, _ = cli("knowledge", "reset", "--yes", "--home", str(home), capsys=capsys)
    assert code == 0
    code, out, _ = cli("knowledge", "stats", "--home", str(home), "--json", capsys=capsys)
    assert json.loads(out)["patterns"] == 0


def test_usage_error_and_store_error_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("knowledge", "frobnicate", capsys=capsys)[0] == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "knowledge.sqlite3").write_bytes(b"this is not a database" * 100)
    code, _, err = cli("knowledge", "stats", "--home", str(broken), capsys=capsys)
    assert code == 4 and "store" in err


def test_runs_as_a_module(home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fixlore.knowledge.cli", "knowledge", "stats", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "(3 learned, 0 workspace" in proc.stdout
