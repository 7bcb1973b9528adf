"""The exchange format: versioned JSON for export, import, workspace scope and base knowledge.

Import files are untrusted input. :func:`parse_document` checks size, JSON
syntax (strictly: see ``._untrusted``), the schema (the same rules as ``docs/knowledge-schema.json``, checked
here by hand so the runtime needs no schema library), value ranges, that each
fingerprint matches its pattern, and that every pattern passes the privacy
verifier. Any problem raises :class:`InvalidImport` naming the place
(``patterns[3].counts.accepted``) and what was wrong, never the offending text.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fixlore.abstraction import (
    PATTERN_FORMAT_VERSION,
    Anchor,
    FixCategory,
    Pattern,
)

from ._model import COUNT_KINDS, Counts, InvalidImport
from ._untrusted import check_unicode, loads
from ._verify import shared_fields

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


def record_line(fingerprint: str, body: str, counts: Iterable[int], first: float, last: float, ws: int) -> str:
    """One record as one line of canonical JSON; ``body`` is the pattern's canonical JSON.

    The keys are in sorted order, so the line equals ``canonical_json`` of the record.
    """
    c = ",".join(f'"{k.value}":{int(n)}' for k, n in zip(COUNT_KINDS, counts, strict=True))
    return (
        f'{{"counts":{{{c}}},"fingerprint":"{fingerprint}","first_seen":{float(first)!r},'
        f'"last_seen":{float(last)!r},"pattern":{body},"workspaces":{int(ws)}}}'
    )


def document_chunks(lines: Iterable[str], *, exported_at: float | None = None) -> Iterator[str]:
    """The exchange document around record lines (given sorted by fingerprint), in pieces.

    One record per line: a changed count is a one-line diff, and two people adding
    different patterns to a committed workspace file touch different lines.
    """
    at = time.time() if exported_at is None else exported_at
    yield f'{{"exported_at":{float(at)!r},"format":"{FORMAT}","patterns":['
    sep = "\n"
    for line in lines:
        yield sep
        yield line
        sep = ",\n"
    yield f'\n],"version":{FORMAT_VERSION}}}\n'


def dump_document(records: Iterable[Record], *, exported_at: float | None = None) -> str:
    """Serialise records, sorted by fingerprint, one record per line (diff-friendly)."""
    rows = sorted(
        (r.fingerprint, r.pattern.to_json(), r.counts.as_tuple(), r.first_seen, r.last_seen, r.workspaces)
        for r in records
    )
    return "".join(document_chunks((record_line(*row) for row in rows), exported_at=exported_at))


@dataclass(frozen=True, slots=True)
class Entry:
    """A validated record with its fingerprint and the pattern's canonical JSON (computed once)."""

    record: Record
    fingerprint: str
    body: str

    @property
    def digest(self) -> str:
        """What makes an import idempotent: a hash of the whole record (pattern, counts, times).

        A store remembers the digests it imported and skips them the next time, so
        the same file imported twice adds its counts once; a record whose counts
        have grown since (a later export) has another digest and is added.
        """
        r = self.record
        line = record_line(self.fingerprint, self.body, r.counts.as_tuple(), r.first_seen, r.last_seen, r.workspaces)
        return hashlib.sha256(line.encode("utf-8")).hexdigest()[:32]


def parse_document(
    data: bytes,
    verifier: Verifier,
    *,
    max_bytes: int = MAX_BYTES,
    max_patterns: int = MAX_PATTERNS,
    now: float | None = None,
) -> list[Record]:
    """Validate an exchange file completely; raise :class:`InvalidImport` on the first problem."""
    return [e.record for e in parse_entries(data, verifier, max_bytes=max_bytes, max_patterns=max_patterns, now=now)]


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects.

    An import builds a few objects per value of a document of up to 200k records;
    the collector would walk that growing heap again and again (a fifth of the time).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


SHARED_RULE = "knowledge from elsewhere may name only languages, tools, rule codes and action kinds fixlore knows"


def parse_entries(
    data: bytes,
    verifier: Verifier,
    *,
    max_bytes: int = MAX_BYTES,
    max_patterns: int = MAX_PATTERNS,
    now: float | None = None,
) -> list[Entry]:
    """:func:`parse_document`, keeping each pattern's fingerprint and canonical JSON."""
    with no_gc():
        return _parse_entries(data, verifier, max_bytes=max_bytes, max_patterns=max_patterns, now=now)


def _parse_entries(
    data: bytes,
    verifier: Verifier,
    *,
    max_bytes: int,
    max_patterns: int,
    now: float | None,
) -> list[Entry]:
    if len(data) > max_bytes:
        raise InvalidImport(f"file too large: {len(data)} bytes, the limit is {max_bytes}")
    doc = loads(data)
    _obj(doc, "(document)", required=_DOC_KEYS, optional=_DOC_OPTIONAL)
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
    entries: list[Entry] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"patterns[{i}]"
        entry = _entry(item, where, latest)
        ok, field = verifier(entry.record.pattern)
        if not ok:
            raise InvalidImport(
                f"{where}.pattern: refused by the privacy verifier (field {field}):"
                " it may carry an identifier, a string or code"
            )
        field, reason = shared_fields(entry.record.pattern)
        if field:
            raise InvalidImport(f"{where}.pattern.{field}: {reason} ({SHARED_RULE})")
        if entry.fingerprint in seen:
            raise InvalidImport(f"{where}.fingerprint: duplicate of an earlier entry")
        seen.add(entry.fingerprint)
        entries.append(entry)
    return entries


_DOC_KEYS = frozenset({"format", "version", "patterns"})
_DOC_OPTIONAL = frozenset({"exported_at"})
_RECORD_KEYS = frozenset({"fingerprint", "pattern", "counts", "first_seen", "last_seen", "workspaces"})
_PATTERN_KEYS = frozenset({"v", "signature", "category", "shape", "action", "holes"})
_PATTERN_OPTIONAL = frozenset({"context", "instances", "extra"})
_SIGNATURE_KEYS = frozenset({"language", "source", "code", "message"})
_SHAPE_KEYS = frozenset({"anchor", "unit", "before", "after"})
_ACTION_KEYS = frozenset({"kind", "title"})
_COUNT_NAMES = tuple(k.value for k in COUNT_KINDS)
_COUNT_KEYS = frozenset(_COUNT_NAMES)
_ENUMS: dict[type[FixCategory] | type[Anchor], frozenset[str]] = {
    FixCategory: frozenset(e.value for e in FixCategory),
    Anchor: frozenset(e.value for e in Anchor),
}


def _entry(item: Any, where: str, latest: float) -> Entry:
    _obj(item, where, required=_RECORD_KEYS)
    pattern = _pattern(item["pattern"], where)
    fp = pattern.fingerprint
    if item["fingerprint"] != fp:
        raise InvalidImport(f"{where}.fingerprint: does not match the pattern it carries")
    counts = item["counts"]
    _obj(counts, where, ".counts", required=_COUNT_KEYS)
    values = [_count(counts[k], where, f".counts.{k}") for k in _COUNT_NAMES]
    first = _time(item["first_seen"], where, ".first_seen", latest)
    last = _time(item["last_seen"], where, ".last_seen", latest)
    if first > last:
        raise InvalidImport(f"{where}.first_seen: later than last_seen")
    workspaces = _count(item["workspaces"], where, ".workspaces")
    return Entry(Record(pattern, Counts(*values), first, last, workspaces), fp, pattern.to_json())


def _pattern(d: Any, at: str) -> Pattern:
    where = at + ".pattern"
    _obj(d, where, required=_PATTERN_KEYS, optional=_PATTERN_OPTIONAL)
    if type(d["v"]) is not int or d["v"] != PATTERN_FORMAT_VERSION:
        raise InvalidImport(f"{where}.v: pattern format {_show(d['v'])} is not {PATTERN_FORMAT_VERSION}")
    sig = d["signature"]
    _obj(sig, where, ".signature", required=_SIGNATURE_KEYS)
    for k in ("language", "source", "code", "message"):
        _text(sig[k], where, ".signature.", k)
    if not sig["language"]:
        raise InvalidImport(f"{where}.signature.language: empty")
    _enum(d["category"], FixCategory, where, ".category")
    shape = d["shape"]
    if shape is not None:
        _obj(shape, where, ".shape", required=_SHAPE_KEYS)
        _enum(shape["anchor"], Anchor, where, ".shape.anchor")
        for k in ("unit", "before", "after"):
            _text(shape[k], where, ".shape.", k)
    action = d["action"]
    if action is not None:
        _obj(action, where, ".action", required=_ACTION_KEYS)
        for k in ("kind", "title"):
            _text(action[k], where, ".action.", k)
    if shape is None and action is None:
        raise InvalidImport(f"{where}: needs a shape or an action")
    _pairs(d["holes"], where, ".holes")
    if "extra" in d:
        _pairs(d["extra"], where, ".extra")
    ctx = d.get("context", [])
    if type(ctx) is not list or len(ctx) > MAX_ITEMS:
        raise InvalidImport(f"{where}.context: expected a list of at most {MAX_ITEMS} strings")
    for j, c in enumerate(ctx):
        _text(c, where, ".context", f"[{j}]")
    inst = d.get("instances", 1)
    if type(inst) is not int or not 1 <= inst <= MAX_COUNT:
        raise InvalidImport(f"{where}.instances: expected an integer from 1 to {MAX_COUNT}")
    return Pattern.from_dict(d)


# The helpers below take the place as pieces (``where`` + ``sub``) and join them only
# to name a problem: an import of 100k patterns checks a few million values.


def _obj(
    d: Any, where: str, sub: str = "", *, required: frozenset[str], optional: frozenset[str] = frozenset()
) -> None:
    if type(d) is not dict:
        raise InvalidImport(f"{where}{sub}: expected an object")
    keys = d.keys()
    if keys == required:
        return
    missing = sorted(required - keys)
    if missing:
        raise InvalidImport(f"{where}{sub}: missing field {missing[0]!r}")
    if keys - required - optional:
        raise InvalidImport(f"{where}{sub}: unknown field (not allowed by the schema)")


def _text(v: Any, where: str, sub: str = "", name: str = "") -> None:
    if type(v) is not str:
        raise InvalidImport(f"{where}{sub}{name}: expected a string")
    if len(v) > MAX_TEXT:
        raise InvalidImport(f"{where}{sub}{name}: {len(v)} characters, the limit is {MAX_TEXT}")
    if not check_unicode(v):
        raise InvalidImport(f"{where}{sub}{name}: not valid Unicode (a lone surrogate)")


def _pairs(v: Any, where: str, sub: str) -> None:
    if type(v) is not list or len(v) > MAX_ITEMS:
        raise InvalidImport(f"{where}{sub}: expected a list of at most {MAX_ITEMS} pairs")
    for j, p in enumerate(v):
        if type(p) is not list or len(p) != 2:
            raise InvalidImport(f"{where}{sub}[{j}]: expected a pair of strings")
        _text(p[0], where, sub, f"[{j}][0]")
        _text(p[1], where, sub, f"[{j}][1]")


def _enum(v: Any, enum: type[FixCategory] | type[Anchor], where: str, sub: str) -> None:
    if type(v) is not str or v not in _ENUMS[enum]:
        raise InvalidImport(f"{where}{sub}: not one of the known values")


def _count(v: Any, where: str, sub: str = "") -> int:
    if type(v) is not int:
        raise InvalidImport(f"{where}{sub}: expected an integer, got {_show(v)}")
    if v < 0:
        raise InvalidImport(f"{where}{sub}: negative count")
    if v > MAX_COUNT:
        raise InvalidImport(f"{where}{sub}: absurd count (more than {MAX_COUNT})")
    return v


def _number(v: Any, where: str, sub: str = "") -> float:
    if type(v) not in (int, float) or not math.isfinite(v):
        raise InvalidImport(f"{where}{sub}: expected a finite number")
    return float(v)


def _time(v: Any, where: str, sub: str, latest: float) -> float:
    t = _number(v, where, sub)
    if not EARLIEST <= t <= latest:
        raise InvalidImport(f"{where}{sub}: not a plausible unix time")
    return t


def _show(v: Any) -> str:
    """A short, code-free description of a value for error messages."""
    if type(v) in (int, float, bool) or v is None:
        return repr(v)
    return f"a {type(v).__name__}"
