"""Count deltas: what recorded events add to patterns before they are written.

``record()`` tallies events in memory, a :class:`PatternDelta` per pattern for
the user store (in a :class:`Batch`) and a :class:`WorkspaceDelta` per pattern
for the workspace file; the writer applies them in one go. Counts, first seen
and last seen are added up in one place, :class:`Tally`: when one event is
tallied (:meth:`Tally.add`), when a failed write is put back in front of what
was recorded meanwhile (:meth:`Tally.merge`), and when a workspace delta is
added to the file's record (:meth:`WorkspaceDelta.onto`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Self, TypeVar

from fixlore.abstraction import Pattern

from ._exchange import Record
from ._model import COUNT_KINDS, Counts

WEEK = 7 * 86400.0
"""The length of a trend bucket: a pattern's counts are also kept per week."""
_N = len(COUNT_KINDS)


def _zeros() -> list[int]:
    return [0] * _N


class Tally:
    """Seven counts with the first and last time seen (a mixin of the delta dataclasses)."""

    counts: list[int]
    first_seen: float
    last_seen: float

    def add(self, i: int, at: float) -> None:
        """Count one event of kind number ``i`` (see ``COUNT_KINDS``) at ``at``."""
        self.counts[i] += 1
        self.first_seen = min(self.first_seen, at)
        self.last_seen = max(self.last_seen, at)

    def merge(self, other: Self) -> None:
        """Add ``other``'s counts and widen the seen range to cover it."""
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.first_seen = min(self.first_seen, other.first_seen)
        self.last_seen = max(self.last_seen, other.last_seen)


T = TypeVar("T", bound=Tally)


def merge_into(dst: dict[str, T], src: Mapping[str, T]) -> None:
    """Merge deltas by fingerprint: ``src``'s deltas are added to ``dst``'s (or moved there)."""
    for fp, d in src.items():
        old = dst.get(fp)
        if old is None:
            dst[fp] = d
        else:
            old.merge(d)


@dataclass
class PatternDelta(Tally):
    """Count changes for one pattern, aggregated over a batch of events."""

    fingerprint: str
    rule_key: tuple[str, str, str]
    category: str
    has_shape: bool
    context: str
    body: str
    counts: list[int] = field(default_factory=_zeros)
    first_seen: float = float("inf")
    last_seen: float = 0.0
    workspaces: set[str] = field(default_factory=set)
    weeks: dict[int, list[int]] = field(default_factory=dict)
    set_workspaces: int | None = None
    """Imports: raise the workspace count to at least this (no hashes travel)."""

    def add(self, i: int, at: float, workspace: str = "") -> None:
        """Count one event, in its week's trend too, and note its workspace (a salted hash)."""
        super().add(i, at)
        if workspace:
            self.workspaces.add(workspace)
        self.weeks.setdefault(int(at // WEEK), _zeros())[i] += 1

    def merge(self, other: Self) -> None:
        """Add ``other``: counts, seen range, workspaces, weekly trend."""
        super().merge(other)
        self.workspaces |= other.workspaces
        for wk, n in other.weeks.items():
            cur = self.weeks.setdefault(wk, _zeros())
            for i, v in enumerate(n):
                cur[i] += v
        if other.set_workspaces:
            self.set_workspaces = max(self.set_workspaces or 0, other.set_workspaces)


@dataclass
class Batch:
    """Everything one write transaction applies."""

    patterns: dict[str, PatternDelta] = field(default_factory=dict)
    events: list[tuple[float, str, str, str]] = field(default_factory=list)
    refused: int = 0

    def __bool__(self) -> bool:
        return bool(self.patterns or self.events or self.refused)

    def merge(self, other: Batch) -> None:
        """Add ``other``'s contents into this batch (a failed batch taking the newer one in)."""
        merge_into(self.patterns, other.patterns)
        self.events.extend(other.events)
        self.refused += other.refused


@dataclass
class WorkspaceDelta(Tally):
    """Count changes for one pattern of the workspace file since the last flush."""

    pattern: Pattern
    counts: list[int] = field(default_factory=_zeros)
    first_seen: float = float("inf")
    last_seen: float = 0.0

    def onto(self, old: Record | None) -> Record:
        """The file's record with this delta added (a new record, in one workspace, if none)."""
        if old is None:
            return Record(self.pattern, Counts(*self.counts), self.first_seen, self.last_seen, 1)
        acc = WorkspaceDelta(old.pattern, list(old.counts.as_tuple()), old.first_seen, old.last_seen)
        acc.merge(self)
        return Record(old.pattern, Counts(*acc.counts), acc.first_seen, acc.last_seen, max(old.workspaces, 1))
