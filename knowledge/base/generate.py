"""Regenerate ``patterns.json``, the base knowledge, from real ruff messages.

Run ``python -m fixlore.knowledge.base.generate`` after the abstraction's
templating changes or a ruff upgrade: the patterns are built with
``abstract_rule_action`` exactly as the server builds them for the actions of
``ruff server``, so their fingerprints match at run time. Each rule gets its
fix (mostly accepted, mostly verified) and ruff's "Disable for this line"
(mostly rejected), with modest counts: anything the user does outranks them.
Patterns the privacy verifier refuses are left out.

``tests/knowledge/test_base_fresh.py`` runs the pinned ruff and fails when a
row here no longer matches what it reports: update the row, then run this.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fixlore.abstraction import DiagnosticInfo, Position, TextRange, abstract_rule_action

from .._exchange import Record, dump_document
from .._model import Counts
from .._verify import check_privacy

SHIPPED_AT = 1767225600.0  # 2026-01-01; base knowledge does not age
HERE = Path(__file__).parent
SOURCE = "Ruff"
RUFF_VERSION = "0.17.6"
"""The ruff the table below was taken from (the project's pinned one)."""
NOQA_TITLE = "Disable for this line"

# (code, first line of the message, fix title) as ruff reports them, with a
# made-up name where the message names user code. ``ruff server`` appends
# "\n\nhelp: <fix title>" to the message (only the first line counts) and
# offers the fix as "Ruff (<code>): <fix title>".
RUFF = (
    ("F401", "`zz_module` imported but unused", "Remove unused import: `zz_module`"),
    ("F541", "f-string without any placeholders", "Remove extraneous `f` prefix"),
    ("E711", "Comparison to `None` should be `cond is None`", "Replace with `cond is None`"),
    ("E712", "Avoid equality comparisons to `True`; use `zz_flag:` for truth checks", "Replace with `zz_flag`"),
    ("E713", "Test for membership should be `not in`", "Convert to `not in`"),
    ("E714", "Test for object identity should be `is not`", "Convert to `is not`"),
    (
        "F811",
        "Redefinition of unused `zz_name` from line 1: `zz_name` redefined here",
        "Remove definition: `zz_name`",
    ),
    (
        "F841",
        "Local variable `zz_local` is assigned to but never used",
        "Remove assignment to unused variable `zz_local`",
    ),
    (
        "B006",
        "Do not use mutable data structures for argument defaults",
        "Replace with `None`; initialize within function",
    ),
    ("UP034", "Avoid extraneous parentheses", "Remove extraneous parentheses"),
    ("W291", "Trailing whitespace", "Remove trailing whitespace"),
    ("W293", "Blank line contains whitespace", "Remove whitespace from blank line"),
    ("I001", "Import block is un-sorted or un-formatted", "Organize imports"),
)
FIX_COUNTS = Counts(offered=5, accepted=4, rejected=1, succeeded=4)
NOQA_COUNTS = Counts(offered=5, accepted=1, rejected=4, succeeded=1)


def lsp_title(code: str, title: str) -> str:
    """A fix's title as ``ruff server`` offers it: ``Ruff (F401): Remove unused import: `x```."""
    return f"{SOURCE} ({code}): {title}"


def records() -> tuple[list[Record], list[str]]:
    """The base records, and the rules left out (refused by the privacy verifier)."""
    zero = Position(0, 0)
    out: list[Record] = []
    skipped: list[str] = []
    for code, message, title in RUFF:
        diag = DiagnosticInfo(SOURCE, code, f"{message}\n\nhelp: {title}", TextRange(zero, zero))
        pair = (
            (abstract_rule_action("python", diag, lsp_title(code, title), "quickfix"), FIX_COUNTS),
            (abstract_rule_action("python", diag, lsp_title(code, NOQA_TITLE), "quickfix"), NOQA_COUNTS),
        )
        if not all(check_privacy(p)[0] for p, _ in pair):
            skipped.append(code)
            continue
        out.extend(Record(p, c, SHIPPED_AT, SHIPPED_AT, 1) for p, c in pair)
    return out, skipped


def main() -> int:
    """Write ``patterns.json`` next to this file."""
    recs, skipped = records()
    (HERE / "patterns.json").write_text(dump_document(recs, exported_at=SHIPPED_AT), encoding="utf-8")
    print(f"{len(recs)} base patterns written; left out: {', '.join(skipped) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
