"""The dashboard: what the knowledge store holds, aggregated for pictures, as one HTML page.

:func:`dashboard_data` reads the store (read-only SQL on the user store, the
in-memory workspace and base scopes of a :class:`Knowledge`) and returns plain
JSON-ready data; :func:`render_html` puts that data, the page's script and the
vendored chart library (Chart.js, MIT, ``static/``) into one self-contained
HTML file that loads nothing from elsewhere.

Everything shown comes from the store: fingerprints, rule keys, message and
title templates, abstract shapes (placeholders only), counts and times. The
store's privacy verifier has already vetted every one of them; no path and no
workspace hash reaches the page.

The effect of learning (the share of code-action lists where the user's choice
was already first) is worked out by replaying the user store's event log
through the ranking (:func:`top_key`: :func:`rank_actions`' first, without its
explanations): each ``accepted`` event with the ``rejected`` events of its
siblings that follow it is one list, ranked with the evidence the
log had gathered up to that moment (upstream order from the preceding
``offered`` events breaks ties, as in the server).
"""

from __future__ import annotations

import contextlib
import gc
import html
import itertools
import operator
import re
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from fixlore.abstraction import Scope

from . import _dashagg
from ._dashagg import DECISION_WINDOW_S
from ._knowledge import Knowledge
from ._model import COUNT_KINDS, PatternStats, PruneConfig
from ._schema import connect, read_tx

__all__ = ["DECISION_WINDOW_S", "DATA_VERSION", "dashboard_data", "render_html", "render_page", "store_revision"]

DATA_VERSION = 2
"""Bumped when the shape of :func:`dashboard_data`'s output changes (2: ``counts`` per kind, ``pruning`` flat)."""
ANTI_MIN_BAD = 2
"""A learned fix is an anti-pattern once it failed (or was undone) this often, and more than it succeeded."""

_SCOPES = [s.value for s in Scope]
_UNSAFE = re.compile(r"<(?=/script|!--)", re.IGNORECASE)
_UNSAFE_BYTES = re.compile(_UNSAFE.pattern.encode(), re.IGNORECASE)

_SEP = "\x1f"
_USER_SQL = (
    # One row: each column of the user store as one JSON array, built by SQLite in one pass
    # (no Python object per row and column; orjson turns each array into a list).
    "SELECT json_group_array(substr(fingerprint, 1, 12)),"
    f" json_group_array(language || char({ord(_SEP)}) || source || char({ord(_SEP)}) || code),"
    " json_group_array(category), json_group_array(has_shape),"
    + "".join(f" json_group_array({k.value})," for k in COUNT_KINDS)
    + " json_group_array(CAST(first_seen AS INTEGER)), json_group_array(CAST(last_seen AS INTEGER)),"
    " json_group_array(workspaces), json_group_array(CASE WHEN archived_at IS NULL THEN NULL"
    " ELSE coalesce(nullif(archive_reason, ''), 'archived') END),"
    # Only a learned fix's texts are shown (an action is shown by its rule): one JSON read per learned fix.
    # (json_extract with several paths gives a JSON array's text: joined as it is, not parsed again.)
    " '[' || coalesce(group_concat(json_extract(body, '$.signature.message', '$.shape.unit',"
    " '$.shape.anchor', '$.shape.before', '$.shape.after')) FILTER (WHERE has_shape), '') || ']'"
    " FROM patterns"
)


class _Interned:
    """Each distinct string once; rows refer to it by index (-1 for none)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[object, int] = {None: -1}

    def __call__(self, value: object) -> int:
        i = self._index.get(value)
        if i is None:
            if value is None:
                return -1
            s = str(value)
            i = self._index.get(s)
            if i is None:
                i = self._index[s] = len(self.items)
                self.items.append(s)
            self._index[value] = i
        return i

    def many(self, values: Sequence[object]) -> list[int]:
        """Indexes of ``values``: each distinct value interned once, then one lookup per value in C."""
        index = self._index
        new = [v for v in dict.fromkeys(values) if v not in index]  # in order of first appearance: a stable page
        text = [v for v in new if isinstance(v, str)]
        if len(text) == len(new):  # the usual case: appended in one go, not one call per string
            start = len(self.items)
            self.items += text
            index.update(zip(text, range(start, start + len(text)), strict=True))
        else:
            for v in new:
                self(v)
        return list(map(index.__getitem__, values))


class _Builder:
    """Columnar pattern rows plus the lookup tables they refer to."""

    def __init__(self) -> None:
        self.strings = _Interned()
        self.rules: list[list[str]] = []
        self.rule_index: dict[tuple[str, str, str], int] = {}
        self.cols: dict[str, list[Any]] = {
            name: [[] for _ in COUNT_KINDS] if name == "counts" else []
            for name in (
                "id",
                "scope",
                "rule",
                "cat",
                "fix",
                "counts",
                "first",
                "last",
                "ws",
                "archived",
                "msg",
                "title",
                "unit",
                "anchor",
                "before",
                "after",
            )
        }
        self.user = range(0)
        """The user store's rows."""

    def rule(self, key: tuple[str, str, str]) -> int:
        i = self.rule_index.get(key)
        if i is None:
            i = self.rule_index[key] = len(self.rules)
            self.rules.append(list(key))
        return i

    def add(
        self,
        fp: str,
        scope: int,
        rule: int,
        category: str,
        fix: bool,
        counts: Sequence[int],
        first: float,
        last: float,
        workspaces: int,
        archived: str | None,
        texts: Sequence[object],
    ) -> int:
        c = self.cols
        row = len(c["id"])
        c["id"].append(fp[:12])
        c["scope"].append(scope)
        c["rule"].append(rule)
        c["cat"].append(self.strings(category))
        c["fix"].append(1 if fix else 0)
        for column, n in zip(c["counts"], counts, strict=True):
            column.append(int(n))
        c["first"].append(int(first))
        c["last"].append(int(last))
        c["ws"].append(int(workspaces))
        c["archived"].append(self.strings(archived))
        for name, value in zip(("msg", "title", "unit", "anchor", "before", "after"), texts, strict=True):
            c[name].append(self.strings(value))
        return row


def dashboard_data(k: Knowledge, *, now: float | None = None, prune: PruneConfig | None = None) -> dict[str, Any]:
    """Everything the dashboard shows, as JSON-ready plain data (see docs/dashboard.md)."""
    with _cycles_not_collected():
        return _collect(k, time.time() if now is None else now, prune or k.prune_config)


@contextlib.contextmanager
def _cycles_not_collected() -> Iterator[None]:
    """The cycle collector paused while a build runs.

    A build makes ~10^5 lists and strings that all live until the page is
    written; the collector walked them again and again for nothing
    (reference counting still frees what is dropped).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _collect(k: Knowledge, now: float, prune: PruneConfig) -> dict[str, Any]:
    b = _Builder()
    # Every scope but the user store's lives in memory (workspace file, team, base).
    for scope in (s for s in Scope if s is not Scope.USER and s in k._index.scopes):
        for s in k._scope_stats(scope, None):
            _add_stats(b, s)
    trend: list[int] = []
    effect: list[int] = []
    store = {"patterns": 0, "archived": 0, "events": 0, "lists": 0}
    if k.db_path.exists():
        conn = connect(k.db_path, readonly=True)
        try:
            with read_tx(conn):
                _read_user(conn, b, store)
                trend = _read_trend(conn, b)
                store["events"] = int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
                effect, store["lists"] = _effect(conn, b, k.db_path)
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):  # a store created but never migrated holds nothing yet
                raise
        finally:
            conn.close()
    cols = b.cols
    return {
        "version": DATA_VERSION,
        "generated": int(now),
        "store": store,
        "scopes": _SCOPES,
        "countKinds": [kd.value for kd in COUNT_KINDS],
        "rules": b.rules,
        "strings": b.strings.items,
        "patterns": cols,
        "trend": trend,
        "trendColumns": ["rule", "fix", "week", "accepted", "rejected", "succeeded", "failed", "manual"],
        "effect": effect,
        "effectColumns": ["rule", "week", "lists", "first"],
        "pruning": _pruning(b, prune, now),
        "pruningColumns": ["row", "reason"],
        "antiPatterns": _anti_patterns(b),
        "prune": {"minSuccess": prune.min_success, "minUses": prune.min_uses, "maxIdleDays": prune.max_idle_days},
    }


def _add_stats(b: _Builder, s: PatternStats) -> None:
    p = s.pattern
    if p is None:
        return
    shape, action = p.shape, p.action
    b.add(
        s.fingerprint,
        _SCOPES.index(s.scope.value),
        b.rule(p.signature.rule_key),
        p.category.value,
        shape is not None,
        s.counts.as_tuple(),
        s.first_seen,
        s.last_seen,
        s.workspaces,
        None,
        (
            p.signature.message,
            action.title if action else None,
            shape.unit if shape else None,
            shape.anchor.value if shape else None,
            shape.before if shape else None,
            shape.after if shape else None,
        ),
    )


def _read_user(conn: sqlite3.Connection, b: _Builder, store: dict[str, int]) -> None:
    """The user store's rows, column by column, from one query (a 100k-row store in well under a second)."""
    row = conn.execute(_USER_SQL).fetchone()
    ids, rules, cats, fixes, *counts, firsts, lasts, workspaces, archived, texts = map(orjson.loads, row)
    if not ids:
        return
    n = len(ids)
    b.user = range(len(b.cols["id"]), len(b.cols["id"]) + n)
    c = b.cols
    c["id"] += ids
    c["scope"] += [_SCOPES.index(Scope.USER.value)] * n
    rule_of = {key: b.rule(tuple(key.split(_SEP))) for key in dict.fromkeys(rules)}
    c["rule"] += map(rule_of.__getitem__, rules)
    c["cat"] += b.strings.many(cats)
    c["fix"] += fixes
    for column, values in zip(c["counts"], counts, strict=True):
        column += values
    c["first"] += firsts
    c["last"] += lasts
    c["ws"] += workspaces
    c["archived"] += b.strings.many(archived)
    c["title"] += [-1] * n
    fix_rows = list(itertools.compress(range(n), fixes))  # the texts are of these rows, in order
    columns = list(zip(*texts, strict=True)) or [()] * 5
    for name, column in zip(("msg", "unit", "anchor", "before", "after"), columns, strict=True):
        out = [-1] * n
        for i, s in zip(fix_rows, b.strings.many(column), strict=True):
            out[i] = s
        c[name] += out
    n_archived = n - archived.count(None)
    store["archived"] += n_archived
    store["patterns"] += n - n_archived


def _read_trend(conn: sqlite3.Connection, b: _Builder) -> list[int]:
    """Per rule key, kind and week: accepted, rejected, succeeded, failed, manual (flat), from ``dash_trend``."""
    out: list[int] = []
    rule_of: dict[tuple[str, str, str], int] = {}
    for row in sorted(_dashagg.read_trend(conn), key=operator.itemgetter(4, 0, 1, 2, 3)):
        key = row[:3]
        i = rule_of.get(key)
        if i is None:
            i = rule_of[key] = b.rule(key)
        out += (i, *row[3:])
    return out


def _effect(conn: sqlite3.Connection, b: _Builder, path: Path) -> tuple[list[int], int]:
    """Per rule key and week: code-action lists decided, and how many had the choice already first.

    Kept in the store as events are written (``dash_effect``); when that is
    not current (a new store, an import, a prune), the whole log is replayed
    here and kept for the next time (:func:`._dashagg.keep`).
    """
    rows = _dashagg.read_effect(conn)
    if rows is None:
        r, cursor = _dashagg.replay_all(conn)
        token = _dashagg.log_token(conn)
        conn.execute("COMMIT")  # the snapshot ends: keep() writes on its own connection
        try:
            _dashagg.keep(path, r, cursor, token)
        finally:
            conn.execute("BEGIN")
        r.close()
        rows = _dashagg.effect_rows(r.tally)
    flat: list[int] = []
    lists = 0
    for lang, source, code, week, total, first in sorted(rows, key=lambda r: (r[3], r[:3])):
        flat += [b.rule((lang, source, code)), week, total, first]
        lists += total
    return flat, lists


def _pruning(b: _Builder, cfg: PruneConfig, now: float) -> list[int]:
    """User patterns the next prune would archive, as ``Store.prune`` decides: row, reason string, row, ... (flat)."""
    cols, (lo, hi) = b.cols, (b.user.start, b.user.stop)
    counts = cols["counts"]
    uses, ms = cfg.min_uses, cfg.min_success
    idle_cut = now - cfg.max_idle_days * 86400.0
    reasons: dict[object, int] = {}  # one string per distinct reason (round() rounds as :.0f does)
    out: list[int] = []
    columns = (counts[3], counts[4], cols["last"], cols["archived"])
    rows = zip(range(lo, hi), *(column[lo:hi] for column in columns), strict=True)
    for row, ok, bad, last, gone in rows:
        if gone != -1:
            continue
        if ok + bad >= uses and ok < ms * (ok + bad):
            why = reasons.get((ok, bad))
            if why is None:
                why = reasons[(ok, bad)] = b.strings(f"success {ok}/{ok + bad} below {ms:g}")
        elif last < idle_cut:
            days = round((now - last) / 86400.0)
            why = reasons.get(days)
            if why is None:
                why = reasons[days] = b.strings(f"unused for {days} days")
        else:
            continue
        out += row, why
    return out


def _anti_patterns(b: _Builder) -> list[int]:
    """Learned fixes that keep failing: failed or undone at least twice, and more often than they worked."""
    cols = b.cols
    counts = cols["counts"]
    return [
        row
        for row, (fix, gone, ok, failed, undone) in enumerate(
            zip(cols["fix"], cols["archived"], counts[3], counts[4], counts[6], strict=True)
        )
        if fix and gone == -1 and failed + undone >= ANTI_MIN_BAD and failed + undone > ok
    ]


def store_revision(k: Knowledge) -> str:
    """A token that changes whenever the user store does (for the live refresh of ``--serve``)."""
    if not k.db_path.exists():
        return "none"
    parts: list[str] = []
    for suffix in ("", "-wal"):
        p = k.db_path.with_name(k.db_path.name + suffix)
        try:
            st = p.stat()
        except OSError:
            continue
        parts.append(f"{st.st_mtime_ns}:{st.st_size}")
    return "/".join(parts)


def _asset(name: str) -> str:
    return resources.files("fixlore.knowledge").joinpath("static", name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot end the ``<script>`` element it sits in."""
    return _UNSAFE.sub(r"\\u003c", text)


def _library() -> str:
    lines = _asset("chart.umd.min.js").splitlines()
    # The source map is not shipped; without the line no tool goes looking for it.
    return "\n".join(line for line in lines if not line.startswith("//# sourceMappingURL="))


def render_html(
    data: dict[str, Any],
    *,
    nonce: str | None = None,
    csp_source: str | None = None,
    live: str | None = None,
    extra_connect: Iterable[str] = (),
) -> str:
    """The self-contained page for ``data`` (:func:`render_page`, as text)."""
    return render_page(data, nonce=nonce, csp_source=csp_source, live=live, extra_connect=extra_connect).decode()


def render_page(
    data: dict[str, Any],
    *,
    nonce: str | None = None,
    csp_source: str | None = None,
    live: str | None = None,
    extra_connect: Iterable[str] = (),
) -> bytes:
    """The self-contained page for ``data``, UTF-8.

    Scripts and styles are inline and carry a nonce that the page's Content
    Security Policy requires, so the same page works in a VS Code webview.
    ``csp_source`` is the webview's ``cspSource`` (allowed for images only);
    ``live`` is a URL path the page polls for a changed revision (``--serve``).
    The data stays the bytes orjson made (compact, ~8x the stdlib's speed at
    100k patterns): never decoded, widened to the page's non-ASCII text and
    encoded again.
    """
    nonce = nonce or secrets.token_urlsafe(18)
    connect_src = " ".join(["'self'", *extra_connect]) if live else "'none'"
    img_src = "data:" + (f" {csp_source}" if csp_source else "")
    csp = (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        f"img-src {img_src}; connect-src {connect_src}; base-uri 'none'; form-action 'none'"
    )
    page = _asset("dashboard.html")
    replacements = {
        "{{CSP}}": html.escape(csp, quote=True),
        "{{NONCE}}": nonce,
        "{{STYLE}}": _asset("dashboard.css"),
        "{{LIVE}}": html.escape(live or "", quote=True),
    }
    for key, value in replacements.items():
        page = page.replace(key, value)
    # Last, and by position: the script texts may contain anything, including "{{".
    head, _, rest = page.partition("{{DATA}}")
    mid, _, tail = rest.partition("{{LIBRARY}}")
    mid2, _, tail2 = tail.partition("{{APP}}")
    texts = (mid, _script_safe(_library()), mid2, _script_safe(_asset("dashboard.js")), tail2)
    return b"".join((head.encode(), _UNSAFE_BYTES.sub(rb"\\u003c", orjson.dumps(data)), *(t.encode() for t in texts)))
