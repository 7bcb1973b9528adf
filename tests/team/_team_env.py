"""A team store set up in a fresh database: roles, members, and opening fixlore stores on it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from fixlore.knowledge import Knowledge
from fixlore.knowledge._team import TrustConfig
from fixlore.knowledge._teamdb import add_member, connect, migrate

from ._postgres import Postgres


@dataclass
class TeamEnv:
    """One database holding teams ``A`` and ``B``; role names are unique per test (roles are cluster-wide)."""

    pg: Postgres
    db: str
    roles: dict[str, str] = field(default_factory=dict)

    @property
    def admin_url(self) -> str:
        return self.pg.url(dbname=self.db)

    def url(self, who: str) -> str:
        return self.pg.url(self.roles[who], self.db)

    def member(self, who: str, team: str, *, reviewer: bool = False) -> str:
        role = self.pg.add_role(f"{who}_{uuid.uuid4().hex[:8]}")
        self.roles[who] = role
        with connect(self.admin_url) as c:
            add_member(c, role, team, reviewer=reviewer)
        return role

    def open(self, home: Path, who: str, *, workspace: Path | None = None, k: int = 3) -> Knowledge:
        """A fixlore store under ``home`` publishing as ``who``; no sync thread: the tests call ``k.team.sync()``."""
        return Knowledge.open(
            home,
            workspace_root=workspace,
            base=False,
            auto_prune=False,
            team=self.url(who),
            team_trust=TrustConfig(min_workspaces=k),
            team_interval=0,
        )


def make_team(pg: Postgres, db: str) -> TeamEnv:
    env = TeamEnv(pg, db)
    with connect(env.admin_url) as c:
        migrate(c)
    env.member("alice", "A")
    env.member("bob", "A")
    env.member("rita", "A", reviewer=True)
    env.member("ruth", "A", reviewer=True)
    env.member("zoe", "B")
    env.member("zack", "B", reviewer=True)
    return env
