"""Migration 4: stored patterns keyed by a message's first line only.

Before it, a message was templated whole, so patterns learned under ruff 0.17
(which appends a blank line and ``help: <fix title>`` to every message) carry that hint
in their signature, and their fingerprints no longer equal what the
abstraction computes now. This step rewrites each such pattern to its first
line (signature message and action title), renumbers the user-name
placeholders the cut left with gaps, and moves its row, workspaces, trend and
events to the new fingerprint; where that fingerprint already has a row (the
same fix learned before the upgrade), the two are merged, counts added. The
old fingerprint goes to ``forgotten`` at the new revision, so a running
process drops it from its index. Nothing is deleted that holds evidence.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace

from fixlore.abstraction import ActionTemplate, EditShape, Pattern, first_line

from ._schema import COLS, COUNT_COLUMNS

_NUMBERED = re.compile(r"\$(\d+)(?!\w)")


def first_line_pattern(pattern: Pattern) -> Pattern:
    """``pattern`` with its message and title cut to their first line, placeholders renumbered without gaps.

    The placeholders that remain keep their order (``$1``, ``$3`` -> ``$1``,
    ``$2``), which is the order the templating numbers them in now.
    """
    sig = pattern.signature
    action = pattern.action
    cut = replace(
        pattern,
        signature=replace(sig, message=first_line(sig.message)),
        action=None if action is None else ActionTemplate(action.kind, first_line(action.title)),
    )
    texts = [cut.signature.message]
    if cut.action is not None:
        texts.append(cut.action.title)
    if cut.shape is not None:
        texts += [cut.shape.before, cut.shape.after]
    used = sorted({int(n) for t in texts for n in _NUMBERED.findall(t)})
    mapping = {old: new for new, old in enumerate(used, 1)}
    if all(old == new for old, new in mapping.items()):
        return cut

    def renumber(text: str) -> str:
        return _NUMBERED.sub(lambda m: f"${mapping[int(m.group(1))]}", text)

    shape = cut.shape
    return replace(
        cut,
        signature=replace(cut.signature, message=renumber(cut.signature.message)),
        action=None if cut.action is None else ActionTemplate(cut.action.kind, renumber(cut.action.title)),
        shape=None
        if shape is None
        else EditShape(shape.anchor, shape.unit, renumber(shape.before), renumber(shape.after)),
    )


def rekey_first_lines(c: sqlite3.Connection) -> None:
    """Re-key every stored pattern whose message or title has more than one line (see the module)."""
    # A newline in a text field is the two characters ``\n`` in the canonical JSON body.
    rows = c.execute("SELECT fingerprint, body FROM patterns WHERE instr(body, ?) > 0", ("\\n",)).fetchall()
    moves: list[tuple[str, Pattern]] = []
    for fp, body in rows:
        pattern = Pattern.from_json(body)
        cut = first_line_pattern(pattern)
        if cut != pattern:
            moves.append((str(fp), cut))
    if not moves:
        return
    c.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'rev'")
    rev = int(c.execute("SELECT value FROM meta WHERE key = 'rev'").fetchone()[0])
    for old, pattern in moves:
        new = pattern.fingerprint
        if new == old:
            continue
        if c.execute("SELECT 1 FROM patterns WHERE fingerprint = ?", (new,)).fetchone() is None:
            c.execute(
                "UPDATE patterns SET fingerprint = ?, body = ?, rev = ? WHERE fingerprint = ?",
                (new, pattern.to_json(), rev, old),
            )
            c.execute("UPDATE pattern_workspaces SET fingerprint = ? WHERE fingerprint = ?", (new, old))
            c.execute("UPDATE trend SET fingerprint = ? WHERE fingerprint = ?", (new, old))
        else:
            _merge(c, old, new, rev)
        c.execute("UPDATE events SET fingerprint = ? WHERE fingerprint = ?", (new, old))
        c.execute("INSERT OR REPLACE INTO forgotten (fingerprint, rev) VALUES (?, ?)", (old, rev))
        c.execute("DELETE FROM forgotten WHERE fingerprint = ?", (new,))


def _merge(c: sqlite3.Connection, old: str, new: str, rev: int) -> None:
    """Add the row ``old`` into the existing row ``new`` (counts, seen times, workspaces, trend), then drop it."""
    sums = ", ".join(f"{k} = {k} + (SELECT {k} FROM patterns WHERE fingerprint = :old)" for k in COUNT_COLUMNS)
    c.execute(
        f"UPDATE patterns SET {sums},"
        " first_seen = min(first_seen, (SELECT first_seen FROM patterns WHERE fingerprint = :old)),"
        " last_seen = max(last_seen, (SELECT last_seen FROM patterns WHERE fingerprint = :old)),"
        # Active if either was: the evidence of the active one is in use.
        " archive_reason = CASE WHEN (SELECT archived_at FROM patterns WHERE fingerprint = :old) IS NULL"
        " THEN NULL ELSE archive_reason END,"
        " archived_at = CASE WHEN (SELECT archived_at FROM patterns WHERE fingerprint = :old) IS NULL"
        " THEN NULL ELSE archived_at END,"
        " rev = :rev WHERE fingerprint = :new",
        {"old": old, "new": new, "rev": rev},
    )
    added = c.execute(
        "INSERT OR IGNORE INTO pattern_workspaces (fingerprint, workspace)"
        " SELECT ?, workspace FROM pattern_workspaces WHERE fingerprint = ?",
        (new, old),
    ).rowcount
    c.execute(
        "UPDATE patterns SET workspaces = max(workspaces + ?, (SELECT workspaces FROM patterns WHERE fingerprint = ?))"
        " WHERE fingerprint = ?",
        (added, old, new),
    )
    c.execute(
        f"INSERT INTO trend (fingerprint, week, {COLS}) SELECT ?, week, {COLS} FROM trend WHERE fingerprint = ?"
        " ON CONFLICT(fingerprint, week) DO UPDATE SET "
        + ", ".join(f"{k} = {k} + excluded.{k}" for k in COUNT_COLUMNS),
        (new, old),
    )
    for table in ("patterns", "pattern_workspaces", "trend"):
        c.execute(f"DELETE FROM {table} WHERE fingerprint = ?", (old,))
