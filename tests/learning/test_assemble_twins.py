"""A learned fix that makes the same text as an upstream action is offered once (unit, :func:`assemble`)."""

from __future__ import annotations

import time
from typing import Any

from pygls.workspace import TextDocument

from fixlore.abstraction import DiagnosticInfo, Extracted, Position, Scope, TextRange, extract_pattern, instantiate
from fixlore.knowledge import Counts, PatternStats
from fixlore.lsp.actions.assemble import LEARNED_PREFIX, assemble
from fixlore.lsp.actions.tokens import Tokens
from fixlore.lsp.learning.fixes import LearnedFix

URI = "file:///w/probe.py"
BEFORE = "def check(total):\n    if total == None:\n        return 0\n    return total\n"
FIXED = "def check(total):\n    if total is None:\n        return 0\n    return total\n"
DIAG = {
    "range": {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 20}},
    "source": "Ruff",
    "code": "E711",
    "message": "Comparison to `None` should be `cond is None`",
}
SAME = {"range": {"start": {"line": 1, "character": 13}, "end": {"line": 1, "character": 15}}, "newText": "is"}
OTHER = {"range": {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 20}}, "newText": "total"}


def info() -> DiagnosticInfo:
    return DiagnosticInfo("Ruff", "E711", DIAG["message"], TextRange(Position(1, 7), Position(1, 20)))


def learned_fix(counts: Counts) -> LearnedFix:
    extracted = extract_pattern("python", BEFORE, FIXED, info())
    assert isinstance(extracted, Extracted)
    pattern = extracted.pattern
    made = instantiate(pattern, "python", BEFORE, info(), seen=2)
    stats = PatternStats(pattern.fingerprint, Scope.USER, counts, time.time(), time.time(), pattern=pattern)
    return LearnedFix(pattern=pattern, stats=stats, edits=made.edits, title=made.title)


def upstream(title: str, edit: dict[str, Any], *, preferred: bool = False) -> dict[str, Any]:
    action: dict[str, Any] = {
        "title": title,
        "kind": "quickfix",
        "diagnostics": [DIAG],
        "edit": {"changes": {URI: [edit]}},
    }
    if preferred:
        action["isPreferred"] = True
    return action


class Evidence:
    """The calls :func:`assemble` makes of the knowledge, answered from a dict (no fix made this session)."""

    def __init__(self, stats: dict[str, PatternStats]) -> None:
        self.stats = stats

    def ready(self, rule_key: Any) -> bool:
        return True

    def evidence(self, rule_key: Any) -> dict[str, PatternStats]:
        return self.stats

    def latest_fix(self, rule_key: Any) -> str | None:
        return None

    def stamp(self, rule_key: Any) -> tuple[object, ...]:
        return (id(self.stats),)


def answer(actions: list[dict[str, Any]], fix: LearnedFix, knowledge: Any = None) -> list[dict[str, Any]]:
    return assembled(URI, BEFORE, DIAG, actions, fix, knowledge)


def assembled(
    uri: str, text: str, diag: dict[str, Any], actions: list[dict[str, Any]], fix: LearnedFix, knowledge: Any
) -> list[dict[str, Any]]:
    """The actions of an invoked list for one diagnostic: the upstream's ``actions`` and one learned ``fix``."""
    out = assemble(
        uri=uri,
        doc=TextDocument(uri, text, version=1),
        language="python",
        diagnostics=[diag],
        upstream=actions,
        learned=[[fix]],
        knowledge=knowledge,
        tokens=Tokens(),
        invoked=True,
        now=time.time(),
    )
    return out.actions


def test_without_evidence_the_upstream_action_stands_and_its_learned_twin_is_left_out() -> None:
    fix = learned_fix(Counts(manual=3, succeeded=3))
    titles = [a["title"] for a in answer([upstream("Replace with `is`", SAME, preferred=True)], fix)]
    assert titles == ["Replace with `is`"]


def test_a_learned_fix_that_differs_from_every_upstream_action_is_offered() -> None:
    fix = learned_fix(Counts(manual=3, succeeded=3))
    titles = [a["title"] for a in answer([upstream("Something else", OTHER)], fix)]
    assert titles[0] == "Something else" and titles[1].startswith(LEARNED_PREFIX) and len(titles) == 2


def test_a_learned_twin_ranked_first_replaces_the_upstream_action_and_keeps_its_preferred_mark() -> None:
    fix = learned_fix(Counts(manual=3, succeeded=3))
    # The user turned the upstream action down (fixed by hand after seeing it) and made the same edit by hand.
    actions = [upstream("Replace with `is`", SAME, preferred=True)]
    first = answer(actions, fix)
    from fixlore.lsp.actions.assemble import action_pattern

    rule_action = action_pattern("python", info(), "Replace with `is`", "quickfix")
    knowledge = Evidence(
        {
            fix.pattern.fingerprint: fix.stats,
            rule_action.fingerprint: PatternStats(
                rule_action.fingerprint, Scope.USER, Counts(offered=3, rejected=3), time.time(), time.time()
            ),
        }
    )
    out = answer(actions, fix, knowledge)
    assert [a["title"] for a in first] == ["Replace with `is`"]
    assert len(out) == 1 and out[0]["title"].startswith(LEARNED_PREFIX)
    # The tool marks that very edit preferred: the learned twin that stands in for it may carry the mark.
    assert out[0].get("isPreferred") is True


def test_an_upstream_mark_goes_when_the_user_is_split_on_the_action() -> None:
    """Taken once and turned down once: not something to apply unasked."""
    from fixlore.lsp.actions.assemble import action_pattern

    fix = learned_fix(Counts())
    rule_action = action_pattern("python", info(), "Something else", "quickfix")

    def marks(counts: Counts) -> list[bool]:
        stats = PatternStats(rule_action.fingerprint, Scope.USER, counts, time.time(), time.time())
        out = answer(
            [upstream("Something else", OTHER, preferred=True)], fix, Evidence({rule_action.fingerprint: stats})
        )
        return [bool(a.get("isPreferred")) for a in out if a["title"] == "Something else"]

    assert marks(Counts(offered=2, accepted=2, succeeded=2)) == [True]
    assert marks(Counts(offered=2, accepted=1, rejected=1, succeeded=1)) == [False]


def test_a_learned_fix_is_not_preferred_when_the_user_also_makes_another_fix_offered_here() -> None:
    """Accepted and verified, but the user also takes "Something else" at times: the choice depends on the code."""
    from fixlore.lsp.actions.assemble import action_pattern

    fix = learned_fix(Counts(offered=3, accepted=3, succeeded=3, manual=2))
    rule_action = action_pattern("python", info(), "Something else", "quickfix")

    def top(other: Counts) -> dict[str, Any]:
        stats = {
            fix.pattern.fingerprint: fix.stats,
            rule_action.fingerprint: PatternStats(rule_action.fingerprint, Scope.USER, other, time.time(), time.time()),
        }
        return answer([upstream("Something else", OTHER)], fix, Evidence(stats))[0]

    alone = top(Counts(offered=3, rejected=3))
    assert alone["title"].startswith(LEARNED_PREFIX) and alone.get("isPreferred") is True
    split = top(Counts(offered=3, accepted=1, rejected=2, succeeded=1))
    assert split["title"].startswith(LEARNED_PREFIX) and not split.get("isPreferred")


def test_a_learned_fix_the_user_once_turned_down_ranks_first_and_is_never_preferred() -> None:
    """Taken five times, once fixed another way by hand: the code decides, so no editor applies it unasked."""
    from fixlore.lsp.actions.assemble import action_pattern

    rule_action = action_pattern("python", info(), "Something else", "quickfix")

    def top(counts: Counts) -> dict[str, Any]:
        fix = learned_fix(counts)
        stats = {
            fix.pattern.fingerprint: fix.stats,
            rule_action.fingerprint: PatternStats(
                rule_action.fingerprint, Scope.USER, Counts(offered=6, rejected=6), time.time(), time.time()
            ),
        }
        return answer([upstream("Something else", OTHER)], fix, Evidence(stats))[0]

    taken = top(Counts(offered=5, accepted=5, succeeded=5))
    assert taken["title"].startswith(LEARNED_PREFIX) and taken.get("isPreferred") is True
    once_not = top(Counts(offered=6, accepted=5, rejected=1, succeeded=5))
    assert once_not["title"].startswith(LEARNED_PREFIX) and "isPreferred" not in once_not
    undone = top(Counts(offered=6, accepted=6, succeeded=6, undone=1))
    assert undone["title"].startswith(LEARNED_PREFIX) and "isPreferred" not in undone


def test_taking_an_action_never_turns_its_twin_down() -> None:
    """The upstream action that makes the learned fix's very edit: taking one never turns the other down."""
    from fixlore.lsp.actions.assemble import action_pattern

    fix = learned_fix(Counts(manual=3, succeeded=3))
    rule_action = action_pattern("python", info(), "Replace with `is`", "quickfix")
    other_action = action_pattern("python", info(), "Something else", "quickfix")
    stats = {
        fix.pattern.fingerprint: fix.stats,
        rule_action.fingerprint: PatternStats(
            rule_action.fingerprint, Scope.USER, Counts(offered=9, accepted=9), time.time(), time.time()
        ),
    }
    tokens = Tokens()
    out = assemble(
        uri=URI,
        doc=TextDocument(URI, BEFORE, version=1),
        language="python",
        diagnostics=[DIAG],
        upstream=[upstream("Replace with `is`", SAME, preferred=True), upstream("Something else", OTHER)],
        learned=[[fix]],
        knowledge=Evidence(stats),
        tokens=tokens,
        invoked=True,
        now=time.time(),
    )
    titles = [a["title"] for a in out.actions]
    assert titles == [LEARNED_PREFIX + fix.title, "Something else"]  # the twin offered once: the user's habit
    offer = tokens.get(out.actions[0]["command"]["arguments"][0])
    assert offer is not None and offer.pattern is fix.pattern
    assert [p.fingerprint for p in offer.twins] == [rule_action.fingerprint]
    assert rule_action.fingerprint not in {p.fingerprint for p in offer.siblings}
    assert other_action.fingerprint in {p.fingerprint for p in offer.siblings}
    other_offer = tokens.get(out.actions[1]["command"]["arguments"][0])
    assert other_offer is not None and other_offer.twins == ()
    assert {fix.pattern.fingerprint, rule_action.fingerprint} <= {p.fingerprint for p in other_offer.siblings}
    # typing the learned fix's text by hand is not turning the learned fix down
    group = out.groups[0]
    made = group.made()
    assert made[fix.pattern.fingerprint] == made[rule_action.fingerprint]


def test_a_suppression_comes_after_every_fix_where_evidence_does_not_tell_them_apart() -> None:
    """No evidence, or each turned down alike: "Disable for this line" is last, after the learned fix too."""
    from fixlore.lsp.actions.assemble import action_pattern

    fix = learned_fix(Counts())
    disable = {"range": DIAG["range"], "newText": "total == None  # noqa: E711"}
    actions = [upstream("Something else", OTHER), upstream("Disable for this line", disable)]
    titles = [a["title"] for a in answer(actions, fix)]
    assert titles[0] == "Something else" and titles[1].startswith(LEARNED_PREFIX)
    assert titles[2] == "Disable for this line"

    once = Counts(offered=1, rejected=1)
    stats = {
        p.fingerprint: PatternStats(p.fingerprint, Scope.USER, once, time.time(), time.time(), pattern=p)
        for p in (
            fix.pattern,
            action_pattern("python", info(), "Something else", "quickfix"),
            action_pattern("python", info(), "Disable for this line", "quickfix"),
        )
    }
    titles = [a["title"] for a in answer(actions, fix, Evidence(stats))]
    assert titles[-1] == "Disable for this line"
    # and a suppression the user does take still comes first
    stats[action_pattern("python", info(), "Disable for this line", "quickfix").fingerprint] = PatternStats(
        "d", Scope.USER, Counts(offered=3, accepted=3), time.time(), time.time()
    )
    titles = [a["title"] for a in answer(actions, fix, Evidence(stats))]
    assert titles[0] == "Disable for this line"


def test_a_fix_whose_code_says_suppress_is_a_fix_and_a_suppression_comment_in_code_is_not() -> None:
    """Words outside a title's code spans say what an action does; a span is the code it writes."""
    from fixlore.lsp.actions.preferred import Item, suppresses

    def title(text: str) -> bool:
        return suppresses(Item({"title": text}))

    assert not title("Ruff (SIM105): Replace `try`-`except`-`pass` with `with contextlib.suppress(OSError): ...`")
    assert not title("Ruff (RUF100): Remove unused `noqa` directive")  # takes a suppression away
    assert not title("Replace `ignore_case` with `ignore`")
    assert title("Ruff (E711): Disable for this line")
    assert title("Suppress rule lint/style/useConst for this line")  # Biome
    assert title("Disable no-unused-vars for the entire file")  # ESLint
    assert title("Add `# pyright: ignore[reportUnusedVariable]`")
    assert title("Insert `// @ts-expect-error`")

    # ranked as a fix: ahead of the learned one (no evidence: the upstream's order), the Disable last
    fix = learned_fix(Counts())
    rewrite = "Replace `total == None` with `contextlib.suppress(total)`"
    disable = {"range": DIAG["range"], "newText": "total == None  # noqa: E711"}
    titles = [a["title"] for a in answer([upstream(rewrite, OTHER), upstream("Disable for this line", disable)], fix)]
    assert titles[0] == rewrite and titles[1].startswith(LEARNED_PREFIX) and titles[2] == "Disable for this line"
