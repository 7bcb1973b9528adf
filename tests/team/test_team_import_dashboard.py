"""Team knowledge meets import/export and the dashboard, on a real PostgreSQL.

An import is not an event: what a file brings was learned on another machine,
which publishes it itself, so importing never reaches the team store (and the
same file imported twice changes nothing there either). The dashboard shows the
team's trusted patterns as the ``team`` scope.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from fixlore.abstraction import Scope
from fixlore.knowledge import Event, EventKind, Knowledge
from tests.conftest import fixlore_command

from ..knowledge._patterns import FIX, LEARNED
from ._team_env import TeamEnv
from .test_team_store import learn, team_rows


def test_importing_the_same_export_twice_changes_nothing_locally_or_in_the_team_store(
    team: TeamEnv, tmp_path: Path
) -> None:
    export = tmp_path / "export.json"
    with team.open(tmp_path / "a", "alice", workspace=tmp_path / "wa") as k:
        learn(k, LEARNED, 2)
        learn(k, FIX, 3, EventKind.ACCEPTED)
        assert k.team is not None and k.team.sync().sent == 1
        assert k.export(export) == 2
    published = team_rows(team)
    assert published == {LEARNED.fingerprint: (0, 2, 1), FIX.fingerprint: (3, 0, 1)}

    with team.open(tmp_path / "b", "bob", workspace=tmp_path / "wb") as k:
        assert k.team is not None
        first = k.import_file(export)
        assert (first.imported, first.merged, first.unchanged) == (2, 0, 0)
        report = k.team.sync()
        assert (report.error, report.enqueued, report.sent) == (None, 0, 0)  # nothing of the import is sent
        second = k.import_file(export)
        assert (second.imported, second.merged, second.unchanged) == (0, 0, 2)
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 3
        report = k.team.sync()
        assert (report.error, report.enqueued, report.sent) == (None, 0, 0)
        # Bob's own events after the imports are published, and only they.
        k.record(Event(EventKind.ACCEPTED, FIX, k.workspace_id, time.time()))
        k.flush()
        assert k.team.sync().sent == 1
    assert team_rows(team) == {LEARNED.fingerprint: (0, 2, 1), FIX.fingerprint: (4, 0, 2)}


def dashboard_json(home: Path, *args: str) -> tuple[dict, str]:
    env = {**os.environ, "FIXLORE_HOME": str(home)}
    env.pop("FIXLORE_TEAM_KNOWLEDGE", None)
    proc = subprocess.run(
        fixlore_command("dashboard", "--json", "--no-base", *args), env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def scopes_of(data: dict) -> dict[str, str]:
    """Pattern id (the page's 12-digit prefix) -> scope name, as the page reads them."""
    cols = data["patterns"]
    return {fp: data["scopes"][s] for fp, s in zip(cols["id"], cols["scope"], strict=True)}


def test_the_dashboard_shows_the_teams_trusted_patterns_as_the_team_scope(team: TeamEnv, tmp_path: Path) -> None:
    for i, who in enumerate(["alice", "bob", "alice"]):
        with team.open(tmp_path / f"h{i}", who, workspace=tmp_path / f"ws{i}") as k:
            learn(k, LEARNED, 1)
            if i == 0:
                learn(k, FIX, 1, EventKind.ACCEPTED)  # one workspace only: a candidate, not shown
            assert k.team is not None and k.team.sync().sent == 1
    reader = tmp_path / "reader"
    with Knowledge.open(reader, base=False, auto_prune=False) as k:
        learn(k, FIX, 2, EventKind.ACCEPTED)  # the reader's own store: user scope

    data, err = dashboard_json(reader, "--team", team.url("bob"))
    assert err == ""
    assert scopes_of(data) == {LEARNED.fingerprint[:12]: Scope.TEAM.value, FIX.fingerprint[:12]: Scope.USER.value}

    data, _ = dashboard_json(reader, "--team", team.url("bob"), "--no-team")
    assert scopes_of(data) == {FIX.fingerprint[:12]: Scope.USER.value}

    # A team store that does not answer: the page is still made, without the team scope, and it says why.
    data, err = dashboard_json(reader, "--team", "host=127.0.0.1 port=1 dbname=x connect_timeout=2")
    assert scopes_of(data) == {FIX.fingerprint[:12]: Scope.USER.value}
    assert "team scope is left out" in err and "cannot" in err
