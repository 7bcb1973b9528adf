"""Index rows (see the layout in :mod:`._packed`) from store rows and from queued deltas."""

from __future__ import annotations

import sqlite3
from typing import Any

from fixlore.abstraction import Scope

from ._delta import PatternDelta
from ._index import Index
from ._model import COUNT_KINDS
from ._packed import R_BODY, R_CTX, R_FIRST, R_LAST, R_WS, Row


def row_from_db(r: sqlite3.Row | tuple[Any, ...]) -> Row:
    """A row from :meth:`Store.rows`."""
    # fingerprint, language, source, code, category, has_shape, context, body, 7 counts,
    # first_seen, last_seen, workspaces, archived_at, rev
    ctx = str(r[6])
    n = len(COUNT_KINDS)
    return [*r[8 : 8 + n], r[8 + n], r[9 + n], r[10 + n], tuple(ctx.split("/")) if ctx else (), r[7]]


def row_from_rank(r: tuple[Any, ...]) -> Row:
    """A row from :meth:`Store.rule_rows` (a learned fix's pattern not read yet: ``""``)."""
    # fingerprint, has_shape, context, 7 counts, first_seen, last_seen, workspaces
    ctx = str(r[2])
    return [*r[3:], tuple(ctx.split("/")) if ctx else (), "" if r[1] else None]


def bump(row: Row, i: int, at: float) -> None:
    """Count one event of kind ``i`` (in :data:`COUNT_KINDS` order) at ``at``."""
    row[i] += 1
    row[R_FIRST] = min(row[R_FIRST], at)
    row[R_LAST] = max(row[R_LAST], at)


def says_as_held(held: Row | None, stored: Row, d: PatternDelta | None) -> bool:
    """Whether the store's row, with the deltas not committed yet on top, counts what the index holds.

    The store's rows this process wrote itself come back at the next refresh (its
    read connection sees the writer's commits as another's): the same counts, which
    need not be put again (a put drops the rule key's learned fixes, see ``Index.touch``).
    """
    if held is None:
        return False
    expected = list(stored[:R_CTX])
    if d is not None:
        _add_counts(expected, d)
    return list(held[:R_CTX]) == expected


def _add_counts(row: list[Any], d: PatternDelta) -> None:
    """Add ``d``'s counts, times and workspaces onto ``row`` (a row, or its counted part)."""
    for i, n in enumerate(d.counts):
        row[i] += n
    row[R_FIRST] = min(row[R_FIRST], d.first_seen)
    row[R_LAST] = max(row[R_LAST], d.last_seen)
    if d.set_workspaces:
        row[R_WS] = max(row[R_WS], d.set_workspaces)


def add_pending(index: Index, fp: str, d: PatternDelta) -> None:
    """Add a delta the store does not hold yet onto its index row (created if need be)."""
    if index.is_cold(d.rule_key):
        return  # the store has (or soon has) it; added on top when the key is loaded
    row = index.get(Scope.USER, d.rule_key, fp)
    if row is None:
        row = [0] * len(COUNT_KINDS) + [d.first_seen, d.last_seen, 0, (), None]
        if d.has_shape:
            row[R_BODY] = d.body
        row[R_CTX] = tuple(d.context.split("/")) if d.context else ()
        index.put(Scope.USER, d.rule_key, fp, row)
    _add_counts(row, d)
    index.touch(d.rule_key)  # after the row changed (see Index.stamp)
