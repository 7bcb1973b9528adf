"""Nothing learned is lost however the editor leaves: ``shutdown``, ``exit`` alone, closing the pipe, SIGTERM.

The store is checked afterwards with ``fixlore knowledge stats``, as a user would.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import fixlore_command
from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("leave", "code"), [("shutdown", 0), ("exit", 1), ("eof", 0), ("sigterm", 0)])
async def test_every_acknowledged_event_is_stored(tmp_path: Path, leave: str, code: int) -> None:
    editor = Editor(tmp_path, ruff=False)
    await editor.__aenter__()
    process = editor.process
    assert process is not None and process.stdin is not None
    try:
        for k in range(3):
            header = f"def total_{k}(rows, start)"

            def add_colon(uri: str, at: int = len(header)) -> None:
                editor.insert(uri, at, ":")

            await fix_by_hand(editor, f"c{k}.py", f"{header}\n    return len(rows)\n", "python-syntax", add_colon)
        acknowledged = (await editor.stats())["session"]["events"]

        if leave == "shutdown":
            await editor.request("shutdown", None)
            editor.notify("exit")
        elif leave == "exit":
            editor.notify("exit")
        elif leave == "eof":
            process.stdin.close()
        else:
            process.terminate()
        assert await asyncio.wait_for(process.wait(), 30) == code
    finally:
        await editor.kill()

    stats = subprocess.run(
        fixlore_command("knowledge", "stats", "--json"),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert json.loads(stats.stdout)["events"] == acknowledged


async def test_no_learning_with_a_relative_home_still_opens_the_store(tmp_path: Path) -> None:
    made = subprocess.run(
        fixlore_command("knowledge", "prune"),
        cwd=tmp_path,
        env=dict(os.environ, FIXLORE_HOME="rel"),
        capture_output=True,
        timeout=60,
    )
    assert made.returncode == 0

    # Editor waits for fixlore/status, which follows the store's opening.
    async with Editor(tmp_path, ruff=False, flags=("--no-learning",), env={"FIXLORE_HOME": "rel"}) as editor:
        assert (await editor.stats())["learning"] is False
