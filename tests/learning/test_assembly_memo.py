"""A code action asked again is ranked as before, and anew once anything it was made of changed (actions/memo.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pygls.workspace import TextDocument

from fixlore.abstraction import Position, TextRange
from fixlore.knowledge import Counts, Event, EventKind, Knowledge
from fixlore.lsp.actions.assemble import LEARNED_PREFIX, Assembly, action_pattern, assemble
from fixlore.lsp.actions.memo import AssemblyMemo
from fixlore.lsp.actions.tokens import Tokens
from fixlore.lsp.hub import to_lsp_range
from fixlore.lsp.learning.fixes import LearnedFix
from tests.learning.test_assemble_twins import BEFORE, DIAG, OTHER, URI, info, learned_fix, upstream


@pytest.fixture
def knowledge(tmp_path: Path) -> Any:
    with Knowledge.open(tmp_path / "home", base=False, auto_prune=False) as k:
        yield k


def ask(
    memo: AssemblyMemo,
    knowledge: Knowledge,
    fix: LearnedFix,
    *,
    doc: TextDocument | None = None,
    actions: list[dict[str, Any]] | None = None,
    tokens: Tokens | None = None,
) -> Assembly:
    """An invoked list for the E711 diagnostic: one upstream action and one learned fix."""
    return assemble(
        uri=URI,
        doc=doc or DOC,
        language="python",
        diagnostics=[DIAG],
        upstream=actions if actions is not None else [upstream("Something else", OTHER)],
        learned=[[fix]],
        knowledge=knowledge,
        tokens=tokens or Tokens(),
        invoked=True,
        now=time.time(),
        memo=memo,
    )


DOC = TextDocument(URI, BEFORE, version=1)


def titles(assembly: Assembly) -> list[str]:
    return [a["title"] for a in assembly.actions]


def test_the_same_question_again_is_answered_from_the_plan_with_tokens_of_its_own(knowledge: Knowledge) -> None:
    memo, tokens, fix = AssemblyMemo(), Tokens(), learned_fix(Counts())
    first = ask(memo, knowledge, fix, tokens=tokens)
    again = ask(memo, knowledge, fix, tokens=tokens)
    assert memo.hits == 1
    assert titles(again) == titles(first) and len(titles(first)) == 2
    first_tokens = [a["command"]["arguments"][0] for a in first.actions]
    again_tokens = [a["command"]["arguments"][0] for a in again.actions]
    assert set(first_tokens).isdisjoint(again_tokens)
    assert all(tokens.get(t) is not None for t in again_tokens)
    # Everything but the commands is the first answer's.
    strip = [{k: v for k, v in a.items() if k != "command"} for a in first.actions]
    assert [{k: v for k, v in a.items() if k != "command"} for a in again.actions] == strip
    assert [g.ranked for g in again.groups] == [g.ranked for g in first.groups]


def test_evidence_recorded_in_between_ranks_the_question_anew(knowledge: Knowledge) -> None:
    memo, fix = AssemblyMemo(), learned_fix(Counts())
    assert titles(ask(memo, knowledge, fix))[0] == "Something else"  # no evidence: the upstream order
    for _ in range(3):
        knowledge.record(Event(EventKind.ACCEPTED, fix.pattern, "w", time.time()))
    after = ask(memo, knowledge, fix)
    assert memo.hits == 0
    assert titles(after)[0].startswith(LEARNED_PREFIX)


def test_the_upstream_turned_down_in_between_ranks_anew(knowledge: Knowledge) -> None:
    memo, fix = AssemblyMemo(), learned_fix(Counts())
    first = titles(ask(memo, knowledge, fix))
    rule_action = action_pattern("python", info(), "Something else", "quickfix")
    for _ in range(3):
        knowledge.record(Event(EventKind.REJECTED, rule_action, "w", time.time()))
        knowledge.record(Event(EventKind.MANUAL, fix.pattern, "w", time.time()))
    assert memo.hits == 0 and titles(ask(memo, knowledge, fix)) == [first[1], first[0]]


def test_a_new_version_other_actions_or_other_fixes_are_other_questions(knowledge: Knowledge) -> None:
    memo, fix = AssemblyMemo(), learned_fix(Counts())
    ask(memo, knowledge, fix)
    ask(memo, knowledge, fix, doc=TextDocument(URI, BEFORE, version=2))
    ask(memo, knowledge, fix, doc=TextDocument(URI, BEFORE + "\n", version=2))  # the same version, other text
    ask(memo, knowledge, fix, actions=[upstream("Something other", OTHER)])
    ask(memo, knowledge, learned_fix(Counts()))  # made again: other objects
    assert memo.hits == 0
    ask(memo, knowledge, fix)
    ask(memo, knowledge, fix)
    assert memo.hits == 1


def test_stamp_changes_after_a_change_of_the_rule_and_not_with_another_rule(knowledge: Knowledge) -> None:
    fix = learned_fix(Counts())
    key = fix.pattern.signature.rule_key
    other = action_pattern("python", info(), "x", "quickfix")
    before = knowledge.stamp(key)
    assert knowledge.stamp(key) == before
    knowledge.record(Event(EventKind.MANUAL, fix.pattern, "w", time.time()))
    changed = knowledge.stamp(key)
    assert changed != before
    assert other.signature.rule_key == key  # same rule: the action's evidence moves the stamp too
    knowledge.record(Event(EventKind.REJECTED, other, "w", time.time()))
    assert knowledge.stamp(key) != changed


def test_learned_fix_ranges_count_lines_at_newlines_only() -> None:
    """A form feed (a page break in Emacs) is inside a line for Python and LSP; pygls' ``lines`` breaks there."""
    text = "import os\n\x0c\nx = '\U0001d518'  # \u00e9\ny = 2\n"
    doc = TextDocument(URI, text, version=1)  # UTF-16 positions: the astral character counts two
    got = to_lsp_range(doc, TextRange(Position(2, 7), Position(3, 5)))
    assert got == {"start": {"line": 2, "character": 8}, "end": {"line": 3, "character": 5}}


def test_a_rule_is_stamped_after_its_counts_change_so_a_plan_never_hides_a_change(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan is keyed by the stamp taken before its evidence was read: the last stamp must follow the counts."""
    from fixlore.knowledge._index import Index

    fix = learned_fix(Counts())
    key = fix.pattern.signature.rule_key
    seen: list[int] = []
    touch = Index.touch

    def watched(self: Index, rule_key: Any = None, *, fixes: bool = True) -> None:
        stats = knowledge.evidence(key).get(fix.pattern.fingerprint)
        seen.append(stats.counts.manual if stats is not None else -1)
        touch(self, rule_key, fixes=fixes)

    monkeypatch.setattr(Index, "touch", watched)
    knowledge.record(Event(EventKind.MANUAL, fix.pattern, "w", time.time()))
    assert seen and seen[-1] == 1


class _Store:
    """The knowledge side :meth:`CodeActions.record_offers` writes to: the events kept."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, str]] = []

    def record(self, kind: Any, pattern: Any) -> None:
        self.events.append((kind, pattern.fingerprint))


class _Learning:
    def saw_offers(self, uri: str, version: Any, groups: Any) -> None:
        pass


def test_a_menu_opened_twice_on_one_version_is_offered_once(knowledge: Knowledge) -> None:
    from fixlore.lsp.actions.code_actions import CodeActions

    store = _Store()
    actions = CodeActions(editor=None, upstreams=None, learning=_Learning(), store=store)  # type: ignore[arg-type]
    fix = learned_fix(Counts())
    first = ask(actions.memo, knowledge, fix)
    actions.record_offers(first)
    counted = list(store.events)
    assert len(counted) == 2 and {kind for kind, _ in counted} == {EventKind.OFFERED}
    actions.record_offers(ask(actions.memo, knowledge, fix))
    assert store.events == counted and actions.memo.hits == 1  # nothing counted again: the plan stands
    actions.record_offers(ask(actions.memo, knowledge, fix, doc=TextDocument(URI, BEFORE, version=2)))
    assert len(store.events) == 4  # a new version: a new offer


def test_the_lightbulb_takes_the_plan_of_the_menu_but_the_menu_not_the_lightbulbs(knowledge: Knowledge) -> None:
    """An invoked list's plan also says what each candidate makes; the automatic lightbulb's does not."""
    memo, fix = AssemblyMemo(), learned_fix(Counts())

    def asked(invoked: bool) -> Assembly:
        return assemble(
            uri=URI,
            doc=DOC,
            language="python",
            diagnostics=[DIAG],
            upstream=[upstream("Something else", OTHER)],
            learned=[[fix]],
            knowledge=knowledge,
            tokens=Tokens(),
            invoked=invoked,
            now=time.time(),
            memo=memo,
        )

    menu = asked(True)
    bulb = asked(False)
    assert memo.hits == 1 and titles(bulb) == titles(menu)
    assert menu.offered and not bulb.offered  # only what the user invoked counts as offered
    assert asked(True).offered and memo.hits == 2  # the menu's plan is still the one kept

    memo = AssemblyMemo()
    asked(False)
    menu = asked(True)
    assert memo.hits == 0 and menu.offered  # the lightbulb's plan does not say what each candidate makes
    assert menu.groups[0].changes  # made for the menu: the learned fix's and the upstream action's edits
