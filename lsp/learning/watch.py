"""What the learning loop keeps per document between events (used by :mod:`fixlore.lsp.learning.loop`).

A :class:`Watch` is an accepted or manual fix until its verdict: verified at
the next settle and watched for undo; the windows say for how long. An
:class:`Offered` list is remembered to tell a fix by hand from the actions it
turned down; a :class:`Settled` state is what a settle compares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fixlore.abstraction import Pattern
from fixlore.lsp.learning.timeline import Tracked

UNDO_WINDOW_S = 30.0
"""An edit undone within this many seconds counts against its fix."""
VERIFY_WINDOW_S = 120.0
"""A verification that sees no settled, parsing state within this long is dropped."""


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
    """Upstream action's fingerprint -> digest of the text its edit makes."""


@dataclass(frozen=True, slots=True)
class Settled:
    """A settled state of a document: its text and the diagnostics of that version, per source."""

    version: int | None
    text: str
    by_source: dict[str, list[dict[str, Any]]]
    lagging: set[str]
    taken: float
