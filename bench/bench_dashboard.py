"""Benchmark of ``fixlore dashboard``: build time, page size and time to first paint by store size.

Prints figures, not a pass/fail. Each store is generated first (not timed; the
generator of tests/dashboard), then measured with the real command line and
a real headless Chromium (Debian's ``chromium``, driven by Playwright). Ratios
are against baselines measured in the same run: the build against
``fixlore knowledge stats --json`` on the same store (both are one process
reading the store), the page against the page of an empty store.

The generated store has its events written straight into the log, as a store
of an older fixlore has: the first ``fixlore dashboard`` replays the whole log
once and keeps the result (``first s``); every later one reads what the
writer keeps up to date (``build s``, best of runs). Wall times on a shared
machine vary with its load; ``cpu s`` is the build process's user + system
time. The commands run with Python's bytecode cache, as an installed fixlore
does (``PYTHONDONTWRITEBYTECODE`` is dropped from their environment).

    python bench/bench_dashboard.py                    # 10k and 100k patterns
    python bench/bench_dashboard.py --sizes 10000 100000 1000000

Target (issue 18): first paint < 2 s at 100k patterns.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.dashboard._browser import FLAGS  # noqa: E402
from tests.dashboard._generate import populate  # noqa: E402

BIN = Path(sys.executable).parent


def timed(*args: str, home: Path, repeat: int = 3) -> tuple[float, float]:
    """Best wall time of ``fixlore ARGS`` on ``home`` over ``repeat`` runs, and that run's CPU time (seconds)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["FIXLORE_HOME"] = str(home)
    best, cpu = float("inf"), float("nan")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([str(BIN / "fixlore"), *args], env=env, check=True, capture_output=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if wall < best:
            best = wall
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return best, cpu


def paint(page_file: Path, chromium: str, repeat: int = 3) -> dict[str, float]:
    """Best first contentful paint (the page's frame) and time until charts and tables are drawn, in seconds."""
    from playwright.sync_api import sync_playwright

    fcp, ready = float("inf"), float("inf")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            for _ in range(repeat):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.goto(page_file.as_uri())
                page.wait_for_selector("body[data-ready='1']", timeout=300_000)
                # Measured by the page itself: from navigation start until charts and tables are drawn.
                ready = min(ready, int(page.locator("body").get_attribute("data-ready-ms") or "nan") / 1000)
                entries: Any = page.evaluate(
                    "() => performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)"
                )
                fcp = min(fcp, (entries[0] if entries else float("nan")) / 1000)
                if errors:
                    raise SystemExit(f"page errors: {errors}")
                page.close()
        finally:
            browser.close()
    return {"fcp": fcp, "ready": ready}


def main() -> int:
    """Parse flags and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000], help="store sizes (patterns)")
    parser.add_argument("--chromium", default=os.environ.get("FIXLORE_CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--no-browser", action="store_true", help="build figures only")
    args = parser.parse_args()
    browser = not args.no_browser and Path(args.chromium).exists()
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        empty_page = Path(tmp) / "empty.html"
        subprocess.run(
            [str(BIN / "fixlore"), "dashboard", "--no-base", "-o", str(empty_page)],
            env={**os.environ, "FIXLORE_HOME": str(empty)},
            check=True,
            capture_output=True,
        )
        base_paint = paint(empty_page, args.chromium) if browser else None
        if base_paint:
            print(
                f"empty store: page {empty_page.stat().st_size / 1e6:.2f} MB, first paint {base_paint['fcp']:.3f} s,"
                f" ready {base_paint['ready']:.3f} s"
            )
        print(
            f"{'patterns':>9} {'events':>8} {'stats s':>8} {'first s':>8} {'build s':>8} {'cpu s':>6}"
            f" {'build/stats':>11} {'MB':>6} {'paint s':>8} {'to paint s':>10} {'ready s':>8} {'ready/empty':>11}"
        )
        for n in args.sizes:
            home = Path(tmp) / f"s{n}"
            home.mkdir()
            written = populate(home, n)
            page_file = Path(tmp) / f"s{n}.html"
            first_s, _ = timed("dashboard", "--no-base", "-o", str(page_file), home=home, repeat=1)
            stats_s, _ = timed("knowledge", "stats", "--json", "--no-base", home=home)
            build_s, cpu_s = timed("dashboard", "--no-base", "-o", str(page_file), home=home, repeat=3)
            mb = page_file.stat().st_size / 1e6
            line = (
                f"{n:>9} {written['events']:>8} {stats_s:>8.2f} {first_s:>8.2f} {build_s:>8.2f} {cpu_s:>6.2f}"
                f" {build_s / stats_s:>11.1f} {mb:>6.1f}"
            )
            if base_paint:
                p = paint(page_file, args.chromium)
                line += (
                    f" {p['fcp']:>8.3f} {build_s + p['fcp']:>10.2f} {p['ready']:>8.3f}"
                    f" {p['ready'] / base_paint['ready']:>11.1f}"
                )
            print(line, flush=True)
            page_file.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
