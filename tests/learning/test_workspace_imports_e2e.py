"""An undefined name, fixed with the import the project's other files use: through a real server and ruff.

From the first time (the base knowledge ships the fix, learned from a made-up
hand fix): the project's imports come from the files the editor opened and,
a few seconds after start, from the files on disk. Nothing of them is stored.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import BIN, Editor

pytestmark = pytest.mark.e2e

LEARNED = "Apply learned fix: "
PLANTED = ("quuxlib", "zrange", "uchr_of", "zip_longest_q")


def _learned(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if a.get("title", "").startswith(LEARNED)]


async def test_a_name_the_project_imports_elsewhere_is_imported_the_same_way(
    tmp_path: Path, fixlore_home: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F821"]\n')
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "on_disk.py").write_text("from quuxlib.moves import zrange\n\nLIMIT = zrange(3)\n")
    code = "import os\n\nfrom quuxlib.compat import zip_longest_q\n\n\ndef walk(n):\n    return uchr_of(n), os.sep\n"
    async with Editor(tmp_path) as editor:
        editor.open("app/other.py", "from quuxlib.compat import uchr_of\n\nprint(uchr_of(65))\n")
        uri = editor.open("app/main.py", code)
        diag = await editor.diagnostic(uri, "F821")
        learned = _learned(await editor.code_actions(uri, diag))
        assert [a["title"] for a in learned] == [LEARNED + "Add `from quuxlib.compat import uchr_of`"]
        assert not learned[0].get("isPreferred"), "a fix this user never took is applied unasked"
        await editor.apply(learned[0])
        await editor.gone(uri, "F821")
        assert "from quuxlib.compat import zip_longest_q, uchr_of\n" in editor.texts[uri]

        # what only the disk has: read a few seconds after start (the editor polls as a user would look again)
        third = editor.open("app/third.py", "def count(n):\n    return list(zrange(n))\n")
        diag = await editor.diagnostic(third, "F821")
        titles: list[str] = []
        for _ in range(100):
            titles = [a["title"] for a in _learned(await editor.code_actions(third, diag))]
            if any("import" in title for title in titles):
                break
            await asyncio.sleep(0.1)  # polling a query while the scan runs, not synchronisation by sleep
        # and `zrange` is no longer taken for a typo of `range`: the project imports it
        assert titles == [LEARNED + "Add `from quuxlib.moves import zrange`"]
        await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1)

    leaks = [
        (str(path), word)
        for path in fixlore_home.rglob("*")
        if path.is_file()
        for word in PLANTED
        if word.encode() in path.read_bytes()
    ]
    assert leaks == []


async def test_a_name_the_project_defines_but_imports_nowhere_yet_is_imported_from_its_module(
    tmp_path: Path, fixlore_home: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F821"]\n')
    for folder in ("quuxshop", "quuxshop/money"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "quuxshop" / "money" / "pricing.py").write_text("class QuuxDiscount:\n    rate = 0.2\n")
    code = "def total(n):\n    return n * QuuxDiscount.rate\n"
    async with Editor(tmp_path) as editor:
        uri = editor.open("quuxshop/checkout.py", code)
        diag = await editor.diagnostic(uri, "F821")
        titles: list[str] = []
        learned: list[dict[str, Any]] = []
        for _ in range(100):  # the disk is read a few seconds after start
            learned = _learned(await editor.code_actions(uri, diag))
            titles = [a["title"] for a in learned]
            if titles:
                break
            await asyncio.sleep(0.1)  # polling a query while the scan runs, not synchronisation by sleep
        assert titles == [LEARNED + "Add `from quuxshop.money.pricing import QuuxDiscount`"]
        await editor.apply(learned[0])
        await editor.gone(uri, "F821")
        assert editor.texts[uri].startswith("from quuxshop.money.pricing import QuuxDiscount\n")

    leaks = [str(path) for path in fixlore_home.rglob("*") if path.is_file() and b"Quux" in path.read_bytes()]
    assert leaks == []


RECORDING = Path(__file__).parents[1] / "proxy" / "servers" / "recording.py"


async def test_a_workspace_folder_added_later_is_read_and_the_upstreams_are_told(
    tmp_path: Path, fixlore_home: Path
) -> None:
    main, extra = tmp_path / "main", tmp_path / "extra"
    main.mkdir()
    extra.mkdir()
    (main / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F821"]\n')
    (extra / "lib.py").write_text("from quuxlib.far import zfar_thing\n\nzfar_thing()\n")
    record = tmp_path / "upstream.log"
    recorder = f"python={sys.executable} {RECORDING} {BIN / 'ruff'} server"
    async with Editor(main, ruff=False, upstreams=(recorder,), env={"RECORD_TO": str(record)}) as editor:
        uri = editor.open("app.py", "def go():\n    return zfar_thing()\n")
        diag = await editor.diagnostic(uri, "F821")
        assert _learned(await editor.code_actions(uri, diag)) == []  # the other folder is not the workspace yet
        folder = {"uri": extra.as_uri(), "name": "extra"}
        editor.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [folder], "removed": []}})
        titles: list[str] = []
        for _ in range(100):  # the folder is read a few seconds after it is added
            titles = [a["title"] for a in _learned(await editor.code_actions(uri, diag))]
            if titles:
                break
            await asyncio.sleep(0.1)  # polling a query while the scan runs, not synchronisation by sleep
        assert titles == [LEARNED + "Add `from quuxlib.far import zfar_thing`"]
    assert "workspace/didChangeWorkspaceFolders -" in record.read_text().splitlines()
