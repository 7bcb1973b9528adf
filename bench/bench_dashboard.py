"""Benchmark of ``fixlore dashboard``: build CPU and wall time, page size and first paint by store size.

Prints figures, not a pass/fail. Each store is generated first (not timed; the
generator of tests/dashboard), then measured with the real command line and
a real headless Chromium (Debian's ``chromium``, driven by Playwright; never
``playwright install``).

With ``--before DIR`` (a checkout of an older tree, e.g. ``git worktree add
/tmp/before 417026c``), the older tree's ``fixlore dashboard`` runs on the same
store, interleaved with this tree's (before, after, after, before, ...), so a
shared machine's drift hits both alike; its ``lsp``, ``abstraction`` and
``knowledge`` folders are imported first through ``PYTHONPATH``, with this
tree's interpreter and dependencies. Ratios are after / before.

The generated store has its events written straight into the log, as a store
of an older fixlore has: the first ``fixlore dashboard`` replays the whole log
once and keeps the result (``first s``, this tree, once); every later one
reads what the writer keeps up to date. ``cpu s`` is the build process's user
+ system time (``getrusage(RUSAGE_CHILDREN)``), ``wall s`` its wall time, both
medians over the runs; ``paint s`` is the page's first contentful paint in
Chromium (median), ``cpu+paint s`` their sum. The commands run with Python's
bytecode cache, as an installed fixlore does (``PYTHONDONTWRITEBYTECODE`` is
dropped from their environment). The machine's load average is printed with
each size.

    python bench/bench_dashboard.py                              # 10k and 100k patterns
    python bench/bench_dashboard.py --before /tmp/before --sizes 10000 100000
    python bench/bench_dashboard.py --sizes 1000000 --runs 1

Target (issue 18): first paint < 2 s at 100k patterns (build CPU + first paint).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
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

FOLDERS = ("lsp", "abstraction", "knowledge")


def tree_env(before: Path | None, shim: Path) -> dict[str, str]:
    """The environment that runs this tree (``before`` None) or the older one through a ``PYTHONPATH`` shim."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    if before is None:
        return env
    package = shim / "fixlore"
    package.mkdir(parents=True, exist_ok=True)
    for folder in FOLDERS:
        if not (before / folder).is_dir():
            raise SystemExit(f"--before {before}: no {folder}/ folder there (expected a fixlore checkout)")
        link = package / folder
        if not link.exists():
            link.symlink_to((before / folder).resolve(), target_is_directory=True)
    env["PYTHONPATH"] = str(shim)
    return env


def build(env: dict[str, str], home: Path, out: Path) -> tuple[float, float]:
    """One ``fixlore dashboard --no-base -o out`` on ``home``: (wall, CPU) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fixlore.lsp", "dashboard", "--no-base", "-o", str(out)],
        env={**env, "FIXLORE_HOME": str(home)},
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def paint_once(browser: Any, page_file: Path) -> tuple[float, float]:
    """First contentful paint and the time until charts and tables are drawn (the page's own mark), seconds."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=600_000)
    ready = int(page.locator("body").get_attribute("data-ready-ms") or "nan") / 1000
    entries: Any = page.evaluate("() => performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)")
    page.close()
    if errors:
        raise SystemExit(f"page errors in {page_file.name}: {errors}")
    return (entries[0] if entries else float("nan")) / 1000, ready


def paints(chromium: str, pages: dict[str, Path], runs: int) -> dict[str, tuple[float, float]]:
    """Median first paint and ready time per page, the pages opened in turn in one browser."""
    from playwright.sync_api import sync_playwright

    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in pages}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            for i in range(runs):
                for name in pages if i % 2 == 0 else reversed(pages):
                    seen[name].append(paint_once(browser, pages[name]))
        finally:
            browser.close()
    return {name: (median(v[0] for v in got), median(v[1] for v in got)) for name, got in seen.items()}


def median(values: Any) -> float:
    return float(statistics.median(list(values)))


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


Figures = dict[str, dict[str, float]]
"""Per tree (``before``, ``after``): figure name -> value."""


def measure(n: int, trees: dict[str, dict[str, str]], tmp: Path, args: argparse.Namespace) -> Figures:
    """Every figure of one store size, per tree."""
    home = tmp / f"s{n}"
    home.mkdir()
    written = populate(home, n)
    pages = {name: tmp / f"s{n}-{name}.html" for name in trees}
    first_wall, _ = build(trees["after"], home, pages["after"])
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for i in range(args.runs):
        for name in trees if i % 2 == 0 else reversed(trees):
            runs[name].append(build(trees[name], home, pages[name]))
    out: Figures = {}
    for name, got in runs.items():
        out[name] = {
            "events": written["events"],
            "first": first_wall if name == "after" else float("nan"),
            "wall": median(w for w, _ in got),
            "cpu": median(c for _, c in got),
            "cpu_min": min(c for _, c in got),
            "mb": pages[name].stat().st_size / 1e6,
        }
    if args.browser:
        for name, (fcp, ready) in paints(args.chromium, pages, args.paint_runs).items():
            out[name].update(paint=fcp, ready=ready)
    for page in pages.values():
        page.unlink()
    return out


def report(n: int, figures: Figures, load_before: str) -> None:
    for name, f in figures.items():
        paint, ready = f.get("paint", float("nan")), f.get("ready", float("nan"))
        print(
            f"{n:>9} {name:>6} {f['events']:>8.0f} {f['first']:>8.2f} {f['wall']:>7.2f} {f['cpu']:>6.2f}"
            f" {f['cpu_min']:>7.2f} {f['mb']:>6.1f} {paint:>7.3f} {f['cpu'] + paint:>11.2f} {ready:>7.2f}"
            f"   load {load_before} -> {load()}",
            flush=True,
        )
    if "before" in figures:
        a, b = figures["after"], figures["before"]
        ratio = {k: a[k] / b[k] if b.get(k) else float("nan") for k in ("wall", "cpu", "mb", "paint", "ready")}
        sums = (a["cpu"] + a.get("paint", 0.0)) / (b["cpu"] + b.get("paint", 0.0))
        print(
            f"{n:>9} {'a/b':>6} {'':>8} {'':>8} {ratio['wall']:>7.2f} {ratio['cpu']:>6.2f} {'':>7} {ratio['mb']:>6.2f}"
            f" {ratio['paint']:>7.2f} {sums:>11.2f} {ratio['ready']:>7.2f}",
            flush=True,
        )


def main() -> int:
    """Parse flags and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000], help="store sizes (patterns)")
    parser.add_argument("--before", type=Path, metavar="DIR", help="also an older checkout, interleaved")
    parser.add_argument("--runs", type=int, default=5, help="builds per tree and size (median)")
    parser.add_argument("--paint-runs", type=int, default=3, help="page loads per tree and size (median)")
    parser.add_argument("--chromium", default=os.environ.get("FIXLORE_CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--no-browser", action="store_true", help="build figures only")
    args = parser.parse_args()
    args.browser = not args.no_browser and Path(args.chromium).exists()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"after": tree_env(None, Path(tmp))}
        if args.before:
            trees = {"before": tree_env(args.before, Path(tmp) / "before-tree"), **trees}
        print(
            f"{'patterns':>9} {'tree':>6} {'events':>8} {'first s':>8} {'wall s':>7} {'cpu s':>6} {'cpu min':>7}"
            f" {'MB':>6} {'paint s':>7} {'cpu+paint s':>11} {'ready s':>7}"
        )
        for n in args.sizes:
            load_before = load()
            report(n, measure(n, trees, Path(tmp), args), load_before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
