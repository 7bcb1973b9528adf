"""Team knowledge: publishing through a local outbox, pulling trusted team evidence, both in the background.

Publishing. The user store's event log is the source: :meth:`TeamSync.enqueue`
reads the events after a mark (``meta.team_mark``; the store moves it down when
it deletes the newest events, see ``Store._events_deleted``), sums them per pattern and
workspace, re-verifies each pattern's privacy, and writes them as one outbox
row (``team_outbox``, migration 5) with a fresh batch id, moving the mark in
the same SQLite transaction. :meth:`TeamSync.send` sends the outbox in order,
one PostgreSQL transaction per batch, and deletes a row only after its batch
committed; the store records each batch id, so a batch sent again (PostgreSQL
committed, then fixlore died before deleting the row) is counted once. A
stopped or unreachable PostgreSQL leaves the outbox as it is, for the next try.

Reading. :meth:`TeamSync.pull` reads the team's aggregates and re-checks every
row as an untrusted import is checked (format, counts, times, the fingerprint
against its pattern, the privacy verifier): a member can write rows by hand. A
refused row is logged once (by a digest of its fingerprint, never its text) and
skipped. A pattern is trusted once seen in ``min_workspaces`` distinct
workspaces or approved by ``min_approvals`` reviewers, and never once a reviewer
rejected it; only trusted patterns enter the index, as :attr:`Scope.TEAM`.

Nothing here runs on the request path: a daemon thread syncs every
``interval`` seconds, and the index swap is one assignment under the index lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixlore.abstraction import Pattern

from . import _teamdb
from ._exchange import Record, Verifier, _entry
from ._model import COUNT_KINDS, InvalidImport, KnowledgeError
from ._schema import connect as connect_sqlite
from ._schema import write_tx
from ._teamdb import TeamError
from ._verify import shared_fields

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

BATCH_EVENTS = 5000
"""At most this many events of the log go into one outbox batch."""
_KIND_INDEX = {k.value: i for i, k in enumerate(COUNT_KINDS)}


@dataclass(frozen=True, slots=True)
class TrustConfig:
    """When team evidence counts."""

    min_workspaces: int = 3
    """Trusted once seen in this many distinct workspaces ..."""
    min_approvals: int = 2
    """... or approved by this many reviewers (and rejected by none)."""


@dataclass(frozen=True, slots=True)
class TeamPattern:
    """One checked team pattern with its evidence and review state."""

    record: Record
    approvals: int
    rejections: int
    trusted: bool

    @property
    def status(self) -> str:
        """``trusted``, ``rejected`` or ``candidate``."""
        if self.rejections:
            return "rejected"
        return "trusted" if self.trusted else "candidate"


@dataclass(frozen=True, slots=True)
class TeamRead:
    """What a pull found: the patterns that passed every check, and how many rows were refused."""

    patterns: tuple[TeamPattern, ...]
    refused: int


@dataclass(slots=True)
class SyncReport:
    """What one sync did."""

    enqueued: int = 0
    """Outbox batches written from the event log."""
    sent: int = 0
    """Batches the team store took (new to it)."""
    resent: int = 0
    """Batches the team store had already (counted once)."""
    pending: int = 0
    """Batches still waiting in the outbox."""
    pulled: int = 0
    """Team patterns that passed the checks."""
    trusted: int = 0
    """Of those, the ones now in the index."""
    refused: int = 0
    """Team rows refused on read."""
    error: str | None = None
    """Why publishing or pulling stopped (PostgreSQL stopped, not allowed ...)."""
    extra: dict[str, Any] = field(default_factory=dict)


def check_rows(
    raw: _teamdb.RawTeamRows,
    verifier: Verifier,
    trust: TrustConfig,
    *,
    now: float | None = None,
    on_refused: Callable[[str, str], None] | None = None,
) -> TeamRead:
    """Check every team row as an untrusted import is checked; keep those that pass.

    ``on_refused(digest, reason)`` hears of each refused fingerprint; ``reason``
    names the field, never the text.
    """
    latest = (time.time() if now is None else now) + 86400.0
    out: list[TeamPattern] = []
    refused = 0
    for row in raw.aggregates:
        fp = row[0]
        counts = dict(zip(_teamdb.COUNT_NAMES, row[1:8], strict=True))
        reason = "no pattern"
        checked: Record | None = None
        for body in raw.bodies.get(str(fp), []):
            try:
                item = {
                    "fingerprint": fp,
                    "pattern": json.loads(body),
                    "counts": counts,
                    "first_seen": row[8],
                    "last_seen": row[9],
                    "workspaces": row[10],
                }
                entry = _entry(item, "team", latest)
            except (InvalidImport, ValueError, RecursionError) as exc:
                reason = str(exc) if isinstance(exc, InvalidImport) else "malformed pattern JSON"
                continue
            ok, where = verifier(entry.record.pattern)
            if not ok:
                reason = f"refused by the privacy verifier (field {where})"
                continue
            where, why = shared_fields(entry.record.pattern)
            if where:
                reason = f"{where}: {why}"
                continue
            checked = entry.record
            break
        if checked is None:
            refused += 1
            if on_refused is not None:
                on_refused(hashlib.sha256(str(fp).encode("utf-8", "replace")).hexdigest()[:12], reason)
            continue
        approvals, rejections = raw.reviews.get(checked.fingerprint, (0, 0))
        trusted = rejections == 0 and (checked.workspaces >= trust.min_workspaces or approvals >= trust.min_approvals)
        out.append(TeamPattern(checked, approvals, rejections, trusted))
    return TeamRead(tuple(out), refused)


class TeamSync:
    """Publishes a store's events to the team store and pulls the team's trusted evidence.

    ``knowledge`` is the :class:`~fixlore.knowledge.Knowledge` whose index receives
    the team scope; its store (when learning is on) holds the outbox. Call
    :meth:`sync` directly (``fixlore team sync``, tests) or :meth:`start` a thread.
    """

    def __init__(
        self,
        knowledge: Any,
        conninfo: str,
        *,
        trust: TrustConfig = TrustConfig(),  # noqa: B008 - frozen
        interval: float = 60.0,
        timeout: float = 5.0,
        min_gap: float = 2.0,
    ) -> None:
        self.knowledge = knowledge
        self.conninfo = _teamdb.team_conninfo(conninfo)
        self.trust = trust
        self.interval = interval
        self.timeout = timeout
        self.min_gap = min(min_gap, interval)
        self.verifier: Verifier = knowledge.verifier
        self._pg: psycopg.Connection[tuple[Any, ...]] | None = None
        self._lite: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._logged: set[str] = set()
        self._last_error: str | None = None
        self.last: SyncReport | None = None

    # -- the thread ----------------------------------------------------------------

    def start(self) -> TeamSync:
        """Sync now and then every ``interval`` seconds in a daemon thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="fixlore-team-sync", daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """Publish soon (the store committed new events) instead of waiting for the interval."""
        self._wake.set()

    def _run(self) -> None:
        """Pull every ``interval``; publish then too, and soon after the store commits (``wake``).

        At most one sync every ``min_gap`` seconds; after a failure, nothing until the next
        interval, so a stopped PostgreSQL costs one attempt a minute, not one per keystroke.
        """
        next_pull = 0.0
        while not self._stop.is_set():
            pull = time.monotonic() >= next_pull
            report = self.sync(pull=pull)
            if pull:
                next_pull = time.monotonic() + self.interval
            wait = max(0.0, next_pull - time.monotonic())
            if report.error is None:
                self._wake.wait(wait)
                self._wake.clear()
                self._stop.wait(self.min_gap)
            else:
                self._stop.wait(wait)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread (a sync under way finishes) and close the connections."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._lock:
            self._close_pg()
            if self._lite is not None:
                self._lite.close()
                self._lite = None

    # -- one sync ----------------------------------------------------------------------

    def sync(self, *, publish: bool = True, pull: bool = True) -> SyncReport:
        """Enqueue new events, send the outbox, pull the team's evidence; never raises for the network."""
        report = SyncReport()
        with self._lock:
            try:
                if publish and self._can_publish():
                    report.enqueued = self.enqueue()
                    self.send(report)
                if pull:
                    read = self.pull()
                    report.pulled = len(read.patterns)
                    report.trusted = sum(1 for p in read.patterns if p.trusted)
                    report.refused = read.refused
            except TeamError as exc:
                report.error = str(exc)
                self._note_error(report.error)
            except (sqlite3.Error, KnowledgeError) as exc:  # the local store: busy, full disk
                report.error = f"the local outbox: {type(exc).__name__}"
                self._note_error(report.error)
            else:
                if self._last_error is not None:
                    logger.info("team store reachable again")
                    self._last_error = None
            try:
                report.pending = self.pending() if self._can_publish() else 0
            except sqlite3.Error:
                report.pending = -1
        self.last = report
        return report

    def _note_error(self, error: str) -> None:
        if error != self._last_error:  # once per kind of failure, not every interval
            logger.warning("team knowledge: %s (will retry)", error)
        self._last_error = error

    def _can_publish(self) -> bool:
        return bool(self.knowledge.learning) and Path(self.knowledge.db_path).exists()

    # -- the outbox ----------------------------------------------------------------------

    def _sqlite(self) -> sqlite3.Connection:
        if self._lite is None:
            self._lite = connect_sqlite(Path(self.knowledge.db_path))
        return self._lite

    def pending(self) -> int:
        """Batches waiting in the outbox."""
        row = self._sqlite().execute("SELECT count(*) FROM team_outbox").fetchone()
        return int(row[0]) if row else 0

    def enqueue(self) -> int:
        """Move the events logged since the last call into outbox batches; how many batches."""
        c = self._sqlite()
        made = 0
        while True:
            with write_tx(c):
                n, last = self._enqueue_one(c)
            made += n
            if last < BATCH_EVENTS:
                return made

    def _enqueue_one(self, c: sqlite3.Connection) -> tuple[int, int]:
        """One batch of at most ``BATCH_EVENTS`` events: (batches written, events read)."""
        got = c.execute("SELECT value FROM meta WHERE key = 'team_mark'").fetchone()
        mark = int(got[0]) if got else 0
        rows = c.execute(
            "SELECT id, at, kind, fingerprint, workspace FROM events WHERE id > ? ORDER BY id LIMIT ?",
            (mark, BATCH_EVENTS),
        ).fetchall()
        if not rows:
            c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('team_mark', ?)", (str(mark),))
            return 0, 0
        salt = str(c.execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()[0])
        fps = sorted({str(r[3]) for r in rows})
        bodies: dict[str, str] = {}
        for i in range(0, len(fps), 500):
            chunk = fps[i : i + 500]
            for fp, body in c.execute(
                f"SELECT fingerprint, body FROM patterns WHERE fingerprint IN ({', '.join('?' * len(chunk))})", chunk
            ):
                if self._publishable(str(fp), str(body)):
                    bodies[str(fp)] = str(body)
        deltas: dict[tuple[str, str], list[Any]] = {}
        for _, at, kind, fp, ws in rows:
            if fp not in bodies or kind not in _KIND_INDEX:
                continue
            workspace = str(ws) or _no_workspace(salt)
            d = deltas.get((fp, workspace))
            if d is None:
                d = deltas[(fp, workspace)] = [[0] * len(COUNT_KINDS), float(at), float(at)]
            d[0][_KIND_INDEX[kind]] += 1
            d[1] = min(d[1], float(at))
            d[2] = max(d[2], float(at))
        made = 0
        if deltas:
            used = {fp for fp, _ in deltas}
            payload = {
                "v": 1,
                "patterns": {fp: bodies[fp] for fp in sorted(used)},
                "deltas": [[fp, ws, counts, first, last] for (fp, ws), (counts, first, last) in sorted(deltas.items())],
            }
            c.execute(
                "INSERT INTO team_outbox (batch_id, created_at, events, payload) VALUES (?, ?, ?, ?)",
                (str(uuid.uuid4()), time.time(), sum(sum(d[0]) for d in deltas.values()), json.dumps(payload)),
            )
            made = 1
        c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('team_mark', ?)", (str(rows[-1][0]),))
        return made, len(rows)

    def _publishable(self, fp: str, body: str) -> bool:
        """The stored pattern parses, still has its fingerprint and passes the verifier today."""
        try:
            pattern = Pattern.from_json(body)
        except (ValueError, KeyError, TypeError):
            return False
        if pattern.fingerprint != fp:
            return False
        ok, where = self.verifier(pattern)
        if not ok:
            logger.warning("team knowledge: pattern %s not published (privacy verifier, field %s)", fp, where)
            return False
        where, why = shared_fields(pattern)
        if where:
            logger.info("team knowledge: pattern %s not published (%s: %s)", fp, where, why)
        return not where

    def send(self, report: SyncReport | None = None) -> tuple[int, int]:
        """Send the outbox in order; (new to the store, already there). Stops at the first failure.

        ``report`` counts each batch as it goes, so a failure half-way still says what was sent.
        """
        report = report if report is not None else SyncReport()
        db_error = _teamdb.database_error()
        c = self._sqlite()
        rows = c.execute("SELECT batch_id, payload FROM team_outbox ORDER BY created_at, rowid").fetchall()
        for batch_id, payload in rows:
            doc = json.loads(payload)
            deltas = [(fp, ws, counts, first, last) for fp, ws, counts, first, last in doc["deltas"]]
            try:
                new = _teamdb.publish(self._connection(), str(batch_id), doc["patterns"], deltas)
            except db_error as exc:
                with write_tx(c):
                    c.execute("UPDATE team_outbox SET attempts = attempts + 1 WHERE batch_id = ?", (batch_id,))
                self._close_pg()
                raise TeamError(f"cannot publish to the team store: {_teamdb.short(exc)}") from exc
            # Deleted only now: dying before this line sends the batch again, and the store counts it once.
            with write_tx(c):
                c.execute("DELETE FROM team_outbox WHERE batch_id = ?", (batch_id,))
            if new:
                report.sent += 1
            else:
                report.resent += 1
        if report.sent or report.resent:
            logger.info(
                "team knowledge: %d batches sent (%d had arrived before)", report.sent + report.resent, report.resent
            )
        return report.sent, report.resent

    # -- PostgreSQL ----------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._pg is not None and self._pg.closed:
            self._pg = None
        if self._pg is None:
            self._pg = _teamdb.connect(self.conninfo, timeout=self.timeout)
        return self._pg

    def _close_pg(self) -> None:
        if self._pg is not None:
            try:
                self._pg.close()
            finally:
                self._pg = None

    def pull(self) -> TeamRead:
        """Read the team's evidence, check every row, put the trusted patterns in the index."""
        db_error = _teamdb.database_error()
        try:
            raw = _teamdb.read_team(self._connection())
        except db_error as exc:
            self._close_pg()
            raise TeamError(f"cannot read the team store: {_teamdb.short(exc)}") from exc
        read = check_rows(raw, self.verifier, self.trust, on_refused=self._refused)
        self.knowledge.replace_team([p.record for p in read.patterns if p.trusted])
        return read

    def _refused(self, digest: str, reason: str) -> None:
        if digest not in self._logged:  # once per row, not once per pull
            self._logged.add(digest)
            logger.warning("team knowledge: refused a team row (fingerprint digest %s): %s", digest, reason)


def _no_workspace(salt: str) -> str:
    """The workspace id of events recorded outside any workspace: per store, so never shared."""
    return hashlib.sha256(f"{salt}:no-workspace".encode()).hexdigest()[:24]


def team_review(conninfo: str, verifier: Verifier, trust: TrustConfig) -> TeamRead:
    """Every checked team pattern with its state (for ``fixlore team review``)."""
    with _teamdb.connect(conninfo) as conn:
        raw = _teamdb.read_team(conn)
    return check_rows(raw, verifier, trust)


def resolve(patterns: Sequence[TeamPattern], ident: str) -> str:
    """The fingerprint that ``ident`` (a unique prefix) names among ``patterns``."""
    ids = sorted({p.record.fingerprint for p in patterns if p.record.fingerprint.startswith(ident)})
    if len(ids) != 1:
        raise LookupError(f"{ident!r} matches {len(ids)} team patterns" + ("; give more digits" if ids else ""))
    return ids[0]


def check_team(conninfo: str) -> tuple[bool, str]:
    """For ``fixlore doctor``: whether the team store answers, and what it says (team, patterns)."""
    try:
        with _teamdb.connect(_teamdb.team_conninfo(conninfo), timeout=3.0) as conn:
            info = _teamdb.status(conn)
    except (TeamError, ValueError) as exc:
        return False, str(exc)
    except _teamdb.database_error() as exc:
        return False, f"the team store refused: {_teamdb.short(exc)} (did `fixlore team init` run?)"
    if info["team"] is None:
        return False, "connected, but this role is in no team (fixlore team add-member)"
    return True, f"team {info['team']}: {info['patterns']} patterns, {info['my_batches']} batches from this role"
