"""Learned fixes on real human fixes, offline: extraction and instantiation without a server.

The LSP replay (``bench_humanfix.py``, the team's ``humanfix/fixreplay.py``) is the judge; it
takes half an hour. This drives the abstraction layer directly over the same events, in
the same order, in seconds, to see what abstraction, instantiation and the soundness
guard do:

* per event, every pattern learned so far for the rule is instantiated at the event's
  diagnostic, best evidence first; the first result that applies is "offered", and it
  counts as exact when it equals the human's fix (blank lines and trailing spaces aside);
* ``any_exact``: some learned pattern reproduces the fix (the ceiling perfect ranking gives);
* ``wrong``: an offered fix drops a name, attribute or number the human kept (the replay's
  own definition, imported from it), or does not parse;
* then the human's fix is learned (``extract_pattern``), with the reason when it is not.

Each repository's user starts with the shipped base knowledge's hand fixes (a
missing standard-library import, ``except Exception:``, ``raise ... from err``),
and the imports of the files opened and saved so far are what the server's
workspace index would hold (the replay's workspace holds just those files);
tried after any pattern of their own, as the server ranks them; ``--no-base``
starts with nothing.

``--one-user``: one user fixes all the repositories' events in time order (a
workspace each), so the knowledge grows past what one repository gives; the
latency is printed by how many patterns were learned (``--bucket`` per line).

Usage: ``python bench/humanfix_offline.py [--events PATH] [--repos a,b] [--rules F821,...] [--no-base]
[--one-user] [--show-misses] [--time-parse] [-v]`` (``--time-parse``: the parse of each file, which
the server's worker makes as the file opens, counts in its diagnostic's time; without it, it does not).
(the events default to ``../shared/humanfix/events.jsonl.gz`` beside this checkout).
"""

from __future__ import annotations

import argparse
import collections
import difflib
import gzip
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Failed,
    Instantiated,
    Pattern,
    Position,
    Skipped,
    TextRange,
    abstract_signature,
    apply_edits,
    extract_pattern,
    get_parser,
    may_apply,
    parsed,
    quoted_names,
)
from fixlore.lsp.learning import instantiation
from fixlore.lsp.learning.fixes import MAX_TRIED
from fixlore.lsp.learning.instantiation import instantiate_all
from fixlore.lsp.learning.recall import Recall, key_of
from fixlore.lsp.learning.workspace_imports import WorkspaceImports

HERE = Path(__file__).resolve().parent
DEFAULT_EVENTS = HERE.parent.parent / "shared" / "humanfix" / "events.jsonl.gz"


def _replay_module(events: Path) -> Any:
    """The harness beside ``events``, else the development set's (its definition of a wrong fix)."""
    folder = events.parent if (events.parent / "fixreplay.py").exists() else DEFAULT_EVENTS.parent
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("fixreplay", folder / "fixreplay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fixreplay"] = module
    spec.loader.exec_module(module)
    return module


def diag_of(event: dict[str, Any]) -> DiagnosticInfo:
    """The event's ruff diagnostic (1-based rows and columns) as the server would see it."""
    r = event["range"]
    rng = TextRange(
        Position(r["start"]["row"] - 1, r["start"]["column"] - 1), Position(r["end"]["row"] - 1, r["end"]["column"] - 1)
    )
    return DiagnosticInfo("Ruff", event["rule"], event["message"], rng)


def ruff_matches(event: dict[str, Any]) -> bool:
    """Whether ruff's own fix for the event is the human's (then nothing learned is needed)."""
    return bool((event.get("ruff_fix") or {}).get("matches_human"))


def _diff(label: str, before: str, after: str, lines: int = 12) -> str:
    """The first ``lines`` lines of a unified diff, indented under ``label``."""
    body = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))[2 : 2 + lines]
    return f"  {label}:\n" + "".join(f"    {line}\n" for line in body)


def base_hand_fixes() -> list[Pattern]:
    """The hand fixes the base knowledge ships (patterns with a shape)."""
    from fixlore.knowledge import base

    data = json.loads((Path(base.__file__).parent / "patterns.json").read_text(encoding="utf-8"))
    found = (Pattern.from_dict(row["pattern"]) for row in data["patterns"])
    return [p for p in found if p.shape is not None]


_IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")


def window_of(text: str, line: int) -> str:
    """``text`` with what a lightbulb on ``line`` may need; every other line emptied (each keeps its number).

    Kept: the top-level imports, the innermost function holding ``line`` (or the
    top-level statement, outside any function), and the header lines of the classes
    and functions around it. A measure of the first-request path the README's Known
    limits describe (learned fixes made in the server from a small parse), not the server's way.
    """
    root = parsed("python", text).root
    keep: set[int] = set()
    for node in root.named_children:
        if node.type in _IMPORTS:
            keep.update(range(node.start_point[0], node.end_point[0] + 1))
    chain = []
    node = root.descendant_for_point_range((line, 0), (line, 0))
    while node is not None:
        chain.append(node)
        node = node.parent
    unit = next((n for n in chain if n.type == "function_definition"), None) or next(
        (n for n in chain if n.parent is not None and n.parent.type == "module"), None
    )
    if unit is not None:
        if unit.parent is not None and unit.parent.type == "decorated_definition":
            unit = unit.parent
        keep.update(range(unit.start_point[0], unit.end_point[0] + 1))
        outer = unit.parent
        while outer is not None and outer.type != "module":
            body = (
                outer.child_by_field_name("body") if outer.type in ("class_definition", "function_definition") else None
            )
            if body is not None:
                keep.update(range(outer.start_point[0], max(body.start_point[0], outer.start_point[0] + 1)))
            outer = outer.parent
    return "\n".join(text_line if i in keep else "" for i, text_line in enumerate(text.split("\n")))


class _Windows:
    """``--window``: each event's learned fixes made on :func:`window_of` its file against the whole file."""

    def __init__(self) -> None:
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.whole_ms: list[float] = []
        self.window_ms: list[float] = []

    def compare(
        self, text: str, diag: DiagnosticInfo, found: list[Any], patterns: list[Any], imports: Any, recalled: Any
    ) -> None:
        window = window_of(text, diag.range.start.line)
        parser = get_parser("python")
        for out, piece in ((self.whole_ms, text), (self.window_ms, window)):
            data = piece.encode("utf-8", errors="surrogatepass")
            began = time.perf_counter()
            parser.parse(data)
            out.append((time.perf_counter() - began) * 1000)
        made = instantiate_all(patterns, "python", window, diag, imports, recalled, most=None)
        whole, small = [f[1] for f in found], [f[1] for f in made]
        if whole == small:
            self.outcomes["the same fixes"] += 1
        elif whole and small and whole[0] == small[0]:
            self.outcomes["the same first fix"] += 1
        elif not small:
            self.outcomes["none from the window"] += 1
        elif not whole:
            self.outcomes["only from the window (a check of the whole file missed)"] += 1
        else:
            self.outcomes["another first fix"] += 1

    def report(self) -> None:
        def at(values: list[float], q: float) -> float:
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0

        print(f"window of the file, {sum(self.outcomes.values())} events with patterns to try:")
        for outcome, n in self.outcomes.most_common():
            print(f"  {n:5d}  {outcome}")
        for name, values in (("whole file", self.whole_ms), ("window", self.window_ms)):
            p50, p90, p99 = at(values, 0.5), at(values, 0.9), at(values, 0.99)
            print(f"  parse of the {name}: p50 {p50:.2f} p90 {p90:.2f} p99 {p99:.2f} ms")


class _Tally:
    """What :func:`instantiate_all` tried for one event: how many, how long, why each did not apply."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self.reasons: collections.Counter[str] = collections.Counter()

    def __call__(self, pattern: Pattern, result: Instantiated | Skipped | Failed, seconds: float) -> None:
        self.count += 1
        self.seconds += seconds
        if not isinstance(result, Instantiated) or not result.edits:
            self.reasons[result.detail or result.reason.value if isinstance(result, Skipped) else "no edit"] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=Path, default=DEFAULT_EVENTS)
    parser.add_argument("--repos", default="")
    parser.add_argument("--rules", default="")
    parser.add_argument("--max-per-repo", type=int, default=0)
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-base", action="store_true", help="start without the base knowledge's hand fixes")
    parser.add_argument(
        "--one-user",
        action="store_true",
        help="one user fixing all the repositories' events in time order (knowledge grows past a repository's)",
    )
    parser.add_argument(
        "--time-parse",
        action="store_true",
        help="count the parse of each file in its diagnostic's time (the wait of a lightbulb asked for as it opens)",
    )
    parser.add_argument("--bucket", type=int, default=100, help="latency by how many patterns learned, per this many")
    parser.add_argument(
        "--window",
        action="store_true",
        help="also instantiate on a window of each file (see window_of) and compare with the whole file's fixes",
    )
    parser.add_argument(
        "--dump-offers",
        type=Path,
        help="write each event's first offered learned fix as a JSON line (before, offered text, human's after)",
    )
    parser.add_argument(
        "--show-misses",
        action="store_true",
        help="print each first offer that is not the human's fix (both diffs), and each recurring event"
        " ruff's fix does not match where nothing was offered (the patterns' reasons)",
    )
    args = parser.parse_args()
    base = [] if args.no_base else base_hand_fixes()
    fr = _replay_module(args.events)
    events = [json.loads(line) for line in gzip.open(args.events, "rt", encoding="utf-8")]
    repos: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    only_repos = set(filter(None, args.repos.split(",")))
    for e in events:
        if not only_repos or e["repo"] in only_repos:
            repos["all repositories" if args.one_user else e["repo"]].append(e)
    only_rules = set(filter(None, args.rules.split(",")))
    recs: list[dict[str, Any]] = []
    skips: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    inst_s = 0.0
    n_inst = 0
    windows = _Windows()
    offers = args.dump_offers.open("w", encoding="utf-8") if args.dump_offers else None
    for user, evs in sorted(repos.items()):
        evs.sort(key=lambda e: (e["time"], -e.get("topo", 0)))
        if args.max_per_repo:
            evs = evs[: args.max_per_repo]
        learned: dict[tuple[str, str, str], list[list[Any]]] = collections.defaultdict(list)
        for pattern in base:  # no instance of the user's own: after all of theirs
            learned[pattern.signature.rule_key].append([pattern, 0, -1])
        seen_shapes: collections.Counter[str] = collections.Counter()
        seen_rules: collections.Counter[str] = collections.Counter()
        # what the server reads of the files the user opens and saves, one index per workspace
        workspaces: collections.defaultdict[str, WorkspaceImports] = collections.defaultdict(WorkspaceImports)
        # and the names its fixes brought in (the server's memory of one session per project)
        recalls: collections.defaultdict[str, Recall] = collections.defaultdict(Recall)
        for e in evs:
            if only_rules and e["rule"] not in only_rules:
                continue
            diag = diag_of(e)
            sig = abstract_signature("python", diag)
            want = fr.normalize(e["after"])
            rec = {
                "repo": e["repo"],
                "commit": e["commit"],
                "line": e["range"]["start"]["row"],
                "user": user,
                "rule": e["rule"],
                "recurring": seen_rules[e["rule"]] > 0,
                "recurring_shape": seen_shapes[e["shape"]] > 0,
                "offered": False,
                "exact": False,
                "any_exact": False,
                "wrong": False,
            }
            seen_rules[e["rule"]] += 1
            seen_shapes[e["shape"]] += 1
            # best evidence first: more instances, then the most recent
            pool = sorted(learned[sig.rule_key], key=lambda p: (-p[1], -p[2]))
            uri = "file:///ws/" + e["path"]
            workspace = workspaces[e["repo"]]
            recall = recalls[e["repo"]]
            workspace.update(uri, e["before"])
            name = next(iter(quoted_names(e["message"])), None)
            statement = workspace.statement_for(name, uri) if name else None
            imports = {name: statement} if name and statement else None
            if not args.time_parse:  # the server's worker parses a document when it opens (not timed)
                parsed("python", e["before"])
            # Every pattern, with the server's policy (instantiate_all: names brought in
            # elsewhere are the fallback, a fix of a run of whole statements goes first).
            tally = _Tally()
            every = recall.names_of((entry[0].fingerprint for entry in pool), diag.message)
            patterns = [(entry[0], entry[1]) for entry in pool]
            found = instantiate_all(patterns, "python", e["before"], diag, imports, every, most=None, tried=tally)
            if args.window and patterns:
                windows.compare(e["before"], diag, found, patterns, imports, every)
            event_s, reasons = tally.seconds, tally.reasons
            n_inst += tally.count
            made = [(apply_edits(e["before"], list(edits)), title) for _, edits, title, _, _ in found]
            for i, (text, title) in enumerate(made):
                exact = fr.normalize(text) == want
                if i == 0:
                    if offers is not None:
                        row = {k: e[k] for k in ("repo", "rule", "path", "message", "range", "before", "after")}
                        offers.write(json.dumps({**row, "offered": text, "title": title}) + "\n")
                    rec["offered"] = True
                    rec["exact"] = exact
                    rec["wrong"] = bool(fr.unfaithful(e["before"], e["after"], text))
                    rec["title"] = title
                    if args.show_misses and not exact:
                        print(f"=== {e['repo']} {e['rule']} {e['path']}:{rec['line']} offered {title!r}")
                        print(_diff("human", e["before"], e["after"]) + _diff("offer", e["before"], text))
                    if args.verbose and rec["wrong"]:
                        print(f"WRONG {e['repo']} {e['rule']}: {title!r}")
                if exact:
                    rec["any_exact"] = True
                    break
            inst_s += event_s
            if args.show_misses and rec["recurring"] and not rec["offered"] and not ruff_matches(e):
                print(f"=== {e['repo']} {e['rule']} {e['path']}:{rec['line']} nothing offered of {len(pool)} patterns:")
                print("    " + ", ".join(f"{reason} ({n})" for reason, n in reasons.most_common(4)))
                print(_diff("human", e["before"], e["after"]))
            rec["inst_ms"] = event_s * 1000
            # as the server does it: at most MAX_TRIED patterns, best evidence first, until MAX_LEARNED apply
            # (afresh: not from what the pass over every pattern just made for this very text)
            instantiation._made.clear()
            t0 = time.perf_counter()
            tried = pool[:MAX_TRIED]
            recalled = recall.names_of((entry[0].fingerprint for entry in tried), diag.message)
            instantiate_all([(entry[0], entry[1]) for entry in tried], "python", e["before"], diag, imports, recalled)
            rec["server_ms"] = (time.perf_counter() - t0) * 1000
            # and the filter a request runs on the server's event loop before that (LearnedFixes._submit)
            t0 = time.perf_counter()
            for entry in tried:
                may_apply(entry[0], "python", e["before"], diag, seen=entry[1])
            rec["filter_ms"] = (time.perf_counter() - t0) * 1000
            rec["tried"] = min(len(pool), MAX_TRIED)
            rec["path"] = e["path"]
            rec["size"] = len(e["before"])
            rec["known"] = sum(len(v) for v in learned.values())  # patterns this user has so far
            result = extract_pattern("python", e["before"], e["after"], diag)
            workspace.update(uri, e["after"])
            if isinstance(result, Extracted):
                fp = result.pattern.fingerprint
                recall.remember(key_of(fp, diag.message), result.brought)
                for entry in learned[sig.rule_key]:
                    if entry[0].fingerprint == fp:
                        entry[1] += 1
                        entry[2] = len(recs)
                        break
                else:
                    learned[sig.rule_key].append([result.pattern, 1, len(recs)])
            else:
                reason = result.reason.value + (": " + result.detail if isinstance(result, Skipped) else "")
                skips[reason if isinstance(result, Skipped) else "failed"] += 1
                rec["skip"] = reason if isinstance(result, Skipped) else "failed"
                if args.verbose > 1 and not isinstance(result, Skipped):
                    print(result.error)
            recs.append(rec)
    elapsed = time.perf_counter() - started

    def rate(pool: list[dict[str, Any]], key: str) -> str:
        return f"{sum(r[key] for r in pool) / len(pool):.3f}" if pool else "-"

    pools = {
        "all": recs,
        "recurring": [r for r in recs if r["recurring"]],
        "recurring_shape": [r for r in recs if r["recurring_shape"]],
    }
    print(
        f"{len(recs)} events in {elapsed:.1f} s;"
        f" instantiate {n_inst} times, {1000 * inst_s / max(n_inst, 1):.2f} ms each"
    )
    per_event = sorted(r["inst_ms"] for r in recs)
    if per_event:
        at = lambda q: per_event[min(len(per_event) - 1, int(q * len(per_event)))]  # noqa: E731
        print(
            f"learned fixes per diagnostic (every stored pattern tried): p50 {at(0.5):.2f} ms,"
            f" p90 {at(0.9):.2f} ms, p99 {at(0.99):.2f} ms, max {per_event[-1]:.1f} ms"
        )
        # as knowledge grows: the same distribution by how many patterns the user had learned,
        # and the server's (at most MAX_TRIED patterns tried, until MAX_LEARNED apply)
        by_size: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
        for r in recs:
            by_size[r["known"] // args.bucket * args.bucket].append(r)
        for lo, pool in sorted(by_size.items()):
            every = sorted(r["inst_ms"] for r in pool)
            server = sorted(r["server_ms"] for r in pool)
            loop = sorted(r["filter_ms"] for r in pool)
            p99 = min(len(pool) - 1, int(0.99 * len(pool)))
            print(
                f"  with {lo}-{lo + args.bucket - 1} patterns learned: n {len(pool)};"
                f" every pattern p50 {every[len(pool) // 2]:.2f} ms, p99 {every[p99]:.2f} ms;"
                f" as the server tries them p50 {server[len(pool) // 2]:.2f} ms, p99 {server[p99]:.2f} ms"
                f" (its filter on the event loop p50 {loop[len(pool) // 2]:.2f} ms, p99 {loop[p99]:.2f} ms)"
            )
    if args.window:
        windows.report()
    print("| pool | n | offered | exact (first offered) | any exact | wrong offered |")
    print("|---|---|---|---|---|---|")
    for name, pool in pools.items():
        print(
            f"| {name} | {len(pool)} | {rate(pool, 'offered')} | {rate(pool, 'exact')} | {rate(pool, 'any_exact')} |"
            f" {sum(r['wrong'] for r in pool)} |"
        )
    per_rule: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in recs:
        per_rule[r["rule"]].append(r)
    print("\n| rule | n | learned | offered | exact | any exact | wrong |")
    print("|---|---|---|---|---|---|---|")
    for rule, pool in sorted(per_rule.items(), key=lambda kv: -len(kv[1])):
        learned_n = sum("skip" not in r for r in pool)
        print(
            f"| {rule} | {len(pool)} | {learned_n} | {rate(pool, 'offered')} | {rate(pool, 'exact')} |"
            f" {rate(pool, 'any_exact')} | {sum(r['wrong'] for r in pool)} |"
        )
    print("\nnot learned:")
    for reason, n in skips.most_common(20):
        print(f"  {n:5d}  {reason}")
    if offers is not None:
        offers.close()
    if args.json:
        args.json.write_text(json.dumps(recs, indent=1))


if __name__ == "__main__":
    main()
