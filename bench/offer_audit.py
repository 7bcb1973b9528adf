"""Every learned fix offered on real fixes, checked statement by statement: which to read by hand.

The replay's "wrong" measure counts an offered fix that changes a name or a
literal the human kept; a fix can change none and still be wrong (``dict()`` ->
``()``, an ``r`` put inside a string's text, a default made ``None`` that the
body then unpacks). This reads the offers ``humanfix_offline.py --dump-offers``
wrote and sorts each into:

- ``exact``: the human's fix;
- ``same as the human's``: the same module, or the same statement at the
  diagnostic's line, parsed (``ast``: layout, quotes and parentheses aside);
- ``same as ruff's``: the statement at the diagnostic's line equals what
  ``ruff check --fix --unsafe-fixes`` makes of it (ruff fixes every instance in
  the file, so only that statement is compared);
- ``to read``: none of these (the human rewrote more, or the fix is wrong),
  printed per rule with both diffs: ``--show RULE`` lists them.

Usage: ``python bench/humanfix_offline.py --dump-offers offers.jsonl`` (any
``--events``), then ``python bench/offer_audit.py offers.jsonl [--show RULE]``.
Not a test: it reads what a run offered and says what needs a human's eyes.
"""

from __future__ import annotations

import argparse
import ast
import collections
import difflib
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _parse(text: str) -> ast.Module | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError):
            return None


def _statement_at(module: ast.Module | None, line: int) -> str | None:
    """The innermost statement holding ``line``, dumped (positions aside)."""
    if module is None:
        return None
    best: ast.stmt | None = None
    for node in ast.walk(module):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno or 0) - node.lineno < (best.end_lineno or 0) - best.lineno:
                best = node
    return None if best is None else ast.dump(best)


def _ruff_fixed(ruff: str, offer: dict[str, Any]) -> str | None:
    proc = subprocess.run(
        [
            ruff,
            "check",
            "--no-cache",
            "--isolated",
            "--fix",
            "--unsafe-fixes",
            "--select",
            offer["rule"],
            "--stdin-filename",
            os.path.basename(offer["path"]),
            "-",
        ],
        input=offer["before"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.stdout if proc.stdout and proc.stdout != offer["before"] else None


def classify(offer: dict[str, Any], ruff: str) -> str:
    """One of ``exact``, ``does not parse``, ``same as the human's``, ``same as ruff's``, ``to read``."""
    if _norm(offer["offered"]) == _norm(offer["after"]):
        return "exact"
    offered, human = _parse(offer["offered"]), _parse(offer["after"])
    if offered is None:
        return "does not parse"
    if human is not None and ast.dump(offered) == ast.dump(human):
        return "same as the human's"
    line = offer["range"]["start"]["row"]
    mine = _statement_at(offered, line)
    if human is not None and mine == _statement_at(human, line):
        return "same as the human's"
    fixed = _ruff_fixed(ruff, offer)
    if fixed is not None and mine == _statement_at(_parse(fixed), line):
        return "same as ruff's"
    return "to read"


def _diff(label: str, before: str, after: str) -> str:
    body = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if not line.startswith(("---", "+++"))
    ]
    return f"  {label}:\n" + "".join(f"    {line}\n" for line in body[:10])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("offers", type=Path, nargs="+", help="files humanfix_offline.py --dump-offers wrote")
    parser.add_argument("--show", default="", help="print the offers to read of these rules (comma-separated)")
    parser.add_argument("--ruff", default=shutil.which("ruff") or str(Path(sys.executable).with_name("ruff")))
    args = parser.parse_args()
    show = set(filter(None, args.show.split(",")))
    verdicts: collections.Counter[str] = collections.Counter()
    to_read: collections.Counter[str] = collections.Counter()
    for path in args.offers:
        for line in path.read_text(encoding="utf-8").splitlines():
            offer = json.loads(line)
            verdict = classify(offer, args.ruff)
            verdicts[verdict] += 1
            if verdict in ("to read", "does not parse"):
                to_read[offer["rule"]] += 1
                if offer["rule"] in show:
                    print(f"=== {offer['repo']} {offer['rule']} {offer['path']} {offer['title']!r}")
                    print(
                        _diff("offer", offer["before"], offer["offered"])
                        + _diff("human", offer["before"], offer["after"])
                    )
    total = sum(verdicts.values())
    print(f"{total} offers: " + ", ".join(f"{name} {n}" for name, n in verdicts.most_common()))
    print("to read, by rule: " + ", ".join(f"{rule} {n}" for rule, n in to_read.most_common()))


if __name__ == "__main__":
    main()
