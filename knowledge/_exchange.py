"""The exchange format: versioned JSON for export, import, workspace scope and base knowledge.

Import files are untrusted input. :func:`parse_document` checks size, JSON
syntax, the schema (the same rules as ``docs/knowledge-schema.json``, checked
here by hand so the runtime needs no schema library), value ranges, that each
fingerprint matches its pattern, and that every pattern passes the privacy
verifier. Any problem raises :class:`InvalidImport` naming the place
(``patterns[3].counts.accepted``) and what was wrong, never the offending text.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fixlore.abstraction._pattern import (
    PATTERN_FORMAT_VERSION,
    Anchor,
    FixCategory,
    Pattern,
)

from ._model import COUNT_KINDS, Counts, InvalidImport

FORMAT = "fixlore-knowledge"
FORMAT_VERSION = 1
MAX_BYTES = 64 * 1024 * 1024
MAX_PATTERNS = 200_000
MAX_COUNT = 1_000_000_000
MAX_TEXT = 4000
MAX_ITEMS = 64
EARLIEST = 946_684_800.0  # 2000-01-01: no fixlore evidence predates this

Verifier = Callable[[Pattern], "tuple[bool, str]"]


@dataclass(frozen=True, slots=True)
class Record:
    """One pattern with its evidence, as carried by an exchange file."""

    pattern: Pattern
    counts: Counts
    first_seen: float
    last_seen: float
    workspaces: int

    @property
    def fingerprint(self) -> str:
        """The pattern's fingerprint."""
        return str(self.pattern.fingerprint)


def dump_document(records: Iterable[Record], *, exported_at: float | None = None) -> str:
    """Serialise records, sorted by fingerprint, one pattern per few lines (diff-friendly)."""
    items = sorted(
        (
            {
                "fingerprint": r.fingerprint,
                "pattern": r.pattern.to_dict(),
                "counts": dict(zip((k.value for k in COUNT_KINDS), r.counts.as_tuple(), strict=True)),
                "first_seen": r.first_seen,
                "last_seen": r.last_seen,
                "workspaces": r.workspaces,
            }
            for r in records
        ),
        key=lambda d: str(d["fingerprint"]),
    )
    doc = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": time.time() if exported_at is None else exported_at,
        "patterns": items,
    }
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def parse_document(
    data: bytes,
    verifier: Verifier,
    *,
    max_bytes: int = MAX_BYTES,
    max_patterns: int = MAX_PATTERNS,
    now: float | None = None,
) -> list[Record]:
    """Validate an exchange file completely; raise :class:`InvalidImport` on the first problem."""
    if len(data) > max_bytes:
        raise InvalidImport(f"file too large: {len(data)} bytes, the limit is {max_bytes}")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidImport(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidImport(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    _obj(doc, "(document)", required={"format", "version", "patterns"}, optional={"exported_at"})
    if doc["format"] != FORMAT:
        raise InvalidImport(f"format: expected {FORMAT!r}, this is not a fixlore knowledge file")
    version = doc["version"]
    if type(version) is not int or version != FORMAT_VERSION:
        raise InvalidImport(
            f"version: this fixlore reads format version {FORMAT_VERSION}, the file has {_show(version)}"
        )
    if "exported_at" in doc:
        _number(doc["exported_at"], "exported_at")
    items = doc["patterns"]
    if not isinstance(items, list):
        raise InvalidImport("patterns: expected a list")
    if len(items) > max_patterns:
        raise InvalidImport(f"patterns: {len(items)} entries, the limit is {max_patterns}")
    latest = (time.time() if now is None else now) + 86400.0
    records: list[Record] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"patterns[{i}]"
        record = _record(item, where, latest)
        ok, field = verifier(record.pattern)
        if not ok:
            raise InvalidImport(
                f"{where}.pattern: refused by the privacy verifier (field {field}):"
                " it may carry an identifier, a string or code"
            )
        if item["fingerprint"] in seen:
            raise InvalidImport(f"{where}.fingerprint: duplicate of an earlier entry")
        seen.add(item["fingerprint"])
        records.append(record)
    return records


def _record(item: Any, where: str, latest: float) -> Record:
    _obj(
        item,
        where,
        required={"fingerprint", "pattern", "counts", "first_seen", "last_seen", "workspaces"},
    )
    pattern = _pattern(item["pattern"], f"{where}.pattern")
    fp = item["fingerprint"]
    if not isinstance(fp, str) or fp != pattern.fingerprint:
        raise InvalidImport(f"{where}.fingerprint: does not match the pattern it carries")
    counts = item["counts"]
    names = {k.value for k in COUNT_KINDS}
    _obj(counts, f"{where}.counts", required=names)
    values = [_count(counts[k.value], f"{where}.counts.{k.value}") for k in COUNT_KINDS]
    first = _time(item["first_seen"], f"{where}.first_seen", latest)
    last = _time(item["last_seen"], f"{where}.last_seen", latest)
    if first > last:
        raise InvalidImport(f"{where}.first_seen: later than last_seen")
    workspaces = _count(item["workspaces"], f"{where}.workspaces")
    return Record(pattern, Counts(*values), first, last, workspaces)


def _pattern(d: Any, where: str) -> Pattern:
    _obj(
        d,
        where,
        required={"v", "signature", "category", "shape", "action", "holes"},
        optional={"context", "instances", "extra"},
    )
    if type(d["v"]) is not int or d["v"] != PATTERN_FORMAT_VERSION:
        raise InvalidImport(f"{where}.v: pattern format {_show(d['v'])} is not {PATTERN_FORMAT_VERSION}")
    sig = d["signature"]
    _obj(sig, f"{where}.signature", required={"language", "source", "code", "message"})
    for k in ("language", "source", "code", "message"):
        _text(sig[k], f"{where}.signature.{k}")
    if not sig["language"]:
        raise InvalidImport(f"{where}.signature.language: empty")
    _enum(d["category"], FixCategory, f"{where}.category")
    if d["shape"] is not None:
        shape = d["shape"]
        _obj(shape, f"{where}.shape", required={"anchor", "unit", "before", "after"})
        _enum(shape["anchor"], Anchor, f"{where}.shape.anchor")
        for k in ("unit", "before", "after"):
            _text(shape[k], f"{where}.shape.{k}")
    if d["action"] is not None:
        _obj(d["action"], f"{where}.action", required={"kind", "title"})
        for k in ("kind", "title"):
            _text(d["action"][k], f"{where}.action.{k}")
    if d["shape"] is None and d["action"] is None:
        raise InvalidImport(f"{where}: needs a shape or an action")
    _pairs(d["holes"], f"{where}.holes")
    _pairs(d.get("extra", []), f"{where}.extra")
    ctx = d.get("context", [])
    if not isinstance(ctx, list) or len(ctx) > MAX_ITEMS:
        raise InvalidImport(f"{where}.context: expected a list of at most {MAX_ITEMS} strings")
    for j, c in enumerate(ctx):
        _text(c, f"{where}.context[{j}]")
    inst = d.get("instances", 1)
    if type(inst) is not int or not 1 <= inst <= MAX_COUNT:
        raise InvalidImport(f"{where}.instances: expected an integer from 1 to {MAX_COUNT}")
    return Pattern.from_dict(d)


def _obj(d: Any, where: str, *, required: set[str], optional: frozenset[str] | set[str] = frozenset()) -> None:
    if not isinstance(d, dict):
        raise InvalidImport(f"{where}: expected an object")
    missing = sorted(required - d.keys())
    if missing:
        raise InvalidImport(f"{where}: missing field {missing[0]!r}")
    unknown = sorted(d.keys() - required - optional)
    if unknown:
        raise InvalidImport(f"{where}: unknown field (not allowed by the schema)")


def _text(v: Any, where: str) -> None:
    if not isinstance(v, str):
        raise InvalidImport(f"{where}: expected a string")
    if len(v) > MAX_TEXT:
        raise InvalidImport(f"{where}: {len(v)} characters, the limit is {MAX_TEXT}")


def _pairs(v: Any, where: str) -> None:
    if not isinstance(v, list) or len(v) > MAX_ITEMS:
        raise InvalidImport(f"{where}: expected a list of at most {MAX_ITEMS} pairs")
    for j, p in enumerate(v):
        if not isinstance(p, list) or len(p) != 2:
            raise InvalidImport(f"{where}[{j}]: expected a pair of strings")
        _text(p[0], f"{where}[{j}][0]")
        _text(p[1], f"{where}[{j}][1]")


def _enum(v: Any, enum: type[FixCategory] | type[Anchor], where: str) -> None:
    if not isinstance(v, str) or v not in {e.value for e in enum}:
        raise InvalidImport(f"{where}: not one of the known values")


def _count(v: Any, where: str) -> int:
    if type(v) is not int:
        raise InvalidImport(f"{where}: expected an integer, got {_show(v)}")
    if v < 0:
        raise InvalidImport(f"{where}: negative count")
    if v > MAX_COUNT:
        raise InvalidImport(f"{where}: absurd count (more than {MAX_COUNT})")
    return v


def _number(v: Any, where: str) -> float:
    if type(v) not in (int, float) or not math.isfinite(v):
        raise InvalidImport(f"{where}: expected a finite number")
    return float(v)


def _time(v: Any, where: str, latest: float) -> float:
    t = _number(v, where)
    if not EARLIEST <= t <= latest:
        raise InvalidImport(f"{where}: not a plausible unix time")
    return t


def _show(v: Any) -> str:
    """A short, code-free description of a value for error messages."""
    if type(v) in (int, float, bool) or v is None:
        return repr(v)
    return f"a {type(v).__name__}"
