"""Real fixlore servers share a hand-made fix through a real PostgreSQL team store.

Three servers, each with its own knowledge home and workspace, learn the same
fix by hand and publish it in the background; a fourth server on a fresh
workspace, with nothing learned itself, offers that fix once the team has it
from three workspaces (k = 3).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from fixlore.knowledge import _teamdb
from fixlore.knowledge._teamdb import connect
from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand, learned

from ._team_env import TeamEnv

pytestmark = pytest.mark.e2e

HEADERS = ["def total(rows, start)", "def average(amounts, weights)", "def scale(points, factor)"]


def workspaces_with(env: TeamEnv, minimum: int) -> bool:
    with connect(env.url("alice")) as c:
        raw = _teamdb.read_team(c)
    return any(int(r[6]) >= 1 and int(r[10]) >= minimum for r in raw.aggregates)


async def test_three_workspaces_teach_a_fourth_through_the_team_store(team: TeamEnv, tmp_path: Path) -> None:
    for i, (who, header) in enumerate(zip(["alice", "bob", "alice"], HEADERS, strict=True)):
        root = tmp_path / f"ws{i}"
        root.mkdir()
        env = {"FIXLORE_HOME": str(tmp_path / f"home{i}")}
        async with Editor(root, ruff=False, settings={"teamKnowledge": team.url(who)}, env=env) as editor:
            name = header[4 : header.index("(")]
            text = f"{header}\n    return len({name}.__name__)\n"

            def add_colon(uri: str, at: int = len(header)) -> None:
                editor.insert(uri, at, ":")

            await fix_by_hand(editor, "m.py", text, "python-syntax", add_colon)
            # Published in the background within seconds of the store's commit.
            deadline = asyncio.get_running_loop().time() + 30
            while not workspaces_with(team, i + 1):
                assert asyncio.get_running_loop().time() < deadline, "never published"
                await asyncio.sleep(0.2)

    root = tmp_path / "fresh"
    root.mkdir()
    env = {"FIXLORE_HOME": str(tmp_path / "home-fresh")}
    async with Editor(root, ruff=False, settings={"teamKnowledge": team.url("bob")}, env=env) as editor:
        uri = editor.open("copy.py", "def shipping_cost(order, rate)\n    return order * rate\n")
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            diag = await editor.diagnostic(uri, "python-syntax")
            found = learned(await editor.code_actions(uri, diag))
            if found:
                break
            assert asyncio.get_running_loop().time() < deadline, "the team's fix was never offered"
            await asyncio.sleep(0.2)  # the first pull runs in the background at start
        await editor.apply(found[0])
        await editor.gone(uri, "python-syntax")
        assert editor.texts[uri] == "def shipping_cost(order, rate):\n    return order * rate\n"
        stats = await editor.stats()
        assert stats["counts"]["manual"] == 0  # nothing learned here: the fix came from the team


class Blackhole:
    """A TCP listener on loopback that takes connections and never answers (a PostgreSQL that hangs)."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[Any] = []
        threading.Thread(target=self._take, daemon=True).start()

    def _take(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)  # kept open, never read, never answered

    def close(self) -> None:
        for c in self.accepted:
            c.close()
        self.sock.close()


async def test_a_team_store_that_hangs_never_slows_the_editor(tmp_path: Path) -> None:
    hole = Blackhole()
    root = tmp_path / "ws"
    root.mkdir()
    url = f"host=127.0.0.1 port={hole.port} dbname=x user=nobody"
    try:
        env = {"FIXLORE_HOME": str(tmp_path / "home")}
        async with Editor(root, settings={"teamKnowledge": url}, env=env) as editor:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 30
            while not hole.accepted:  # the sync thread is now waiting on the team store
                assert loop.time() < deadline, "fixlore never tried the team store"
                await asyncio.sleep(0.05)
            uri = editor.open("a.py", "import os\n")
            diag = await editor.diagnostic(uri, "F401")
            for _ in range(5):
                started = loop.time()
                actions = await editor.code_actions(uri, diag)
                assert actions and loop.time() - started < 2.0  # the team store would take 5 s or more
                stats = await editor.stats()
                assert "counts" in stats
            assert len(hole.accepted) >= 1
    finally:
        hole.close()


async def test_the_servers_trust_threshold_is_a_setting(team: TeamEnv, tmp_path: Path) -> None:
    """With ``teamMinWorkspaces: 1`` a fix made by hand in one workspace is offered in another at once."""
    header = HEADERS[0]
    root = tmp_path / "ws"
    root.mkdir()
    env = {"FIXLORE_HOME": str(tmp_path / "home")}
    async with Editor(root, ruff=False, settings={"teamKnowledge": team.url("alice")}, env=env) as editor:
        text = f"{header}\n    return len(total.__name__)\n"
        await fix_by_hand(editor, "m.py", text, "python-syntax", lambda uri: editor.insert(uri, len(header), ":"))
        deadline = asyncio.get_running_loop().time() + 30
        while not workspaces_with(team, 1):
            assert asyncio.get_running_loop().time() < deadline, "never published"
            await asyncio.sleep(0.2)

    async def offered(settings: dict[str, Any], wait: float) -> bool:
        root = tmp_path / "fresh"
        root.mkdir()
        env = {"FIXLORE_HOME": str(root / "home")}
        async with Editor(root, ruff=False, settings={"teamKnowledge": team.url("bob"), **settings}, env=env) as ed:
            uri = ed.open("copy.py", "def shipping_cost(order, rate)\n    return order * rate\n")
            diag = await ed.diagnostic(uri, "python-syntax")
            deadline = asyncio.get_running_loop().time() + wait
            while asyncio.get_running_loop().time() < deadline:
                if learned(await ed.code_actions(uri, diag)):
                    # `explain` (the editors' command, and `fixlore explain`) names the team's evidence.
                    why = json.dumps(await ed.execute("fixlore.explain", [uri, diag["range"]["start"]]))
                    assert re.search(r"team: \d+ accepted in 1 workspaces", why), why
                    return True
                await asyncio.sleep(0.2)
            return False

    # The default (3 workspaces, test_three_workspaces_teach_a_fourth...) would not offer it.
    assert await offered({"teamMinWorkspaces": 1}, 30)
