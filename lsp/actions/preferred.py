"""Which code action, if any, is marked preferred: the one fixlore can vouch for.

Editors apply a preferred fix without asking (VS Code's Auto Fix and fix on
save, Neovim's ``code_action({apply = true})``), so a mark is a promise. Who
vouches, by the module :mod:`.assemble` calls here:

* the upstream tool, for a fix that keeps the user's code (:func:`keep_vouched_marks`):
  ruff sends ``false`` for its unsafe fixes, Biome leaves them unmarked;
* the user's habit, for an upstream fix that deletes some of the user's code
  (a name, an attribute name, a number: ``super(Cls, self)`` -> ``super()``,
  removing an unused import): the tool calls it safe, but only this user can
  say it is what they want, so its mark stands once they have taken it;
* verification, for a learned fix (:func:`may_be_preferred`).

A suppression never is. With evidence, at most one action, the top of the
ranking, is preferred (:func:`mark_preferred`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fixlore.abstraction import FixCategory, Pattern, TextRange, writes_suppression
from fixlore.abstraction.keeps import deletes_code
from fixlore.lsp.hub import from_lsp_edits

if TYPE_CHECKING:
    from fixlore.knowledge import Counts, RankedAction


@dataclass
class Item:
    """A candidate action of one code-action answer, as assembly and marking see it."""

    action: dict[str, Any]
    pattern: Pattern | None = None
    learned: bool = False
    group: int | None = None
    verified: bool = True
    """For a learned fix: accepted before, and it has succeeded more often than it failed."""
    guess: bool = False
    """For a learned fix: it brings in names recalled from the user's fixes elsewhere, not on a run of
    statements its pattern fits: a guess, ranked without the pattern's evidence (never preferred either way)."""


_SUPPRESSION = re.compile(r"(?i)\b(disable|suppress|ignore|noqa)\b")
"""A word of the title that says the action silences the diagnostic ("Disable for this line")."""
_CODE_SPAN = re.compile(r"`[^`]*`")


def may_be_preferred(item: Item) -> bool:
    """Whether an action may carry ``isPreferred``.

    Editors apply a preferred fix without asking (VS Code's Auto Fix, fix on
    save): a suppression never is, whatever the user's habit (it may still
    rank first), and a learned fix only once verification says it works.
    """
    return not suppresses(item) and item.verified


def suppresses(item: Item) -> bool:
    """Whether an action is a suppression (a title that says so, or a pattern of that category).

    The title's words outside its code spans say what the action does; a code
    span is code the action writes or names. ruff's SIM105 fix, "Replace
    `try`-`except`-`pass` with `with contextlib.suppress(Exception): ...`",
    rewrites the code and is no suppression (read as one, it was ranked after
    every learned fix and never preferred); "Remove unused `noqa` directive"
    takes one away. A span that writes a suppression comment ("Add `# pyright:
    ignore[...]`") does make one.
    """
    if title_suppresses(str(item.action.get("title", ""))):
        return True
    return item.pattern is not None and item.pattern.category is FixCategory.ADD_SUPPRESSION


def title_suppresses(title: str) -> bool:
    """Whether an action's title says it suppresses (see :func:`suppresses`)."""
    if _SUPPRESSION.search(_CODE_SPAN.sub(" ", title)):
        return True
    return any(writes_suppression(span) for span in _CODE_SPAN.findall(title))


def mark_preferred(
    ranked_items: list[Item], ranked: list[RankedAction], evidence: Mapping[str, Any] | None = None
) -> None:
    """At most one preferred, the top of the ranking, and only when something vouches for it.

    Editors apply a preferred fix unasked, so the user's habit alone does not
    make one: the top keeps its upstream's own mark (the tool calls the fix
    safe: ruff sends ``false`` for its unsafe fixes, Biome leaves them
    unmarked) unless this user turns that action down as often as they take
    it; a learned fix is preferred when the ranking says the evidence is
    clear, it was accepted and worked (:func:`may_be_preferred`), the user
    has made no other of the fixes offered (:func:`rivals`) and has never
    turned it down (:func:`ever_turned_down`). A suppression
    never is.
    """
    if not ranked_items:
        return
    top = ranked_items[0]
    vouched = top.action.get("isPreferred") is True or (
        top.learned and bool(ranked) and ranked[0].preferred and not rivals(top, ranked_items, evidence)
    )
    keep = vouched and may_be_preferred(top) and not turned_down(top, evidence)
    keep = keep and not (top.learned and ever_turned_down(top, evidence))
    for item in ranked_items:
        item.action.pop("isPreferred", None)
    if keep:
        top.action["isPreferred"] = True


def rivals(top: Item, items: list[Item], evidence: Mapping[str, Any] | None) -> bool:
    """Whether the user has also made another of these fixes (taken it, or made it by hand).

    Two habits for one diagnostic (``xrange`` -> ``range`` here, an import of
    ``xrange`` there) mean the choice depends on the code: neither is applied unasked.
    """
    if not evidence:
        return False
    for item in items:
        if item is top or item.pattern is None or suppresses(item):
            continue
        stats = evidence.get(item.pattern.fingerprint)
        if stats is not None and (own := stats.own_counts()).accepted + own.manual > 0:
            return True
    return False


def ever_turned_down(item: Item, evidence: Mapping[str, Any] | None) -> bool:
    """Whether this user has turned this learned fix down (made another fix instead) or undone it.

    fixlore vouches for its own fixes, so it holds them to more than a majority: a
    user who once fixed the same diagnostic another way (``xrange`` -> ``range`` in
    one file, an import of ``xrange`` in the next) chooses by the code at hand, and
    an editor applying the fix unasked would choose for them. It still ranks first.
    """
    own = _own(item, evidence)
    return own is not None and own.rejected + own.undone > 0


def turned_down(item: Item, evidence: Mapping[str, Any] | None) -> bool:
    """Whether this user turns the action down (or undoes it) at least as often as they take it.

    A preferred fix is applied unasked: a user who is split on it has not
    asked for that.
    """
    own = _own(item, evidence)  # an import's accepts do not outvote what this user did
    if own is None:
        return False
    against = own.rejected + own.undone
    return against > 0 and against >= own.accepted


def keep_vouched_marks(
    members: list[Item], uri: str, lines: tuple[str, ...], num_units: Any, evidence: Mapping[str, Any] | None
) -> None:
    """Take the upstream's ``isPreferred`` off a fix that deletes the user's code, unless this user takes it.

    "Takes it": has accepted it from the list or made it by hand, and has never
    turned it down (fixed that diagnostic another way) or undone it: the bar of
    fixlore's own learned fixes (:func:`ever_turned_down`), since a user who
    converts ``.format`` calls with ruff's fix here and rewrites the string by
    hand there chooses by the code at hand. It still ranks by the habit. An
    edit fixlore cannot read here (resolved later, another document) keeps the
    tool's mark.
    """
    for item in members:
        if item.action.get("isPreferred") is not True:
            continue
        regions = _replaced(item.action, uri, lines, num_units)
        if regions is not None and deletes_code(regions) and not _taken(item, evidence):
            item.action.pop("isPreferred")


def _taken(item: Item, evidence: Mapping[str, Any] | None) -> bool:
    own = _own(item, evidence)
    return own is not None and own.accepted + own.manual > 0 and not ever_turned_down(item, evidence)


def _own(item: Item, evidence: Mapping[str, Any] | None) -> Counts | None:
    """This user's own counts for the item's pattern (not an import's), or ``None`` without evidence."""
    if not evidence or item.pattern is None:
        return None
    stats = evidence.get(item.pattern.fingerprint)
    return None if stats is None else stats.own_counts()


def _replaced(action: dict[str, Any], uri: str, lines: tuple[str, ...], num_units: Any) -> list[tuple[str, str]] | None:
    """Each inline edit of ``uri`` as (the text it replaces, its new text), or ``None``."""
    edits = own_edits(action, uri)
    if not edits or not lines:
        return None
    try:
        return [(_replaced_text(lines, e.range), e.new_text) for e in from_lsp_edits(lines, edits, num_units)]
    except (KeyError, TypeError, ValueError):  # an edit the upstream got wrong
        return None


_QUOTES = frozenset({"'", '"'})


def _replaced_text(lines: tuple[str, ...], rng: TextRange) -> str:
    """The code points of ``rng``; on one line with the quote after it, if any (a string prefix is then one)."""
    (l0, c0), (l1, c1) = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    if l0 == l1:
        return lines[l0][c0 : c1 + (lines[l0][c1 : c1 + 1] in _QUOTES)]
    return "\n".join((lines[l0][c0:], *lines[l0 + 1 : l1], lines[l1][:c1]))


def own_edits(action: dict[str, Any], uri: str) -> list[dict[str, Any]]:
    """An action's inline edits of ``uri`` (none if it edits another document or is resolved later)."""
    edit = action.get("edit")
    if not isinstance(edit, dict):
        return []
    changes = edit.get("changes")
    if isinstance(changes, dict):
        found = changes.get(uri)
        return found if isinstance(found, list) and len(changes) == 1 else []
    documents = edit.get("documentChanges")
    if isinstance(documents, list) and len(documents) == 1 and isinstance(documents[0], dict):
        doc = documents[0]
        same = isinstance(doc.get("textDocument"), dict) and doc["textDocument"].get("uri") == uri
        edits = doc.get("edits")
        return edits if same and isinstance(edits, list) else []
    return []
