"""A generated knowledge store of any size for the dashboard's tests and benchmark.

Rows go straight into a store that :class:`Store` created (so it has every
migration), the way ``bench/bench_knowledge.py`` builds its stores: patterns
over a few languages and rule keys, a third of them learned fixes, a weekly
trend, and an event log of code-action lists (offered, then one accepted and
its siblings rejected) with verifications, so every chart has data.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from fixlore.abstraction import canonical_json, fingerprint_of
from fixlore.knowledge._delta import WEEK
from fixlore.knowledge._store import COUNT_COLUMNS, Store

LANGUAGES = (("python", "Ruff"), ("javascript", "biome"), ("typescript", "eslint"), ("go", "staticcheck"))
RULES_PER_LANGUAGE = 150
MESSAGES = ("Undefined name `$1`", "`$1` imported but unused", "Comparison to `None` should be `$1 is None`")
TITLES = ("Replace with `$1`", "Remove unused import: `$1`", "Disable for this line")
SHAPES = (("$1 == None", "$1 is None"), ("import $1, $2", "import $2"), ("if $1 : $2", "if not $1 : $2"))


def rule_key(i: int) -> tuple[str, str, str]:
    lang, source = LANGUAGES[i % len(LANGUAGES)]
    return (lang, source, f"R{i % RULES_PER_LANGUAGE:03d}")


def pattern(i: int, key: tuple[str, str, str], fix: bool) -> tuple[str, str]:
    """``(fingerprint, canonical JSON)`` of the i-th pattern: unique per ``i``, placeholders only."""
    digits = " ".join(f"${int(d) + 1}" for d in str(i))
    before, after = SHAPES[(i // 3) % len(SHAPES)]
    d: dict[str, Any] = {
        "v": 1,
        "signature": {"language": key[0], "source": key[1], "code": key[2], "message": MESSAGES[i % 3]},
        "category": "rewrite" if fix else "replace_token",
        "shape": {"anchor": "at_diagnostic", "unit": "Comparison", "before": f"{before} {digits}", "after": after}
        if fix
        else None,
        "action": None if fix else {"kind": f"quickfix.v{i}", "title": TITLES[i % 3]},
        "holes": [],
        "context": ["Module", "FunctionDef"],
        "instances": 1,
        "extra": [],
    }
    identity = {k: v for k, v in d.items() if k not in ("context", "instances", "extra")}
    return fingerprint_of(identity), canonical_json(d)


def populate(home: Path, n: int, *, weeks: int = 26, seed: int = 7, start: int = 0) -> dict[str, int]:
    """Add ``n`` patterns (the ``start``-th on) and about ``n`` events to ``home``'s store; the numbers written."""
    store = Store(home / "knowledge.sqlite3")
    c = store.conn
    rnd = random.Random(seed)
    now = time.time()
    cols = ", ".join(COUNT_COLUMNS)
    fps: list[str] = []
    rules: list[tuple[str, str, str]] = []
    fixes: list[bool] = []
    rows: list[tuple[Any, ...]] = []
    trend: list[tuple[Any, ...]] = []
    archived = 0
    c.execute("BEGIN")
    for i in range(start, start + n):
        key = rule_key(i % (RULES_PER_LANGUAGE * len(LANGUAGES)))
        fix = i % 3 == 0
        fp, body = pattern(i, key, fix)
        failing = fix and i % 50 == 3
        counts = [
            rnd.randint(1, 20),
            rnd.randint(0, 8),
            rnd.randint(0, 8),
            0 if failing else rnd.randint(0, 6),
            rnd.randint(3, 6) if failing else rnd.randint(0, 1),
            rnd.randint(0, 3) if fix else 0,
            rnd.randint(0, 1),
        ]
        last = now - rnd.uniform(0, weeks * 7) * 86400
        first = last - rnd.uniform(0, 60) * 86400
        gone = i % 97 == 5
        archived += gone
        rows.append(
            (
                fp,
                *key,
                "rewrite" if fix else "replace_token",
                int(fix),
                "Module/FunctionDef",
                body,
                *counts,
                first,
                last,
                rnd.randint(1, 4),
                now if gone else None,
                "unused for 99 days" if gone else None,
            )
        )
        week = int(last // WEEK)
        trend.append((fp, week, *counts))
        fps.append(fp)
        rules.append(key)
        fixes.append(fix)
        if len(rows) == 20_000:
            _insert(c, cols, rows, trend)
            rows, trend = [], []
    _insert(c, cols, rows, trend)
    events = _events(rnd, fps, rules, now, weeks, n)
    c.executemany("INSERT INTO events (at, kind, fingerprint, workspace) VALUES (?, ?, ?, ?)", events)
    c.execute("COMMIT")
    store.close()
    decided_weeks = len({int(at // WEEK) for at, kind, _, _ in events if kind == "accepted"})
    return {"patterns": n, "archived": archived, "events": len(events), "decided_weeks": decided_weeks}


def _events(
    rnd: random.Random, fps: list[str], rules: list[tuple[str, str, str]], now: float, weeks: int, n: int
) -> list[tuple[float, str, str, str]]:
    """Code-action lists in time order: siblings share a rule key; the choice is often the habit."""
    by_rule: dict[tuple[str, str, str], list[int]] = {}
    for i, key in enumerate(rules):
        by_rule.setdefault(key, []).append(i)
    keys = list(by_rule)
    out: list[tuple[float, str, str, str]] = []
    t = now - weeks * WEEK
    step = weeks * WEEK / max(1, n // 5)
    while len(out) < n and keys:
        t += step
        members = by_rule[keys[rnd.randrange(len(keys))]]
        group = members[:3] if len(members) >= 2 else members
        ws = f"ws{rnd.randrange(3)}"
        for j in group:
            out.append((t, "offered", fps[j], ws))
        # Later weeks: the habit (the group's first member) is chosen more often.
        habit = rnd.random() < 0.4 + 0.5 * (t - (now - weeks * WEEK)) / (weeks * WEEK)
        chosen = group[0] if habit else group[rnd.randrange(len(group))]
        out.append((t + 1, "accepted", fps[chosen], ws))
        out.extend((t + 1.01, "rejected", fps[j], ws) for j in group if j != chosen)
        out.append((t + 3, "succeeded" if rnd.random() < 0.8 else "failed", fps[chosen], ws))
    return out


def _insert(c: Any, cols: str, rows: list[tuple[Any, ...]], trend: list[tuple[Any, ...]]) -> None:
    c.executemany(
        f"INSERT INTO patterns (fingerprint, language, source, code, category, has_shape, context, body, {cols},"
        f" first_seen, last_seen, workspaces, archived_at, archive_reason) VALUES ({', '.join('?' * 20)})",
        rows,
    )
    c.executemany(f"INSERT INTO trend (fingerprint, week, {cols}) VALUES ({', '.join('?' * 9)})", trend)
