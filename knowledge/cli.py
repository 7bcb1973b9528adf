"""``fixlore knowledge ...``: inspect and manage what fixlore has learned.

``register(subparsers)`` adds the ``knowledge`` command to the ``fixlore``
console script; ``run(args)`` executes it and returns the exit code. Tables
for people by default, ``--json`` for scripts. Exit codes (docs/knowledge.md):
0 ok (also with nothing to do), 1 not found, 2 usage error, 3 invalid input, 4 store error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from ._admin import PatternDetail
from ._knowledge import Knowledge
from ._model import ExportFilters, InvalidImport, KnowledgeError, PatternStats
from ._untrusted import printable

EXIT_OK = 0
EXIT_NOT_FOUND = 1
EXIT_USAGE = 2
EXIT_INVALID = 3
EXIT_STORE = 4


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``knowledge`` and its sub-commands to ``subparsers``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--home", type=Path, help="knowledge directory (default: $FIXLORE_HOME or the user data dir)")
    common.add_argument("--workspace", type=Path, help="also use this workspace's .fixlore/ scope")
    common.add_argument("--no-base", action="store_true", help="leave out the shipped base knowledge")
    p = subparsers.add_parser(
        "knowledge",
        help="inspect and manage learned knowledge",
        **_examples(
            "fixlore knowledge list --language python",
            "fixlore knowledge stats --json",
            "fixlore knowledge export -o team.json --min-uses 3",
        ),
    )
    sub = p.add_subparsers(dest="knowledge_command", metavar="COMMAND", required=True)
    ls = sub.add_parser(
        "list",
        parents=[common],
        help="list patterns",
        **_examples("fixlore knowledge list", "fixlore knowledge list --language python --archived --json"),
    )
    ls.add_argument("--language", help="only this language (LSP language id)")
    ls.add_argument("--archived", action="store_true", help="include archived patterns")
    show = sub.add_parser(
        "show",
        parents=[common],
        help="show one pattern and its trend",
        **_examples("fixlore knowledge show 17d25ea7   # an id prefix from `list`"),
    )
    show.add_argument("id", help="pattern id (or a unique prefix)")
    sub.add_parser(
        "stats",
        parents=[common],
        help="totals",
        **_examples("fixlore knowledge stats", "fixlore knowledge stats --workspace .   # with this project's scope"),
    )
    prune = sub.add_parser(
        "prune",
        parents=[common],
        help="archive failing or unused patterns",
        **_examples("fixlore knowledge prune --dry-run", "fixlore knowledge prune"),
    )
    prune.add_argument("--dry-run", action="store_true", help="show what would go, change nothing")
    exp = sub.add_parser(
        "export",
        parents=[common],
        help="export patterns as JSON",
        **_examples(
            "fixlore knowledge export -o mine.json",
            "fixlore knowledge export --language python --min-uses 3 --min-success 0.8 > team.json",
        ),
    )
    exp.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    exp.add_argument("--language", help="only this language")
    exp.add_argument("--min-uses", type=int, default=0, help="minimum accepted + manual")
    exp.add_argument("--min-success", type=float, default=0.0, help="minimum verified success rate")
    exp.add_argument("--min-workspaces", type=int, default=0, help="minimum number of workspaces")
    imp = sub.add_parser(
        "import",
        parents=[common],
        help="merge an export file into the user store",
        **_examples("fixlore knowledge import team.json"),
    )
    imp.add_argument("file", type=Path)
    forget = sub.add_parser(
        "forget",
        parents=[common],
        help="delete one pattern",
        **_examples("fixlore knowledge forget 17d25ea7"),
    )
    forget.add_argument("id", help="pattern id (or a unique prefix)")
    reset = sub.add_parser(
        "reset",
        parents=[common],
        help="delete everything learned",
        **_examples("fixlore knowledge reset          # asks first", "fixlore knowledge reset --yes    # in scripts"),
    )
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(run=run)


def _examples(*lines: str) -> dict[str, Any]:
    """Parser keywords for a help text ending with these example lines."""
    return {
        "epilog": "examples:\n" + "\n".join(f"  {line}" for line in lines),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Execute a parsed ``knowledge`` command; the exit code."""
    out = out or sys.stdout
    cmd: str = args.knowledge_command
    if cmd == "reset" and not args.yes:
        if not sys.stdin.isatty():
            print("fixlore: reset deletes everything learned; pass --yes to confirm", file=sys.stderr)
            return EXIT_USAGE
        if input("Delete everything fixlore has learned? [y/N] ").strip().lower() not in ("y", "yes"):
            return EXIT_NOT_FOUND
    if cmd == "export" and not (args.min_uses >= 0 and args.min_workspaces >= 0 and 0 <= args.min_success <= 1):
        print("fixlore: export filters must be non-negative (success between 0 and 1)", file=sys.stderr)
        return EXIT_USAGE
    try:
        k = Knowledge.open(
            args.home,
            workspace_root=args.workspace,
            workspace_scope=args.workspace is not None,
            learning=False,
            base=not args.no_base,
            auto_prune=False,
        )
    except KnowledgeError as exc:
        print(f"fixlore: {exc}", file=sys.stderr)
        return EXIT_STORE
    try:
        return _COMMANDS[cmd](k, args, out)
    except InvalidImport as exc:
        print(f"fixlore: import refused, nothing was changed: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except LookupError as exc:
        print(f"fixlore: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise  # our reader left (`| head`): not a store error; the command line ends quietly
    except (KnowledgeError, OSError) as exc:
        print(f"fixlore: knowledge store error: {exc}", file=sys.stderr)
        return EXIT_STORE
    except Exception as exc:  # sqlite3.Error: report as a store error, not a traceback
        import sqlite3

        if isinstance(exc, sqlite3.Error):
            print(f"fixlore: knowledge store error: {exc}", file=sys.stderr)
            return EXIT_STORE
        raise
    finally:
        k.close()


def _date(t: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(t))


def _stats_json(s: PatternStats) -> dict[str, Any]:
    return {
        "id": s.fingerprint,
        "scope": s.scope.value,
        "signature": asdict(s.pattern.signature) if s.pattern else None,
        "category": s.pattern.category.value if s.pattern else None,
        "kind": "action" if s.pattern and s.pattern.action else "fix",
        "counts": asdict(s.counts),
        "first_seen": s.first_seen,
        "last_seen": s.last_seen,
        "workspaces": s.workspaces,
    }


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print(printable("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()), file=out)


def _list(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    items = k.list_patterns(args.language, archived=args.archived)
    if args.json:
        json.dump([_stats_json(s) for s in items], out, indent=1)
        print(file=out)
        return EXIT_OK  # an empty list is an answer, not an error
    if not items:
        print("no patterns", file=out)
        return EXIT_OK
    rows = [
        ["ID", "SCOPE", "LANG", "RULE", "CATEGORY", "KIND", "OFFER", "ACC", "REJ", "OK", "FAIL", "MAN", "LAST SEEN"]
    ]
    for s in items:
        p = s.pattern
        c = s.counts
        rows.append(
            [
                s.fingerprint[:12],
                s.scope.value,
                p.signature.language if p else "",
                f"{p.signature.source} {p.signature.code}" if p else "",
                p.category.value if p else "",
                "action" if p and p.action else "fix",
                *(str(n) for n in (c.offered, c.accepted, c.rejected, c.succeeded, c.failed, c.manual)),
                _date(s.last_seen),
            ]
        )
    _table(rows, out)
    return EXIT_OK


def _show(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    d = k.show(args.id)
    if d is None:
        print(f"fixlore: no pattern {args.id}", file=sys.stderr)
        return EXIT_NOT_FOUND
    if args.json:
        json.dump(_detail_json(d), out, indent=1)
        print(file=out)
        return EXIT_OK
    p, s = d.pattern, d.stats
    lines = [
        ("id", s.fingerprint),
        ("scope", s.scope.value),
        ("diagnostic", f"{p.signature.language} {p.signature.source} {p.signature.code}: {p.signature.message}"),
        ("category", p.category.value),
    ]
    if p.action:
        lines.append(("action", f"[{p.action.kind}] {p.action.title}"))
    if p.shape:
        lines += [
            ("anchor", f"{p.shape.anchor.value} ({p.shape.unit})"),
            ("before", p.shape.before),
            ("after", p.shape.after),
        ]
    if p.context:
        lines.append(("context", " > ".join(p.context)))
    c = s.counts
    lines += [
        (
            "counts",
            f"offered {c.offered}, accepted {c.accepted}, rejected {c.rejected}, succeeded {c.succeeded},"
            f" failed {c.failed}, manual {c.manual}, undone {c.undone}",
        ),
        ("seen", f"{_date(s.first_seen)} .. {_date(s.last_seen)} in {s.workspaces} workspace(s)"),
    ]
    if d.archived_at is not None:
        lines.append(("archived", f"{_date(d.archived_at)}: {d.archive_reason}"))
    for name, value in lines:
        print(f"{name:>10}  {printable(value)}", file=out)
    if d.trend:
        print("     trend  week of      acc rej  ok fail man", file=out)
        for week, wc in d.trend:
            print(
                f"            {_date(week)}  {wc.accepted:>3} {wc.rejected:>3} {wc.succeeded:>3}"
                f" {wc.failed:>4} {wc.manual:>3}",
                file=out,
            )
    return EXIT_OK


def _detail_json(d: PatternDetail) -> dict[str, Any]:
    out = _stats_json(d.stats)
    out["pattern"] = d.pattern.to_dict()
    out["archived_at"] = d.archived_at
    out["archive_reason"] = d.archive_reason
    out["trend"] = [{"week": w, **asdict(c)} for w, c in d.trend]
    return out


def _stats(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    st = k.stats()
    if args.json:
        data = asdict(st)
        data["by_language"] = dict(st.by_language)
        data["by_scope"] = dict(st.by_scope)
        json.dump(data, out, indent=1)
        print(file=out)
        return EXIT_OK
    # Every scope counts, as `list` shows them all; `patterns` alone is the user store's.
    scopes = dict(st.by_scope)
    workspace, base = scopes.get("workspace", 0), scopes.get("base", 0)
    print(
        f"patterns   {st.patterns + workspace + base} active ({st.patterns} learned, {workspace} workspace,"
        f" {base} base), {st.archived} archived",
        file=out,
    )
    print(f"events     {st.events} in the log; {st.refused} refused by the privacy verifier", file=out)
    if st.by_language:
        print(printable("languages  " + ", ".join(f"{n} {v}" for n, v in st.by_language)), file=out)
    c = st.counts
    print(
        f"counts     offered {c.offered}, accepted {c.accepted}, rejected {c.rejected},"
        f" succeeded {c.succeeded}, failed {c.failed}, manual {c.manual}, undone {c.undone}",
        file=out,
    )
    return EXIT_OK


def _prune(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    r = k.prune(dry_run=args.dry_run)
    if args.json:
        json.dump(
            {
                "dry_run": r.dry_run,
                "archived": [{"id": fp, "reason": why} for fp, why in r.archived],
                "events_deleted": r.events_deleted,
            },
            out,
            indent=1,
        )
        print(file=out)
    else:
        verb = "would archive" if r.dry_run else "archived"
        for fp, why in r.archived:
            print(f"{verb} {fp}: {why}", file=out)
        print(
            f"{verb} {len(r.archived)} patterns;"
            f" {'would delete' if r.dry_run else 'deleted'} {r.events_deleted} old events",
            file=out,
        )
    return EXIT_OK  # nothing to prune is success too


def _export(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    f = ExportFilters(args.language, args.min_uses, args.min_success, args.min_workspaces)
    if args.output is None:
        text, n = k.export_text(f)
        out.write(text)
    else:
        n = k.export(args.output, f)
        msg = {"path": str(args.output), "count": n} if args.json else f"exported {n} patterns to {args.output}"
        print(json.dumps(msg) if args.json else msg, file=out)
    return EXIT_OK  # an empty export is a valid file, not a failure


def _import(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    r = k.import_file(args.file)
    if args.json:
        print(json.dumps({"imported": r.imported, "merged": r.merged, "unchanged": r.unchanged}), file=out)
    else:
        print(
            f"imported {r.imported} new patterns, merged {r.merged} into existing ones"
            + (f", {r.unchanged} imported before (unchanged)" if r.unchanged else ""),
            file=out,
        )
    return EXIT_OK


def _forget(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    gone = k.forget(args.id)
    if args.json:
        print(json.dumps({"forgotten": gone}), file=out)
    elif gone:
        print(f"forgot {args.id}", file=out)
    else:
        print(f"fixlore: no pattern {args.id} in the user or workspace scope", file=sys.stderr)
    return EXIT_OK if gone else EXIT_NOT_FOUND


def _reset(k: Knowledge, args: argparse.Namespace, out: TextIO) -> int:
    k.reset()
    print(json.dumps({"reset": True}) if args.json else "deleted everything learned in the user store", file=out)
    return EXIT_OK


_COMMANDS = {
    "list": _list,
    "show": _show,
    "stats": _stats,
    "prune": _prune,
    "export": _export,
    "import": _import,
    "forget": _forget,
    "reset": _reset,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m fixlore.knowledge.cli knowledge ...``."""
    parser = argparse.ArgumentParser(prog="fixlore")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
