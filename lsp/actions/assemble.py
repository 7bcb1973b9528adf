"""Assembling a code-action answer: group, rank, mark preferred, attach fixlore's command.

Pure apart from reading the in-memory knowledge index: given the request's
diagnostics, the upstreams' raw actions and the learned fixes ready for each
diagnostic, :func:`assemble` returns the actions to send and, per diagnostic,
the ranking (for ``fixlore.explain``).

Rules (issue 6): candidates of one diagnostic are its upstream actions plus
its learned fixes; with no evidence for any of them the upstream order
stands; with evidence the ranking orders them. Which one is marked preferred
is :mod:`.preferred`'s: an upstream's own mark on a fix that keeps the user's
code, or one this user takes; a learned fix when the evidence is clear and it
was accepted and worked; at most one, the top, once there is evidence; the
user's habit never promotes an action its upstream left unmarked (an unsafe
fix). Every action gets ``fixlore.accept``
with a token (:mod:`.tokens`); the upstream's own
command is kept in the token's :class:`~.tokens.Offer` and run after recording.
Titles are unique.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fixlore.abstraction import (
    DiagnosticInfo,
    Pattern,
    Position,
    TextEdit,
    TextRange,
    abstract_rule_action,
    abstract_signature,
    apply_edits,
    brings_values,
)
from fixlore.knowledge import Candidate, RankedAction, RuleKey, rank_actions
from fixlore.lsp.actions.memo import AssemblyMemo, Question
from fixlore.lsp.actions.preferred import Item, keep_vouched_marks, mark_preferred, own_edits, suppresses
from fixlore.lsp.actions.tokens import Offer, Tokens, with_command
from fixlore.lsp.hub import from_lsp_edits, to_lsp_range
from fixlore.lsp.learning.timeline import diag_info, lines_of

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from fixlore.knowledge import Knowledge
    from fixlore.lsp.learning.fixes import LearnedFix

logger = logging.getLogger(__name__)

LEARNED_PREFIX = "Apply learned fix: "


@dataclass
class GroupReport:
    """How the actions of one diagnostic ranked (for explain)."""

    diag: dict[str, Any]
    ranked: list[RankedAction]
    titles: dict[int, str]
    """``upstream_index`` of each candidate -> the title shown."""
    evidence: bool
    patterns: tuple[Pattern, ...] = ()
    """The candidates' patterns (upstream actions and learned fixes)."""
    changes: dict[str, tuple[TextEdit, ...]] = field(default_factory=dict)
    """For an invoked list: upstream actions' and learned fixes' fingerprints -> their edits (code points)."""
    source: str = ""
    """The text those edits apply to."""

    def made(self) -> dict[str, str]:
        """What each candidate of :attr:`changes` makes of :attr:`source`, by fingerprint.

        Made when the offers are recorded, after the answer is out: the first
        edit applied to a text just opened counts its lines (~0.3 ms for 100 KB),
        and the whole text copied per candidate was a good part of an invoked
        list's assembly; the answer itself compares the edits' lines only
        (:func:`same_change`).
        """
        return {fp: apply_edits(self.source, edits) for fp, edits in self.changes.items()}


@dataclass
class Plan:
    """An answer before its commands: the items in order, and per diagnostic how they ranked (kept by :mod:`.memo`)."""

    order: list[Item]
    siblings: dict[int, tuple[Pattern, ...]] = field(default_factory=dict)
    twin_of: dict[int, Pattern] = field(default_factory=dict)
    groups: list[GroupReport] = field(default_factory=list)
    offered: list[Pattern] = field(default_factory=list)
    stamps: list[tuple[RuleKey, tuple[object, ...]]] = field(default_factory=list)
    """Each rule asked about, with its :meth:`~fixlore.knowledge.Knowledge.stamp` taken before its evidence was read."""


@dataclass
class Assembly:
    """A code-action answer and how it came about."""

    actions: list[dict[str, Any]] = field(default_factory=list)
    groups: list[GroupReport] = field(default_factory=list)
    offered: list[Pattern] = field(default_factory=list)
    uri: str = ""
    version: int | None = None


def assemble(
    *,
    uri: str,
    doc: TextDocument | None,
    language: str | None,
    diagnostics: list[dict[str, Any]],
    upstream: list[Any],
    learned: list[list[LearnedFix]],
    knowledge: Knowledge | None,
    executor: Executor | None = None,
    tokens: Tokens,
    invoked: bool,
    now: float,
    memo: AssemblyMemo[Plan] | None = None,
) -> Assembly:
    """The answer to one code-action request (see the module docstring).

    With ``memo``, the same question asked again (the editor's lightbulb as the
    cursor moves: the same text, diagnostics, upstream actions, learned fixes and
    evidence) is ranked as it was (:mod:`.memo`); its actions get new tokens.
    """
    question = Question(uri, doc, language, diagnostics, upstream, learned, knowledge, invoked, now)
    plan = memo.get(question) if memo is not None else None
    if plan is None:
        plan = _plan(question, executor)
        if memo is not None:
            memo.put(question, plan)
    return _finish(question, plan, tokens)


def _plan(q: Question, executor: Executor | None) -> Plan:
    """Everything of an answer but its tokens: the items in order, and per diagnostic how they ranked."""
    uri, doc, language, diagnostics, knowledge = q.uri, q.doc, q.language, q.diagnostics, q.knowledge
    invoked = q.invoked
    items = [Item(dict(a)) for a in q.upstream if isinstance(a, dict) and isinstance(a.get("title"), str)]
    for item in items:
        item.group = _group_of(item.action, diagnostics)
    lines = lines_of(doc.source) if doc is not None and diagnostics else ()  # a light bulb without any: no split
    num_units = doc.position_codec.client_num_units if doc is not None else len
    source = doc.source if doc is not None else None
    plan = Plan(order=list(items))
    for g, diag in enumerate(diagnostics):
        members = [it for it in items if it.group == g]
        fixes = q.learned[g] if g < len(q.learned) else []
        if language is None or (not members and not fixes):
            continue
        info = diag_info(diag, lines, num_units)
        for it in members:
            it.pattern = action_pattern(language, info, it.action["title"], str(it.action.get("kind") or ""))
        extra = [_learned_item(uri, doc, lines, diag, fix, g) for fix in fixes if doc is not None]
        made = _own_changes(members, uri, lines, num_units) if source is not None and (fixes or invoked) else {}
        twins = _twins(lines, [fix.edits for fix in fixes], extra, members, made) if made and extra else {}
        # A suppression after every fix, learned ones too: where evidence does not tell
        # them apart (none yet, or each turned down alike), "Disable for this line" is last.
        group = [it for it in members if not suppresses(it)] + extra + [it for it in members if suppresses(it)]
        candidates = [Candidate(key=_key(it), pattern=it.pattern, upstream_index=i) for i, it in enumerate(group)]
        rule_key = abstract_signature(language, info).rule_key
        if knowledge is not None:
            plan.stamps.append((rule_key, knowledge.stamp(rule_key)))  # before the evidence is read (memo.py)
        evidence = _evidence(knowledge, rule_key, executor)
        keep_vouched_marks(members, uri, lines, num_units, evidence)
        latest = knowledge.latest_fix(rule_key) if knowledge is not None else None
        shipped = _shipped(evidence, candidates)
        ranked = rank_actions(candidates, evidence, now=q.now, latest=latest, shipped=shipped)
        has_evidence = any(c.key in evidence for c in candidates)
        if has_evidence:
            ranked_items = [group[r.candidate.upstream_index] for r in ranked]
            ranked_items, kept = _one_of_twins(ranked_items, twins)
            mark_preferred(ranked_items, [ranked[i] for i in kept], evidence)
            plan.order = _reslot(plan.order, group, ranked_items)
        elif extra:
            plan.order = _reslot(plan.order, members, _one_of_twins(group, twins)[0])
        patterns = tuple(it.pattern for it in group if it.pattern is not None)
        made_by = (
            {it.pattern.fingerprint: made[id(it)] for it in members if id(it) in made and it.pattern} if invoked else {}
        )
        if invoked and source is not None:
            # What each learned fix makes too: typing exactly that by hand is not turning it down.
            made_by.update({fix.pattern.fingerprint: fix.edits for fix in fixes})
        titles_of = {i: it.action["title"] for i, it in enumerate(group)}
        plan.groups.append(GroupReport(diag, ranked, titles_of, has_evidence, patterns, made_by, source or ""))
        plan.siblings[g] = patterns
        plan.twin_of.update(_twin_patterns(twins, group))
        if invoked:
            plan.offered.extend(patterns)
    for item in plan.order:
        if item.pattern is None and item.group is None and language is not None and not item.learned:
            item.pattern = source_action_pattern(language, item.action)
    return plan


def _finish(q: Question, plan: Plan, tokens: Tokens) -> Assembly:
    """The answer: each action of ``plan`` with a title of its own and fixlore's command (a new token)."""
    version = q.doc.version if q.doc is not None else None
    # A plan made for an invoked list may answer the lightbulb: only a list the user invoked is offered.
    offered = list(plan.offered) if q.invoked else []
    out = Assembly(uri=q.uri, version=version, groups=list(plan.groups), offered=offered)
    text = q.doc.source if q.doc is not None else ""
    titles: set[str] = set()
    for item in plan.order:
        item_diag = q.diagnostics[item.group] if item.group is not None else None
        twin = plan.twin_of.get(id(item))
        siblings = plan.siblings.get(item.group, ()) if item.group is not None else ()
        offer = Offer(
            pattern=item.pattern,
            siblings=tuple(p for p in siblings if p is not twin),
            twins=(twin,) if twin is not None else (),
            invoked=q.invoked,
            uri=q.uri,
            version=version,
            diag=item_diag,
            text=text,
            original=None,
            learned=item.learned,
        )
        out.actions.append(with_command(item.action, offer, tokens, titles))
    return out


def _evidence(
    knowledge: Knowledge | None, rule_key: tuple[str, str, str], executor: Executor | None
) -> Mapping[str, Any]:
    """Evidence from memory only, never the disk.

    A rule key not in memory is read by a worker; this request keeps the
    upstream order, and the next one is ranked.
    """
    if knowledge is None:
        return {}
    if not knowledge.ready(rule_key):
        if executor is not None:
            executor.submit(knowledge.preload, rule_key)
        return {}
    return knowledge.evidence(rule_key)


def _shipped(evidence: Mapping[str, Any], candidates: list[Candidate]) -> dict[str, Any] | None:
    """The base knowledge's stats of the candidates that have some (ranking breaks ties with them)."""
    lookup = getattr(evidence, "shipped", None)  # an EvidenceView; a plain mapping (no knowledge) has none
    if lookup is None:
        return None
    return {c.key: stats for c in candidates if (stats := lookup(c.key)) is not None}


_NO_RANGE = TextRange(Position(0, 0), Position(0, 0))


def source_action_pattern(language: str, action: dict[str, Any]) -> Pattern:
    """The identity of an action for no diagnostic (fix all, organize imports).

    It has no rule, so it is keyed by its kind: accepting "Fix all auto-fixable
    problems" is then recorded like any other choice.
    """
    return _source_action_pattern(language, str(action["title"]), str(action.get("kind") or ""))


@functools.lru_cache(maxsize=256)
def _source_action_pattern(language: str, title: str, kind: str) -> Pattern:
    """The same few actions come with every light bulb: worked out once (a pattern is frozen)."""
    info = DiagnosticInfo(source="source-action", code=kind, message="", range=_NO_RANGE)
    return action_pattern(language, info, title, kind)


def action_pattern(language: str, info: DiagnosticInfo, title: str, kind: str) -> Pattern:
    """An upstream action's identity at the level of its rule (see :func:`abstract_rule_action`)."""
    return abstract_rule_action(language, info, title, kind)


def _key(item: Item) -> str:
    """The ranking's key: the pattern's, so its evidence counts; none for a fix that guesses a recalled name.

    Such a fix guesses a name from elsewhere; the pattern's evidence is that of
    the places the name came from, so it ranks by the upstream's order, after
    the upstream's own fixes (:class:`~fixlore.lsp.learning.fixes.LearnedFix`).
    A recalled fix that fits a run of whole statements is no guess there: it
    ranks on its pattern's evidence (still never preferred).
    """
    if item.pattern is None or item.guess:
        return f"untracked:{id(item)}"
    return item.pattern.fingerprint


def _group_of(action: dict[str, Any], diagnostics: list[dict[str, Any]]) -> int | None:
    """Which context diagnostic an upstream action is for (by code and range, then code and message)."""
    own = action.get("diagnostics")
    if not isinstance(own, list) or not own or not isinstance(own[0], dict):
        return None
    first = own[0]
    for i, diag in enumerate(diagnostics):
        if diag.get("code") == first.get("code") and diag.get("range") == first.get("range"):
            return i
    for i, diag in enumerate(diagnostics):
        if diag.get("code") == first.get("code") and diag.get("message") == first.get("message"):
            return i
    return None


def _own_changes(
    members: list[Item], uri: str, lines: tuple[str, ...], num_units: Any
) -> dict[int, tuple[TextEdit, ...]]:
    """Each upstream action's inline edits of the document, in code points (by the item's id).

    Once per request, and only for a list that has learned fixes or was invoked:
    they find learned fixes' twins, and (after the answer) what a fix typed by hand may equal.
    """
    out: dict[int, tuple[TextEdit, ...]] = {}
    for item in members:
        edits = own_edits(item.action, uri)
        if not edits:
            continue
        try:
            out[id(item)] = tuple(from_lsp_edits(lines, edits, num_units))
        except (KeyError, TypeError, ValueError):  # an edit the upstream got wrong
            continue
    return out


def _twins(
    lines: tuple[str, ...],
    ours: list[tuple[TextEdit, ...]],
    extra: list[Item],
    members: list[Item],
    made: dict[int, tuple[TextEdit, ...]],
) -> dict[int, Item]:
    """Learned fixes that make the same text as an upstream action of the diagnostic: id -> that action.

    ``ours``: each learned fix's edits, ``made``: each upstream action's (by id).

    Such a fix is the upstream's own (learned from accepting it, or made by hand as
    the tool makes it): it is offered once (:func:`_one_of_twins`).
    """
    twins: dict[int, Item] = {}
    for edits, learned_item in zip(ours, extra, strict=True):
        twin = next((it for it in members if id(it) in made and same_change(lines, made[id(it)], edits)), None)
        if twin is not None:
            twins[id(learned_item)] = twin
    return twins


def same_change(lines: Sequence[str], a: Sequence[TextEdit], b: Sequence[TextEdit]) -> bool:
    """Whether two sets of edits make the same text of a document (``lines``: its text split, one line at least).

    Only the lines they touch are compared: the rest of the text is the same
    either way, and copying a long file per candidate was a good part of an
    invoked list's assembly.
    """
    last = len(lines) - 1
    touched = [e.range.start.line for e in (*a, *b)] + [e.range.end.line for e in (*a, *b)]
    lo = min(max(min(touched, default=0), 0), last)
    hi = min(max(max(touched, default=0), lo), last)
    window = "\n".join(lines[lo : hi + 1]) + ("\n" if hi < last else "")  # the lines' own text, newlines too

    def moved(edits: Sequence[TextEdit]) -> list[TextEdit]:
        """The edits in the window's lines (a line before the text's first is its first in both)."""
        return [
            TextEdit(
                TextRange(
                    Position(e.range.start.line - lo, e.range.start.character),
                    Position(e.range.end.line - lo, e.range.end.character),
                ),
                e.new_text,
            )
            for e in edits
        ]

    return apply_edits(window, moved(a)) == apply_edits(window, moved(b))


def _twin_patterns(twins: dict[int, Item], group: list[Item]) -> dict[int, Pattern]:
    """Each twin's pattern by the other's id, both ways: taking one does not turn the other down."""
    by_id = {id(it): it for it in group}
    out: dict[int, Pattern] = {}
    for learned_id, upstream_item in twins.items():
        learned_item = by_id.get(learned_id)
        if learned_item is None or learned_item.pattern is None or upstream_item.pattern is None:
            continue
        out[learned_id] = upstream_item.pattern
        out[id(upstream_item)] = learned_item.pattern
    return out


def _one_of_twins(items: list[Item], twins: dict[int, Item]) -> tuple[list[Item], list[int]]:
    """``items`` (best first) with the later of each learned/upstream twin left out, and the kept indices.

    A learned fix kept over its twin takes the upstream's ``isPreferred``: the tool
    vouches for that very edit.
    """
    dropped: set[int] = set()
    for i, item in enumerate(items):
        twin = twins.get(id(item))
        if twin is None or id(twin) in dropped:
            continue
        j = next((k for k, it in enumerate(items) if it is twin), None)
        if j is None:
            continue
        if j < i:
            dropped.add(id(item))
        else:
            dropped.add(id(twin))
            if twin.action.get("isPreferred"):
                item.action["isPreferred"] = True
                item.verified = True
    kept = [i for i, it in enumerate(items) if id(it) not in dropped]
    return [items[i] for i in kept], kept


def _learned_item(
    uri: str, doc: TextDocument, lines: Sequence[str], diag: dict[str, Any], fix: LearnedFix, g: int
) -> Item:
    edits = [{"range": to_lsp_range(doc, e.range, lines), "newText": e.new_text} for e in fix.edits]
    action = {
        "title": LEARNED_PREFIX + fix.title,
        "kind": "quickfix",
        "diagnostics": [diag],
        "edit": {"changes": {uri: edits}},
    }
    counts = fix.stats.own_counts()
    # Verified as fixlore applies it: accepted from this list before, and it has worked
    # more often than not. Hand-made fixes alone show the habit, not that the instance is right.
    # A fix that brings in a value or a jump (`pass` -> `return True`) chooses what the code
    # does: it may rank first on the habit, never be applied unasked.
    shape = fix.pattern.shape
    verified = (
        counts.accepted >= 1
        and counts.succeeded > counts.failed
        and (shape is None or brings_values(shape.before, shape.after) is None)
    )
    return Item(
        action,
        pattern=fix.pattern,
        learned=True,
        group=g,
        verified=verified and not fix.recalled,
        guess=fix.recalled and not fix.run,
    )


def _reslot(order: list[Item], old: list[Item], new: list[Item]) -> list[Item]:
    """Put ``new`` (the group, reordered, maybe longer) where ``old`` stood in ``order``."""
    old_ids = {id(it) for it in old}
    slots = [i for i, it in enumerate(order) if id(it) in old_ids]
    if not slots:
        # Only learned fixes: before the actions that belong to no diagnostic (source.*).
        at = next((i for i, it in enumerate(order) if it.group is None), len(order))
        return order[:at] + new + order[at:]
    rest = [it for it in order if id(it) not in old_ids]
    before = sum(1 for i, it in enumerate(order) if id(it) not in old_ids and i < slots[0])
    return rest[:before] + new + rest[before:]
