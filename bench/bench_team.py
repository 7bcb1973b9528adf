"""Benchmark of team knowledge on a local PostgreSQL: many workspaces publishing at once, ranking with team evidence.

Prints figures, not a pass/fail. Starts its own PostgreSQL (Debian's package:
/usr/lib/postgresql/*/bin, as in the tests) on a free loopback port.

    python bench/bench_team.py            # 50 workspaces x 10k events; 100k team patterns
    python bench/bench_team.py --quick    # 10 workspaces x 2k events; 20k team patterns

Measures: events/s sustained while every workspace publishes its outbox at once
(one thread each, as separate fixlore processes would), each workspace's publish
lag (from the start until its outbox is empty) p50/p99, that the team's final
counts equal the events recorded exactly; then ranking p99 with the team scope
in the index and the RSS that scope costs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fixlore.abstraction import Pattern, Scope, Signature  # noqa: E402
from fixlore.knowledge import Candidate, Counts, Event, EventKind, Knowledge, Record, _teamdb, rank_actions  # noqa: E402
from tests.knowledge._patterns import LEARNED  # noqa: E402
from tests.team._postgres import start_postgres  # noqa: E402

KINDS = (EventKind.OFFERED, EventKind.ACCEPTED, EventKind.MANUAL, EventKind.SUCCEEDED)


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pattern(i: int) -> Pattern:
    """Distinct privacy-safe patterns, one rule code each (what members publish)."""
    return replace(LEARNED, signature=replace(LEARNED.signature, code=f"E{1000 + i}"))


def rank_pattern(i: int) -> Pattern:
    """Distinct patterns over 200 rule keys, for the index only (never published, so never verified)."""
    sig = Signature("python", "Ruff", f"E{700 + i % 200}", f"{LEARNED.signature.message} {i // 200}")
    return replace(LEARNED, signature=sig)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    workspaces, per_ws, team_patterns = (10, 2_000, 20_000) if args.quick else (50, 10_000, 100_000)
    pg = start_postgres()
    os.environ["PGPASSFILE"] = str(pg.pgpass)
    try:
        db = pg.create_database("bench")
        with _teamdb.connect(pg.url(dbname=db)) as c:
            _teamdb.migrate(c)
            role = pg.add_role("bench_member")
            _teamdb.add_member(c, role, "bench")
        url = pg.url(role, db)
        tmp = Path(tempfile.mkdtemp(prefix="fixlore-bench-team-"))
        pool = [pattern(i) for i in range(1000)]
        rnd = random.Random(7)
        expected: dict[str, int] = {}
        t0 = time.perf_counter()
        for w in range(workspaces):
            with Knowledge.open(tmp / f"h{w}", workspace_root=tmp / f"ws{w}", base=False, auto_prune=False) as k:
                for _ in range(per_ws):
                    p = rnd.choice(pool)
                    kind = rnd.choice(KINDS)
                    k.record(Event(kind, p, k.workspace_id, time.time()))
                    if kind in (EventKind.ACCEPTED, EventKind.MANUAL):
                        expected[p.fingerprint] = expected.get(p.fingerprint, 0) + 1
        print(f"recorded {workspaces} x {per_ws} events locally in {time.perf_counter() - t0:.1f} s")

        stores = [
            Knowledge.open(
                tmp / f"h{w}", workspace_root=tmp / f"ws{w}", base=False, auto_prune=False, team=url, team_interval=0
            )
            for w in range(workspaces)
        ]
        lags: list[float] = []
        errors: list[str] = []
        start = threading.Barrier(workspaces + 1)

        def publish(k: Knowledge) -> None:
            start.wait()
            began = time.perf_counter()
            assert k.team is not None
            report = k.team.sync(pull=False)
            if report.error or report.pending:
                errors.append(report.error or f"{report.pending} pending")
            lags.append(time.perf_counter() - began)

        threads = [threading.Thread(target=publish, args=(k,)) for k in stores]
        for t in threads:
            t.start()
        start.wait()
        t1 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t1
        for k in stores:
            k.close()
        total = workspaces * per_ws
        print(
            f"published {total} events from {workspaces} workspaces at once in {wall:.2f} s:"
            f" {total / wall:,.0f} events/s"
        )
        print(
            f"publish lag per workspace: p50 {pct(lags, 0.5):.2f} s, p99 {pct(lags, 0.99):.2f} s;"
            f" errors: {errors or 'none'}"
        )
        with _teamdb.connect(url) as c:
            raw = _teamdb.read_team(c)
        got = {str(r[0]): int(r[2]) + int(r[6]) for r in raw.aggregates}
        events_in_team = sum(sum(int(v) for v in r[1:8]) for r in raw.aggregates)
        exact = events_in_team == total and all(got.get(fp, 0) == n for fp, n in expected.items())
        print(f"final team counts exact: {exact} ({events_in_team} events in the team store, {total} recorded)")

        # Ranking with team evidence in the index.
        base_rss = rss_mb()
        with Knowledge.open(tmp / "reader", base=False, auto_prune=False) as k:
            now = time.time()
            records = [
                Record(rank_pattern(i), Counts(offered=3, accepted=2, manual=1, succeeded=2), now - 86400, now, 3)
                for i in range(team_patterns)
            ]
            before = rss_mb()
            k.replace_team(records)
            del records
            held = rss_mb() - before
            keys = [rank_pattern(i).signature.rule_key for i in range(200)]
            # Baseline in the same run: the same evidence as the user's own scope, from a plain dict.
            own = {key: {fp: replace(st, scope=Scope.USER) for fp, st in k.evidence(key).items()} for key in keys}
            team_s: list[float] = []
            team_cpu: list[float] = []
            own_s: list[float] = []
            own_cpu: list[float] = []
            for n in range(40_000):
                key = keys[n % len(keys)]
                fps = list(own[key])[:10]
                cands = [Candidate(fp, None, j) for j, fp in enumerate(fps)]
                # Interleaved, so both see the same load; the team side includes the index lookup.
                if n % 2:
                    s, c = time.perf_counter(), time.thread_time()
                    ranked = rank_actions(cands, k.evidence(key), now=now)
                    team_s.append(time.perf_counter() - s)
                    team_cpu.append(time.thread_time() - c)
                    assert all(st.scope is Scope.TEAM for st in k.evidence(key).values()) and ranked
                else:
                    s, c = time.perf_counter(), time.thread_time()
                    rank_actions(cands, own.get(key, {}), now=now)
                    own_s.append(time.perf_counter() - s)
                    own_cpu.append(time.thread_time() - c)
            # Wall p99 on a shared 2-core machine is preemption; the thread-CPU p99 is fixlore's own work.
            print(
                f"ranking 10 candidates, all with team evidence, {team_patterns} team patterns in the index:"
                f" p50 {statistics.median(team_s) * 1e6:.0f} us, p99 wall {pct(team_s, 0.99) * 1e6:.0f} us,"
                f" p99 CPU {pct(team_cpu, 0.99) * 1e6:.0f} us"
            )
            print(
                f"baseline, the same evidence as the user's own (a dict, no index): p50"
                f" {statistics.median(own_s) * 1e6:.0f} us, p99 wall {pct(own_s, 0.99) * 1e6:.0f} us,"
                f" p99 CPU {pct(own_cpu, 0.99) * 1e6:.0f} us; ratio team/baseline p50"
                f" {statistics.median(team_s) / statistics.median(own_s):.2f}, p99 CPU"
                f" {pct(team_cpu, 0.99) / pct(own_cpu, 0.99):.2f}"
            )
            print(
                f"team scope RSS +{held:.0f} MB for {team_patterns} patterns"
                f" (process {rss_mb():.0f} MB, {base_rss:.0f} before the reader); load average {os.getloadavg()[0]:.1f}"
            )
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
