"""The in-memory index that ranking reads: rule key -> fingerprint -> compact row.

One dict per scope. A row is a small list (see the ``R_*`` offsets) so that
100k patterns fit in a few tens of megabytes; :class:`PatternStats` values are
built only for the handful of keys a request looks up. Context tuples are
interned, since the same node-kind paths recur across patterns.

A user store too large to hold as lists (see ``Knowledge.open``) keeps its
recently used rule keys as lists ("hot", the only ones that change) and the
rest packed into bytes, about 63 bytes a pattern instead of about 350
(:class:`PackedBucket`): ranking reads either without touching the disk, and
a write to a packed key unpacks it first. Keys in neither are "cold": only
the store has them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from fixlore.abstraction import Pattern, Scope, Signature

from ._model import COUNT_KINDS, SCOPE_ORDER, Counts, PatternStats, RuleKey
from ._packed import R_BODY, R_CTX, R_FIRST, R_LAST, R_WS, PackedBucket, Row

_LearnedEntry = tuple[tuple[int, int], list[PatternStats], dict[Signature, list[PatternStats]]]
"""(stamp of the rule key, its learned fixes by evidence, the per-signature orders)."""

PATTERN_WEIGHT = 4
"""Rows of the cache budget one parsed learned-fix pattern counts for (lazy mode)."""

LEARNED_CACHE_KEYS = 4096
"""Rule keys whose learned fixes are kept ready (the cache is emptied when full)."""


def new_row(at: float, context: tuple[str, ...], body: str | None) -> Row:
    """An empty row first seen at ``at``."""
    return [0] * len(COUNT_KINDS) + [at, at, 0, context, body]


def row_stats(
    fp: str, scope: Scope, row: Row, *, with_pattern: bool = False, own: Counts | None = None
) -> PatternStats:
    """The public value of a row (``own``: see :attr:`PatternStats.own`)."""
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
        own=own,
    )


def decided(row: Row) -> bool:
    """Whether a row holds a decision or a verification, not only offers.

    A scope whose row was only offered (a learned fix shown from the team's or the
    base's evidence is recorded as offered in the user store) has no habit to speak
    for: the next scope's evidence ranks instead, until the user takes or turns down
    the action.
    """
    return any(row[1:R_FIRST])


def decided_counts(c: Counts) -> bool:
    """:func:`decided` for a :class:`Counts`."""
    return any(c.as_tuple()[1:])


class Index:
    """Patterns of every scope, keyed for ranking. Never touches the disk."""

    def __init__(self) -> None:
        self.scopes: dict[Scope, dict[RuleKey, dict[str, Row]]] = {s: {} for s in SCOPE_ORDER}
        self._contexts: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._keys: dict[RuleKey, RuleKey] = {}
        self._gen: dict[RuleKey, int] = {}
        self._fixes_gen: dict[RuleKey, int] = {}
        """Like ``_gen``, but not moved by offers (see :meth:`touch`)."""
        self._epoch = 0
        self._learned: dict[RuleKey, _LearnedEntry] = {}
        self.lazy = False
        self.max_rows: int | None = None
        """Lazy mode: about this many loaded user-scope rows (the rest is packed or cold)."""
        """Whether the user scope is held per rule key (a large store): then every rule key
        not in memory is cold and is read from the store on first use."""
        self._lru: dict[RuleKey, int] = {}
        """Loaded user-scope keys, least recently used first, with their weight in rows."""
        self._user_rows = 0
        self.packed: dict[RuleKey, PackedBucket] = {}
        """User-scope keys held packed (lazy mode): read-only, not counted in :meth:`user_rows`."""
        self.packed_rows = 0
        self.max_packed = 0
        """At most this many rows are packed; an evicted key beyond that goes cold."""
        self._context_id: dict[tuple[str, ...], int] = {}
        self._context_list: list[tuple[str, ...]] = []
        self.imported: dict[str, Counts] = {}
        """What imports added to user-scope counts, per fingerprint (only those with any)."""

    def is_cold(self, rule_key: RuleKey) -> bool:
        """Whether the user-scope rows of ``rule_key`` must be read from the store first."""
        return self.lazy and rule_key not in self._lru and rule_key not in self.packed

    def has_unread_fixes(self, rule_key: RuleKey) -> bool:
        """Whether learned fixes of ``rule_key`` still need their patterns read (lazy mode)."""
        packed = self.packed.get(rule_key)
        if packed is not None:
            return packed.shapes
        return bool(self.missing_bodies(rule_key))

    def pack(self, rule_key: RuleKey) -> bool:
        """Move a loaded user-scope key to the packed tier (if there is room); False: it went cold.

        The packed copy is in place before the lists go, and the lists are back before the
        packed copy goes (:meth:`unpack`), so a reader without the lock always finds one.
        """
        if rule_key not in self._lru:
            return rule_key in self.packed
        users = self.scopes[Scope.USER]
        bucket = users.get(rule_key, {})
        packed = None
        if self.packed_rows + len(bucket) <= self.max_packed:
            packed = PackedBucket.pack(bucket, self._context_id, self._context_list)
        if packed is not None:
            self.packed[rule_key] = packed
            self.packed_rows += len(packed)
        self._user_rows -= self._lru.pop(rule_key)
        users.pop(rule_key, None)
        self.touch(rule_key)
        return packed is not None

    def unpack(self, rule_key: RuleKey) -> None:
        """Make a packed key loaded (changeable) again; nothing if it is not packed."""
        packed = self.packed.get(rule_key)
        if packed is None:
            return
        self.load(rule_key, packed.unpack())
        del self.packed[rule_key]
        self.packed_rows -= len(packed)
        if self.max_rows is not None:
            self.evict(self.max_rows, keep=rule_key)

    def cold_count(self, keys: list[RuleKey]) -> int:
        """How many of ``keys`` are cold."""
        return sum(1 for k in keys if self.is_cold(k))

    def load(self, rule_key: RuleKey, bucket: dict[str, Row]) -> None:
        """Put the user-scope rows of a cold ``rule_key`` in memory (most recently used)."""
        key = self.key(rule_key)
        for row in bucket.values():
            row[R_CTX] = self.intern(tuple(row[R_CTX]))
        if bucket:
            self.scopes[Scope.USER][key] = bucket
        self._user_rows += len(bucket)
        self._lru[key] = len(bucket)
        self.touch(key)

    def user_rows(self) -> int:
        """User-scope rows loaded per rule key (lazy mode)."""
        return self._user_rows

    def used(self, rule_key: RuleKey) -> None:
        """Mark a user-scope rule key as just used (evicted last)."""
        weight = self._lru.pop(rule_key, None)
        if weight is not None:
            self._lru[rule_key] = weight

    def missing_bodies(self, rule_key: RuleKey) -> list[str]:
        """User-scope learned fixes of ``rule_key`` whose pattern was not read yet (lazy mode)."""
        bucket = self.scopes[Scope.USER].get(rule_key, {})
        return [fp for fp, row in bucket.items() if row[R_BODY] == ""]

    def set_bodies(self, rule_key: RuleKey, bodies: dict[str, str]) -> None:
        """Fill in patterns read by :meth:`missing_bodies`."""
        bucket = self.scopes[Scope.USER].get(rule_key, {})
        for fp, body in bodies.items():
            row = bucket.get(fp)
            if row is not None and row[R_BODY] == "":
                row[R_BODY] = body
        if rule_key in self._lru:
            # A parsed pattern weighs about as much as a few rows of counts.
            self._lru[rule_key] += PATTERN_WEIGHT * len(bodies)
            self._user_rows += PATTERN_WEIGHT * len(bodies)
        self.touch(rule_key)

    def evict(self, max_rows: int, keep: RuleKey | None = None) -> int:
        """Pack (or drop, back to cold) least recently used user-scope keys until at most ``max_rows``."""
        dropped = 0
        while self._user_rows > max_rows and self._lru:
            key = next(iter(self._lru))
            if key == keep:
                break
            self.pack(key)
            dropped += 1
        return dropped

    def touch(self, rule_key: RuleKey | None = None, *, fixes: bool = True) -> None:
        """Note that rows of ``rule_key`` (of every key, if None) changed: drops cached learned fixes.

        ``fixes=False``: only offers were counted, which neither order nor choose
        :meth:`learned_for`'s list, nor are read from it (every invoked menu counts its
        offers: with them, and the refresh's own writes read back, 80 first lightbulbs
        rebuilt lists 227 times in 872 look-ups, 57 in 716 without); the stamp moves.
        """
        if rule_key is None:
            self._epoch += 1
            self._learned.clear()
        else:
            self._gen[rule_key] = self._gen.get(rule_key, 0) + 1
            if fixes:
                self._fixes_gen[rule_key] = self._fixes_gen.get(rule_key, 0) + 1
                self._learned.pop(rule_key, None)

    def stamp(self, rule_key: RuleKey) -> tuple[int, int]:
        """What changes whenever rows of ``rule_key`` (or of every key) changed: a cache of their evidence's key.

        Every change :meth:`touch`-es *after* it is made, so a reader that takes the
        stamp before reading rows, and finds it unchanged later, read them whole.
        """
        return (self._epoch, self._gen.get(rule_key, 0))

    def intern(self, context: tuple[str, ...]) -> tuple[str, ...]:
        """One shared tuple per distinct context."""
        return self._contexts.setdefault(context, context)

    def key(self, rule_key: RuleKey) -> RuleKey:
        """One shared tuple per distinct rule key."""
        return self._keys.setdefault(rule_key, rule_key)

    def get(self, scope: Scope, rule_key: RuleKey, fp: str) -> Row | None:
        """The row of ``fp`` in ``scope``, if any, to change in place (a packed key is unpacked)."""
        if scope is Scope.USER:
            self.unpack(rule_key)
        return self.scopes[scope].get(rule_key, {}).get(fp)

    def put(self, scope: Scope, rule_key: RuleKey, fp: str, row: Row) -> None:
        """Insert or replace a row."""
        if scope is Scope.USER:
            self.unpack(rule_key)
        row[R_CTX] = self.intern(tuple(row[R_CTX]))
        self.scopes[scope].setdefault(self.key(rule_key), {})[fp] = row
        self.touch(rule_key)

    def ensure(self, scope: Scope, rule_key: RuleKey, fp: str, at: float, pattern: Pattern) -> Row:
        """The row of ``fp``, created from ``pattern`` if new; the caller touches the key once it counted on it."""
        if scope is Scope.USER:
            self.unpack(rule_key)
        bucket = self.scopes[scope].setdefault(self.key(rule_key), {})
        row = bucket.get(fp)
        if row is None:
            body = pattern.to_json() if pattern.shape is not None else None
            row = new_row(at, self.intern(pattern.context), body)
            bucket[fp] = row
            self.touch(rule_key)  # a new row (a row counted on is touched by the caller, see Tiers.record_locked)
        return row

    def remove(self, scope: Scope, fp: str, rule_key: RuleKey | None = None) -> bool:
        """Drop ``fp`` from ``scope``; True if it was there."""
        buckets = self.scopes[scope]
        if scope is Scope.USER:
            for k in [rule_key] if rule_key is not None else [k for k, p in self.packed.items() if fp in p]:
                self.unpack(k)
        keys = [rule_key] if rule_key is not None else list(buckets)
        for k in keys:
            bucket = buckets.get(k)
            if bucket is not None and bucket.pop(fp, None) is not None:
                if not bucket:
                    del buckets[k]
                self.touch(k)
                return True
        return False

    def clear(self, scope: Scope) -> None:
        """Drop every row of ``scope``."""
        self.scopes[scope] = {}
        if scope is Scope.USER:
            self._drop_user_tiers()
        self.touch()

    def replace(self, scope: Scope, buckets: dict[RuleKey, dict[str, Row]], *, lazy: bool = False) -> None:
        """Swap in every row of ``scope`` at once (a full reload); ``lazy``: none, read per key."""
        self.scopes[scope] = buckets
        if scope is Scope.USER:
            self.lazy = lazy
            self._drop_user_tiers()
        self.touch()

    def _drop_user_tiers(self) -> None:
        self._lru.clear()
        self._user_rows = 0
        self.packed = {}
        self.packed_rows = 0

    def size(self, scope: Scope) -> int:
        """Number of patterns held for ``scope``."""
        held = sum(len(b) for b in self.scopes[scope].values())
        return held + self.packed_rows if scope is Scope.USER else held

    def evidence(self, rule_key: RuleKey) -> EvidenceView:
        """A read-only view: fingerprint -> stats from the highest scope holding it."""
        # .get, not "in" then [...]: a lazy store may evict the key from another thread.
        layers = ((s, self._bucket(s, rule_key)) for s in SCOPE_ORDER)
        return EvidenceView(tuple((s, b) for s, b in layers if b is not None), self.imported)

    def _bucket(self, scope: Scope, rule_key: RuleKey) -> Mapping[str, Row] | None:
        bucket = self.scopes[scope].get(rule_key)
        if bucket is None and scope is Scope.USER:
            return self.packed.get(rule_key)
        return bucket

    def with_shape(self, rule_key: RuleKey) -> list[PatternStats]:
        """Learned fixes (patterns with a shape) under ``rule_key``, highest scope per id."""
        out: dict[str, PatternStats] = {}
        for scope, bucket in self.evidence(rule_key).layers:
            for fp, row in bucket.items():
                # "": a lazily read learned fix whose pattern could not be read (yet).
                if row[R_BODY] is None or row[R_BODY] == "":
                    continue
                found = out.get(fp)
                # The highest scope that decided something wins; offers alone give way (see ``decided``).
                if found is None or (not decided_counts(found.counts) and decided(row)):
                    out[fp] = row_stats(fp, scope, row, with_pattern=True)
        return list(out.values())

    def learned_for(self, signature: Signature) -> list[PatternStats]:
        """Learned fixes for ``signature``: exact message template first, then best evidence.

        Cached per rule key until a row of that key changes (see :meth:`touch`: offers
        alone keep it), and per signature within it, so the request path builds the
        values (and parses the patterns) once. Returns a fresh list; its counts of
        offers may be behind (nothing reads them there).
        """
        rule_key = signature.rule_key
        stamp = (self._epoch, self._fixes_gen.get(rule_key, 0))
        entry = self._learned.get(rule_key)
        if entry is None or entry[0] != stamp:
            ranked = sorted(self.with_shape(rule_key), key=_evidence_order)
            if len(self._learned) >= LEARNED_CACHE_KEYS:
                self._learned.clear()
            entry = self._learned[rule_key] = (stamp, ranked, {})
        by_sig = entry[2]
        found = by_sig.get(signature)
        if found is None:
            ranked = entry[1]
            exact = [s for s in ranked if s.pattern is not None and s.pattern.signature == signature]
            found = exact + [s for s in ranked if s.pattern is None or s.pattern.signature != signature]
            if len(by_sig) >= 64:
                by_sig.clear()
            by_sig[signature] = found
        return list(found)


_NO_COUNTS = Counts()


def _evidence_order(s: PatternStats) -> tuple[int, int, str]:
    c = s.counts
    return (-(c.accepted + c.manual), c.failed + c.undone, s.fingerprint)


class EvidenceView(Mapping[str, PatternStats]):
    """Lazy mapping over the index buckets of one rule key (highest scope wins)."""

    __slots__ = ("imported", "layers", "user")

    def __init__(self, layers: tuple[tuple[Scope, Mapping[str, Row]], ...], imported: Mapping[str, Counts]) -> None:
        self.layers = layers
        self.user = next((b for s, b in layers if s is Scope.USER), None)
        self.imported = imported

    def __getitem__(self, fp: str) -> PatternStats:
        offered_only: tuple[Scope, Row] | None = None
        for scope, bucket in self.layers:
            row = bucket.get(fp)
            if row is not None:
                if decided(row):
                    return row_stats(fp, scope, row, own=self._own(fp, scope, row))
                offered_only = offered_only or (scope, row)
        if offered_only is None:
            raise KeyError(fp)
        scope, row = offered_only
        return row_stats(fp, scope, row, own=self._own(fp, scope, row))

    def _own(self, fp: str, scope: Scope, row: Row) -> Counts:
        """The user's own counts of ``fp``: the user row's, less what imports added."""
        if scope is Scope.BASE:
            return _NO_COUNTS
        mine = row if scope is Scope.USER else self.user.get(fp) if self.user is not None else None
        if mine is None:
            return _NO_COUNTS
        counts = Counts(*mine[:R_FIRST])
        imported = self.imported.get(fp)
        return counts if imported is None else counts.minus(imported)

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

    def shipped(self, fp: str) -> PatternStats | None:
        """The base knowledge's stats of ``fp`` even where a higher scope holds it too (ranking's tie-break)."""
        for scope, bucket in self.layers:
            if scope is Scope.BASE:
                row = bucket.get(fp)
                return None if row is None else row_stats(fp, scope, row, own=_NO_COUNTS)
        return None
