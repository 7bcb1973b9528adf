"""The team store's PostgreSQL side: numbered migrations, roles, row-level security, and its queries.

One database can hold several teams. ``fixlore.members`` maps a PostgreSQL
login role to its team (and whether it reviews); every row carries its team,
filled in from the role that writes it, and row-level security keeps each
role to its own team's rows. Two group roles:

* ``fixlore_member`` may INSERT batches, pattern bodies and events, and SELECT
  the team's aggregates (the ``team_*`` views); no UPDATE, no DELETE, no SELECT
  of the raw rows, so a member cannot change or read what others sent.
* ``fixlore_reviewer`` is a member that may also INSERT reviews (approve or
  reject a pattern for the team).

The views are ``security_barrier`` views owned by the role that ran ``team
init``; they filter by the reading role's team themselves, so a member of team
A sees nothing of team B through them either. psycopg 3 is imported lazily:
fixlore runs without it until a team store is configured.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._model import COUNT_KINDS

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

COUNT_NAMES = tuple(k.value for k in COUNT_KINDS)
_COUNT_COLS = ", ".join(COUNT_NAMES)
_SUMS = ",\n    ".join(f"sum(e.{c})::bigint AS {c}" for c in COUNT_NAMES)

MAX_TEAM_PATTERNS = 200_000
"""A pull reads at most this many team patterns (as an import file holds at most 200k)."""
MEMBER_ROLE = "fixlore_member"
REVIEWER_ROLE = "fixlore_reviewer"
TEAM_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

TEAM_MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        f"""
        CREATE TABLE fixlore.members (
            role_name name PRIMARY KEY,
            team text NOT NULL CHECK (team ~ '^[A-Za-z0-9_.-]{{1,64}}$'),
            reviewer boolean NOT NULL DEFAULT false
        );
        CREATE FUNCTION fixlore.my_team() RETURNS text LANGUAGE sql STABLE
            AS $$ SELECT team FROM fixlore.members WHERE role_name = current_user $$;
        CREATE TABLE fixlore.batches (
            team text NOT NULL DEFAULT fixlore.my_team(),
            batch_id uuid NOT NULL,
            member name NOT NULL DEFAULT current_user,
            events integer NOT NULL CHECK (events >= 0),
            received_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (team, batch_id)
        );
        CREATE TABLE fixlore.patterns (
            team text NOT NULL DEFAULT fixlore.my_team(),
            fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{{20}}$'),
            body text NOT NULL CHECK (length(body) <= 65536),
            digest text GENERATED ALWAYS AS (md5(body)) STORED,
            PRIMARY KEY (team, fingerprint, digest)
        );
        CREATE TABLE fixlore.events (
            team text NOT NULL DEFAULT fixlore.my_team(),
            batch_id uuid NOT NULL,
            fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{{20}}$'),
            workspace text NOT NULL CHECK (length(workspace) <= 64),
            {", ".join(f"{c} bigint NOT NULL DEFAULT 0 CHECK ({c} >= 0)" for c in COUNT_NAMES)},
            first_seen double precision NOT NULL,
            last_seen double precision NOT NULL,
            PRIMARY KEY (team, batch_id, fingerprint, workspace),
            FOREIGN KEY (team, batch_id) REFERENCES fixlore.batches (team, batch_id)
        );
        CREATE INDEX events_team_fp ON fixlore.events (team, fingerprint);
        CREATE TABLE fixlore.reviews (
            id bigserial PRIMARY KEY,
            team text NOT NULL DEFAULT fixlore.my_team(),
            fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{{20}}$'),
            reviewer name NOT NULL DEFAULT current_user,
            verdict text NOT NULL CHECK (verdict IN ('approve', 'reject')),
            at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX reviews_team_fp ON fixlore.reviews (team, fingerprint, reviewer, id)
        """,
    ),
    (
        2,
        f"""
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
                CREATE ROLE {MEMBER_ROLE} NOLOGIN;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{REVIEWER_ROLE}') THEN
                CREATE ROLE {REVIEWER_ROLE} NOLOGIN;
            END IF;
        END $$;
        GRANT {MEMBER_ROLE} TO {REVIEWER_ROLE};
        REVOKE ALL ON SCHEMA fixlore FROM PUBLIC;
        GRANT USAGE ON SCHEMA fixlore TO {MEMBER_ROLE};
        REVOKE ALL ON ALL TABLES IN SCHEMA fixlore FROM PUBLIC;

        -- Policies and views compare with (SELECT fixlore.my_team()): an init plan, run once per
        -- statement, not once per row (a publish inserts hundreds of rows in one statement).
        ALTER TABLE fixlore.members ENABLE ROW LEVEL SECURITY;
        CREATE POLICY members_self ON fixlore.members FOR SELECT TO {MEMBER_ROLE}
            USING (role_name = current_user);
        GRANT SELECT ON fixlore.members TO {MEMBER_ROLE};

        ALTER TABLE fixlore.batches ENABLE ROW LEVEL SECURITY;
        CREATE POLICY batches_add ON fixlore.batches FOR INSERT TO {MEMBER_ROLE}
            WITH CHECK (team = (SELECT fixlore.my_team()) AND member = current_user);
        GRANT INSERT ON fixlore.batches TO {MEMBER_ROLE};

        ALTER TABLE fixlore.patterns ENABLE ROW LEVEL SECURITY;
        CREATE POLICY patterns_add ON fixlore.patterns FOR INSERT TO {MEMBER_ROLE}
            WITH CHECK (team = (SELECT fixlore.my_team()));
        GRANT INSERT (team, fingerprint, body) ON fixlore.patterns TO {MEMBER_ROLE};

        ALTER TABLE fixlore.events ENABLE ROW LEVEL SECURITY;
        CREATE POLICY events_add ON fixlore.events FOR INSERT TO {MEMBER_ROLE}
            WITH CHECK (team = (SELECT fixlore.my_team()));
        GRANT INSERT ON fixlore.events TO {MEMBER_ROLE};

        ALTER TABLE fixlore.reviews ENABLE ROW LEVEL SECURITY;
        CREATE POLICY reviews_add ON fixlore.reviews FOR INSERT TO {REVIEWER_ROLE}
            WITH CHECK (
                team = (SELECT fixlore.my_team()) AND reviewer = current_user
                AND EXISTS (SELECT 1 FROM fixlore.members m WHERE m.role_name = current_user AND m.reviewer)
            );
        GRANT INSERT (team, fingerprint, reviewer, verdict) ON fixlore.reviews TO {REVIEWER_ROLE};
        GRANT USAGE ON SEQUENCE fixlore.reviews_id_seq TO {REVIEWER_ROLE};

        CREATE VIEW fixlore.team_patterns WITH (security_barrier) AS
        SELECT e.fingerprint,
            {_SUMS},
            min(e.first_seen) AS first_seen, max(e.last_seen) AS last_seen,
            count(DISTINCT e.workspace) AS workspaces
        FROM fixlore.events e
        WHERE e.team = (SELECT fixlore.my_team())
        GROUP BY e.fingerprint;

        CREATE VIEW fixlore.team_bodies WITH (security_barrier) AS
        SELECT p.fingerprint, p.body FROM fixlore.patterns p WHERE p.team = (SELECT fixlore.my_team());

        CREATE VIEW fixlore.team_reviews WITH (security_barrier) AS
        SELECT latest.fingerprint,
            count(*) FILTER (WHERE latest.verdict = 'approve') AS approvals,
            count(*) FILTER (WHERE latest.verdict = 'reject') AS rejections
        FROM (
            SELECT DISTINCT ON (r.fingerprint, r.reviewer) r.fingerprint, r.reviewer, r.verdict
            FROM fixlore.reviews r
            WHERE r.team = (SELECT fixlore.my_team())
            ORDER BY r.fingerprint, r.reviewer, r.id DESC
        ) latest
        GROUP BY latest.fingerprint;

        CREATE VIEW fixlore.team_status WITH (security_barrier) AS
        SELECT fixlore.my_team() AS team,
            (SELECT count(*) FROM fixlore.batches b WHERE b.team = (SELECT fixlore.my_team())) AS batches,
            (SELECT count(*) FROM fixlore.batches b
                WHERE b.team = (SELECT fixlore.my_team()) AND b.member = current_user) AS my_batches,
            (SELECT max(b.received_at) FROM fixlore.batches b
                WHERE b.team = (SELECT fixlore.my_team()) AND b.member = current_user) AS my_last_batch;

        GRANT SELECT ON fixlore.team_patterns, fixlore.team_bodies, fixlore.team_reviews, fixlore.team_status
            TO {MEMBER_ROLE}
        """,
    ),
)
"""The team schema's numbered migrations; each runs with its record in one transaction."""


class TeamError(Exception):
    """The team store could not do what was asked (not reachable, not allowed, not set up)."""


_PASSWORD_KV = re.compile(r"(?:^|\s)password\s*=", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"^[a-z]+://[^/@?]*:[^/@?]*@", re.IGNORECASE)
_SERVICE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def team_conninfo(value: str) -> str:
    """A ``teamKnowledge`` setting as a libpq connection string; ``ValueError`` says what is wrong.

    Accepts a connection string (``host=... dbname=...``), a ``postgresql://`` URI, or
    a bare libpq service name (``~/.pg_service.conf``), which becomes ``service=NAME``.
    A password is refused: libpq reads it from ``.pgpass``, ``PGPASSFILE`` or the
    environment, so fixlore's own configuration (often committed) never holds one.
    """
    text = value.strip()
    if not text:
        return ""
    if "://" in text:
        if _URI_PASSWORD.match(text) or re.search(r"[?&]password=", text, re.IGNORECASE):
            raise ValueError("holds a password; put it in ~/.pgpass (or PGPASSFILE) instead")
        return text
    if "=" in text:
        if _PASSWORD_KV.search(text):
            raise ValueError("holds a password; put it in ~/.pgpass (or PGPASSFILE) instead")
        return text
    if not _SERVICE.match(text):
        raise ValueError("expected a connection string, a postgresql:// URI or a libpq service name")
    return f"service={text}"


def database_error() -> type[Exception]:
    """``psycopg.Error``, imported on first use; TeamError if psycopg is not installed."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - the extra is installed with the tests
        raise TeamError("team knowledge needs psycopg: pip install 'fixlore[team]'") from exc
    return psycopg.Error


def connect(conninfo: str, *, timeout: float = 5.0) -> psycopg.Connection[tuple[Any, ...]]:
    """A connection to the team store (libpq finds the password: .pgpass, PGPASSFILE, PGPASSWORD)."""
    database_error()
    import psycopg

    try:
        return psycopg.connect(
            conninfo, autocommit=True, connect_timeout=max(1, int(timeout)), application_name="fixlore"
        )
    except psycopg.Error as exc:
        raise TeamError(f"cannot connect to the team store: {short(exc)}") from exc


def short(exc: BaseException) -> str:
    """The first line of a database error (libpq's text names hosts and roles, never code)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def migrate(conn: psycopg.Connection[tuple[Any, ...]]) -> list[int]:
    """Create or upgrade the team schema; the versions applied now."""
    with conn.transaction():
        conn.execute("CREATE SCHEMA IF NOT EXISTS fixlore")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS fixlore.schema_migrations"
            " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    applied: list[int] = []
    for version, sql in TEAM_MIGRATIONS:
        with conn.transaction():
            conn.execute("LOCK TABLE fixlore.schema_migrations IN EXCLUSIVE MODE")
            done = conn.execute("SELECT 1 FROM fixlore.schema_migrations WHERE version = %s", (version,)).fetchone()
            if done is not None:
                continue
            conn.execute(sql.encode())
            conn.execute("INSERT INTO fixlore.schema_migrations (version) VALUES (%s)", (version,))
            applied.append(version)
            logger.info("team store migrated to version %d", version)
    return applied


def add_member(conn: psycopg.Connection[tuple[Any, ...]], role: str, team: str, *, reviewer: bool = False) -> None:
    """Put an existing login role in ``team`` (as a reviewer too, if asked): for the store's owner."""
    from psycopg import sql

    if not TEAM_NAME.match(team):
        raise TeamError("a team name is 1 to 64 letters, digits, '_', '.' or '-'")
    with conn.transaction():
        conn.execute(
            "INSERT INTO fixlore.members (role_name, team, reviewer) VALUES (%s, %s, %s)"
            " ON CONFLICT (role_name) DO UPDATE SET team = excluded.team, reviewer = excluded.reviewer",
            (role, team, reviewer),
        )
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(MEMBER_ROLE), sql.Identifier(role)))
        group = sql.Identifier(REVIEWER_ROLE)
        if reviewer:
            conn.execute(sql.SQL("GRANT {} TO {}").format(group, sql.Identifier(role)))
        else:
            conn.execute(sql.SQL("REVOKE {} FROM {}").format(group, sql.Identifier(role)))


Delta = tuple[str, str, Sequence[int], float, float]
"""``(fingerprint, workspace, seven counts, first seen, last seen)``."""


def publish(
    conn: psycopg.Connection[tuple[Any, ...]], batch_id: str, bodies: dict[str, str], deltas: Sequence[Delta]
) -> bool:
    """Send one batch in one transaction; False if the store already has it (a resend: counted once).

    Three statements whatever the batch's size: the rows go as arrays (``unnest``), so the
    row-level security checks and constraints run in one statement per table.
    """
    with conn.transaction():
        found = conn.execute("SELECT fixlore.my_team()").fetchone()
        team = found[0] if found is not None else None
        if team is None:
            raise TeamError("this role is in no team (ask the store's owner: fixlore team add-member)")
        cur = conn.execute(
            "INSERT INTO fixlore.batches (team, batch_id, events) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (team, batch_id, sum(sum(d[2]) for d in deltas)),
        )
        if cur.rowcount == 0:
            return False
        fps, texts = zip(*sorted(bodies.items()), strict=True) if bodies else ((), ())
        conn.execute(
            "INSERT INTO fixlore.patterns (team, fingerprint, body)"
            " SELECT %s, f, b FROM unnest(%b::text[], %b::text[]) AS t(f, b) ON CONFLICT DO NOTHING",
            (team, list(fps), list(texts)),
        )
        columns: list[list[Any]] = [[] for _ in range(4 + len(COUNT_NAMES))]
        for fp, ws, counts, first, last in deltas:
            for col, value in zip(columns, (fp, ws, first, last, *counts), strict=True):
                col.append(value)
        # %b: arrays go in binary (no quoting and escaping of each pattern's JSON on the client).
        arrays = ", ".join(["%b::text[]"] * 2 + ["%b::float8[]"] * 2 + ["%b::int8[]"] * len(COUNT_NAMES))
        conn.execute(
            f"INSERT INTO fixlore.events (team, batch_id, fingerprint, workspace, first_seen, last_seen, {_COUNT_COLS})"
            f" SELECT %s, %s, * FROM unnest({arrays})",
            (team, batch_id, *columns),
        )
    return True


@dataclass(frozen=True, slots=True)
class RawTeamRows:
    """What a member reads from the team store, unchecked: every value may be hostile."""

    aggregates: list[tuple[Any, ...]]
    """``fingerprint, seven counts, first_seen, last_seen, workspaces`` per fingerprint."""
    bodies: dict[str, list[str]]
    """Fingerprint -> every body sent under it (one, unless someone wrote rows by hand)."""
    reviews: dict[str, tuple[int, int]]
    """Fingerprint -> (approvals, rejections), each reviewer's latest verdict."""


def read_team(conn: psycopg.Connection[tuple[Any, ...]]) -> RawTeamRows:
    """The team's aggregates, pattern bodies and reviews, in one snapshot."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        aggregates = conn.execute(
            f"SELECT fingerprint, {_COUNT_COLS}, first_seen, last_seen, workspaces"
            " FROM fixlore.team_patterns ORDER BY fingerprint LIMIT %s",
            (MAX_TEAM_PATTERNS,),
        ).fetchall()
        bodies: dict[str, list[str]] = {}
        for fp, body in conn.execute("SELECT fingerprint, body FROM fixlore.team_bodies ORDER BY fingerprint, body"):
            bodies.setdefault(str(fp), []).append(str(body))
        reviews = {
            str(fp): (int(a), int(r))
            for fp, a, r in conn.execute("SELECT fingerprint, approvals, rejections FROM fixlore.team_reviews")
        }
    return RawTeamRows(aggregates, bodies, reviews)


def review(conn: psycopg.Connection[tuple[Any, ...]], fingerprint: str, verdict: str) -> None:
    """Record this reviewer's verdict (``approve`` or ``reject``) on a team pattern."""
    with conn.transaction():
        conn.execute("INSERT INTO fixlore.reviews (fingerprint, verdict) VALUES (%s, %s)", (fingerprint, verdict))


def status(conn: psycopg.Connection[tuple[Any, ...]]) -> dict[str, Any]:
    """The reading role's team, its batches, and the schema version."""
    with conn.transaction():
        row = conn.execute("SELECT team, batches, my_batches, my_last_batch FROM fixlore.team_status").fetchone()
        patterns = conn.execute("SELECT count(*) FROM fixlore.team_patterns").fetchone()
    team, batches, mine, last = row if row is not None else (None, 0, 0, None)
    return {
        "team": team,
        "batches": int(batches or 0),
        "my_batches": int(mine or 0),
        "my_last_batch": last.isoformat() if last is not None else None,
        "patterns": int(patterns[0]) if patterns is not None else 0,
    }


def fingerprints(rows: Iterable[tuple[Any, ...]]) -> list[str]:
    """The fingerprints of aggregate rows, as text."""
    return [str(r[0]) for r in rows]
