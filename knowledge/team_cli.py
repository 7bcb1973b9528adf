"""``fixlore team ...``: set up the team store, see its state, sync now, review team patterns.

``register(subparsers)`` adds the ``team`` command to the ``fixlore`` console
script; ``run(args)`` executes it and returns the exit code. Each sub-command
takes the team store as ``--url`` (a connection string, URI or libpq service
name, never with a password), else the configured ``teamKnowledge``:
``[tool.fixlore]`` in the ``pyproject.toml`` of the current folder, else the
environment variable ``FIXLORE_TEAM_KNOWLEDGE``. Exit codes as for ``knowledge``:
0 ok, 1 not found, 2 usage error, 4 store error (unreachable, not allowed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from . import _teamdb
from ._knowledge import Knowledge
from ._model import KnowledgeError
from ._team import TeamPattern, TrustConfig, resolve, team_review
from ._teamdb import TeamError, team_conninfo
from ._untrusted import printable
from ._verify import check_privacy

EXIT_OK = 0
EXIT_NOT_FOUND = 1
EXIT_USAGE = 2
EXIT_STORE = 4
TEAM_ENV = "FIXLORE_TEAM_KNOWLEDGE"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``team`` and its sub-commands to ``subparsers``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--url", help=f"the team store (default: teamKnowledge, else ${TEAM_ENV})")
    trust = argparse.ArgumentParser(add_help=False)
    trust.add_argument("--min-workspaces", type=int, default=3, help="trusted once seen in this many workspaces")
    trust.add_argument("--min-approvals", type=int, default=2, help="... or approved by this many reviewers")
    p = subparsers.add_parser(
        "team",
        help="team knowledge on PostgreSQL: set up, sync, review",
        epilog="examples:\n  fixlore team init --url 'host=db.internal dbname=fixlore user=admin'\n"
        "  fixlore team add-member alice --team web\n  fixlore team review --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="team_command", metavar="COMMAND", required=True)
    sub.add_parser(
        "init",
        parents=[common],
        help="create or upgrade the team schema (as the database's owner)",
        **_examples("fixlore team init --url 'host=db.internal dbname=fixlore user=admin'"),
    )
    add = sub.add_parser(
        "add-member",
        parents=[common],
        help="put an existing login role in a team",
        **_examples("fixlore team add-member alice --team web", "fixlore team add-member bob --team web --reviewer"),
    )
    add.add_argument("role", help="a PostgreSQL login role (CREATE ROLE name LOGIN)")
    add.add_argument("--team", required=True, help="the team's name")
    add.add_argument("--reviewer", action="store_true", help="may also approve and reject team patterns")
    sub.add_parser(
        "status", parents=[common], help="your team and its batches", **_examples("fixlore team status --json")
    )
    sync = sub.add_parser(
        "sync",
        parents=[common, trust],
        help="publish the outbox and pull the team's evidence now",
        **_examples("fixlore team sync", "fixlore team sync --url service=fixlore --min-workspaces 5"),
    )
    sync.add_argument("--home", type=Path, help="knowledge directory (default: $FIXLORE_HOME or the user data dir)")
    sub.add_parser(
        "review",
        parents=[common, trust],
        help="team patterns with their evidence and state",
        **_examples("fixlore team review", "fixlore team review --json --min-approvals 1"),
    )
    for verdict in ("approve", "reject"):
        v = sub.add_parser(
            verdict,
            parents=[common],
            help=f"{verdict} a team pattern (reviewers)",
            **_examples(f"fixlore team {verdict} 3f9a0c1e   # an id prefix from `team review`"),
        )
        v.add_argument("id", help="pattern id (or a unique prefix, from `team review`)")
    p.set_defaults(run=run)


def _examples(*lines: str) -> dict[str, Any]:
    """``add_parser`` keywords for a help text that ends with these example lines."""
    return {
        "epilog": "examples:\n" + "\n".join(f"  {line}" for line in lines),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def configured_url(cwd: Path | None = None) -> str:
    """``teamKnowledge`` from ``[tool.fixlore]`` of ``cwd``'s pyproject.toml, else the environment."""
    path = (cwd or Path.cwd()) / "pyproject.toml"
    try:
        with path.open("rb") as fh:
            table = tomllib.load(fh).get("tool", {}).get("fixlore", {})
    except (OSError, tomllib.TOMLDecodeError):
        table = {}
    value = table.get("teamKnowledge", table.get("team_knowledge")) if isinstance(table, dict) else None
    if isinstance(value, str) and value.strip():
        return value
    return os.environ.get(TEAM_ENV, "")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Execute a parsed ``team`` command; the exit code."""
    out = out or sys.stdout
    try:
        url = team_conninfo(args.url if args.url is not None else configured_url())
    except ValueError as exc:
        print(f"fixlore: the team store setting {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not url:
        print(f"fixlore: no team store: pass --url, or set teamKnowledge or ${TEAM_ENV}", file=sys.stderr)
        return EXIT_USAGE
    trust = TrustConfig(getattr(args, "min_workspaces", 3), getattr(args, "min_approvals", 2))
    try:
        return _run(args, url, trust, out)
    except LookupError as exc:
        print(f"fixlore: {exc.args[0]}", file=sys.stderr)
        return EXIT_NOT_FOUND
    except (TeamError, KnowledgeError) as exc:
        print(f"fixlore: {exc}", file=sys.stderr)
        return EXIT_STORE
    except _teamdb.database_error() as exc:
        print(f"fixlore: the team store refused: {_teamdb.short(exc)}", file=sys.stderr)
        return EXIT_STORE


def _run(args: argparse.Namespace, url: str, trust: TrustConfig, out: TextIO) -> int:
    cmd: str = args.team_command
    if cmd == "init":
        with _teamdb.connect(url) as conn:
            applied = _teamdb.migrate(conn)
        return _print(
            args, out, {"applied": applied}, f"team schema ready (migrations applied now: {applied or 'none'})"
        )
    if cmd == "add-member":
        with _teamdb.connect(url) as conn:
            _teamdb.add_member(conn, args.role, args.team, reviewer=args.reviewer)
        role = "reviewer" if args.reviewer else "member"
        return _print(args, out, {"role": args.role, "team": args.team, "reviewer": args.reviewer}, f"{role} added")
    if cmd == "status":
        return _status(args, url, out)
    if cmd == "sync":
        with Knowledge.open(args.home, base=False, auto_prune=False, team=url, team_trust=trust, team_interval=0) as k:
            assert k.team is not None
            report = k.team.sync()
        data = {
            name: getattr(report, name)
            for name in ("enqueued", "sent", "resent", "pending", "pulled", "trusted", "refused")
        }
        data["error"] = report.error
        text = (
            f"sent {report.sent} batches ({report.resent} had arrived before), {report.pending} waiting;"
            f" pulled {report.pulled} team patterns, {report.trusted} trusted, {report.refused} rows refused"
        )
        if report.error:
            text += f"\nnot done: {report.error}"
        _print(args, out, data, text)
        return EXIT_STORE if report.error else EXIT_OK
    read = team_review(url, check_privacy, trust)
    if cmd == "review":
        rows = [_pattern_json(p) for p in read.patterns]
        if args.json:
            print(json.dumps({"patterns": rows, "refused": read.refused}, indent=2), file=out)
        else:
            print(f"{'id':<10} {'state':<9} {'workspaces':>10} {'uses':>5} {'approvals':>9}  rule", file=out)
            for p, row in zip(read.patterns, rows, strict=True):
                sig = p.record.pattern.signature
                print(
                    f"{row['id'][:10]:<10} {row['state']:<9} {row['workspaces']:>10} {row['uses']:>5}"
                    f" {row['approvals']:>9}  {printable(f'{sig.language} {sig.source} {sig.code}')}",
                    file=out,
                )
            if read.refused:
                print(f"({read.refused} team rows refused by the checks; see the log)", file=out)
        return EXIT_OK if read.patterns else EXIT_NOT_FOUND
    fp = resolve(read.patterns, args.id)
    with _teamdb.connect(url) as conn:
        _teamdb.review(conn, fp, cmd)
    return _print(args, out, {"id": fp, "verdict": cmd}, f"{cmd}d {fp}")


def _status(args: argparse.Namespace, url: str, out: TextIO) -> int:
    with _teamdb.connect(url) as conn:
        data: dict[str, Any] = _teamdb.status(conn)
    if data["team"] is None:
        print("fixlore: this role is in no team (ask the store's owner: fixlore team add-member)", file=sys.stderr)
        return EXIT_NOT_FOUND
    text = (
        f"team {data['team']}: {data['patterns']} patterns, {data['batches']} batches"
        f" ({data['my_batches']} yours, last {data['my_last_batch'] or 'never'})"
    )
    return _print(args, out, data, text)


def _pattern_json(p: TeamPattern) -> dict[str, Any]:
    r = p.record
    sig = r.pattern.signature
    return {
        "id": r.fingerprint,
        "state": p.status,
        "rule": [sig.language, sig.source, sig.code],
        "category": r.pattern.category.value,
        "workspaces": r.workspaces,
        "uses": r.counts.uses,
        "succeeded": r.counts.succeeded,
        "failed": r.counts.failed,
        "approvals": p.approvals,
        "rejections": p.rejections,
    }


def _print(args: argparse.Namespace, out: TextIO, data: dict[str, Any], text: str) -> int:
    print(json.dumps(data, default=str) if args.json else text, file=out)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fixlore.knowledge.team_cli team ...``."""
    parser = argparse.ArgumentParser(prog="fixlore")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
