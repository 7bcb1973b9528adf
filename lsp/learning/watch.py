"""What the learning loop keeps per document between events, and its verdicts (used by :mod:`.loop`).

A :class:`Watch` is an accepted or manual fix until its verdict (:func:`judge`
at the next settle) and watched for undo (:func:`undone`); the windows say for
how long. :class:`Offers` remembers the lists the user saw, to tell a fix by
hand from the actions it turned down; a :class:`Settled` state is what a
settle compares. Plain values in, plain values out: the loop records.
"""

from __future__ import annotations

import collections
import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fixlore.abstraction import Pattern, line_opcodes
from fixlore.lsp.learning.timeline import MATCH_LINES, Tracked, diag_key, diag_line, text_digest

UNDO_WINDOW_S = 30.0
"""An edit undone within this many seconds counts against its fix."""
VERIFY_WINDOW_S = 120.0
"""A verification that sees no settled, parsing state within this long is dropped."""
NEAR_LINES = 3
"""A new error this close to a fixed diagnostic means the fix broke something."""
MAX_OFFERS = 64
"""Offered lists remembered per document (to tell a fix by hand from the actions it turned down)."""
KEPT_SHARE = 0.5
"""An edit that leaves less than this share of a diagnostic's words took its code away (:func:`code_taken_away`)."""

MAX_DIFF_LINES = 400
"""Past this many changed lines (before and after) no line diff is made: what replaced them counts as a whole
(a paste over the file)."""

_WORD = re.compile(r"\w+")
_COMMENTS = ("#", "//", "/*")
"""How a line that is all comment starts (Python, the C family)."""


def near(diag: dict[str, Any], line: int) -> bool:
    """Whether ``diag`` is within :data:`NEAR_LINES` of ``line``."""
    return abs(diag_line(diag) - line) <= NEAR_LINES


@dataclass
class Watch:
    """A fix being verified (at the next settle) and watched for undo."""

    tracked: Tracked
    """The fixed diagnostic, followed through edits."""
    pattern: Pattern
    before_text: str
    started: float
    accepted: bool
    """True for an accepted code action, False for a manual fix."""
    verified: bool = False
    applied: bool = True
    """False for an action accepted at ``codeAction/resolve``, before the editor applied its
    edit: it is judged (and watched for undo) from the first change after."""
    appeared: frozenset[tuple[str, str, str]] = frozenset()
    """Keys of diagnostics that appeared next to it at a settle before its verdict: the
    fix broke something if one is still there at the verdict (a placeholder the fix
    left for the user to fill in, filled in since, broke nothing)."""


@dataclass(frozen=True, slots=True)
class Offered:
    """An invoked list the user saw for one diagnostic (to tell a fix by hand from the actions it turned down)."""

    key: tuple[str, str, str]
    line: int
    version: int | None
    patterns: tuple[Pattern, ...]
    results: dict[str, str]
    """Action's fingerprint (an upstream's or a learned fix's) -> digest of the text its edit makes."""


@dataclass(frozen=True, slots=True)
class Settled:
    """A settled state of a document: its text and the diagnostics of that version, per source."""

    version: int | None
    text: str
    by_source: dict[str, list[dict[str, Any]]]
    lagging: set[str]
    taken: float


class Verdict(enum.Enum):
    """What a settle decides of a pending :class:`Watch`."""

    WAIT = "wait"
    """An accepted action whose diagnostic left before the pause ran out: judged after it."""
    FAILED = "failed"
    SUCCEEDED = "ok"


def judge(
    watch: Watch, current: list[dict[str, Any]], new: tuple[dict[str, Any], ...], now: float, pause: float
) -> tuple[Verdict, frozenset[tuple[str, str, str]]]:
    """The verdict on ``watch`` at a settle, and the keys of the new diagnostics near it.

    Success is more than "the diagnostic left": nothing new (any source, any
    severity) may have appeared next to it, and stayed.
    """
    tracked = watch.tracked
    still = any(diag_key(d) == tracked.key and near(d, tracked.line) for d in current)
    near_new = frozenset(diag_key(d) for d in new if near(d, tracked.line))
    broke = bool(near_new) or any(diag_key(d) in watch.appeared and near(d, tracked.line) for d in current)
    if watch.accepted and not still and now - watch.started < pause:
        return Verdict.WAIT, near_new
    return (Verdict.FAILED if still or broke else Verdict.SUCCEEDED), near_new


def expired(watches: list[Watch], now: float) -> list[Watch]:
    """The watches still kept at ``now``: within the undo window, or unverified within the verify window."""
    return [w for w in watches if now - w.started < max(UNDO_WINDOW_S, 0 if w.verified else VERIFY_WINDOW_S)]


def undone(watches: list[Watch], text: str, now: float) -> list[Watch]:
    """The applied fixes whose text the document is back to within the undo window (taken out of ``watches``)."""
    found = [
        w
        for w in watches
        if w.applied and now - w.started <= UNDO_WINDOW_S and len(text) == len(w.before_text) and text == w.before_text
    ]
    for watch in found:
        watches.remove(watch)
    return found


def code_taken_away(before: str, after: str, first: int, last: int) -> bool:
    """Whether the edit from ``before`` to ``after`` removed the code of lines ``first..last`` rather than fixed it.

    Most of the words of those lines (names, numbers, the words of strings)
    are gone from what replaced them: the user deleted the statement or the
    function around it, commented it out, or rewrote it as something else.
    That is not a choice among the fixes offered for the diagnostic, and
    turns none of them down (counted as rejections, a deleted ``"%s" % x``
    once put ruff's ``.format`` fix above the user's own f-string habit for
    good). An edit elsewhere (an import added at the top) leaves the lines
    as they were: kept.
    """
    old, new = before.split("\n"), after.split("\n")
    words = collections.Counter(w for line in old[first : last + 1] for w in _WORD.findall(line))
    if not words:
        return False
    kept: collections.Counter[str] = collections.Counter()
    for tag, a1, a2, b1, b2 in line_opcodes(old, new, max_lines=MAX_DIFF_LINES):
        if a2 <= first or a1 > last:
            continue
        if tag == "equal":
            lines = old[max(a1, first) : min(a2, last + 1)]
        else:  # code commented out is taken away too
            lines = [line for line in new[b1:b2] if not line.lstrip().startswith(_COMMENTS)]
        kept.update(w for line in lines for w in _WORD.findall(line))
    return sum((words & kept).values()) < KEPT_SHARE * sum(words.values())


def _diag_lines(raw: dict[str, Any]) -> tuple[int, int]:
    """A diagnostic's first and last line (a range ending at a line's start ends on the line before)."""
    first = diag_line(raw)
    end = (raw.get("range") or {}).get("end") or {}
    last = end.get("line", first) if isinstance(end.get("line"), int) else first
    if last > first and end.get("character") == 0:
        last -= 1
    return first, max(first, last)


class Offers:
    """The actions the user was shown, upstream and learned, per document and diagnostic (key, line, version)."""

    def __init__(self) -> None:
        self._by_uri: dict[str, list[Offered]] = {}

    def saw(
        self, uri: str, version: int | None, groups: list[tuple[dict[str, Any], tuple[Pattern, ...], dict[str, str]]]
    ) -> None:
        """An invoked list: per group the diagnostic, the candidates' patterns, their edits' text digests."""
        offers = self._by_uri.setdefault(uri, [])
        for diag, patterns, results in groups:
            # Learned fixes too: one the user saw and fixed another way by hand was turned
            # down (only upstream actions were kept, so a learned `xrange` -> `range` stayed
            # preferred after the user had imported `xrange` instead, twice).
            if patterns:
                offers.append(Offered(diag_key(diag), diag_line(diag), version, tuple(patterns), results))
        del offers[:-MAX_OFFERS]

    def turned_down(
        self, uri: str, tracked: Tracked, after: str, line_now: Callable[[int, int | None], int | None]
    ) -> list[Pattern]:
        """The actions offered for ``tracked`` that the user fixed by hand (to ``after``) instead.

        That list is forgotten. Except the one whose edit makes exactly the text
        typed: that one they made themselves; and none when the edit took the
        diagnostic's code away (:func:`code_taken_away`) instead of fixing it.
        """
        offers = self._by_uri.get(uri, [])
        for i, offered in enumerate(offers):
            now = line_now(offered.line, offered.version)
            if offered.key == tracked.key and now is not None and abs(now - tracked.line) <= MATCH_LINES:
                del offers[i]
                first, last = _diag_lines(tracked.raw)
                if code_taken_away(tracked.text, after, first, last):
                    return []
                typed = text_digest(after)
                return [p for p in offered.patterns if offered.results.get(p.fingerprint) != typed]
        return []

    def forget(self, uri: str) -> None:
        """The document closed."""
        self._by_uri.pop(uri, None)
