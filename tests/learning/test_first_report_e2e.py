"""A file just opened: its first diagnostics reach the editor once their learned fixes are made.

An editor asks for the lightbulb the moment the diagnostics show; the learned
fixes of a file just opened wait for its parse. The first report (a pull's
answer here, a publish in the other learning tests) is held until they are
made, so that lightbulb finds them made and waits for no worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from fixlore.lsp.tools.editor_session import AUTOMATIC
from tests.learning._editor import CAPABILITIES, Editor
from tests.learning.test_manual_fixes import fix_by_hand, learned

pytestmark = pytest.mark.e2e


class PullingEditor(Editor):
    """An editor that pulls diagnostics (``textDocument/diagnostic``), as VS Code does."""

    CLIENT_CAPABILITIES: ClassVar[dict[str, Any]] = {
        **CAPABILITIES,
        "textDocument": {**CAPABILITIES["textDocument"], "diagnostic": {"dynamicRegistration": False}},
    }


async def test_a_pulled_first_report_comes_with_its_learned_fixes_made(tmp_path: Path) -> None:
    async with Editor(tmp_path) as editor:
        for k, name in enumerate(["value", "record", "answer"]):
            text = f"def check_{k}({name}):\n    if {name} == None:\n        return 1\n    return 2\n"

            def rewrite(uri: str, name: str = name) -> None:
                editor.replace(uri, f"{name} == None", f"{name} is None")

            await fix_by_hand(editor, f"c{k}.py", text, "E711", rewrite)

    log = tmp_path.parent / f"{tmp_path.name}.log"
    async with PullingEditor(tmp_path, flags=("--log-level", "debug", "--log-file", str(log))) as editor:
        assert "diagnosticProvider" in editor.capabilities  # the editor pulls
        # The session's first files start the worker process (0.2-1 s): while it starts,
        # nothing is held (a lightbulb makes its own fix on a thread). Files are opened
        # until a first report is held.
        for k in range(200):
            uri = editor.open(
                f"fresh{k}.py", f"def drain(basket{k}):\n    while basket{k} == None:\n        basket{k} = 2\n"
            )
            report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            if "first diagnostics held" in log.read_text(encoding="utf-8"):
                break
            await editor.until_stats(lambda s: True)  # one round trip before the next file
        else:
            raise AssertionError("no first report was held")
        diag = next(d for d in report["items"] if d.get("code") == "E711")
        actions = await editor.code_actions(uri, diag, trigger=AUTOMATIC)  # asked at once, as a lightbulb is
        assert [f"basket{k} is None" in a["title"] for a in learned(actions)] == [True]
        held = log.read_text(encoding="utf-8").split("first diagnostics held")[-1]
    assert held.startswith(" ") and "(0 not made in time)" in held.splitlines()[0]
    assert "learned fixes: 1 patterns, waited" not in held  # the lightbulb waited for no job
