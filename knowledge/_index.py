"""The in-memory index that ranking reads: rule key -> fingerprint -> compact row.

One dict per scope. A row is a small list (see the ``R_*`` offsets) so that
100k patterns fit in a few tens of megabytes; :class:`PatternStats` values are
built only for the handful of keys a request looks up. Context tuples are
interned, since the same node-kind paths recur across patterns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fixlore.abstraction._pattern import Pattern, Scope

from ._model import COUNT_KINDS, SCOPE_ORDER, Counts, PatternStats, RuleKey

R_FIRST = len(COUNT_KINDS)
R_LAST = R_FIRST + 1
R_WS = R_FIRST + 2
R_CTX = R_FIRST + 3
R_BODY = R_FIRST + 4
"""Row layout: seven counts, first seen, last seen, workspaces, context, and the pattern:
canonical JSON until first needed, then the parsed :class:`Pattern` (None for actions
of the user scope, which ranking never needs in full)."""

Row = list[Any]


def new_row(at: float, context: tuple[str, ...], body: str | None) -> Row:
    """An empty row first seen at ``at``."""
    return [0] * len(COUNT_KINDS) + [at, at, 0, context, body]


def row_stats(fp: str, scope: Scope, row: Row, *, with_pattern: bool = False) -> PatternStats:
    """The public value of a row."""
    body = row[R_BODY]
    if with_pattern and isinstance(body, str):
        # Parse on first use and keep it: learned fixes are looked up on the request path.
        body = row[R_BODY] = Pattern.from_json(body)
    return PatternStats(
        fingerprint=fp,
        scope=scope,
        counts=Counts(*row[:R_FIRST]),
        first_seen=row[R_FIRST],
        last_seen=row[R_LAST],
        workspaces=row[R_WS],
        context=row[R_CTX],
        pattern=body if with_pattern and isinstance(body, Pattern) else None,
    )


class Index:
    """Patterns of every scope, keyed for ranking. Never touches the disk."""

    def __init__(self) -> None:
        self.scopes: dict[Scope, dict[RuleKey, dict[str, Row]]] = {s: {} for s in SCOPE_ORDER}
        self._contexts: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._keys: dict[RuleKey, RuleKey] = {}

    def intern(self, context: tuple[str, ...]) -> tuple[str, ...]:
        """One shared tuple per distinct context."""
        return self._contexts.setdefault(context, context)

    def key(self, rule_key: RuleKey) -> RuleKey:
        """One shared tuple per distinct rule key."""
        return self._keys.setdefault(rule_key, rule_key)

    def get(self, scope: Scope, rule_key: RuleKey, fp: str) -> Row | None:
        """The row of ``fp`` in ``scope``, if any."""
        return self.scopes[scope].get(rule_key, {}).get(fp)

    def put(self, scope: Scope, rule_key: RuleKey, fp: str, row: Row) -> None:
        """Insert or replace a row."""
        row[R_CTX] = self.intern(tuple(row[R_CTX]))
        self.scopes[scope].setdefault(self.key(rule_key), {})[fp] = row

    def ensure(self, scope: Scope, rule_key: RuleKey, fp: str, at: float, pattern: Pattern) -> Row:
        """The row of ``fp``, created from ``pattern`` if new."""
        bucket = self.scopes[scope].setdefault(self.key(rule_key), {})
        row = bucket.get(fp)
        if row is None:
            body = pattern.to_json() if pattern.shape is not None else None
            row = new_row(at, self.intern(pattern.context), body)
            bucket[fp] = row
        return row

    def remove(self, scope: Scope, fp: str, rule_key: RuleKey | None = None) -> bool:
        """Drop ``fp`` from ``scope``; True if it was there."""
        buckets = self.scopes[scope]
        keys = [rule_key] if rule_key is not None else list(buckets)
        for k in keys:
            bucket = buckets.get(k)
            if bucket is not None and bucket.pop(fp, None) is not None:
                if not bucket:
                    del buckets[k]
                return True
        return False

    def clear(self, scope: Scope) -> None:
        """Drop every row of ``scope``."""
        self.scopes[scope] = {}

    def size(self, scope: Scope) -> int:
        """Number of patterns held for ``scope``."""
        return sum(len(b) for b in self.scopes[scope].values())

    def evidence(self, rule_key: RuleKey) -> EvidenceView:
        """A read-only view: fingerprint -> stats from the highest scope holding it."""
        return EvidenceView(tuple((s, self.scopes[s][rule_key]) for s in SCOPE_ORDER if rule_key in self.scopes[s]))

    def with_shape(self, rule_key: RuleKey) -> list[PatternStats]:
        """Learned fixes (patterns with a shape) under ``rule_key``, highest scope per id."""
        out: dict[str, PatternStats] = {}
        for scope, bucket in self.evidence(rule_key).layers:
            for fp, row in bucket.items():
                if fp not in out and row[R_BODY] is not None:
                    out[fp] = row_stats(fp, scope, row, with_pattern=True)
        return list(out.values())


class EvidenceView(Mapping[str, PatternStats]):
    """Lazy mapping over the index buckets of one rule key (highest scope wins)."""

    __slots__ = ("layers",)

    def __init__(self, layers: tuple[tuple[Scope, dict[str, Row]], ...]) -> None:
        self.layers = layers

    def __getitem__(self, fp: str) -> PatternStats:
        for scope, bucket in self.layers:
            row = bucket.get(fp)
            if row is not None:
                return row_stats(fp, scope, row)
        raise KeyError(fp)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for _, bucket in self.layers:
            for fp in list(bucket):
                if fp not in seen:
                    seen.add(fp)
                    yield fp

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, fp: object) -> bool:
        return any(fp in bucket for _, bucket in self.layers)
