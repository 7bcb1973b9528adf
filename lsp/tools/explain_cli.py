"""``fixlore explain FILE LINE[:COL]``: why the code actions of a diagnostic rank as they do, in a terminal.

Starts ``fixlore serve`` (with ``ruff server`` as the Python upstream when
installed, learning off so nothing is written), opens the file, runs the
``fixlore.explain`` command (:mod:`fixlore.lsp.actions.explain`) and prints
its answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from fixlore.lsp.actions.explain import format_explanation

_TIMEOUT = 15.0


def register(subparsers: Any) -> None:
    """Add ``fixlore explain FILE LINE[:COL]`` to the CLI."""
    from fixlore.lsp.tools.cli import examples

    parser = subparsers.add_parser(
        "explain",
        help="show why the actions of a diagnostic rank as they do",
        **examples(
            "fixlore explain app.py 12            # every diagnostic on line 12",
            "fixlore explain app.py 12:5 --json   # the one at column 5, for scripts",
        ),
    )
    parser.add_argument("file", help="the source file")
    parser.add_argument("position", metavar="LINE[:COL]", help="1-based line, optional 1-based column")
    parser.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="LANG='CMD ...'",
        help="an upstream server (default for Python: ruff server, when installed)",
    )
    parser.add_argument("--no-ruff", action="store_true", help="do not use `ruff server` as the default upstream")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(run=run)


def _parse_position(text: str) -> tuple[int, int | None]:
    line, _, col = text.partition(":")
    if not line.isdigit() or int(line) < 1 or (col and (not col.isdigit() or int(col) < 1)):
        raise ValueError(f"position must be LINE or LINE:COL (1-based), got {text!r}")
    return int(line) - 1, (int(col) - 1 if col else None)


def _check_inside(path: Path, line: int, col: int | None) -> None:
    """``ValueError`` if the 0-based ``line``/``col`` lie past the end of the file or of the line."""
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    if line >= len(lines):
        raise ValueError(f"line {line + 1} is past the end of {path} ({len(lines)} lines)")
    width = len(lines[line].rstrip("\r")) + 1  # the column after the last character is a position too
    if col is not None and col >= width:
        raise ValueError(f"column {col + 1} is past the end of line {line + 1} of {path} ({width} columns)")


def run(args: argparse.Namespace) -> int:
    """The ``fixlore explain`` command."""
    path = Path(args.file)
    if not path.is_file():
        print(f"fixlore: no such file: {path}", file=sys.stderr)
        return 1
    try:
        line, col = _parse_position(args.position)
        _check_inside(path, line, col)
    except ValueError as exc:
        print(f"fixlore: {exc}", file=sys.stderr)
        return 2
    upstreams = list(args.upstream)
    ruff = shutil.which("ruff")
    if not upstreams and not args.no_ruff and ruff:
        upstreams.append(f"python={ruff} server")
    result = asyncio.run(_explain_file(path.resolve(), line, col, upstreams))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_explanation(result, str(path)))
    return 0


async def _explain_file(path: Path, line: int, col: int | None, upstreams: list[str]) -> dict[str, Any]:
    from fixlore.lsp.tools.editor_session import EditorSession

    command = [sys.executable, "-m", "fixlore.lsp", "serve", "--no-learning"]
    for flag in upstreams:
        command += ["--upstream", flag]
    session = EditorSession(path.parent, timeout=_TIMEOUT)
    await session.start(command, cwd=str(path.parent))
    try:
        await session.initialize(init_options={})
        uri = session.open(path)
        with contextlib.suppress(TimeoutError):
            await session.published(uri)
        position: dict[str, Any] = {"line": line}
        if col is not None:
            position["character"] = col
        deadline = time.monotonic() + 3.0
        result: dict[str, Any] = {"diagnostics": []}
        # Sources report one after the other: ask until one covers the position, or give up.
        while True:
            result = await session.execute("fixlore.explain", [uri, position])
            if result.get("diagnostics") or time.monotonic() > deadline:
                break
            with contextlib.suppress(TimeoutError):  # ask again on the server's next message, or in 0.2 s
                await session.next_message(timeout=0.2)
        await session.close()
        return result
    finally:
        await session.kill()
