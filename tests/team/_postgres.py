"""A real PostgreSQL server for the team tests: ``initdb`` and ``pg_ctl`` in a temp dir.

Debian's ``postgresql`` package puts the server in /usr/lib/postgresql/<major>/bin
(``.ci/run`` installs it). The cluster listens on a free loopback port only, with
password (SCRAM) authentication over TCP, so every test connects as a role whose
password lives in a ``.pgpass`` file, as libpq reads it: never in a connection
string. ``initdb`` refuses to run as root: there the server runs as the
``postgres`` system user (the package creates it), through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ADMIN = "fixlore_admin"


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def server_bin() -> Path:
    """The newest /usr/lib/postgresql/*/bin holding ``initdb`` (or ``pg_ctl`` on PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise PostgresMissing("PostgreSQL is not installed (Debian: apt-get install -y postgresql)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Postgres:
    """One running cluster; :meth:`stop` and :meth:`start` for the outage tests."""

    bin: Path
    root: Path
    port: int
    passwords: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def pgpass(self) -> Path:
        return self.root / "pgpass"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def init(self) -> None:
        pwfile = self.root / "pw"
        self.passwords[ADMIN] = os.urandom(12).hex()
        pwfile.write_text(self.passwords[ADMIN] + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            shutil.chown(pwfile, "postgres")
        proc = self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            ADMIN,
            f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256",
            "--auth-local=scram-sha-256",
            "--encoding=UTF8",
            "--no-sync",
        )
        pwfile.unlink()
        if proc.returncode != 0:
            raise RuntimeError(f"initdb failed: {proc.stderr[-2000:]}")
        self.write_pgpass()

    def write_pgpass(self) -> None:
        lines = [f"127.0.0.1:{self.port}:*:{role}:{pw}" for role, pw in sorted(self.passwords.items())]
        self.pgpass.write_text("\n".join(lines) + "\n")
        self.pgpass.chmod(0o600)

    def start(self) -> None:
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        proc = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", opts, "-w", "start")
        if proc.returncode != 0:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {proc.stderr[-1000:]} {log[-2000:]}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, role: str = ADMIN, dbname: str = "postgres") -> str:
        """A connection string without a password (libpq finds it in the .pgpass file)."""
        return f"host=127.0.0.1 port={self.port} dbname={dbname} user={role} connect_timeout=5"

    def add_role(self, role: str) -> str:
        """A LOGIN role with a random password, written to the .pgpass file."""
        import psycopg

        pw = os.urandom(12).hex()
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{pw}'")
        self.passwords[role] = pw
        self.write_pgpass()
        return role

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return name

    def dump(self, dbname: str) -> bytes:
        """``pg_dump`` of a database (data and schema), as the admin."""
        env = dict(os.environ, PGPASSFILE=str(self.pgpass))
        proc = subprocess.run(
            [str(self.bin / "pg_dump"), "-h", "127.0.0.1", "-p", str(self.port), "-U", ADMIN, "-d", dbname],
            capture_output=True,
            timeout=120,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.decode(errors="replace")[-2000:])
        return proc.stdout


def start_postgres() -> Postgres:
    root = Path(tempfile.mkdtemp(prefix="fixlore-pg-"))
    root.chmod(0o755)
    pg = Postgres(server_bin(), root, free_port())
    pg.init()
    pg.start()
    return pg
