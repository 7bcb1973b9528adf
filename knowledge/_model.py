"""Plain data of the knowledge layer: events, per-pattern statistics, ranking I/O.

Everything here is a frozen dataclass or an enum; nothing touches the disk.
The ranking function (:mod:`._ranking`) works on these values only, so it can
be tested with plain values.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from fixlore.abstraction import Pattern, Scope

RuleKey = tuple[str, str, str]
"""``(language, source, code)``, see :attr:`Signature.rule_key`."""

SCOPE_ORDER: tuple[Scope, ...] = (Scope.WORKSPACE, Scope.USER, Scope.TEAM, Scope.BASE)
"""Precedence of scopes: a record in an earlier scope overrides later ones."""


class EventKind(enum.StrEnum):
    """What happened to a pattern. Each kind increments one count."""

    OFFERED = "offered"
    """Shown in a code-action list the user explicitly invoked."""
    ACCEPTED = "accepted"
    """Chosen from that list."""
    REJECTED = "rejected"
    """Shown in that list, and another action (or none) was chosen."""
    SUCCEEDED = "succeeded"
    """After it was applied, the diagnostic went away and nothing new broke."""
    FAILED = "failed"
    """After it was applied, the diagnostic stayed or something new broke."""
    MANUAL = "manual"
    """The user made this fix by hand (learned from a vanished diagnostic)."""
    UNDONE = "undone"
    """Applied, then undone soon after."""


COUNT_KINDS: tuple[EventKind, ...] = tuple(EventKind)
"""The order of the count columns everywhere (store, index, export)."""


@dataclass(frozen=True, slots=True)
class Event:
    """One abstract observation about a pattern. Carries no code."""

    kind: EventKind
    pattern: Pattern
    workspace: str
    """Salted hash of the workspace root (:meth:`Knowledge.workspace_id`), never a path."""
    at: float
    """Unix time."""


@dataclass(frozen=True, slots=True)
class Counts:
    """The seven counts of one pattern in one scope."""

    offered: int = 0
    accepted: int = 0
    rejected: int = 0
    succeeded: int = 0
    failed: int = 0
    manual: int = 0
    undone: int = 0

    def as_tuple(self) -> tuple[int, ...]:
        """The counts in :data:`COUNT_KINDS` order."""
        return (
            self.offered,
            self.accepted,
            self.rejected,
            self.succeeded,
            self.failed,
            self.manual,
            self.undone,
        )

    @property
    def uses(self) -> int:
        """How often the fix was applied (accepted or made by hand)."""
        return self.accepted + self.manual

    def minus(self, other: Counts) -> Counts:
        """These counts less ``other``'s, none below zero."""
        return Counts(*(max(0, a - b) for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True)))


@dataclass(frozen=True, slots=True)
class PatternStats:
    """The evidence about one pattern in one scope, as ranking sees it."""

    fingerprint: str
    scope: Scope
    counts: Counts
    first_seen: float
    last_seen: float
    workspaces: int = 0
    """How many distinct workspaces have seen it (provenance)."""
    context: tuple[str, ...] = ()
    """The context (enclosing node kinds) the pattern was first seen in."""
    pattern: Pattern | None = None
    """The pattern itself, when the index holds it (learned fixes always)."""
    own: Counts | None = None
    """Of the evidence, what this user did: the user store's counts of the pattern less
    what imports added to them (``knowledge import``). :meth:`Knowledge.evidence` always
    sets it (zero for base knowledge, and for a workspace or team pattern this user has
    not used); ``None``, for values built by hand, means all of ``counts`` is the user's
    own in the user scope and none of it in the others. See :meth:`own_counts`."""

    def own_counts(self) -> Counts:
        """The user's own part of :attr:`counts` (see :attr:`own`)."""
        if self.own is not None:
            return self.own
        return self.counts if self.scope is Scope.USER else Counts()


@dataclass(frozen=True, slots=True)
class Candidate:
    """One code action offered for one diagnostic, as ranking sees it."""

    key: str
    """``pattern.fingerprint`` of the action's pattern."""
    pattern: Pattern | None
    upstream_index: int
    """Position in the order the candidates arrived in (upstream order first)."""


@dataclass(frozen=True, slots=True)
class RankedAction:
    """A candidate with its score, its preferred mark and why."""

    candidate: Candidate
    score: float
    preferred: bool
    explanation: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RankingConfig:
    """Tunables of :func:`rank_actions`. Defaults are documented in docs/knowledge.md."""

    prior_alpha: float = 1.0
    """Beta prior pseudo-count of acceptances (and of successes)."""
    prior_beta: float = 1.0
    """Beta prior pseudo-count of rejections (and of failures)."""
    half_life_days: float = 30.0
    """Evidence last seen this long ago counts half."""
    weight_acceptance: float = 0.6
    weight_success: float = 0.3
    weight_context: float = 0.1
    scope_weights: tuple[tuple[Scope, float], ...] = (
        (Scope.WORKSPACE, 1.5),
        (Scope.USER, 1.0),
        (Scope.TEAM, 0.75),
        (Scope.BASE, 0.5),
    )
    """How much one observation of each scope counts."""
    weight_latest: float = 0.1
    """Added to the score of the fix the user made last for the rule (from the list or by
    hand, this session): people fix in runs (a file's strings made bytes, then the next
    file's; an import block cleared), so between two habits the one in use now comes
    first. It orders only: a fix it moves to the top is not preferred for it."""
    preferred_margin: float = 0.1
    """The top score must beat the runner-up by at least this to be preferred."""
    preferred_min_uses: int = 2
    """The top candidate needs at least this many acceptances (or manual fixes) of the
    user's own (or, for an upstream action, of base knowledge): evidence from elsewhere
    (an import, the team, a workspace file) never makes a fix preferred."""
    elsewhere_cap: float = 2.0
    """Evidence from elsewhere counts as at most this many observations (acceptance and
    success each, in the proportions it has): it informs a ranking, and is set aside
    once the user turns the fix down at least as often as they take it."""


@dataclass(frozen=True, slots=True)
class PruneConfig:
    """When a pattern is archived (see docs/knowledge.md)."""

    min_success: float = 0.5
    """Archive below this success rate ..."""
    min_uses: int = 3
    """... once it has been verified at least this many times."""
    max_idle_days: float = 90.0
    """Archive what has not been seen for this long."""
    event_retention_days: float = 180.0
    """Events older than this are deleted from the log."""
    event_max_rows: int = 1_000_000
    """The log keeps at most this many (the newest) events."""
    auto_interval_days: float = 7.0
    """Automatic pruning runs at most this often."""


@dataclass(frozen=True, slots=True)
class ExportFilters:
    """Which patterns an export includes."""

    language: str | None = None
    min_uses: int = 0
    """Minimum accepted + manual."""
    min_success: float = 0.0
    """Minimum success rate among verified uses (patterns never verified pass only at 0)."""
    min_workspaces: int = 0
    """Minimum number of distinct workspaces that have seen the pattern."""


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What a prune did (or, in a dry run, would do)."""

    archived: tuple[tuple[str, str], ...] = ()
    """``(fingerprint, reason)`` pairs."""
    events_deleted: int = 0
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did."""

    imported: int = 0
    """Patterns new to the store."""
    merged: int = 0
    """Patterns whose counts were added to an existing record."""
    unchanged: int = 0
    """Records this store had imported before (the same file again): nothing added."""


@dataclass(frozen=True, slots=True)
class KnowledgeStats:
    """Totals for ``knowledge stats`` and the ``fixlore.stats`` command."""

    patterns: int
    archived: int
    events: int
    refused: int
    learning: bool
    by_language: tuple[tuple[str, int], ...] = field(default=())
    by_scope: tuple[tuple[str, int], ...] = field(default=())
    counts: Counts = field(default_factory=Counts)


class KnowledgeError(Exception):
    """The store could not do what was asked (I/O, corruption, locking)."""


class InvalidImport(ValueError):
    """An import file was refused. The message names what was wrong and where."""
