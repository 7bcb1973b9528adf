"""``serve --log-file``: the log in a file, with each code action's timings, and no code in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

PLANTED = ("grimwold_secret_name", "planted comment text", "hunter2-literal")
CODE = (
    "import os\n\n\n"
    "def grimwold_secret_name(value):\n"
    "    # planted comment text\n"
    '    token = "hunter2-literal"\n'
    "    if value == None:\n"
    "        return token\n"
    "    return os.sep\n"
)


async def test_the_log_file_has_the_code_action_timings_and_no_code(tmp_path: Path) -> None:
    log = tmp_path / "fixlore.log"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Editor(workspace, flags=("--log-level", "debug", "--log-file", str(log))) as editor:
        uri = editor.open("secret.py", CODE)
        diag = await editor.diagnostic(uri, "E711")
        actions = await editor.code_actions(uri, diag)
        await editor.apply(actions[0])
        await editor.gone(uri, "E711")
    text = log.read_text(encoding="utf-8")
    assert "code action: 1 diagnostics, learned fixes" in text
    assert [word for word in PLANTED if word in text] == []
