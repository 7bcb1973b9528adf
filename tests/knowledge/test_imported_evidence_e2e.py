"""An import of a billion counts does not make a learned fix preferred in a real session.

Session one (``fixlore serve`` with ``ruff server``) learns ``import os`` from
three hand fixes; its export, with the counts raised to 10⁹, is imported into
a fresh store with ``fixlore knowledge import``; session two on that store
offers the learned fix first, but not as ``isPreferred`` (which editors apply
unasked): nothing of it is the user's own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import fixlore_command
from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand, offered_learned_fix

pytestmark = pytest.mark.e2e

BILLION = 1_000_000_000


def knowledge(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """``fixlore knowledge ARGS`` on the store at ``home``."""
    done = subprocess.run(
        fixlore_command("knowledge", *args, "--home", str(home)),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    return done


async def test_an_import_of_a_billion_uses_offers_the_fix_first_and_not_preferred(tmp_path: Path) -> None:
    first, second = tmp_path / "first-home", tmp_path / "second-home"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with Editor(tmp_path / "a", env={"FIXLORE_HOME": str(first)}) as editor:
        for k, (fn, call) in enumerate([("cwd", "os.getcwd()"), ("sep", "os.sep"), ("env", "os.environ")]):
            text = f"def {fn}_{k}():\n    return {call}\n"
            await fix_by_hand(editor, f"h{k}.py", text, "F821", lambda uri: editor.insert(uri, 0, "import os\n\n\n"))
    export = tmp_path / "export.json"
    knowledge("export", "-o", str(export), home=first)
    doc = json.loads(export.read_text())
    learned = [r for r in doc["patterns"] if r["pattern"]["shape"] and r["pattern"]["signature"]["code"] == "F821"]
    assert learned
    for r in learned:
        r["counts"].update(accepted=BILLION, succeeded=BILLION, manual=BILLION)
    export.write_text(json.dumps(doc))
    knowledge("import", str(export), home=second)

    async with Editor(tmp_path / "b", env={"FIXLORE_HOME": str(second)}) as editor:
        uri = editor.open("fresh.py", "def where(item):\n    return os.path.join(item)\n")
        action = await offered_learned_fix(editor, uri, "F821")
        actions = await editor.code_actions(uri, await editor.diagnostic(uri, "F821"))
        assert actions[0]["title"] == action["title"] == "Apply learned fix: Add `import os`"
        assert not any(a.get("isPreferred") for a in actions), [a["title"] for a in actions if a.get("isPreferred")]
