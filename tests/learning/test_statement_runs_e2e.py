"""A run of statements made one call by hand, twice, is offered at the third run: real ruff, real server.

The unit tests (``tests/abstraction/test_statement_runs.py``) match the run and
order the fixes; here the whole loop: the hand fixes learned from the editor's
edits, the helper's name kept in the server's memory only, the fix made in the
worker for a third file, applied, the diagnostic gone, and nothing of the code
written anywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand, offered_learned_fix

PLANTED = ("zq_prefix", "zq_table", "zq_clean", "zq_one", "zq_two", "zq_three")


def _store(name: str) -> str:
    return (
        "class Store:\n"
        f"    def get(self, {name}):\n"
        f"        if isinstance({name}, unicode):\n"
        f"            {name} = {name}.encode('utf-8')\n"
        "        if self.zq_prefix:\n"
        f"            {name} = self.zq_prefix + {name}\n"
        f"        return self.zq_table[{name}]\n"
        "\n"
        "    def zq_clean(self, value):\n"
        "        return value\n"
    )


def _run(name: str) -> str:
    return (
        f"        if isinstance({name}, unicode):\n"
        f"            {name} = {name}.encode('utf-8')\n"
        "        if self.zq_prefix:\n"
        f"            {name} = self.zq_prefix + {name}\n"
    )


@pytest.mark.e2e
async def test_a_run_made_one_call_by_hand_twice_is_offered_at_the_third(tmp_path: Path, fixlore_home: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F821"]\n')
    log = tmp_path / "fixlore.log"
    async with Editor(tmp_path, flags=("--log-level", "debug", "--log-file", str(log))) as editor:
        for n, name in enumerate(("zq_one", "zq_two")):
            await fix_by_hand(
                editor,
                f"s{n}.py",
                _store(name),
                "F821",
                lambda uri, name=name: editor.replace(uri, _run(name), f"        {name} = self.zq_clean({name})\n"),
            )
        uri = editor.open("s3.py", _store("zq_three"))
        action = await offered_learned_fix(editor, uri, "F821")
        assert action["title"].endswith("with `zq_three = self.zq_clean(zq_three)`"), action["title"]
        assert not action.get("isPreferred")  # a name recalled from elsewhere: never applied unasked
        await editor.apply(action)
        await editor.gone(uri, "F821")
        assert editor.texts[uri] == _store("zq_three").replace(
            _run("zq_three"), "        zq_three = self.zq_clean(zq_three)\n"
        )
    written = [path for path in [*fixlore_home.rglob("*"), log] if path.is_file()]
    assert log in written and "learned a manual fix" in log.read_text(encoding="utf-8")
    leaks = [(str(path), word) for path in written for word in PLANTED if word.encode() in path.read_bytes()]
    assert leaks == []
