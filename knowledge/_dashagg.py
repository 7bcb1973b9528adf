"""The dashboard's weekly aggregates, kept in the store as events are written.

Two small tables hold what the dashboard's trend charts show, per rule key and
week, so a page at 100k patterns reads a few thousand rows instead of
aggregating the per-pattern ``trend`` table and replaying the event log:

- ``dash_trend``: accepted, rejected, succeeded, failed, by hand, per rule key,
  kind (learned fix or not) and week: the sums of ``trend`` over the patterns.
- ``dash_effect``: code-action lists decided and how many had the choice
  already first, per rule key and week: the replay of the event log
  (:class:`Replay`, see :mod:`.dashboard`).

The writer adds each batch to both in the batch's own transaction
(:func:`advance_in_tx`), so a killed writer leaves them as consistent as the
rest of the store. The replay continues from a checkpoint: ``dash_replay``
(the replayed counts of every pattern the log touched), ``dash_offered`` (the
last ``offered`` event per workspace and pattern, the upstream order that
breaks ties), the lists still open (``meta`` ``dash_open``) and the last event
replayed (``meta`` ``dash_cursor``). Whatever rewrites the log's past (an
import adds counts that the replay counts from the start, a prune or a forget
deletes events, a writer of an older fixlore appends events without advancing
the replay) drops the cursor; the next dashboard replays the whole log once and
stores the checkpoint again (:func:`keep`). ``dash_trend`` is checked against
``trend`` by its column sums when the checkpoint is not current, and
recomputed from it when they differ.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from fixlore.abstraction import Scope

from ._delta import WEEK
from ._model import COUNT_KINDS, Candidate, Counts, KnowledgeError, PatternStats
from ._schema import COLS

if TYPE_CHECKING:
    from ._delta import Batch

logger = logging.getLogger(__name__)

RuleKey = tuple[str, str, str]

DECISION_WINDOW_S = 5.0
"""Rejected siblings are recorded right after the accepted action; later ones belong elsewhere."""
TREND_KINDS = ("accepted", "rejected", "succeeded", "failed", "manual")
"""The counts of ``dash_trend``, in the dashboard's order."""

_N = len(COUNT_KINDS)
_KIND_INDEX = {k.value: i for i, k in enumerate(COUNT_KINDS)}
_I_OFFERED, _I_ACCEPTED, _I_REJECTED = 0, 1, 2
_TREND_AT = [_KIND_INDEX[k] for k in TREND_KINDS]
_TREND_COLS = ", ".join(TREND_KINDS)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS dash_trend (
    language TEXT NOT NULL, source TEXT NOT NULL, code TEXT NOT NULL, fix INTEGER NOT NULL, week INTEGER NOT NULL,
    {", ".join(f"{c} INTEGER NOT NULL DEFAULT 0" for c in TREND_KINDS)},
    PRIMARY KEY (language, source, code, fix, week)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dash_effect (
    language TEXT NOT NULL, source TEXT NOT NULL, code TEXT NOT NULL, week INTEGER NOT NULL,
    lists INTEGER NOT NULL DEFAULT 0, first INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (language, source, code, week)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dash_replay (
    fingerprint TEXT PRIMARY KEY,
    {", ".join(f"{c} INTEGER NOT NULL" for c in COLS.split(", "))},
    last REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dash_offered (
    workspace TEXT NOT NULL, fingerprint TEXT NOT NULL, id INTEGER NOT NULL,
    PRIMARY KEY (workspace, fingerprint)
) WITHOUT ROWID;
"""
"""Migration 7's tables (see :mod:`._schema`)."""

_TREND_FROM_PATTERNS = (
    "SELECT p.language, p.source, p.code, p.has_shape AS fix, t.week, "
    + ", ".join(f"sum(t.{c}) AS {c}" for c in TREND_KINDS)
    + " FROM trend t JOIN patterns p ON p.fingerprint = t.fingerprint"
    " GROUP BY p.language, p.source, p.code, p.has_shape, t.week"
)
_TREND_UPSERT = (
    f"INSERT INTO dash_trend (language, source, code, fix, week, {_TREND_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT DO UPDATE SET " + ", ".join(f"{c} = {c} + excluded.{c}" for c in TREND_KINDS)
)
_EFFECT_UPSERT = (
    "INSERT INTO dash_effect (language, source, code, week, lists, first) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT DO UPDATE SET lists = lists + excluded.lists, first = first + excluded.first"
)


def seed(c: sqlite3.Connection) -> None:
    """Migration 7's seed: ``dash_trend`` from ``trend``; an empty log's replay is current (others: a dashboard's)."""
    rebuild_trend(c)
    if _max_event_id(c) == 0:
        clear(c)


# -- the replay --------------------------------------------------------------------------

Initial = Callable[[str], tuple[list[int], float]]
"""A pattern's counts before the first event the replay applies to it, and its first-seen time."""


class Replay:
    """The user store's evidence as the event log builds it up, one code-action list at a time.

    Each ``accepted`` event with the ``rejected`` events of its siblings that
    follow it (same workspace, within :data:`DECISION_WINDOW_S`) is one list,
    ranked (:func:`top_key`) with the evidence gathered up to that moment;
    upstream order from the preceding ``offered`` events breaks ties. A
    list's own events count once it is decided.
    """

    def __init__(self, initial: Initial, rule_of: Callable[[str], RuleKey]) -> None:
        self.initial = initial
        self.rule_of = rule_of
        self.state: dict[str, list[int]] = {}
        self.last: dict[str, float] = {}
        self.offered: dict[tuple[str, str], int] = {}
        self.open: dict[str, tuple[float, str, list[str]]] = {}
        self.tally: dict[tuple[RuleKey, int], list[int]] = {}

    def counts(self, fp: str) -> list[int]:
        st = self.state.get(fp)
        if st is None:
            c, first = self.initial(fp)
            st = self.state[fp] = list(c)
            self.last[fp] = first
        return st

    def apply(self, fp: str, i: int, at: float) -> None:
        self.counts(fp)[i] += 1
        if at > self.last[fp]:
            self.last[fp] = at

    def feed(self, event_id: int, at: float, i: int, fp: str, ws: str) -> None:
        """One event of the log (kind number ``i``), in log order."""
        pending = self.open.get(ws)
        if pending is not None and not (i == _I_REJECTED and at - pending[0] <= DECISION_WINDOW_S):
            del self.open[ws]
            self.decide(ws, *pending)
            pending = None
        if i == _I_ACCEPTED:
            self.open[ws] = (at, fp, [])
        elif i == _I_REJECTED and pending is not None:
            pending[2].append(fp)
        else:
            if i == _I_OFFERED:
                self.offered[(ws, fp)] = event_id
            self.apply(fp, i, at)

    def close(self) -> None:
        """Decide the lists still open (the log ends here)."""
        for ws, pending in list(self.open.items()):
            del self.open[ws]
            self.decide(ws, *pending)

    def decide(self, ws: str, at: float, chosen: str, rejected: list[str]) -> None:
        """One list: was ``chosen`` already first, ranked on the evidence before this choice?"""
        if rejected:
            from ._ranking import top_key  # the ranking, only once a list is decided

            fps = [chosen, *rejected]
            order = sorted(fps, key=lambda f: self.offered.get((ws, f), -1))
            evidence: dict[str, PatternStats] = {}
            for f in fps:
                c = self.counts(f)
                if any(c):
                    seen = self.last[f]
                    evidence[f] = PatternStats(f, Scope.USER, Counts(*c), seen, seen)
            if evidence:
                cands = [Candidate(key=f, pattern=None, upstream_index=n) for n, f in enumerate(order)]
                top = top_key(cands, evidence, now=at) == chosen
            else:  # no evidence at all: the upstream order stands
                top = order[0] == chosen
            t = self.tally.setdefault((self.rule_of(chosen), int(at // WEEK)), [0, 0])
            t[0] += 1
            t[1] += top
        self.apply(chosen, _I_ACCEPTED, at)
        for f in rejected:
            self.apply(f, _I_REJECTED, at)


def replay_all(c: sqlite3.Connection) -> tuple[Replay, int]:
    """The whole log replayed (lists still open are left open) and the last event's id.

    Counts the store holds beyond the log (pruned events, imports) count from
    the start; events of patterns the store no longer holds are skipped.
    """
    info: dict[str, tuple[list[int], float, RuleKey]] = {
        row[0]: (list(row[1 : 1 + _N]), float(row[1 + _N]), (row[2 + _N], row[3 + _N], row[4 + _N]))
        for row in c.execute(f"SELECT fingerprint, {COLS}, first_seen, language, source, code FROM patterns")
    }
    kinds = _KIND_INDEX
    events: list[tuple[int, float, int, str, str]] = []
    logged: dict[str, list[int]] = {}
    cursor = 0
    for n, at, kind, fp, ws in c.execute("SELECT id, at, kind, fingerprint, workspace FROM events ORDER BY id"):
        cursor = n
        i = kinds.get(kind)
        if i is None or fp not in info:
            continue
        events.append((n, at, i, fp, ws))
        lg = logged.get(fp)
        if lg is None:
            lg = logged[fp] = [0] * _N
        lg[i] += 1

    def initial(fp: str) -> tuple[list[int], float]:
        lg = logged.get(fp) or [0] * _N
        counts, first, _ = info[fp]
        return [max(0, n - m) for n, m in zip(counts, lg, strict=True)], first

    r = Replay(initial, lambda fp: info[fp][2])
    for e in events:
        r.feed(*e)
    return r, cursor


def effect_rows(tally: dict[tuple[RuleKey, int], list[int]]) -> list[tuple[str, str, str, int, int, int]]:
    """``tally`` as ``(language, source, code, week, lists, first)`` rows."""
    return [(*key, week, n, first) for (key, week), (n, first) in tally.items()]


# -- the checkpoint ----------------------------------------------------------------------


def _meta(c: sqlite3.Connection, key: str) -> str | None:
    row = c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set_meta(c: sqlite3.Connection, key: str, value: str) -> None:
    sql = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    c.execute(sql, (key, value))


def _max_event_id(c: sqlite3.Connection) -> int:
    return int(c.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])


def invalidate(c: sqlite3.Connection) -> None:
    """The log's past changed (inside the caller's transaction): the next dashboard replays it all."""
    c.execute("DELETE FROM meta WHERE key IN ('dash_cursor', 'dash_open')")


def checkpoint_valid(c: sqlite3.Connection) -> bool:
    """Whether ``dash_effect`` and the checkpoint cover exactly the log as it is now."""
    cursor = _meta(c, "dash_cursor")
    return cursor is not None and int(cursor) == _max_event_id(c)


def save_checkpoint(c: sqlite3.Connection, r: Replay, cursor: int) -> None:
    """Store a whole-log replay (lists still open left open) as the checkpoint (inside the caller's transaction)."""
    for table in ("dash_effect", "dash_replay", "dash_offered"):
        c.execute(f"DELETE FROM {table}")
    _write(c, r, cursor)


def _write(c: sqlite3.Connection, r: Replay, cursor: int) -> None:
    c.executemany(_EFFECT_UPSERT, effect_rows(r.tally))
    c.executemany(
        f"INSERT OR REPLACE INTO dash_replay (fingerprint, {COLS}, last) VALUES (?, {', '.join('?' * _N)}, ?)",
        [(fp, *st, r.last[fp]) for fp, st in r.state.items()],
    )
    c.executemany(
        "INSERT OR REPLACE INTO dash_offered (workspace, fingerprint, id) VALUES (?, ?, ?)",
        [(ws, fp, n) for (ws, fp), n in r.offered.items()],
    )
    _set_meta(c, "dash_open", orjson.dumps(r.open).decode())
    _set_meta(c, "dash_cursor", str(cursor))


def _chunks(items: list[str], size: int = 500) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _open_lists(c: sqlite3.Connection) -> dict[str, tuple[float, str, list[str]]]:
    raw = orjson.loads(_meta(c, "dash_open") or "{}")
    return {str(ws): (float(at), str(ch), [str(f) for f in rj]) for ws, (at, ch, rj) in raw.items()}


def resume(
    c: sqlite3.Connection,
    pairs: set[tuple[str, str]],
    new: dict[str, tuple[RuleKey, float]],
    *,
    pending_in_store: bool,
) -> Replay:
    """A replay that continues from the checkpoint, for the ``(workspace, fingerprint)`` pairs of the events to come.

    A pattern the log has not touched yet starts from the store's counts,
    less the events of open lists the store already counted
    (``pending_in_store``); ``new`` gives the rule key and first-seen time of
    patterns the store does not hold yet.
    """
    r = Replay(lambda fp: ([0] * _N, 0.0), lambda fp: ("", "", ""))
    r.open = _open_lists(c)
    pairs = set(pairs)
    for ws, (_, chosen, rejected) in r.open.items():
        pairs.update((ws, f) for f in (chosen, *rejected))
    wanted = sorted({fp for _, fp in pairs})
    store: dict[str, tuple[list[int], float, RuleKey]] = {}
    for chunk in _chunks(wanted):
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT fingerprint, {COLS}, last FROM dash_replay WHERE fingerprint IN ({marks})"
        for row in c.execute(sql, chunk):
            r.state[row[0]], r.last[row[0]] = list(row[1 : 1 + _N]), float(row[1 + _N])
        for row in c.execute(
            f"SELECT fingerprint, {COLS}, first_seen, language, source, code FROM patterns"
            f" WHERE fingerprint IN ({marks})",
            chunk,
        ):
            store[row[0]] = (list(row[1 : 1 + _N]), float(row[1 + _N]), (row[2 + _N], row[3 + _N], row[4 + _N]))
    by_ws: dict[str, list[str]] = {}
    for ws, fp in pairs:
        by_ws.setdefault(ws, []).append(fp)
    for ws, fps in by_ws.items():
        for chunk in _chunks(fps):
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT fingerprint, id FROM dash_offered WHERE workspace = ? AND fingerprint IN ({marks})"
            for fp, n in c.execute(sql, [ws, *chunk]):
                r.offered[(ws, fp)] = int(n)
    deferred: dict[str, list[int]] = {}
    if pending_in_store:
        for _, chosen, rejected in r.open.values():
            deferred.setdefault(chosen, [0] * _N)[_I_ACCEPTED] += 1
            for f in rejected:
                deferred.setdefault(f, [0] * _N)[_I_REJECTED] += 1

    def initial(fp: str) -> tuple[list[int], float]:
        if fp not in store:
            return [0] * _N, new[fp][1]
        counts, first, _ = store[fp]
        d = deferred.get(fp) or [0] * _N
        return [max(0, n - m) for n, m in zip(counts, d, strict=True)], first

    def rule_of(fp: str) -> RuleKey:
        return store[fp][2] if fp in store else new[fp][0]

    r.initial, r.rule_of = initial, rule_of
    return r


def advance_in_tx(c: sqlite3.Connection, batch: Batch) -> None:
    """Add a batch to the aggregates, before it is applied (inside the writer's transaction)."""
    trend: dict[tuple[str, str, str, int, int], list[int]] = {}
    for d in batch.patterns.values():
        for wk, n in d.weeks.items():
            t = trend.setdefault((*d.rule_key, int(d.has_shape), wk), [0] * len(_TREND_AT))
            for j, i in enumerate(_TREND_AT):
                t[j] += n[i]
    c.executemany(_TREND_UPSERT, [(*key, *n) for key, n in trend.items()])
    cursor = _meta(c, "dash_cursor")
    if cursor is None:
        return
    top = _max_event_id(c)
    if int(cursor) != top or _adds_beyond_events(batch):
        invalidate(c)
        return
    if not batch.events:
        return
    pairs = {(ws, fp) for _, _, fp, ws in batch.events}
    new = {fp: (d.rule_key, d.first_seen) for fp, d in batch.patterns.items()}
    r = resume(c, pairs, new, pending_in_store=True)
    for event_id, (at, kind, fp, ws) in enumerate(batch.events, start=top + 1):
        r.feed(event_id, at, _KIND_INDEX[kind], fp, ws)
    _write(c, r, top + len(batch.events))


def _adds_beyond_events(batch: Batch) -> bool:
    """Whether the batch adds counts that no event of it explains (an import)."""
    logged: dict[str, list[int]] = {}
    for _, kind, fp, _ in batch.events:
        logged.setdefault(fp, [0] * _N)[_KIND_INDEX[kind]] += 1
    return any(d.set_workspaces or d.counts != logged.get(fp, [0] * _N) for fp, d in batch.patterns.items())


# -- reading -----------------------------------------------------------------------------


def rebuild_trend(c: sqlite3.Connection) -> None:
    """``dash_trend`` recomputed from ``trend`` (inside the caller's transaction)."""
    c.execute("DELETE FROM dash_trend")
    c.execute(f"INSERT INTO dash_trend (language, source, code, fix, week, {_TREND_COLS}) {_TREND_FROM_PATTERNS}")


def clear(c: sqlite3.Connection) -> None:
    """Everything learned was deleted (inside the caller's transaction): so are the aggregates; the log is empty."""
    for table in ("dash_trend", "dash_effect", "dash_replay", "dash_offered"):
        c.execute(f"DELETE FROM {table}")
    _set_meta(c, "dash_open", "{}")
    _set_meta(c, "dash_cursor", str(_max_event_id(c)))


def forget(c: sqlite3.Connection, fingerprint: str) -> None:
    """A pattern is forgotten (inside the caller's transaction, before its rows go).

    Its weekly counts leave ``dash_trend``; its events leave the log, so the replay starts over.
    """
    invalidate(c)
    c.execute(
        f"INSERT INTO dash_trend (language, source, code, fix, week, {_TREND_COLS})"
        f" SELECT p.language, p.source, p.code, p.has_shape, t.week, {', '.join(f'-t.{k}' for k in TREND_KINDS)}"
        " FROM trend t JOIN patterns p ON p.fingerprint = t.fingerprint WHERE t.fingerprint = ?"
        " ON CONFLICT DO UPDATE SET " + ", ".join(f"{k} = {k} + excluded.{k}" for k in TREND_KINDS),
        (fingerprint,),
    )


def read_trend(c: sqlite3.Connection) -> list[tuple[str, str, str, int, int, int, int, int, int, int]]:
    """``dash_trend``'s rows, or (when its sums disagree with ``trend``) the same computed from ``trend``.

    While the replay's checkpoint is current, every batch since it was kept
    went through :func:`advance_in_tx`, which adds to ``dash_trend`` too:
    the sums are compared only when it is not (a writer of an older fixlore
    leaves it behind).
    """
    sql = f"SELECT language, source, code, fix, week, {_TREND_COLS} FROM dash_trend"
    kept = has_aggregates(c) and (checkpoint_valid(c) or trend_consistent(c))
    return c.execute(sql if kept else _TREND_FROM_PATTERNS).fetchall()


def has_aggregates(c: sqlite3.Connection) -> bool:
    """Whether the store has migration 7's tables (an older store opened read-only has not)."""
    return c.execute("SELECT 1 FROM sqlite_master WHERE name = 'dash_effect'").fetchone() is not None


def trend_consistent(c: sqlite3.Connection) -> bool:
    """Whether ``dash_trend`` adds up to what ``trend`` holds (one pass over each)."""
    sums = ", ".join(f"coalesce(sum({k}), 0)" for k in TREND_KINDS)
    kept = c.execute(f"SELECT {sums} FROM dash_trend").fetchone()
    return tuple(kept) == tuple(c.execute(f"SELECT {sums} FROM trend").fetchone())


def read_effect(c: sqlite3.Connection) -> list[tuple[str, str, str, int, int, int]] | None:
    """``dash_effect`` with the lists still open decided, or None when the checkpoint is not current."""
    if not has_aggregates(c) or not checkpoint_valid(c):
        return None
    r = resume(c, set(), {}, pending_in_store=True)
    r.close()
    rows: dict[tuple[str, str, str, int], list[int]] = {
        (a, b, k, w): [n, f] for a, b, k, w, n, f in c.execute("SELECT * FROM dash_effect WHERE lists > 0")
    }
    for a, b, k, w, n, f in effect_rows(r.tally):
        t = rows.setdefault((a, b, k, w), [0, 0])
        t[0] += n
        t[1] += f
    return [(*key, n, f) for key, (n, f) in rows.items()]


def log_token(c: sqlite3.Connection) -> tuple[str | None, int, int]:
    """What identifies the log and the counts a replay saw: the store revision, the last event id, the events."""
    n, top = c.execute("SELECT count(*), coalesce(max(id), 0) FROM events").fetchone()
    return _meta(c, "rev"), int(top), int(n)


def keep(path: Path, r: Replay, cursor: int, token: tuple[str | None, int, int]) -> bool:
    """Store a whole-log replay (lists still open left open) as the checkpoint, if the store has not changed since.

    The store is opened for writing for this alone; a store that cannot be
    written (read-only file) keeps no checkpoint and says False.
    """
    from ._schema import connect, write_tx

    try:
        conn = connect(path)
    except KnowledgeError:
        return False
    try:  # a store not yet migrated to version 7 has no table for it: kept nothing
        with write_tx(conn):
            if log_token(conn) != token:
                return False
            if not trend_consistent(conn):
                rebuild_trend(conn)
            save_checkpoint(conn, r, cursor)
        return True
    except sqlite3.Error as exc:
        logger.info("dashboard: the replay checkpoint is not kept: %s", exc)
        return False
    finally:
        conn.close()
