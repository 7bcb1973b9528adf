"""Per-document timelines of diagnostics: what vanished between two settled states.

The learning loop needs to know when a diagnostic *went away* and what the text
looked like before and after. A document's timeline keeps, in memory only:

* the **baseline**: the diagnostics of the last *settled* state (the user had
  paused, or saved, and the file parsed), each with the text it was seen in;
* the line of each baseline diagnostic, shifted through every edit since, so a
  diagnostic is matched by its signature and where it moved to, not by its old
  range (lines inserted above it move it down);
* the version of the latest published diagnostics.

:func:`compare` is the pure heart: baseline vs. now gives the diagnostics that
vanished, the ones that stayed and the ones that are new. Nothing here reads
the disk or logs text.
"""

from __future__ import annotations

import functools
import hashlib
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fixlore.abstraction import DiagnosticInfo, Position, TextRange, common_ends, line_opcodes
from fixlore.lsp.transport.text_sync import to_code_points

MATCH_LINES = 3
"""A diagnostic moved by at most this many lines (beyond the shift) is the same one."""

ERROR = 1
CHANGE_LOG = 200


def diag_key(diag: dict[str, Any]) -> tuple[str, str, str]:
    """What makes two raw LSP diagnostics "the same problem": source, code, message.

    Also all a diagnostic's signature needs (:class:`DiagnosticInfo` without the range).
    """
    code = diag.get("code")
    return (str(diag.get("source") or ""), "" if code is None else str(code), str(diag.get("message") or ""))


def diag_line(diag: dict[str, Any]) -> int:
    """The start line of a raw LSP diagnostic."""
    try:
        return int(diag["range"]["start"]["line"])
    except (KeyError, TypeError, ValueError):
        return 0


@dataclass
class Tracked:
    """A diagnostic of a settled state, followed through later edits."""

    raw: dict[str, Any]
    version: int | None
    """The document version it was seen in (its text is ``text``)."""
    text: str
    line: int
    """Its start line in the *current* text (shifted through edits)."""
    touched: bool = False
    """An edit since then overlapped its own lines."""
    origin: str = ""
    """The diagnostics hub's key of the source that reported it (``""`` if unknown)."""
    broken: bool = False
    """Seen in a settled state that did not parse (a syntax error the user left standing)."""
    explained: bool = False
    """An accepted action's edit rewrote its lines: if it vanishes, the tool fixed it, not the user."""

    def same_as(self, other: Tracked) -> bool:
        """The same diagnostic as ``other``: same key, within :data:`MATCH_LINES` lines."""
        return self.key == other.key and abs(self.line - other.line) <= MATCH_LINES

    @property
    def key(self) -> tuple[str, str, str]:
        """See :func:`diag_key`."""
        return diag_key(self.raw)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Baseline vs. now."""

    vanished: tuple[Tracked, ...]
    stayed: tuple[tuple[Tracked, dict[str, Any]], ...]
    new: tuple[dict[str, Any], ...]


def compare(baseline: Sequence[Tracked], current: Sequence[dict[str, Any]]) -> Comparison:
    """Match baseline diagnostics to current ones by key and (shifted) line, nearest pairs first.

    Nearest first over all pairs, not per baseline diagnostic: of two equal
    diagnostics three lines apart, the one whose line is no longer reported
    is the one that vanished.
    """
    free: dict[tuple[str, str, str], list[tuple[int, dict[str, Any]]]] = {}
    for i, diag in enumerate(current):
        free.setdefault(diag_key(diag), []).append((i, diag))
    pairs: list[tuple[int, int, int]] = []
    for b, tracked in enumerate(baseline):
        for i, diag in free.get(tracked.key, ()):
            distance = abs(diag_line(diag) - tracked.line)
            if distance <= MATCH_LINES:
                pairs.append((distance, b, i))
    pairs.sort()
    matched: dict[int, int] = {}
    used: set[int] = set()
    for _, b, i in pairs:
        if b not in matched and i not in used:
            matched[b] = i
            used.add(i)
    order = sorted(range(len(baseline)), key=lambda b: baseline[b].line)
    vanished = tuple(baseline[b] for b in order if b not in matched)
    stayed = tuple((baseline[b], current[matched[b]]) for b in order if b in matched)
    new = tuple(d for i, d in enumerate(current) if i not in used)
    return Comparison(vanished, stayed, new)


def shift_line(line: int, start: int, end: int, new_lines: int) -> tuple[int, bool]:
    """Where ``line`` goes when lines ``start..end`` are replaced by text with ``new_lines`` newlines.

    Returns the new line and whether the edit touched it.
    """
    if line < start:
        return line, False
    if line > end:
        return line + new_lines - (end - start), False
    return min(line, start + new_lines), True


def change_spans(raw_changes: Iterable[Any]) -> list[tuple[int, int, int]] | None:
    """``(start line, end line, newlines inserted)`` of each raw content change.

    ``None`` if a change replaced the whole text (positions are then unknown).
    """
    spans: list[tuple[int, int, int]] = []
    for change in raw_changes:
        if not isinstance(change, dict) or "range" not in change:
            return None
        try:
            start = int(change["range"]["start"]["line"])
            end = int(change["range"]["end"]["line"])
        except (KeyError, TypeError, ValueError):
            return None
        spans.append((start, end, str(change.get("text", "")).count("\n")))
    return spans


WIDE_LINES = 3
"""A change replacing at least this many lines is diffed line by line."""


def _wide(spans: list[tuple[int, int, int]] | None) -> bool:
    return spans is None or any(end - start >= WIDE_LINES or new_lines >= WIDE_LINES for start, end, new_lines in spans)


def diff_spans(old_text: str, new_text: str) -> list[tuple[int, int, int]]:
    """The changed lines of two texts as :func:`change_spans` gives them, bottom first.

    Each span replaces whole lines ``a1..a2-1`` by ``b2-b1`` lines; bottom
    first, so each is in the coordinates the ones before it left. Only what
    lies between the first and the last changed line is diffed: a line diff of
    a whole 3,000-line file took the event loop ~16 ms for a fix of four lines
    typed in one change (a real-fix replay).
    """
    opcodes = line_opcodes(old_text.split("\n"), new_text.split("\n"))
    spans = [(a1, a2 - 1, (b2 - b1) - 1) for tag, a1, a2, b1, b2 in opcodes if tag != "equal"]
    return spans[::-1]


@functools.lru_cache(maxsize=8)
def lines_of(text: str) -> tuple[str, ...]:
    """``text`` split into lines, once per text (every publish and code action of a version needs it)."""
    return tuple(text.split("\n"))


def diag_info(raw: dict[str, Any], text: str | Sequence[str], num_units: Callable[[str], int]) -> DiagnosticInfo:
    r"""A raw LSP diagnostic as abstraction's :class:`DiagnosticInfo`, in code points of ``text``.

    ``text`` may be given already split into lines (:func:`lines_of`).
    """
    lines = lines_of(text) if isinstance(text, str) else text

    def pos(p: Any) -> Position:
        try:
            line, char = int(p["line"]), int(p["character"])
        except (KeyError, TypeError, ValueError):
            return Position(0, 0)
        if line >= len(lines):
            return Position(max(len(lines) - 1, 0), len(lines[-1]) if lines else 0)
        return Position(line, to_code_points(lines[line], char, num_units))

    rng = raw.get("range") or {}
    return DiagnosticInfo(*diag_key(raw), range=TextRange(pos(rng.get("start") or {}), pos(rng.get("end") or {})))


@dataclass
class DocTimeline:
    """Everything the learning loop remembers about one open document (memory only)."""

    uri: str
    baseline: list[Tracked] = field(default_factory=list)
    settled_version: int | None = None
    latest_version: int | None = None
    positions_lost: bool = False
    """A full-text change came in: baseline lines are guesses."""
    followed: list[Tracked] = field(default_factory=list)
    """Diagnostics the learning loop verifies (accepted actions, manual fixes)."""
    changes: deque[tuple[int | None, list[tuple[int, int, int]] | None]] = field(
        default_factory=lambda: deque(maxlen=CHANGE_LOG)
    )
    """``(version after, spans)`` of recent changes, to shift lines seen at an older version."""
    text: str | None = None
    """The text as of the last change seen (to diff a change that replaces many lines)."""
    changed_at: float = 0.0
    """``time.monotonic()`` of the open or the last change (how long sources have had to report)."""

    def apply_change(
        self, version: int | None, raw_changes: Iterable[Any], old_text: str | None = None, new_text: str | None = None
    ) -> None:
        """Shift the baseline through one ``didChange``'s content changes.

        A change over many lines (an editor, a formatter or a tool sending the
        whole text back) is replaced by the line diff of the two texts, when
        they are given: lines it did not change keep their diagnostics.
        """
        changes = list(raw_changes)
        spans = change_spans(changes)
        if old_text is not None and new_text is not None and _wide(spans):
            spans = diff_spans(old_text, new_text)
        self.changes.append((version, spans))
        if spans is None:
            self.positions_lost = True
            return
        for start, end, new_lines in spans:
            for tracked in (*self.baseline, *self.followed):
                tracked.line, touched = shift_line(tracked.line, start, end, new_lines)
                tracked.touched = tracked.touched or touched

    def carry_to_now(self, version: int | None) -> None:
        """Move the lines of the baseline just taken at ``version`` through the edits made since."""
        for tracked in self.baseline:
            if tracked.version == version:
                line = self.line_now(tracked.line, version)
                if line is None:
                    self.positions_lost = True  # a whole-text change since: matched by key
                else:
                    tracked.line = line

    def line_now(self, line: int, version: int | None) -> int | None:
        """Where a line of ``version``'s text is now (``None`` if unknown)."""
        if version is None:
            return None
        if len(self.changes) == CHANGE_LOG and (self.changes[0][0] or 0) > version + 1:
            return None  # older than the change log reaches
        for v, spans in self.changes:
            if v is None or v <= version:
                continue
            if spans is None:
                return None
            for start, end, new_lines in spans:
                line, _ = shift_line(line, start, end, new_lines)
        return line

    def explain_edit(self, version: int | None, before: str, after: str) -> None:
        """An accepted action turned ``before`` into ``after``: what it fixed on its lines is the tool's fix.

        The baseline's diagnostics of ``version`` on the lines the edit rewrote or
        removed are marked :attr:`Tracked.explained`. Only those of the state the
        action was offered in, whose lines are the ones the edit was made to
        (carrying an older baseline's lines to that text measured no better in the
        ranking benchmark: left to the settle, as before).
        """
        span = rewritten_lines(before, after)
        if span is None:
            return
        first, last = span
        for tracked in self.baseline:
            if tracked.version == version and first <= diag_line(tracked.raw) <= last:
                tracked.explained = True

    def published(self, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        """Remember the version of the latest merged diagnostics."""
        self.latest_version = version

    def settle(
        self,
        version: int | None,
        text: str,
        diagnostics: Sequence[dict[str, Any]],
        *,
        origins: Sequence[str] | None = None,
        lagging: Collection[str] = (),
    ) -> Comparison:
        """Compare the baseline with ``diagnostics`` and make them the new baseline.

        ``origins`` names each diagnostic's source (hub key). Sources in
        ``lagging`` have not reported for this version: their baseline
        diagnostics are neither compared (not reported yet is not fixed) nor
        dropped; they stay in the baseline as they are.
        """
        kept = [t for t in self.baseline if t.origin in lagging] if lagging else []
        compared = [t for t in self.baseline if t.origin not in lagging] if lagging else self.baseline
        result = compare(compared, diagnostics) if not self.positions_lost else _by_key(compared, diagnostics)
        names = list(origins) if origins is not None else [""] * len(diagnostics)
        self.baseline = [
            Tracked(raw=d, version=version, text=text, line=diag_line(d), origin=o)
            for d, o in zip(diagnostics, names, strict=True)
        ] + kept
        self.settled_version = version
        self.positions_lost = False
        return result


def absorb_broken(
    timeline: DocTimeline,
    version: int | None,
    text: str,
    diagnostics: Sequence[dict[str, Any]],
    origins: Sequence[str],
) -> int:
    """A settled state that does not parse: add its new errors to the baseline, lose nothing.

    Nothing vanishes here (a linter may say nothing about broken code, which is
    not a fix); the diagnostics the broken text brought in join the baseline,
    marked ``broken``, so that when a later edit makes the file parse again,
    the syntax error it fixed is seen to vanish. Returns how many joined.
    """
    parsed = [t for t in timeline.baseline if not t.broken]
    known = compare(parsed, diagnostics).new if parsed else tuple(diagnostics)
    fresh = {id(d) for d in known if d.get("severity") == ERROR}
    joined = [
        Tracked(raw=d, version=version, text=text, line=diag_line(d), origin=o, broken=True)
        for d, o in zip(diagnostics, origins, strict=True)
        if id(d) in fresh
    ]
    timeline.baseline = parsed + joined
    return len(joined)


def _by_key(baseline: Sequence[Tracked], current: Sequence[dict[str, Any]]) -> Comparison:
    """Matching when positions are unknown: by key and count only."""
    pools: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for diag in current:
        pools.setdefault(diag_key(diag), []).append(diag)
    vanished: list[Tracked] = []
    stayed: list[tuple[Tracked, dict[str, Any]]] = []
    for tracked in baseline:
        pool = pools.get(tracked.key)
        if pool:
            stayed.append((tracked, pool.pop(0)))
        else:
            vanished.append(tracked)
    matched = {id(d) for _, d in stayed}
    return Comparison(tuple(vanished), tuple(stayed), tuple(d for d in current if id(d) not in matched))


def text_digest(text: str) -> str:
    """A short digest of a document text (to compare texts without keeping them)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def rewritten_lines(before: str, after: str) -> tuple[int, int] | None:
    """The lines of ``before`` an edit rewrote or removed (first, last); ``None`` if it only inserted lines."""
    old, new = before.splitlines(), after.splitlines()
    top, bottom = common_ends(old, new)
    last = len(old) - bottom - 1
    return (top, last) if last >= top else None


def as_it_was(line: int, version: int | None) -> int | None:
    """A line where it was (no timeline to carry it through edits): :meth:`DocTimeline.line_now`'s stand-in."""
    return line
