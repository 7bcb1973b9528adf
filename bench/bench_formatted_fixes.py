"""Benchmark: what formatting quick fixes at ``codeAction/resolve`` costs (``formatFixes``), against it turned off.

A Python quick fix goes to an editor that resolves edits without its edit, and
``codeAction/resolve`` formats the lines it writes with ``ruff format --range``
where the code it touches was formatted (``lsp/actions/formatting.py``). The
code-action answer should cost nothing more; the resolve costs the formatter's
runs. Here each of ``--files`` standard-library files is opened, pulled, asked
for the invoked code actions of its first diagnostic that ruff has a fix for,
and that fix resolved, then closed — on three paths in turn (the order rotates
per file): ruff directly, ``fixlore serve`` with ``formatFixes`` off, and on.
Twice: the files as they are (CPython's own layout: the formatter would change
most statements, so it only checks and leaves them) and the same files first
formatted whole with ``ruff format`` (where it checks, then formats the fix).

Printed: p50 / p90 / p99 of the code action and of the resolve per path, the
code action's added latency against ruff's, the resolve's against fixlore
with ``formatFixes`` off, and how many resolved fixes the formatter changed.
Nothing here is a pass/fail threshold.

Usage: python bench/bench_formatted_fixes.py [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_first_request", REPO / "bench" / "bench_first_request.py")
assert _spec is not None and _spec.loader is not None
bench_first_request = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_first_request)
Session, RUFF, BIN, pct = (
    bench_first_request.Session,
    bench_first_request.RUFF,
    bench_first_request.BIN,
    bench_first_request.pct,
)


def text_edits(edit: dict[str, Any]) -> list[Any]:
    """A WorkspaceEdit's text edits, whatever document they are for."""
    return [e for d in edit.get("documentChanges", []) for e in d["edits"]] + [
        e for edits in (edit.get("changes") or {}).values() for e in edits
    ]


async def one_file(session: Any, uri: str, text: str) -> tuple[float, float, dict[str, Any]] | None:
    """Open, pull, the invoked actions of the first diagnostic with a fix, that fix resolved; ``None`` if none."""
    session.open(uri, text)
    try:
        _, report = await session.timed("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        for diag in report.get("items") or []:
            asked, actions = await bench_first_request.invoked_code_actions(session, uri, diag)
            fixes = [a for a in actions or [] if a.get("kind") == "quickfix" and "Disable" not in a.get("title", "")]
            if fixes:
                resolved_in, resolved = await session.timed("codeAction/resolve", fixes[0])
                if isinstance(resolved, Exception):
                    raise SystemExit(f"{session.label}: resolve failed: {resolved}")
                return asked, resolved_in, resolved
        return None
    finally:
        assert session.conn is not None
        session.conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def run(root: Path, files: list[Path], formatted: bool) -> None:
    serve = [str(BIN / "fixlore"), "serve", "--upstream", "python=" + " ".join(RUFF)]
    paths = [
        Session("ruff", RUFF),
        Session("fixlore, off", serve, init_options={"fixlore": {"formatFixes": False}}),
        Session("fixlore, on", serve, init_options={"fixlore": {"formatFixes": True}}),
    ]
    for session in paths:
        await session.start(root)
    asked: dict[str, list[float]] = {s.label: [] for s in paths}
    resolved: dict[str, list[float]] = {s.label: [] for s in paths}
    edits: dict[str, list[Any]] = {s.label: [] for s in paths}
    for i, path in enumerate(files):
        text = path.read_text(encoding="utf-8", errors="replace")
        if formatted:
            done = subprocess.run([str(BIN / "ruff"), "format", "-"], input=text, capture_output=True, text=True)
            text = done.stdout if done.returncode == 0 else text
        answers = {}
        for k in range(len(paths)):
            session = paths[(i + k) % len(paths)]
            answers[session.label] = await one_file(session, (root / f"{i:04d}-{k}-{path.name}").as_uri(), text)
        if all(answers.values()):  # the same file on every path: comparable
            for label, (took, resolve_took, action) in answers.items():
                asked[label].append(took)
                resolved[label].append(resolve_took)
                # the text edits alone: each path's document has a name of its own
                edits[label].append(text_edits(action.get("edit") or {}))
        await asyncio.sleep(0.02)
    changed = sum(1 for off, on in zip(edits["fixlore, off"], edits["fixlore, on"], strict=True) if off != on)
    layout = "formatted whole first" if formatted else "as they are"
    print(f"\n{len(asked['ruff'])} files with a fix ({layout}); the formatter changed {changed} of the resolved fixes")
    print(f"{'path':<16}{'request':<14}{'p50':>8}{'p90':>8}{'p99':>8}{'added p50':>11}{'p90':>8}{'p99':>8}  (ms)")
    for request, times, base in (("code action", asked, "ruff"), ("resolve", resolved, "fixlore, off")):
        b = times[base]
        for session in paths:
            got = times[session.label]
            print(
                f"{session.label:<16}{request:<14}{pct(got, 0.5):>8.2f}{pct(got, 0.9):>8.2f}{pct(got, 0.99):>8.2f}"
                f"{pct(got, 0.5) - pct(b, 0.5):>+11.2f}{pct(got, 0.9) - pct(b, 0.9):>+8.2f}"
                f"{pct(got, 0.99) - pct(b, 0.99):>+8.2f}"
            )
    for session in paths:
        await session.stop()


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="fixlore-formatted-") as tmp:
        root = Path(tmp)
        (root / "ruff.toml").write_text('[lint]\nselect = ["E", "F", "W", "B", "UP", "SIM", "RET"]\n')
        os.environ["FIXLORE_HOME"] = str(root / "home")
        files = bench_first_request.sample_files(n)
        print(f"{len(files)} standard-library files; ruff, fixlore with formatFixes off and on, in turn per file")
        await run(root, files, formatted=False)
        await run(root, files, formatted=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=120, help="how many files (default 120)")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.files)))
