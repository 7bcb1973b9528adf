"""Benchmark: a session's first quick-fix menu with a learned fix in it, against ruff alone.

An editor starts the server and sends the file it shows with ``initialize``;
the user reads it and asks for the quick fixes of a problem a moment later.
Here each run starts a server on a fresh store (the base knowledge only), opens
a file with a UP031 ``"%d …" % n`` (ruff has no fix for it; the base knowledge
has the hand fix ``f"{n:d} …"``) right behind ``initialized``, waits
``--think`` seconds (several values: the server is still loading its parts
for the first ~1-1.5 s), pulls the diagnostics and asks the invoked code
actions of the UP031 diagnostic. Printed per wait: that request's time p50 /
max through fixlore and ruff alone (runs interleaved), and in how many runs the
learned fix was in the menu. With ``--before DIR``, also an older tree (``DIR/fixlore/...`` first
on ``PYTHONPATH``, as in ``bench_startup.py``). Not a timed test.

    python bench/bench_first_fix.py [--runs 5] [--think 1.0 1.25 1.5 2.0] [--before DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

import bench_first_request  # a sibling: run as ``python bench/bench_first_fix.py``, bench/ is on the path

Session, RUFF = bench_first_request.Session, bench_first_request.RUFF

TEXT = 'import sys\n\n\ndef zz_report(zz_count):\n    sys.stdout.write("%d files checked\\n" % zz_count)\n'


async def first_menu(label: str, command: list[str], env: dict[str, str], think: float) -> tuple[float, bool]:
    """One session: the time of its first invoked code actions on the UP031, and whether a learned fix came."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env, FIXLORE_HOME=str(Path(tmp) / "home"))
        session = Session(label, command)
        try:
            await session.start(root)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        try:
            uri = (root / "report.py").as_uri()
            session.open(uri, TEXT)
            await asyncio.sleep(think)
            _, report = await session.timed("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            if isinstance(report, Exception):
                raise SystemExit(f"{label}: pull failed: {report}")
            diag = next((d for d in report.get("items") or [] if d.get("code") == "UP031"), None)
            if diag is None:
                raise SystemExit(f"{label}: no UP031 diagnostic in {report}")
            took, actions = await bench_first_request.invoked_code_actions(session, uri, diag)
            learned = any("learned" in str(a.get("title", "")) for a in actions or [])
        finally:
            await session.stop()
    return took, learned


async def main(args: argparse.Namespace) -> None:
    fixlore = [sys.executable, "-m", "fixlore.lsp", "serve", "--upstream", "python=" + " ".join(RUFF)]
    paths: dict[str, tuple[list[str], dict[str, str]]] = {"ruff": (list(RUFF), dict(os.environ))}
    paths["fixlore"] = (fixlore, dict(os.environ))
    if args.before:
        paths["before"] = (fixlore, dict(os.environ, PYTHONPATH=args.before))
    for think in args.think:
        got: dict[str, list[tuple[float, bool]]] = {name: [] for name in paths}
        for i in range(args.runs):
            names = list(paths)
            for k in range(len(names)):  # the order turns, so drift hits all alike
                name = names[(i + k) % len(names)]
                command, env = paths[name]
                got[name].append(await first_menu(name, command, env, think))
        print(f"a session's first quick-fix menu, {think:.2f} s after the file opened ({args.runs} runs each):")
        for name, rows in got.items():
            times = sorted(t * 1000 for t, _ in rows)
            learned = sum(1 for _, has in rows if has)
            print(
                f"  {name:<8} p50 {statistics.median(times):7.2f} ms  max {times[-1]:7.2f} ms"
                f"  learned fix in the menu {learned} of {len(rows)}",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--think", type=float, nargs="+", default=[1.0, 1.25, 1.5, 2.0], help="seconds from opening to the menu"
    )
    parser.add_argument("--before", metavar="DIR", help="also an older fixlore tree: DIR/fixlore/lsp, ...")
    asyncio.run(main(parser.parse_args()))
