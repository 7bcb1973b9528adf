"""Fixes made by hand become learned quick fixes; transient errors and undone fixes do not count."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

LEARNED = "Apply learned fix: "


async def settled(editor: Editor, before: int) -> int:
    """Wait until fixlore has looked at a settled state after ``before`` settles."""
    stats = await editor.until_stats(lambda s: s["session"]["settles"] > before)
    return int(stats["session"]["settles"])


async def settles(editor: Editor) -> int:
    return int((await editor.stats())["session"]["settles"])


def learned(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if a["title"].startswith(LEARNED)]


async def fix_by_hand(editor: Editor, name: str, text: str, code: str, edit: Any) -> None:
    """Open ``text``, let it settle, make the edit by hand, wait for it to be learned."""
    start = await settles(editor)
    uri = editor.open(name, text)
    await editor.diagnostic(uri, code)
    await settled(editor, start)  # the opening state is the baseline
    before = (await editor.stats())["session"]["manualFixes"]
    edit(uri)
    await editor.gone(uri, code)
    await editor.until_stats(lambda s: s["session"]["manualFixes"] > before)


async def offered_learned_fix(editor: Editor, uri: str, code: str) -> dict[str, Any]:
    """The learned fix offered for ``code`` (asks again while it is still being instantiated)."""
    for _ in range(50):
        diag = await editor.diagnostic(uri, code)
        found = learned(await editor.code_actions(uri, diag))
        if found:
            return found[0]
        await editor.until_stats(lambda s: True)  # one round trip before asking again
    raise AssertionError("no learned fix offered")


async def test_an_import_added_by_hand_becomes_a_learned_quick_fix(tmp_path: Path) -> None:
    async with Editor(tmp_path) as editor:
        for k, (fn, call) in enumerate([("cwd", "os.getcwd()"), ("sep", "os.sep"), ("env", "os.environ")]):
            text = f"def {fn}_{k}():\n    return {call}\n"
            await fix_by_hand(editor, f"h{k}.py", text, "F821", lambda uri: editor.insert(uri, 0, "import os\n\n\n"))

        uri = editor.open("fresh.py", "class Store:\n    def where(self, item):\n        return os.path.join(item)\n")
        action = await offered_learned_fix(editor, uri, "F821")
        assert action["title"] == "Apply learned fix: Add `import os`"
        actions = await editor.code_actions(uri, await editor.diagnostic(uri, "F821"))
        assert actions[0] is not None and actions[0]["title"] == action["title"]
        # First, but not preferred (applied unasked) before it has been accepted and worked once.
        assert actions[0].get("isPreferred") is not True
        await editor.apply(action)
        await editor.gone(uri, "F821")
        assert editor.texts[uri].startswith("import os\n")
        stats = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1 and s["counts"]["succeeded"] >= 4)
        assert stats["counts"]["manual"] >= 3
        again = editor.open("again.py", "def here():\n    return os.sep\n")
        action = await offered_learned_fix(editor, again, "F821")
        actions = await editor.code_actions(again, await editor.diagnostic(again, "F821"))
        assert actions[0]["title"] == action["title"] and actions[0].get("isPreferred") is True


async def test_a_comparison_rewritten_by_hand_is_offered_with_other_names(tmp_path: Path) -> None:
    async with Editor(tmp_path) as editor:
        for k, name in enumerate(["value", "record", "answer"]):
            text = f"def check_{k}({name}):\n    if {name} == None:\n        return 1\n    return 2\n"

            def rewrite(uri: str, name: str = name) -> None:
                editor.replace(uri, f"{name} == None", f"{name} is None")

            await fix_by_hand(editor, f"c{k}.py", text, "E711", rewrite)

        fresh = "def drain(basket):\n    while basket == None:\n        basket = 2\n    return basket\n"
        uri = editor.open("fresh.py", fresh)
        action = await offered_learned_fix(editor, uri, "E711")
        assert "basket is None" in action["title"]
        await editor.apply(action)
        await editor.gone(uri, "E711")
        assert "while basket is None:" in editor.texts[uri]


async def test_typing_through_transient_errors_is_not_learned(tmp_path: Path) -> None:
    async with Editor(tmp_path, settings={"manualFixPauseMs": 1500}) as editor:
        start = await settles(editor)
        uri = editor.open("t.py", "def go():\n    return os.getcwd()\n")
        await editor.diagnostic(uri, "F821")
        done = await settled(editor, start)
        # Break the syntax (the diagnostic goes), then mend it (it comes back), all within the pause.
        editor.replace(uri, "os.getcwd()", "os.getcwd(")
        editor.replace(uri, "os.getcwd(", "os.getcwd()")
        await editor.diagnostic(uri, "F821")
        # A state that never parsed: the diagnostic vanishes while the file is broken.
        editor.replace(uri, "return os.getcwd()", "return (")
        await editor.gone(uri, "F821")
        done = await settled(editor, done)
        editor.replace(uri, "return (", "return os.getcwd()")
        await editor.diagnostic(uri, "F821")
        await settled(editor, done)
        stats = await editor.stats()
        assert stats["session"]["manualFixes"] == 0
        assert stats["counts"]["manual"] == 0


async def test_an_undone_fix_counts_against_its_action(tmp_path: Path) -> None:
    async with Editor(tmp_path) as editor:
        original = "import json\n\n\ndef go():\n    return 1\n"
        uri = editor.open("u.py", original)
        diag = await editor.diagnostic(uri, "F401")
        actions = await editor.code_actions(uri, diag)
        fix = next(a for a in actions if "Remove unused import" in a["title"])
        await editor.apply(fix)
        await editor.gone(uri, "F401")
        # Ctrl+Z: the editor sends the old text back.
        editor.edit(
            uri,
            [
                {
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "newText": "import json\n",
                }
            ],
        )
        assert editor.texts[uri] == original
        await editor.diagnostic(uri, "F401")
        stats = await editor.until_stats(lambda s: s["counts"]["undone"] >= 1)
        assert stats["counts"]["accepted"] == 1
        # Explain shows the undo counting against the action: below an action never tried.
        diag = await editor.diagnostic(uri, "F401")
        explained = await editor.execute("fixlore.explain", [uri, diag["range"]["start"]])
        [entry] = explained["diagnostics"]
        fix_row = next(a for a in entry["actions"] if "Remove unused import" in a["title"])
        assert any("1 undone" in why for why in fix_row["explanation"])
        assert any("1 failed" in why for why in fix_row["explanation"])
        assert fix_row["score"] < 0.45  # the prior: 0.6 * 0.5 + 0.3 * 0.5
        assert fix_row["preferred"] is False


async def test_a_fix_made_by_hand_in_a_notebook_cell_is_learned_and_offered_in_cells(tmp_path: Path) -> None:
    from tests.proxy.test_notebooks_e2e import change_cell, open_notebook

    async with Editor(tmp_path) as editor:
        for k, name in enumerate(["value", "record", "answer"]):
            text = f"def check_{k}({name}):\n    if {name} == None:\n        return 1\n    return 2\n"
            start = await settles(editor)
            notebook, (cell,) = open_notebook(editor, tmp_path / f"n{k}.ipynb", [text])
            await editor.diagnostic(cell, "E711")
            await settled(editor, start)  # the opening state is the baseline
            before = (await editor.stats())["session"]["manualFixes"]
            change_cell(editor, notebook, 8, cell, text.replace(f"{name} == None", f"{name} is None"))
            await editor.gone(cell, "E711")
            await editor.until_stats(lambda s, before=before: s["session"]["manualFixes"] > before)

        fresh = "def drain(basket):\n    while basket == None:\n        basket = 2\n    return basket\n"
        _, (cell,) = open_notebook(editor, tmp_path / "fresh.ipynb", [fresh])
        action = await offered_learned_fix(editor, cell, "E711")
        assert "basket is None" in action["title"]


async def test_a_fix_made_right_after_opening_is_learned(tmp_path: Path) -> None:
    """Jumping from the Problems panel: open, see the diagnostic, fix it at once, no pause first."""
    async with Editor(tmp_path) as editor:
        for k, name in enumerate(["value", "record"]):
            text = f"def check_{k}({name}):\n    if {name} == None:\n        return 1\n    return 2\n"
            uri = editor.open(f"quick{k}.py", text)
            await editor.diagnostic(uri, "E711")
            before = (await editor.stats())["session"]["manualFixes"]
            editor.replace(uri, f"{name} == None", f"{name} is None")
            await editor.gone(uri, "E711")
            editor.save(uri)
            await editor.until_stats(lambda s, before=before: s["session"]["manualFixes"] > before)

        uri = editor.open("fresh.py", "def drain(basket):\n    while basket == None:\n        basket = 2\n")
        action = await offered_learned_fix(editor, uri, "E711")
        assert "basket is None" in action["title"]


async def test_a_fix_made_by_hand_after_seeing_the_list_turns_its_actions_down(tmp_path: Path) -> None:
    """The user looked at ruff's actions, then fixed it another way: evidence against ruff's mark."""
    async with Editor(tmp_path) as editor:
        uri = editor.open("seen.py", "def check(value):\n    if value == None:\n        return 1\n    return 2\n")
        diag = await editor.diagnostic(uri, "E711")
        offered = await editor.code_actions(uri, diag)  # Invoked: the list was seen
        assert any("E711" in a["title"] for a in offered)
        editor.replace(uri, "value == None", "not value")
        await editor.gone(uri, "E711")
        editor.save(uri)
        stats = await editor.until_stats(lambda s: s["session"]["manualFixes"] >= 1 and s["counts"]["rejected"] >= 2)
        assert stats["counts"]["accepted"] == 0


async def test_typing_exactly_the_fix_an_action_offered_does_not_turn_that_action_down(tmp_path: Path) -> None:
    """The user read ruff's fix in the list and typed it: only the other actions were turned down."""
    async with Editor(tmp_path) as editor:
        uri = editor.open("typed.py", "def check(value):\n    if value == None:\n        return 1\n    return 2\n")
        diag = await editor.diagnostic(uri, "E711")
        offered = await editor.code_actions(uri, diag)  # Invoked: the list was seen
        titles = [a["title"] for a in offered if "E711" in a["title"]]
        assert any("Disable" not in t for t in titles) and any("Disable" in t for t in titles)
        editor.replace(uri, "value == None", "value is None")  # what ruff's fix makes
        await editor.gone(uri, "E711")
        editor.save(uri)
        stats = await editor.until_stats(lambda s: s["session"]["manualFixes"] >= 1 and s["counts"]["rejected"] >= 1)
        assert stats["counts"]["rejected"] == 1  # "Disable for this line" only


async def test_code_deleted_after_seeing_the_list_turns_no_action_down(tmp_path: Path) -> None:
    """Deleting the code is not a choice among its fixes: only the rewrite of the second turns its actions down."""
    gone = "def first(value):\n    if value == None:\n        return 1\n    return 2\n\n\n"
    kept = "def second(item):\n    if item == None:\n        return 3\n    return 4\n"
    async with Editor(tmp_path) as editor:
        uri = editor.open("deleted.py", gone + kept)
        await editor.diagnostic(uri, "E711")
        both = [d for d in editor.current(uri) if d.get("code") == "E711"]
        assert len(both) == 2
        for diag in both:
            assert any("E711" in a["title"] for a in await editor.code_actions(uri, diag))  # both lists seen
        start = await settles(editor)
        editor.replace(uri, gone, "")  # the whole function deleted
        editor.save(uri)
        await settled(editor, start)
        editor.replace(uri, "item == None", "not item")  # fixed another way than ruff's
        await editor.gone(uri, "E711")
        editor.save(uri)
        stats = await editor.until_stats(lambda s: s["counts"]["rejected"] >= 2)
        assert stats["counts"]["rejected"] == 2  # ruff's fix and "Disable for this line", of the second only


SLOW_PIPE = Path(__file__).parents[1] / "proxy" / "servers" / "slow_replies.py"


def _reported(notifications: list[tuple[str, Any]], uri: str) -> bool:
    return any(
        method == "textDocument/publishDiagnostics" and params["uri"] == uri and params["diagnostics"]
        for method, params in notifications
    )


async def test_a_file_closed_and_opened_again_at_once_is_learned_from(tmp_path: Path) -> None:
    """ruff clears a closed file's diagnostics under the version it had; that clear, arriving once the
    file is open again (at version 1 again), is not a report on the new document: taken as one, it
    emptied the baseline, and the fix made right after was never learned (seen in the real-fix replay,
    where consecutive fixes are often in one file). ruff's messages come through a pipe that hands
    them on 0.2 s late, in order and 0.1 s apart, so the clear always arrives after the new open and
    on its own, as on a loaded machine.
    """
    ruff = f"python={sys.executable} {SLOW_PIPE} {Path(sys.executable).parent / 'ruff'} server"
    async with Editor(
        tmp_path, ruff=False, upstreams=(ruff,), env={"SLOW_REPLIES_S": "0.2", "SLOW_REPLIES_GAP_S": "0.1"}
    ) as editor:
        for k, fn in enumerate(["getcwd", "sep"]):
            text = f"def {fn}_{k}():\n    return os.{fn}\n"
            uri = editor.open("same.py", text)
            await editor.diagnostic(uri, "F821")
            editor.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            mark = len(editor.notifications)
            uri = editor.open("same.py", text)  # open again at once: version 1, as editors do
            await editor.wait_for(
                lambda mark=mark, uri=uri: _reported(editor.notifications[mark:], uri), what="the reopened file's F821"
            )
            before = (await editor.stats())["session"]["manualFixes"]
            editor.insert(uri, 0, "import os\n\n\n")
            editor.save(uri)
            await editor.gone(uri, "F821")
            await editor.until_stats(lambda s, before=before: s["session"]["manualFixes"] > before)
            editor.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def test_operands_passed_to_a_logging_call_by_hand_are_passed_for_other_calls_and_arities(tmp_path: Path) -> None:
    """UP031 in a logging call: the user passes the operand to the call (not an f-string); learned as that rewrite."""
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["UP031"]\n')
    async with Editor(tmp_path) as editor:
        text = "def spawn(log, worker):\n    log.info('spawned %s' % worker.pid)\n"

        def by_hand(uri: str) -> None:
            editor.replace(uri, "'spawned %s' % worker.pid", "'spawned %s', worker.pid")

        await fix_by_hand(editor, "spawn.py", text, "UP031", by_hand)
        fresh = (
            "class Pool:\n"
            "    def reap(self, pid, rss):\n"
            "        self.logger.warning('killed %d (rss %s)' % (pid, rss), stack_info=True)\n"
        )
        uri = editor.open("pool.py", fresh)
        action = await offered_learned_fix(editor, uri, "UP031")
        assert "'killed %d (rss %s)', pid, rss" in action["title"], action["title"]
        await editor.apply(action)
        await editor.gone(uri, "UP031")
        assert "self.logger.warning('killed %d (rss %s)', pid, rss, stack_info=True)" in editor.texts[uri]
