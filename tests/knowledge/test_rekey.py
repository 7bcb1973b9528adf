"""Migration 4: patterns stored with ruff 0.17's ``help:`` lines move to their first line's fingerprint.

A store of schema version 3 (the ``old_stores/v3.sql`` dump) gets patterns
whose message the old templating kept whole; opening it with today's code
re-keys them, keeps their evidence, and merges one with the same fix
stored under its first line already.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from fixlore.abstraction import (
    ActionTemplate,
    Anchor,
    EditShape,
    Extracted,
    FixCategory,
    Pattern,
    Signature,
    extract_pattern,
)
from fixlore.knowledge import Knowledge
from fixlore.knowledge._rekey import first_line_pattern

from ..abstraction._helpers import code, diag_at
from .test_migrations import COUNTS, query, restore

E711 = "Comparison to `None` should be `$1 is None`"
HELP = "\n\nhelp: Replace with `$1 is None`"


def action(message: str) -> Pattern:
    """Ruff's "Disable for this line" under ``message``."""
    return Pattern(
        Signature("python", "Ruff", "E711", message),
        FixCategory.ADD_SUPPRESSION,
        action=ActionTemplate("quickfix", "$2 ($3): Disable for this line"),
    )


def insert(path: Path, pattern: Pattern, counts: tuple[int, ...], ws: str, week: int) -> None:
    """A pattern row as migrations 1-3 stored it, with one workspace, one trend week and one event."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            f"INSERT INTO patterns (fingerprint, language, source, code, category, has_shape, context, body,"
            f" {COUNTS}, first_seen, last_seen, workspaces, rev) VALUES (?, ?, ?, ?, ?, ?, '', ?,"
            " ?, ?, ?, ?, ?, ?, ?, 1700000000.0, 1700000100.0, 1, 1)",
            (
                pattern.fingerprint,
                *pattern.signature.rule_key,
                pattern.category.value,
                int(pattern.shape is not None),
                pattern.to_json(),
                *counts,
            ),
        )
        conn.execute("INSERT INTO pattern_workspaces VALUES (?, ?)", (pattern.fingerprint, ws))
        conn.execute(
            f"INSERT INTO trend (fingerprint, week, {COUNTS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (pattern.fingerprint, week, *counts),
        )
        conn.execute(
            "INSERT INTO events (at, kind, fingerprint, workspace) VALUES (1700000000.0, 'accepted', ?, ?)",
            (pattern.fingerprint, ws),
        )
    conn.close()


def test_cutting_the_help_renumbers_placeholders_left_with_gaps() -> None:
    old = Pattern(
        Signature("python", "Ruff", "F999", "`$1` is bad\n\nhelp: use `$2`"),
        FixCategory.REWRITE,
        shape=EditShape(Anchor.AT_DIAGNOSTIC, "Call", "$3($1)", "$1"),
    )
    new = first_line_pattern(old)
    assert (new.signature.message, new.shape) == (
        "`$1` is bad",
        EditShape(Anchor.AT_DIAGNOSTIC, "Call", "$2($1)", "$1"),
    )


def test_a_learned_fix_stored_with_help_is_the_fix_learned_now(tmp_path: Path) -> None:
    before = code("""
        def f(value):
            return value == None
        """)
    message = "Comparison to `None` should be `cond is None`\n\nhelp: Replace with `cond is None`"
    now = extract_pattern(
        "python", before, before.replace("== None", "is None"), diag_at(before, "None", "Ruff", "E711", message)
    )
    assert isinstance(now, Extracted)
    # What the templating of the whole message stored before (the help line names `cond` again: $1).
    sig = now.pattern.signature
    old = replace(now.pattern, signature=replace(sig, message=sig.message + HELP))
    path = restore(3, tmp_path)
    insert(path, old, (0, 3, 0, 2, 0, 1, 0), "w9", 2800)

    with Knowledge.open(tmp_path, base=False, auto_prune=False, eager_max=0) as k:
        evidence = k.evidence(old.signature.rule_key)
        assert old.fingerprint not in evidence
        counts = evidence[now.pattern.fingerprint].counts
        assert (counts.accepted, counts.succeeded, counts.manual) == (3, 2, 1)
    fp = now.pattern.fingerprint
    assert query(path, f"SELECT week, accepted FROM trend WHERE fingerprint = '{fp}'") == [(2800, 3)]
    assert query(path, f"SELECT workspace FROM pattern_workspaces WHERE fingerprint = '{fp}'") == [("w9",)]
    assert query(path, f"SELECT count(*) FROM events WHERE fingerprint = '{fp}'") == [(1,)]
    assert query(path, f"SELECT count(*) FROM forgotten WHERE fingerprint = '{old.fingerprint}'") == [(1,)]
    assert query(path, "SELECT count(*) FROM patterns WHERE instr(body, '\\n') > 0") == [(0,)]


def test_an_action_stored_with_and_without_help_becomes_one_with_both_counts(tmp_path: Path) -> None:
    path = restore(3, tmp_path)
    with_help, without = action(E711 + HELP), action(E711)
    insert(path, without, (4, 1, 3, 1, 0, 0, 0), "w1", 2800)
    insert(path, with_help, (2, 0, 2, 0, 0, 0, 0), "w2", 2800)

    with Knowledge.open(tmp_path, base=False, auto_prune=False, eager_max=0) as k:
        evidence = k.evidence(without.signature.rule_key)
        assert with_help.fingerprint not in evidence
        counts = evidence[without.fingerprint].counts
        assert (counts.offered, counts.accepted, counts.rejected) == (6, 1, 5)
    fp = without.fingerprint
    assert query(path, f"SELECT workspaces FROM patterns WHERE fingerprint = '{fp}'") == [(2,)]
    assert query(path, f"SELECT week, offered, rejected FROM trend WHERE fingerprint = '{fp}'") == [(2800, 6, 5)]
    assert query(path, f"SELECT count(*) FROM events WHERE fingerprint = '{fp}'") == [(2,)]
    assert query(path, "SELECT count(*) FROM patterns") == [(3,)]  # the two of v3.sql, and this one
