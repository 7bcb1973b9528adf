"""CodeActions with plain dicts: upstream actions in, ranked actions with fixlore's command out (no process)."""

from __future__ import annotations

import asyncio
from typing import Any

from fixlore.abstraction import Pattern
from fixlore.knowledge import EventKind
from fixlore.lsp.actions.code_actions import CodeActions
from fixlore.lsp.actions.tokens import ACCEPT
from fixlore.lsp.learning.fixes import LearnedFix

from .fakes import FakeEditor

URI = "file:///w/probe.py"
TEXT = "import os\n"
DIAG = {
    "range": {"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 9}},
    "source": "Ruff",
    "code": "F401",
    "message": "`os` imported but unused",
}
REMOVE = {
    "title": "Remove unused import: `os`",
    "kind": "quickfix",
    "diagnostics": [DIAG],
    "edit": {
        "changes": {
            URI: [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "newText": ""}]
        }
    },
    "command": {"title": "ruff's own", "command": "ruff.applyAutofix", "arguments": [1]},
}


class Answers:
    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions = actions
        self.dropped = False

    async def answers(self) -> list[tuple[str, dict[str, Any]]]:
        return [("python:ruff", a) for a in self.actions]

    def drop(self) -> None:
        self.dropped = True


class FakeUpstreams:
    """The proxy's code-action API over a list of actions (or a failure)."""

    def __init__(self, actions: list[dict[str, Any]], *, fail: bool = False) -> None:
        self.actions = actions
        self.fail = fail
        self.resolved: list[dict[str, Any]] = []

    def start_code_actions(self, params: Any) -> Answers:
        if self.fail:
            raise ConnectionError("the upstream went away")
        return Answers(self.actions)

    async def resolve_code_action(self, action: Any) -> Any:
        self.resolved.append(action)
        return {**action, "edit": REMOVE["edit"]}


class FakeLearning:
    """The learning loop's side of code actions, and its store's: no store, it remembers the events."""

    knowledge = None
    executor = None

    def __init__(self) -> None:
        self.events: list[tuple[EventKind, Pattern]] = []
        self.offers: list[Any] = []
        self.accepted_calls: list[tuple[Any, ...]] = []
        self.asked: list[bool] = []

    async def learned_fixes(
        self, uri: str, version: int | None, diagnostic: dict[str, Any], *, invoked: bool = False
    ) -> list[LearnedFix]:
        self.asked.append(invoked)
        return []

    def record(self, kind: EventKind, pattern: Pattern) -> None:
        self.events.append((kind, pattern))

    def saw_offers(self, uri: str, version: int | None, groups: list[Any]) -> None:
        self.offers.append((uri, version, groups))

    def accepted(self, *args: Any) -> None:
        self.accepted_calls.append(args)


def request(trigger: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": URI},
        "range": DIAG["range"],
        "context": {"diagnostics": [DIAG], "triggerKind": trigger},
    }


def parts(**kw: Any) -> tuple[CodeActions, FakeUpstreams, FakeLearning]:
    editor = FakeEditor()
    editor.open(URI, TEXT)
    upstreams, learning = FakeUpstreams([REMOVE], **kw), FakeLearning()
    return CodeActions(editor, upstreams, learning, learning), upstreams, learning  # type: ignore[arg-type]


async def test_an_invoked_list_carries_fixlores_command_and_counts_as_offered() -> None:
    actions, _, learning = parts()
    answer = await actions.code_action(request(1))
    assert answer is not None and [a["title"] for a in answer] == [REMOVE["title"]]
    command = answer[0]["command"]
    assert command["command"] == ACCEPT and len(command["arguments"]) == 1
    assert answer[0]["edit"] == REMOVE["edit"]  # the upstream's edit passes unchanged
    assert learning.events == [] and learning.offers == []  # recorded after the answer is sent,
    await asyncio.sleep(0)  # on the loop's next turn
    assert [kind for kind, _ in learning.events] == [EventKind.OFFERED]
    assert len(learning.offers) == 1


async def test_an_automatic_list_is_not_counted_as_seen() -> None:
    actions, _, learning = parts()
    answer = await actions.code_action(request(2))
    assert answer is not None and answer[0]["command"]["command"] == ACCEPT
    assert learning.events == [] and learning.offers == []


async def test_learned_fixes_are_waited_for_longer_when_the_user_asked_or_the_editor_does_not_say() -> None:
    actions, _, learning = parts()
    await actions.code_action(request(2))  # the lightbulb as the cursor moves
    await actions.code_action(request(1))  # Ctrl+.
    without = request(1)
    del without["context"]["triggerKind"]  # an editor of LSP before 3.17
    await actions.code_action(without)
    assert learning.asked == [False, True, True]


async def test_a_failing_upstream_costs_its_actions_only() -> None:
    actions, _, learning = parts(fail=True)
    assert await actions.code_action(request(1)) is None
    assert learning.events == []


async def test_accepting_records_once_and_hands_back_the_upstreams_command() -> None:
    actions, _, learning = parts()
    answer = await actions.code_action(request(1))
    assert answer is not None
    offer = actions.tokens.get(answer[0]["command"]["arguments"][0])
    assert offer is not None and offer.original == REMOVE["command"]
    actions.accept(offer)
    actions.accept(offer)  # an editor may run the command twice
    assert len(learning.accepted_calls) == 1
    _, _, invoked, uri, version, diag, text, twins = learning.accepted_calls[0]
    assert (invoked, uri, version, diag, text, twins) == (True, URI, 1, DIAG, TEXT, ())


async def test_resolve_goes_to_the_owner_with_its_own_command_and_keeps_fixlores() -> None:
    actions, upstreams, _ = parts()
    answer = await actions.code_action(request(2))
    assert answer is not None
    shown = {k: v for k, v in answer[0].items() if k != "edit"}
    resolved = await actions.resolve(shown)
    assert upstreams.resolved[0]["command"] == REMOVE["command"]  # the upstream sees its own command
    assert resolved["command"] == shown["command"]  # the editor keeps fixlore's
    assert resolved["edit"] == REMOVE["edit"]


def test_two_actions_with_one_title_say_which_line_each_changes() -> None:
    from fixlore.lsp.actions.tokens import Offer, Tokens, with_command

    def action(line: int | None, document_changes: bool = False) -> dict[str, Any]:
        if line is None:
            return {"title": "Remove `from time import sleep`", "kind": "quickfix"}
        edit = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}}
        edits = [{**edit, "newText": ""}]
        if document_changes:
            return {"title": "Remove `from time import sleep`", "edit": {"documentChanges": [{"edits": edits}]}}
        return {"title": "Remove `from time import sleep`", "edit": {"changes": {URI: edits}}}

    tokens, titles = Tokens(), set[str]()
    offer = Offer(None, (), invoked=True, uri=URI, version=1, diag=None, text="", original=None, learned=False)
    out = [
        with_command(a, offer, tokens, titles)["title"] for a in (action(2), action(11), action(11, True), action(None))
    ]
    assert out == [
        "Remove `from time import sleep`",
        "Remove `from time import sleep` (line 12)",
        "Remove `from time import sleep` (2)",  # its edit names no document: numbered, as without an edit
        "Remove `from time import sleep` (3)",
    ]
