"""The dashboard after a real learning session (fixlore serve + ruff server): what it shows, and what it never does.

The session plants identifiers, strings and comments (the privacy end-to-end
test's source), accepts ruff's fixes from invoked lists and fixes an undefined
name by hand; the page must show those choices and the learned fix as an
abstract shape, and none of the planted text, the workspace's path or its hash.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fixlore_command
from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand
from tests.learning.test_privacy_e2e import PLANTED, planted_source

from ._browser import choose, chromium_path, series, shown, with_page
from ._recompute import assert_kept_equals_full

pytestmark = pytest.mark.e2e

WORKSPACE_NAME = "qwertyplantedworkspacedir"


def hand_source(k: int) -> str:
    """Planted code with an undefined ``os``: fixed by hand by adding the import."""
    return (
        f"# plantedcommentmarker {k}\n"
        f"def zorblaxQuuxident_{k}(veltrannic_customer_ssn):\n"
        '    token = "hunter2-planted-secret"\n'
        "    return os.getcwd(), token, veltrannic_customer_ssn\n"
    )


async def _session(root: Path, home: Path) -> None:
    async with Editor(root, env={"FIXLORE_HOME": str(home)}) as editor:
        for k in range(3):
            uri = editor.open(f"p{k}.py", planted_source(k))
            for code in ("F401", "E711"):
                diag = await editor.diagnostic(uri, code)
                actions = await editor.code_actions(uri, diag)
                await editor.apply(actions[k % 2] if code == "F401" else actions[0])
                await editor.gone(uri, code)
        for k in range(3):
            await fix_by_hand(
                editor, f"h{k}.py", hand_source(k), "F821", lambda uri: editor.insert(uri, 0, "import os\n\n\n")
            )
        await editor.until_stats(lambda s: s["counts"]["manual"] >= 3 and s["counts"]["accepted"] >= 6)
        # What the VS Code command shows in its webview: the server's own page.
        result = await editor.execute("fixlore.dashboard", [{"cspSource": "https://webview.test"}])
        (root.parent / "server.html").write_text(result["html"], encoding="utf-8")


@pytest.fixture(scope="module")
def session_dashboard(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("dashboard-session")
    home, root = base / "home", base / WORKSPACE_NAME
    home.mkdir()
    root.mkdir()
    asyncio.run(_session(root, home))
    env = {**os.environ, "FIXLORE_HOME": str(home)}
    page = base / "session.html"
    for args in (["-o", str(page)], ["--json", "-o", str(base / "session.json")]):
        proc = subprocess.run(
            fixlore_command("dashboard", "--workspace", str(root), *args), env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
    return {"page": page, "json": base / "session.json", "server": base / "server.html", "root": root, "home": home}


def test_the_page_shows_the_sessions_choices_and_learned_fix(session_dashboard: dict[str, Any]) -> None:
    chromium_path()

    def check(page: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"decisions": series(page, "chart-decisions"), "effect": series(page, "chart-effect")}
        out["all"] = shown(page)
        out["user"] = choose(page, "#f-scope", "1")
        out["rules"] = page.locator("#rules-table tbody tr").evaluate_all("(rows) => rows.map(r => r.dataset.rule)")
        out["fixes"] = choose(page, "#f-kind", "fix")
        cards = page.locator("#fixes .fix")
        out["shapes"] = [
            (cards.nth(i).locator("pre.before").inner_text(), cards.nth(i).locator("pre.after").inner_text())
            for i in range(cards.count())
        ]
        out["titles"] = [cards.nth(i).locator("h3").inner_text() for i in range(cards.count())]
        return out

    got, _ = with_page(session_dashboard["page"], "learning-session", check)
    accepted, rejected, by_hand = got["decisions"]["totals"]
    assert accepted >= 6 and by_hand >= 3
    assert rejected >= 1  # invoked lists: the siblings of each choice
    assert got["effect"]["points"][1] >= 1  # lists decided this week: the already-first share has a point
    assert 0 < got["user"] < got["all"]  # base knowledge is there too
    assert {"Ruff F401", "Ruff E711"} <= set(got["rules"])
    assert got["fixes"] >= 1
    assert any("F821" in t for t in got["titles"]), got["titles"]
    # An insertion into the import block: nothing before, an import after (generalised to a hole of stdlib modules).
    assert ("(nothing)", "import $H1") in got["shapes"] or ("(nothing)", "import os") in got["shapes"], got["shapes"]


def test_nothing_planted_reaches_the_page_or_its_data(session_dashboard: dict[str, Any]) -> None:
    root: Path = session_dashboard["root"]
    for name in ("page", "json", "server"):
        text = session_dashboard[name].read_text(encoding="utf-8")
        assert [p for p in PLANTED if p in text] == [], name
        assert WORKSPACE_NAME not in text and str(root) not in text and str(session_dashboard["home"]) not in text
    data = json.loads(session_dashboard["json"].read_text(encoding="utf-8"))
    assert data["store"]["patterns"] >= 3
    # The workspace is stored only as a salted hash; not even that reaches the page.
    import sqlite3

    conn = sqlite3.connect(session_dashboard["home"] / "knowledge.sqlite3")
    hashes = {w for (w,) in conn.execute("SELECT DISTINCT workspace FROM events")}
    conn.close()
    assert hashes and not any(h in session_dashboard["page"].read_text(encoding="utf-8") for h in hashes)


def test_the_servers_dashboard_command_gives_the_same_page(session_dashboard: dict[str, Any]) -> None:
    chromium_path()
    import html as html_lib

    page = html_lib.unescape(session_dashboard["server"].read_text(encoding="utf-8"))
    assert "img-src data: https://webview.test;" in page and "default-src 'none'; script-src 'nonce-" in page

    def check(page: Any) -> tuple[int, list[int]]:
        return shown(page), series(page, "chart-decisions")["totals"]

    (n, decisions), _ = with_page(session_dashboard["server"], "server-command", check)
    assert n > 0 and decisions[0] >= 6 and decisions[2] >= 3


def test_the_aggregates_kept_during_the_session_equal_a_replay_of_its_log(session_dashboard: dict[str, Any]) -> None:
    # The server's writer kept dash_trend and dash_effect as it wrote; nothing replayed the log since.
    lists = assert_kept_equals_full(session_dashboard["home"] / "knowledge.sqlite3")
    data = json.loads(session_dashboard["json"].read_text(encoding="utf-8"))
    assert lists == data["store"]["lists"] >= 6
