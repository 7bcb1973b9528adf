"""Fixtures of the team tests: one real PostgreSQL for the session, a fresh database per test.

Without PostgreSQL these tests are skipped on a developer's machine and FAIL
under CI (``CI=true``), where ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator

import pytest

from ._postgres import Postgres, PostgresMissing, start_postgres
from ._team_env import TeamEnv, make_team


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (pip install -e '.[test]')")
    try:
        pg = start_postgres()
    except PostgresMissing as exc:
        _missing(str(exc))
    old = os.environ.get("PGPASSFILE")
    os.environ["PGPASSFILE"] = str(pg.pgpass)
    try:
        yield pg
    finally:
        pg.stop()
        shutil.rmtree(pg.root, ignore_errors=True)
        if old is None:
            os.environ.pop("PGPASSFILE", None)
        else:
            os.environ["PGPASSFILE"] = old


def _missing(why: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"team tests need PostgreSQL under CI: {why}", pytrace=False)
    pytest.skip(why)


@pytest.fixture
def team_db(postgres: Postgres) -> str:
    """A fresh, empty database; its name."""
    return postgres.create_database("t_" + uuid.uuid4().hex[:12])


@pytest.fixture
def team(postgres: Postgres, team_db: str) -> TeamEnv:
    """A migrated team store with members of teams A (alice, bob; reviewers rita, ruth) and B (zoe; reviewer zack)."""
    return make_team(postgres, team_db)
