"""Real human fixes replayed through fixlore in front of ruff, against ruff alone, in the same run.

The judge of learned quick fixes (issue: "Learned fixes that are right"). It drives the
team's harness (``humanfix/fixreplay.py`` in the shared folder beside this checkout, or
``--humanfix DIR``) twice over the same events, oldest first per repository:

1. ``fixlore serve --upstream python='ruff server'`` (learning from every fix the simulated
   user makes: the action it accepts when one is exactly the human's fix, else the fix typed
   by hand, a pause, a save);
2. ``ruff server`` alone: the floor.

It prints, for both: top-1 exact on all, recurring-rule and recurring-shape events; learned
top-1; F821 learned top-1; removal; coverage; wrong learned fixes offered (the top learned
action drops a name, attribute or number the human kept) and wrong-and-preferred; per rule;
and code-action latency p50/p99 for both, the difference, and fixlore's latency by quarter
of each repository's replay (knowledge grows as the replay goes on: it must stay flat).

Usage: ``python bench/bench_humanfix.py [--quick] [--jobs 3] [--json out.json]``.
``--quick`` replays 300 events (each repository's oldest), a full run 1,395 (about 25 min a side).
``--events PATH`` replays another set of the same format, all of it: the releases of other
projects that ``humanfix_sdists.py`` mines, to see whether what the dev set tunes holds elsewhere.
``--tap`` puts ``wire_tap.py`` in front of each server and prints every kind of request's time on
the wire: the first pull of diagnostics after a file opens apart (whatever a server does for a
file just opened before it reports shows there, not in the code action).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_HUMANFIX = HERE.parent.parent / "shared" / "humanfix"
BIN = Path(sys.executable).parent


def replay(humanfix: Path, server_cmd: str, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One run of the harness; its JSON."""
    cmd = [
        sys.executable,
        str(humanfix / "fixreplay.py"),
        "--server-cmd",
        server_cmd,
        "--events",
        str(args.events or humanfix / "events.jsonl.gz"),
        "--max-events",
        str(args.max_events),
        "--jobs",
        str(args.jobs),
        "--pause",
        str(args.pause),
        "--ruff",
        str(BIN / "ruff"),
        "--json",
        str(out),
        "--dump-events",
    ]
    env_path = f"{BIN}:{Path('/usr/bin')}"
    started = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=humanfix, capture_output=True, text=True, env={"PATH": env_path, "HOME": tempfile.gettempdir()}
    )
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"replay failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    data["wall_s"] = round(time.monotonic() - started, 1)
    return data


def pct(values: list[float], q: float) -> float | None:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else None


def fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def summary(data: dict[str, Any]) -> dict[str, Any]:
    recs = data["records"]

    def rate(pool: list[dict[str, Any]], pred: Any) -> float | None:
        return sum(1 for r in pool if pred(r)) / len(pool) if pool else None

    pools = {
        "all": recs,
        "recurring": [r for r in recs if r.get("recurring")],
        "recurring_shape": [r for r in recs if r.get("recurring_shape")],
    }
    out: dict[str, Any] = {}
    for name, pool in pools.items():
        out[name] = {
            "n": len(pool),
            "top1": rate(pool, lambda r: r["rank_all"] == 0),
            "learned_top1": rate(pool, lambda r: r["rank_learned"] == 0),
            "removal": rate(pool, lambda r: r["removal"]),
            "coverage": rate(pool, lambda r: r["coverage"]),
            "wrong_offered": sum(1 for r in pool if r.get("unfaithful_learned_top")),
            "wrong_preferred": sum(1 for r in pool if r.get("unfaithful_preferred")),
        }
    f821 = [r for r in recs if r["rule"] == "F821"]
    out["f821_learned_top1"] = rate(f821, lambda r: r["rank_learned"] == 0)
    out["codeaction_ms"] = [r["codeaction_ms"] for r in recs if r.get("codeaction_ms") is not None]
    return out


def by_quarter(recs: list[dict[str, Any]]) -> list[tuple[float | None, float | None]]:
    """Code-action p50/p99 per quarter of each repository's replay, all repositories together."""
    quarters: list[list[float]] = [[], [], [], []]
    repos: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        repos.setdefault(r["repo"], []).append(r)
    for events in repos.values():
        for i, r in enumerate(events):
            if r.get("codeaction_ms") is not None:
                quarters[min(3, 4 * i // max(1, len(events)))].append(r["codeaction_ms"])
    return [(pct(q, 0.5), pct(q, 0.99)) for q in quarters]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--humanfix", type=Path, default=DEFAULT_HUMANFIX)
    parser.add_argument(
        "--events", type=Path, help="another set of events (default: the development set; see humanfix_sdists.py)"
    )
    parser.add_argument("--quick", action="store_true", help="300 events instead of 1,395")
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--pause", type=float, default=2.5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", choices=["fixlore", "ruff"], help="run one side only")
    parser.add_argument(
        "--tap",
        action="store_true",
        help="time every request on the wire (bench/wire_tap.py), the first pull of each file just opened apart",
    )
    args = parser.parse_args()
    args.max_events = 300 if args.quick else 1395 if args.events is None else 100_000
    if not (args.humanfix / "fixreplay.py").exists():
        raise SystemExit(f"no humanfix harness at {args.humanfix} (--humanfix DIR)")
    fixlore = (
        f"{shlex.quote(str(BIN / 'fixlore'))} serve --upstream python={shlex.quote(str(BIN / 'ruff') + ' server')}"
    )
    ruff = f"{shlex.quote(str(BIN / 'ruff'))} server"
    with tempfile.TemporaryDirectory(prefix="bench-humanfix-") as tmp:
        runs: dict[str, dict[str, Any]] = {}
        taps: dict[str, Path] = {}
        for side, cmd in (("fixlore", fixlore), ("ruff", ruff)):
            if args.only and args.only != side:
                continue
            if args.tap:
                taps[side] = Path(tmp) / f"{side}.tap.jsonl"
                tap = [sys.executable, str(HERE / "wire_tap.py"), "--out", str(taps[side]), "--"]
                cmd = " ".join(shlex.quote(part) for part in tap) + " " + cmd
            print(f"replaying {args.max_events} events through {side} ...", flush=True)
            runs[side] = replay(args.humanfix, cmd, Path(tmp) / f"{side}.json", args)
        if taps:
            from wire_tap import report

            print("\non the wire (bench/wire_tap.py), p50 / p99:")
            for side, path in taps.items():
                baseline = taps.get("ruff") if side == "fixlore" else None
                print(f" {side}:\n" + "\n".join(report(str(path), str(baseline) if baseline else None)))
    sums = {side: summary(data) for side, data in runs.items()}
    sides = list(sums)
    print(f"\n{args.max_events} events, --jobs {args.jobs}, --pause {args.pause}")
    print("| pool | metric | " + " | ".join(sides) + " |")
    print("|---|---|" + "---|" * len(sides))
    for pool in ("all", "recurring", "recurring_shape"):
        for metric in ("n", "top1", "learned_top1", "removal", "coverage", "wrong_offered", "wrong_preferred"):
            print(f"| {pool} | {metric} | " + " | ".join(fmt(sums[s][pool][metric]) for s in sides) + " |")
    print("| F821 | learned_top1 | " + " | ".join(fmt(sums[s]["f821_learned_top1"]) for s in sides) + " |")
    lat = {s: sums[s]["codeaction_ms"] for s in sides}
    print("\ncode action, ms (p50 / p99):")
    for s in sides:
        print(f"  {s}: {fmt(pct(lat[s], 0.5))} / {fmt(pct(lat[s], 0.99))}")
    if "fixlore" in lat and "ruff" in lat:
        p50 = (pct(lat["fixlore"], 0.5) or 0) - (pct(lat["ruff"], 0.5) or 0)
        p99 = (pct(lat["fixlore"], 0.99) or 0) - (pct(lat["ruff"], 0.99) or 0)
        print(f"  added by fixlore: p50 {p50:+.2f} ms, p99 {p99:+.2f} ms")
    if "fixlore" in runs:
        print("fixlore by quarter of each replay (knowledge growing), p50 / p99 ms:")
        for i, (p50q, p99q) in enumerate(by_quarter(runs["fixlore"]["records"]), 1):
            print(f"  Q{i}: {fmt(p50q)} / {fmt(p99q)}")
    rules: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for s, data in runs.items():
        for r in data["records"]:
            rules.setdefault(r["rule"], {}).setdefault(s, []).append(r)
    print("\nper rule (n, top-1 " + " / ".join(sides) + ", learned top-1 fixlore):")
    for rule, per in sorted(rules.items(), key=lambda kv: -len(next(iter(kv[1].values())))):
        n = len(next(iter(per.values())))
        tops = " / ".join(fmt(sum(r["rank_all"] == 0 for r in per.get(s, [])) / n) for s in sides)
        learned = per.get("fixlore", [])
        lt = fmt(sum(r["rank_learned"] == 0 for r in learned) / n) if learned else "-"
        print(f"  {rule:8} n={n:4d} top1 {tops}  learned {lt}")
    if args.json:
        args.json.write_text(json.dumps({s: {k: v for k, v in d.items() if k != "records"} for s, d in runs.items()}))


if __name__ == "__main__":
    main()
