"""Privacy end to end: a session full of planted names, strings and comments leaves none on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import import_elsewhere
from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

PLANTED = [
    "zorblaxQuuxident",
    "veltrannic_customer_ssn",
    "hunter2-planted-secret",
    "plantedcommentmarker",
    "grimwold_private_mod",
    "Xyloquent_Ledger",
]


def planted_source(k: int) -> str:
    return (
        "import grimwold_private_mod\n"
        "\n"
        "\n"
        f"# plantedcommentmarker {k}: do not leak\n"
        f"class Xyloquent_Ledger{k}:\n"
        f'    """Docstring with hunter2-planted-secret."""\n'
        "\n"
        f"    def zorblaxQuuxident(self, veltrannic_customer_ssn{k}):\n"
        f'        token = "hunter2-planted-secret"\n'
        f"        if veltrannic_customer_ssn{k} == None:\n"
        "            return token\n"
        "        return os.getcwd()\n"
    )


def scan(root: Path) -> list[tuple[str, str]]:
    leaks: list[tuple[str, str]] = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaks.extend((str(path), p) for p in PLANTED if p.encode() in data)
    return leaks


async def test_nothing_planted_reaches_the_store_or_an_export(tmp_path: Path, fixlore_home: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    export = tmp_path / "export.json"
    async with Editor(workspace) as editor:
        for k in range(3):
            start = (await editor.stats())["session"]["settles"]
            uri = editor.open(f"p{k}.py", planted_source(k))
            for code in ("F401", "E711"):
                diag = await editor.diagnostic(uri, code)
                actions = await editor.code_actions(uri, diag)
                await editor.apply(actions[k % 2] if code == "F401" else actions[0])
                await editor.gone(uri, code)
            await editor.until_stats(lambda s, start=start: s["session"]["settles"] > start)
            before = (await editor.stats())["session"]["manualFixes"]
            editor.insert(uri, 0, "import os\n")
            await editor.gone(uri, "F821")
            await editor.until_stats(lambda s, before=before: s["session"]["manualFixes"] > before)
        uri = editor.open("p9.py", planted_source(9))
        diag = await editor.diagnostic(uri, "F821")
        await editor.code_actions(uri, diag)
        await editor.code_actions(uri, await editor.diagnostic(uri, "F821"))
        stats = await editor.until_stats(lambda s: s["counts"]["manual"] >= 3 and s["counts"]["accepted"] >= 6)
        assert stats["patterns"] >= 3
        result = await editor.execute("fixlore.export", [str(export)])
        assert result["count"] >= 3
        patterns = await editor.execute("fixlore.patterns", [])
        assert patterns and not any(p in str(patterns) for p in PLANTED)
        assert result["count"] == sum(p["scope"] == "user" for p in patterns)  # nothing left out

    assert export.exists()
    # What a real session exports, another fixlore imports: every field fits the grammar of shared knowledge.
    assert import_elsewhere(export, tmp_path / "elsewhere")["imported"] == result["count"]
    assert any(fixlore_home.rglob("*.sqlite*")) or any(fixlore_home.rglob("*.db*"))
    assert scan(fixlore_home) == []
    assert not any(p.encode() in export.read_bytes() for p in PLANTED)
