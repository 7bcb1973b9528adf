"""Benchmark of the knowledge layer: ranking latency and memory by store size, export/import, prune.

Prints figures, not a pass/fail. Each store size runs in a fresh child process
so that its memory is measured alone. Ratios are against a baseline measured
in the same run (an empty store), since machines are noisy.

    python bench/bench_knowledge.py            # 10k, 100k, 1M patterns; 1M events
    python bench/bench_knowledge.py --quick    # 10k, 100k patterns; 100k events

Targets (issue 5): ranking p99 <= 1 ms at 100k patterns and flat growth
beyond; RSS <= 100 MB at 100k patterns.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RULE_KEYS = 2000
"""Distinct (language, source, code) buckets the patterns spread over."""
CANDIDATES = 10
REQUESTS = 20_000


def rss_mb() -> float:
    """Resident set size of this process in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def rule_key(i: int) -> tuple[str, str, str]:
    """The i-th synthetic rule key."""
    source = ("Ruff", "Pylint", "mypy", "basedpyright", "fixlore")[i % 5]
    return ("python", source, f"R{i:04d}")


MESSAGES = ("Undefined name `$1`", "`$1` imported but unused", "Comparison to `None` should be `$1 is None`")
TITLES = ("Replace with `$1`", "Remove unused import: `$1`", "Disable for this line")


def pattern_dict(i: int, key: tuple[str, str, str], shape: bool) -> dict[str, Any]:
    """The i-th synthetic pattern (privacy-safe; unique identity per ``i``)."""
    digits = " ".join(f"${int(d) + 1}" for d in str(i))
    return {
        "v": 1,
        "signature": {"language": key[0], "source": key[1], "code": key[2], "message": MESSAGES[i % 3]},
        "category": "rewrite",
        "shape": {
            "anchor": "at_diagnostic",
            "unit": "Comparison",
            "before": f"$1 == None {digits}",
            "after": "$1 is None",
        }
        if shape
        else None,
        "action": None if shape else {"kind": f"quickfix.v{i}", "title": TITLES[i % 3]},
        "holes": [],
        "context": ["Module", "FunctionDef", "If"][: i % 4],
        "instances": 1,
        "extra": [],
    }


def body(i: int, key: tuple[str, str, str], shape: bool) -> tuple[str, str]:
    """``(fingerprint, canonical JSON)`` of the i-th synthetic pattern."""
    from fixlore.abstraction import canonical_json, fingerprint_of

    d = pattern_dict(i, key, shape)
    identity = {k: v for k, v in d.items() if k not in ("context", "instances", "extra")}
    return fingerprint_of(identity), canonical_json(d)


def populate(home: Path, n: int, events: int = 0) -> list[str]:
    """Create a store of ``n`` patterns (a third of them learned fixes) and ``events`` log rows."""
    from fixlore.knowledge._store import COUNT_COLUMNS, Store

    store = Store(home / "knowledge.sqlite3")
    c = store.conn
    now = time.time()
    rnd = random.Random(n)
    c.execute("BEGIN")
    cols = ", ".join(COUNT_COLUMNS)
    rows = []
    fps: list[str] = []
    for i in range(n):
        key = rule_key(i % RULE_KEYS)
        shape = i % 3 == 0
        counts = [
            rnd.randint(0, 20),
            rnd.randint(0, 8),
            rnd.randint(0, 8),
            rnd.randint(0, 6),
            rnd.randint(0, 3),
            rnd.randint(0, 2),
            rnd.randint(0, 1),
        ]
        seen = now - rnd.uniform(0, 120) * 86400
        ctx = "/".join(["Module", "FunctionDef", "If"][: i % 4])
        fp, text = body(i, key, shape)
        fps.append(fp)
        rows.append((fp, *key, "rewrite", int(shape), ctx, text, *counts, seen - 86400, seen, rnd.randint(1, 5)))
        if len(rows) == 50_000:
            _insert(c, cols, rows)
            rows = []
    _insert(c, cols, rows)
    if events:
        # The log is append-only, so rows arrive in time order (ids follow time).
        times = sorted(now - rnd.uniform(0, 365) * 86400 for _ in range(events))
        ev = ((at, "accepted", fps[j % n], "ws") for j, at in enumerate(times))
        c.executemany("INSERT INTO events (at, kind, fingerprint, workspace) VALUES (?, ?, ?, ?)", ev)
    c.execute("COMMIT")
    store.close()
    return fps


def _insert(c: sqlite3.Connection, cols: str, rows: list[tuple[Any, ...]]) -> None:
    c.executemany(
        f"INSERT INTO patterns (fingerprint, language, source, code, category, has_shape, context, body, {cols},"
        f" first_seen, last_seen, workspaces) VALUES ({', '.join('?' * 18)})",
        rows,
    )


def child(n: int, home: Path) -> dict[str, Any]:
    """Measure one store (made by the parent) in this fresh process."""
    from fixlore.abstraction import Pattern
    from fixlore.knowledge import Candidate, Knowledge, rank_actions

    base_rss = rss_mb()
    t0 = time.perf_counter()
    k = Knowledge.open(home, base=False, auto_prune=False, learning=False)
    open_s = time.perf_counter() - t0
    rss = rss_mb()
    k.warmed()
    warm_s = time.perf_counter() - t0
    rss_warm = rss_mb()
    # First request for a rule key not in memory (only a store too large to hold whole has any).
    cold_lat: list[float] = []
    cold = [rule_key(i) for i in range(RULE_KEYS) if k._index.is_cold(rule_key(i))]
    for key in cold[:300]:
        t = time.perf_counter()
        k.evidence(key)
        cold_lat.append(time.perf_counter() - t)
    cold_lat.sort()
    rnd = random.Random(1)
    per_key = max(1, n // RULE_KEYS)
    # The requests, planned first: rule key r and, for half the candidates, ids of that key
    # (rowid r + RULE_KEYS * j + 1, see populate), read by rowid so that this process holds
    # only the ids it asks for (a list of all 1M would weigh more than the index).
    plan = [
        (r, [r + RULE_KEYS * rnd.randrange(per_key) + 1 for _ in range(CANDIDATES // 2)])
        for r in (rnd.randrange(RULE_KEYS) for _ in range(REQUESTS))
    ]
    conn = sqlite3.connect(home / "knowledge.sqlite3")
    wanted = sorted({rowid for _, rowids in plan for rowid in rowids}) if n else []
    by_rowid: dict[int, str] = {}
    for i in range(0, len(wanted), 500):
        chunk = wanted[i : i + 500]
        by_rowid.update(
            conn.execute(
                f"SELECT rowid, fingerprint FROM patterns WHERE rowid IN ({','.join('?' * len(chunk))})", chunk
            )
        )
    conn.close()
    now = time.time()
    ctx_pattern = Pattern.from_json(body(1, rule_key(1), True)[1])
    lat: list[float] = []
    cpu: list[float] = []
    learned: list[float] = []
    from fixlore.abstraction import Signature

    for r, rowids in plan:
        key = rule_key(r)
        # Half the candidates have evidence (ids of this key), half are unknown actions.
        ids = [by_rowid[rowids[j // 2]] if j % 2 and n else f"new{j}" for j in range(CANDIDATES)]
        t, c = time.perf_counter(), time.thread_time()
        ranked = rank_actions([Candidate(fp, ctx_pattern, j) for j, fp in enumerate(ids)], k.evidence(key), now=now)
        lat.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
        assert len(ranked) == CANDIDATES
        assert sum(1 for x in ranked if x.explanation and "no evidence" not in x.explanation[0]) == (
            CANDIDATES // 2 if n else 0
        ), "every known candidate was found"
    rss_ranked = rss_mb()
    # Learned fixes need the patterns themselves, which a large store keeps on disk
    # outside the working set: measured apart (the server reads them in a worker).
    for _ in range(REQUESTS // 10):
        key = rule_key(rnd.randrange(RULE_KEYS))
        t = time.perf_counter()
        k.learned_fixes(Signature(*key, MESSAGES[0]))
        learned.append(time.perf_counter() - t)
    # A user works on a few rules at a time: the same requests over 10% of the rule keys.
    hot: list[float] = []
    for _ in range(REQUESTS):
        key = rule_key(rnd.randrange(RULE_KEYS // 10))
        t = time.perf_counter()
        rank_actions([Candidate(f"new{j}", ctx_pattern, j) for j in range(CANDIDATES)], k.evidence(key), now=now)
        hot.append(time.perf_counter() - t)
    hot.sort()
    rss_end = rss_mb()
    k.close()
    lat.sort()
    cpu.sort()
    learned.sort()
    return {
        "patterns": n,
        "open_s": open_s,
        "rss_before_mb": base_rss,
        "rss_mb": rss,
        "warm_s": warm_s,
        "rss_warm_mb": rss_warm,
        "rss_ranked_mb": rss_ranked,
        "rss_end_mb": rss_end,
        "packed_rows": k._index.packed_rows,
        "cold_keys_after_warm_up": len(cold),
        "hot_p50_us": hot[len(hot) // 2] * 1e6,
        "hot_p99_us": hot[int(len(hot) * 0.99)] * 1e6,
        "cold_p50_us": cold_lat[len(cold_lat) // 2] * 1e6 if cold_lat else 0.0,
        "cold_p99_us": cold_lat[int(len(cold_lat) * 0.99)] * 1e6 if cold_lat else 0.0,
        "rank_p50_us": lat[len(lat) // 2] * 1e6,
        "rank_p99_us": lat[int(len(lat) * 0.99)] * 1e6,
        "rank_cpu_p99_us": cpu[int(len(cpu) * 0.99)] * 1e6,
        "learned_p50_us": learned[len(learned) // 2] * 1e6,
        "learned_p99_us": learned[int(len(learned) * 0.99)] * 1e6,
    }


def exchange(n: int) -> dict[str, float]:
    """Export ``n`` patterns and import them into an empty and into a full store."""
    from fixlore.knowledge import Knowledge

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "src", Path(tmp) / "dst"
        populate(src, n)
        out = Path(tmp) / "export.json"
        with Knowledge.open(src, base=False, auto_prune=False) as k:
            t = time.perf_counter()
            count = k.export(out)
            export_s = time.perf_counter() - t
        assert count == n, count
        with Knowledge.open(dst, base=False, auto_prune=False) as k:
            t = time.perf_counter()
            r1 = k.import_file(out, max_bytes=1 << 30)
            import_new_s = time.perf_counter() - t
        # Into the store it came from: every pattern exists, none was imported before (the
        # same file twice into one store adds nothing the second time, see test_import_twice).
        with Knowledge.open(src, base=False, auto_prune=False) as k:
            t = time.perf_counter()
            r2 = k.import_file(out, max_bytes=1 << 30)
            import_merge_s = time.perf_counter() - t
        assert (r1.imported, r2.merged) == (n, n), (r1, r2)
        return {
            "patterns": n,
            "export_s": export_s,
            "import_new_s": import_new_s,
            "import_merge_s": import_merge_s,
            "file_mb": out.stat().st_size / 1e6,
        }


def prune(events: int) -> dict[str, float]:
    """Prune a log of ``events`` rows (about half past the retention) over 10k patterns."""
    from fixlore.knowledge import Knowledge, PruneConfig

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        populate(home, 10_000, events)
        with Knowledge.open(home, base=False, auto_prune=False, prune_config=PruneConfig()) as k:
            t = time.perf_counter()
            dry = k.prune(dry_run=True)
            dry_s = time.perf_counter() - t
            t = time.perf_counter()
            done = k.prune()
            prune_s = time.perf_counter() - t
            left = k.stats().events
        return {
            "events": events,
            "dry_run_s": dry_s,
            "prune_s": prune_s,
            "deleted": done.events_deleted,
            "archived": len(done.archived),
            "left": left,
            "dry_deleted": dry.events_deleted,
        }


def run_child(n: int) -> dict[str, Any]:
    """Populate a store of ``n`` patterns, then measure it in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        populate(Path(tmp), n)
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n), "--home", tmp],
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    """Parse flags and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a minute or so)")
    parser.add_argument("--sizes", type=int, nargs="*", help="store sizes to measure (default: by --quick)")
    parser.add_argument("--skip-exchange", action="store_true", help="only the ranking figures")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.home)))
        return 0
    sizes = [0, 10_000, 100_000] if args.quick else [0, 10_000, 100_000, 1_000_000]
    if args.sizes is not None:
        sizes = [0, *args.sizes]
    print(
        f"ranking: {REQUESTS} requests of {CANDIDATES} candidates, patterns over {RULE_KEYS} rule keys;"
        " cpu = thread CPU time (excludes preemption by other processes)"
    )
    print(
        f"{'patterns':>10} {'open s':>7} {'RSS MB':>7} {'(+MB)':>6} {'p50 us':>7} {'p99 us':>7} {'p99/10k':>8}"
        f" {'cpu p99':>7} {'learned p50/p99 us':>19}"
    )
    base = None
    for n in sizes:
        r = run_child(n)
        base = base or (r if n >= 10_000 else None)
        print(
            f"{n:>10} {r['open_s']:>7.2f} {r['rss_mb']:>7.1f} {r['rss_mb'] - r['rss_before_mb']:>6.1f}"
            f" {r['rank_p50_us']:>7.1f} {r['rank_p99_us']:>7.1f}"
            f" {r['rank_p99_us'] / (base or r)['rank_p99_us']:>8.2f} {r['rank_cpu_p99_us']:>7.1f}"
            f" {r['learned_p50_us']:>9.1f}/{r['learned_p99_us']:.1f}"
        )
        if r["packed_rows"] or r["cold_p50_us"]:
            cold = (
                f" first read of a cold key p50/p99 {r['cold_p50_us']:.0f}/{r['cold_p99_us']:.0f} us;"
                if r["cold_p50_us"]
                else " no rule key left cold;"
            )
            print(
                f"{'':>10} read per rule key: warm-up done after {r['warm_s']:.2f} s ({r['packed_rows']} rows packed),"
                f" RSS {r['rss_warm_mb']:.1f} MB after it, {r['rss_ranked_mb']:.1f} MB after the ranking requests,"
                f" {r['rss_end_mb']:.1f} MB after the learned-fix lookups;{cold}"
                f" ranking over 10% of the rule keys p50/p99 {r['hot_p50_us']:.0f}/{r['hot_p99_us']:.0f} us"
            )
    if args.skip_exchange:
        return 0
    n = 20_000 if args.quick else 100_000
    e = exchange(n)
    print(
        f"export/import of {n} patterns ({e['file_mb']:.0f} MB): export {e['export_s']:.2f} s,"
        f" import into empty {e['import_new_s']:.2f} s, merge into existing {e['import_merge_s']:.2f} s"
    )
    ev = 100_000 if args.quick else 1_000_000
    p = prune(ev)
    print(
        f"prune of {ev} events: dry run {p['dry_run_s']:.2f} s, prune {p['prune_s']:.2f} s"
        f" ({p['deleted']} deleted, {p['left']} left, {p['archived']} patterns archived)"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("FIXLORE_HOME", tempfile.mkdtemp(prefix="fixlore-bench-"))
    sys.exit(main())
