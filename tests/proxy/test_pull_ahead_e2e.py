"""An editor's pull is answered from memory only while the upstream would answer the same.

Also: a didChange reaches an incremental upstream before fixlore takes it in, and once.

The test upstream (servers/flaky.py --pull) numbers its pull answers and counts
the settings changes it has seen, so each report tells whether the upstream was
asked and what it knew.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.proxy.editor import PULL_CAPS, PUSH_CAPS, Editor, fixlore_cmd, server_flag, start_over_tcp

pytestmark = pytest.mark.e2e


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    """fixlore in front of the pull-only test server, with an editor that pulls; the full server loaded.

    While it loads, the early front relays a lone upstream's pulls as they are
    (``tests/foundation/test_relay_e2e.py``); what is tested here is the full
    server's memory of them. A command only the full server runs ends the relay.
    """
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={server_flag('flaky.py', '--pull')}"))
    await ed.initialize(tmp_path, caps=PULL_CAPS)
    await ed.request("workspace/executeCommand", {"command": "fixlore.stats", "arguments": []}, timeout=30)
    yield ed
    await ed.close()


async def pull(editor: Editor, uri: str) -> str:
    """The editor pulls; the upstream's one message."""
    report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    assert report["kind"] == "full"
    [item] = [d for d in report["items"] if d.get("source") == "flaky"]
    return str(item["message"])


def number(message: str) -> int:
    """Which pull of the upstream's a message came from."""
    return int(message.split()[1])


async def test_a_repeated_pull_is_answered_from_memory_until_the_text_changes(editor: Editor, tmp_path: Path) -> None:
    uri = editor.open(tmp_path / "a.py", "x = 1\n")
    first = await pull(editor, uri)
    assert first.endswith("settings 0 chars 6")
    assert await pull(editor, uri) == first, "nothing changed: the upstream was not asked again"
    assert await pull(editor, uri) == first

    editor.change(uri, "x = 12345\n")
    after_edit = await pull(editor, uri)
    assert after_edit.endswith("chars 10") and number(after_edit) > number(first)
    assert await pull(editor, uri) == after_edit


async def test_a_settings_change_or_an_upstream_request_makes_the_next_pull_ask_again(
    editor: Editor, tmp_path: Path
) -> None:
    uri = editor.open(tmp_path / "a.py", "x = 1\n")
    first = await pull(editor, uri)

    editor.notify("workspace/didChangeConfiguration", {"settings": {"flaky": {"strict": True}}})
    after_settings = await pull(editor, uri)
    assert after_settings.split()[2:4] == ["settings", "1"], "the upstream saw the change before answering"
    assert number(after_settings) > number(first)

    # A command may change what the server reports: the next pull asks again.
    await editor.request("workspace/executeCommand", {"command": "flaky.ask", "arguments": []})
    assert number(await pull(editor, uri)) > number(after_settings)


async def test_the_upstream_is_pulled_ahead_after_an_edit_and_once_for_both(editor: Editor, tmp_path: Path) -> None:
    uri = editor.open(tmp_path / "a.py", "x = 1\n")
    first = await pull(editor, uri)
    editor.change(uri, "x = 123\n")
    # fixlore pulls on the edit, before the editor asks ...
    ahead = f"flaky: pull {number(first) + 1} settings 0 chars 8"
    await editor.wait_for(lambda: ahead in pulls_logged(editor), what="the pull ahead of the editor's")
    # ... and the editor's pulls, two at once, are both answered by that one.
    a, b = await asyncio.gather(pull(editor, uri), pull(editor, uri))
    assert a == b == ahead.removeprefix("flaky: ")
    assert pulls_logged(editor)[-1] == ahead, "no upstream pull after the one ahead"


async def test_an_answer_for_an_older_text_arriving_late_does_not_replace_the_current_one(
    editor: Editor, tmp_path: Path
) -> None:
    # The upstream holds its answer for the edited text (HOLD) and sends it right after
    # its answer to the editor's pull of the next text: the older answer must not
    # displace the current one, for that pull or the next.
    uri = editor.open(tmp_path / "a.py", "x = 1\n")
    await pull(editor, uri)
    editor.change(uri, "HOLD = 1\n")
    await editor.wait_for(lambda: len(pulls_logged(editor)) == 2, what="the pull ahead, held by the upstream")
    editor.change(uri, "HOLD = 123\n")
    current = "pull 3 settings 0 chars 11"
    assert await pull(editor, uri) == current
    await asyncio.sleep(0.1)
    assert await pull(editor, uri) == current, "the current text's answer, from memory"
    assert pulls_logged(editor)[-1] == "flaky: " + current, "the upstream was not asked again"


async def test_a_code_action_read_with_the_change_reaches_the_upstream_before_the_pull_ahead(tmp_path: Path) -> None:
    # An editor's light bulb asks the moment the user types: the change and the code
    # action arrive together. The upstream answers in order, so a pull sent ahead
    # first would make the code action wait for a whole lint nobody asked for yet.
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={server_flag('flaky.py', '--pull', '--incremental')}"))
    try:
        await ed.initialize(tmp_path, caps=PULL_CAPS)
        uri = ed.open(tmp_path / "a.py", "x = 1\n")
        await pull(ed, uri)
        assert ed.conn is not None
        where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        params = {"textDocument": {"uri": uri}, "range": where, "context": {"diagnostics": [], "triggerKind": 2}}
        with ed.conn.corked():  # one write: fixlore reads both at once
            ed.insert(uri, 0, "# one\n")
            action = ed.conn.start_request("textDocument/codeAction", params, timeout=20)
        assert await action
        # ... and the pull still goes ahead of the editor's, right after it.
        await ed.wait_for(lambda: len(pulls_logged(ed)) == 2, what="the pull ahead after the change")
        seen = [m for m in logged(ed) if m.split()[1] in ("codeAction", "pull", "changed")]
        assert seen[-3:] == ["flaky: changed to version 2", "flaky: codeAction", pulls_logged(ed)[-1]]
        # The editor's own pull read with a change: one upstream pull answers it.
        with ed.conn.corked():
            ed.insert(uri, 0, "# two\n")
            report = ed.conn.start_request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=20)
        [item] = [d for d in (await report)["items"] if d.get("source") == "flaky"]
        assert item["message"] == pulls_logged(ed)[-1].removeprefix("flaky: ") and len(pulls_logged(ed)) == 3
    finally:
        await ed.close()


def pulls_logged(editor: Editor) -> list[str]:
    """The upstream's log lines of the pulls it answered."""
    return [p["message"] for m, p in editor.notifications if m == "window/logMessage" and " pull " in p["message"]]


@pytest.mark.parametrize("caps", [PUSH_CAPS, PULL_CAPS], ids=["push", "pull"])
async def test_each_incremental_change_reaches_the_upstream_once_and_in_order(
    tmp_path: Path, caps: dict[str, object]
) -> None:
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={server_flag('flaky.py', '--incremental')}"))
    try:
        await ed.initialize(tmp_path, caps=caps)
        uri = ed.open(tmp_path / "a.py", "x = 1\n")
        for n in range(5):
            ed.insert(uri, 0, f"# {n}\n")
        # The same in another member order (as another editor may write it): still once each.
        assert ed.conn is not None
        for n in range(2):
            ed.versions[uri] += 1
            start = {"line": 0, "character": 0}
            change = {"range": {"start": start, "end": start}, "text": f"# again {n}\n"}
            ed.texts[uri] = change["text"] + ed.texts[uri]
            params = {"contentChanges": [change], "textDocument": {"version": ed.versions[uri], "uri": uri}}
            ed.conn.send({"params": params, "method": "textDocument/didChange", "jsonrpc": "2.0"})
        last = f"flaky: changed to version {ed.versions[uri]}"
        await ed.wait_for(lambda: last in logged(ed), what="the last change upstream")
        # a hover is answered after everything sent before it: no change can still be on its way
        await ed.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
        changes = [m for m in logged(ed) if m.startswith("flaky: changed")]
        assert changes == [f"flaky: changed to version {v}" for v in range(2, ed.versions[uri] + 1)]
    finally:
        await ed.close()


@pytest.mark.parametrize("transport", ["stdio", "tcp"])
async def test_requests_and_changes_reach_the_upstream_in_the_editors_order(tmp_path: Path, transport: str) -> None:
    # The editor writes a hover, a change, a completion and another change at once.
    # Request handlers run in tasks; reading on before they start would pass both
    # changes on first, and the upstream would answer for the wrong text.
    ed = Editor()
    command = fixlore_cmd(f"python={server_flag('flaky.py', '--incremental')}")
    await (ed.start(command) if transport == "stdio" else start_over_tcp(ed, command))
    try:
        await ed.initialize(tmp_path, caps=PUSH_CAPS)
        uri = ed.open(tmp_path / "a.py", "x = 1\n")
        assert ed.conn is not None
        position = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        with ed.conn.corked():  # one write: fixlore finds all four in its buffer
            hover = ed.conn.start_request("textDocument/hover", position, timeout=20)
            ed.insert(uri, 0, "# one\n")
            completion = ed.conn.start_request("textDocument/completion", position, timeout=20)
            ed.insert(uri, 0, "# two\n")
        await hover
        await completion
        await ed.wait_for(lambda: "flaky: changed to version 3" in logged(ed), what="the second change upstream")
        seen = [m for m in logged(ed) if m.split()[1] in ("hover", "completion", "changed")]
        assert seen == [
            "flaky: hover",
            "flaky: changed to version 2",
            "flaky: completion",
            "flaky: changed to version 3",
        ]
    finally:
        await ed.close()


def logged(editor: Editor) -> list[str]:
    """The upstream's log lines."""
    return [p["message"] for m, p in editor.notifications if m == "window/logMessage"]


async def test_a_malformed_pull_answer_reaches_the_editor_as_it_came_and_is_not_kept(
    editor: Editor, tmp_path: Path
) -> None:
    uri = editor.open(tmp_path / "a.py", "MALFORMED\n")
    assert editor.conn is not None
    for attempt in (1, 2):
        # The editor gets the upstream's answer as it came (as it would without fixlore):
        # not JSON, so its request goes unanswered ...
        with pytest.raises(TimeoutError):
            await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=2)
        # The frame arrives, late on a loaded machine (the first request after start waits for
        # what the server still loads): wait for it rather than for a clock.
        for _ in range(200):
            if editor.conn.bad_frames == attempt:
                break
            await asyncio.sleep(0.05)
        assert editor.conn.bad_frames == attempt
        # ... and fixlore does not keep it: the same pull again asks the upstream again.
        assert len(pulls_logged(editor)) == attempt
    editor.change(uri, "x = 1\n")
    assert (await pull(editor, uri)).endswith("chars 6")
