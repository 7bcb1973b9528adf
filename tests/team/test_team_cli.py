"""`fixlore team init|add-member|status|sync|review|approve|reject` against a real PostgreSQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.lsp.tools.cli import main

from ..knowledge._patterns import LEARNED
from ._postgres import Postgres
from ._team_env import TeamEnv


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_init_then_add_member_as_the_owner(
    postgres: Postgres, team_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = postgres.url(dbname=team_db)
    assert run(capsys, "team", "init", "--url", url, "--json")[:2] == (0, '{"applied": [1, 2]}\n')
    assert run(capsys, "team", "init", "--url", url, "--json")[:2] == (0, '{"applied": []}\n')
    role = postgres.add_role("cli_member_" + team_db[-6:])
    code, out, _ = run(capsys, "team", "add-member", role, "--team", "web", "--url", url, "--json")
    assert code == 0 and json.loads(out)["team"] == "web"
    code, out, _ = run(capsys, "team", "status", "--url", postgres.url(role, team_db), "--json")
    assert code == 0 and json.loads(out)["team"] == "web"


def test_sync_review_approve_reject(
    team: TeamEnv, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Knowledge.open(tmp_path / "h", workspace_root=tmp_path / "ws", base=False, auto_prune=False) as k:
        for _ in range(2):
            k.record(Event(EventKind.MANUAL, LEARNED, k.workspace_id, time.time()))
    # The store from the environment variable, as a user would configure it.
    monkeypatch.setenv("FIXLORE_TEAM_KNOWLEDGE", team.url("alice"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "team", "sync", "--home", str(tmp_path / "h"), "--json")
    report = json.loads(out)
    assert code == 0 and (report["sent"], report["pending"], report["pulled"], report["trusted"]) == (1, 0, 1, 0)

    code, out, _ = run(capsys, "team", "review", "--json")
    (row,) = json.loads(out)["patterns"]
    assert code == 0 and row["id"] == LEARNED.fingerprint and row["state"] == "candidate" and row["uses"] == 2

    code, _, err = run(capsys, "team", "approve", LEARNED.fingerprint[:8])
    assert code == 4 and "refused" in err  # a member may not approve
    for who in ("rita", "ruth"):
        assert run(capsys, "team", "approve", LEARNED.fingerprint[:8], "--url", team.url(who))[0] == 0
    code, out, _ = run(capsys, "team", "review", "--json")
    assert json.loads(out)["patterns"][0]["state"] == "trusted"
    assert run(capsys, "team", "reject", LEARNED.fingerprint, "--url", team.url("rita"))[0] == 0
    code, out, _ = run(capsys, "team", "review")
    assert "rejected" in out and LEARNED.fingerprint[:10] in out
    assert run(capsys, "team", "approve", "ffff", "--url", team.url("rita"))[0] == 1


def test_no_store_configured_or_a_password_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FIXLORE_TEAM_KNOWLEDGE", raising=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "team", "status")
    assert code == 2 and "no team store" in err
    code, _, err = run(capsys, "team", "status", "--url", "host=db password=hunter2")
    assert code == 2 and "password" in err and "hunter2" not in err
    (tmp_path / "pyproject.toml").write_text('[tool.fixlore]\nteamKnowledge = "host=127.0.0.1 port=1 dbname=x"\n')
    code, _, err = run(capsys, "team", "status")
    assert code == 4 and "cannot connect" in err


def test_doctor_checks_the_team_connection(team: TeamEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fixlore.lsp.tools.doctor import run_doctor

    monkeypatch.setenv("FIXLORE_TEAM_KNOWLEDGE", team.url("zoe"))
    lines: list[str] = []
    run_doctor({}, out=lines.append, cwd=tmp_path)
    assert any("team B: 0 patterns" in line for line in lines)
    monkeypatch.setenv("FIXLORE_TEAM_KNOWLEDGE", "host=127.0.0.1 port=1 dbname=x")
    lines.clear()
    assert run_doctor({}, out=lines.append, cwd=tmp_path) == 1
    assert any("team knowledge: cannot connect" in line for line in lines)
