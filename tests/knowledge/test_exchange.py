"""Export and import: round trip, filters, the published schema, and hostile files."""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fixlore.knowledge import FORMAT_VERSION, Event, EventKind, ExportFilters, InvalidImport, Knowledge
from fixlore.knowledge._admin import base_records
from fixlore.knowledge._verify import check_privacy

from ._patterns import FIX, LEARNED, NOQA, REMOVE

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "docs" / "knowledge-schema.json").read_text())


def open_k(home: Path) -> Knowledge:
    """A store without base knowledge."""
    return Knowledge.open(home, base=False, auto_prune=False)


def fill(k: Knowledge) -> None:
    """FIX: 3 uses, 2 workspaces, verified 2/3; NOQA: 1 use; LEARNED: 2 manual, verified; REMOVE: offered."""
    now = time.time()
    for ws, kind in [
        ("w1", EventKind.ACCEPTED),
        ("w2", EventKind.ACCEPTED),
        ("w1", EventKind.ACCEPTED),
        ("w1", EventKind.SUCCEEDED),
        ("w2", EventKind.SUCCEEDED),
        ("w1", EventKind.FAILED),
    ]:
        k.record(Event(kind, FIX, ws, now))
    k.record(Event(EventKind.ACCEPTED, NOQA, "w1", now))
    for kind in (EventKind.MANUAL, EventKind.MANUAL, EventKind.SUCCEEDED):
        k.record(Event(kind, LEARNED, "w1", now))
    k.record(Event(EventKind.OFFERED, REMOVE, "w1", now))
    k.flush()


@pytest.fixture
def exported(tmp_path: Path) -> dict[str, Any]:
    """A valid export document of four patterns."""
    with open_k(tmp_path / "src") as k:
        fill(k)
        text, n = k.export_text()
    assert n == 4
    return json.loads(text)


def db_digest(home: Path) -> str:
    """Hash of the store's logical content (all tables, via iterdump)."""
    import sqlite3

    conn = sqlite3.connect(home / "knowledge.sqlite3")
    try:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()
    finally:
        conn.close()


def test_round_trip_adds_counts_in_one_step(tmp_path: Path, exported: dict[str, Any]) -> None:
    jsonschema.validate(exported, SCHEMA)
    f = tmp_path / "export.json"
    f.write_text(json.dumps(exported))
    with open_k(tmp_path / "dst") as k:
        k.record(Event(EventKind.ACCEPTED, FIX, "w9", time.time()))
        k.flush()
        report = k.import_file(f)
        assert (report.imported, report.merged) == (3, 1)
        stats = k.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert stats.counts.accepted == 4 and stats.counts.succeeded == 2
        assert stats.workspaces == 2
        assert [s.fingerprint for s in k.learned_fixes(LEARNED.signature)] == [LEARNED.fingerprint]
    with open_k(tmp_path / "dst") as k:  # on disk too
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 4


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (ExportFilters(), {FIX, NOQA, LEARNED, REMOVE}),
        (ExportFilters(min_uses=2), {FIX, LEARNED}),
        (ExportFilters(min_success=0.9), {LEARNED}),
        (ExportFilters(min_success=0.6), {FIX, LEARNED}),
        (ExportFilters(min_workspaces=2), {FIX}),
        (ExportFilters(language="javascript"), set()),
        (ExportFilters(language="python", min_uses=1, min_workspaces=1), {FIX, NOQA, LEARNED}),
    ],
)
def test_export_filters(tmp_path: Path, filters: ExportFilters, expected: set[Any]) -> None:
    with open_k(tmp_path) as k:
        fill(k)
        out = tmp_path / "out.json"
        assert k.export(out, filters) == len(expected)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert {p["fingerprint"] for p in doc["patterns"]} == {p.fingerprint for p in expected}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    """A mutation setting ``path`` (dotted, ints index lists) to ``value``."""

    def mutate(doc: dict[str, Any]) -> Any:
        *head, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = doc
        for p in head:
            node = node[p]
        node[last] = value
        return doc

    return mutate


def _del(path: str) -> Callable[[dict[str, Any]], Any]:
    def mutate(doc: dict[str, Any]) -> Any:
        *head, last = path.split(".")
        node: Any = doc
        for p in head:
            node = node[int(p) if p.isdigit() else p]
        del node[last]
        return doc

    return mutate


def _shape_text(text: str) -> Callable[[dict[str, Any]], Any]:
    """Put ``text`` into the learned pattern's shape and fix up the fingerprint (a careful forger)."""

    def mutate(doc: dict[str, Any]) -> Any:
        from fixlore.abstraction import Pattern

        for item in doc["patterns"]:
            if item["pattern"]["shape"] is not None:
                item["pattern"]["shape"]["before"] = text
                item["fingerprint"] = Pattern.from_dict(item["pattern"]).fingerprint
        return doc

    return mutate


HOSTILE: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("wrong format", _set("format", "something-else"), "format"),
    ("wrong schema version", _set("version", FORMAT_VERSION + 1), "version"),
    ("version as a string", _set("version", "1"), "version"),
    ("patterns not a list", _set("patterns", {}), "patterns: expected a list"),
    ("negative count", _set("patterns.0.counts.accepted", -3), "patterns[0].counts.accepted: negative"),
    ("absurd count", _set("patterns.1.counts.offered", 10**15), "patterns[1].counts.offered: absurd"),
    ("float count", _set("patterns.0.counts.failed", 1.5), "patterns[0].counts.failed: expected an integer"),
    ("boolean count", _set("patterns.0.counts.failed", True), "expected an integer"),
    ("future time", _set("patterns.0.last_seen", 9e12), "patterns[0].last_seen: not a plausible"),
    ("NaN-like time", _set("patterns.0.first_seen", "yesterday"), "first_seen: expected a finite number"),
    (
        "first after last",
        lambda d: _set("patterns.0.first_seen", d["patterns"][0]["last_seen"] + 60)(d),
        "first_seen: later than last_seen",
    ),
    ("missing counts", _del("patterns.0.counts"), "patterns[0]: missing field 'counts'"),
    ("unknown field", _set("patterns.0.owner", "alice"), "patterns[0]: unknown field"),
    ("unknown category", _set("patterns.0.pattern.category", "exfiltrate"), "pattern.category"),
    ("tampered fingerprint", _set("patterns.0.fingerprint", "0" * 20), "fingerprint: does not match"),
    (
        "identifier in a message",
        _set("patterns.0.pattern.signature.message", "Undefined name `acme_payroll`"),
        "fingerprint: does not match",
    ),
    ("identifier with a forged fingerprint", _shape_text("acme_payroll == None"), "privacy verifier"),
    ("code with a forged fingerprint", _shape_text("os.system('rm -rf ~')  # pwned"), "privacy verifier"),
    ("huge string", _shape_text("$1 " * 3000), "characters, the limit is"),
]


@pytest.mark.parametrize(("mutate", "message"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_import_is_refused_naming_the_problem_and_changes_nothing(
    tmp_path: Path, exported: dict[str, Any], mutate: Callable[[dict[str, Any]], Any], message: str
) -> None:
    doc = mutate(copy.deepcopy(exported))
    # The published schema agrees, where a schema can tell (not: privacy, fingerprints, time order).
    beyond_schema = any(m in message for m in ("privacy", "does not match", "plausible", "later than"))
    if not beyond_schema:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, SCHEMA)
    f = tmp_path / "hostile.json"
    f.write_text(json.dumps(doc))
    home = tmp_path / "dst"
    with open_k(home) as k:
        fill(k)
    before = db_digest(home)
    with open_k(home) as k:
        with pytest.raises(InvalidImport, match=_re(message)):
            k.import_file(f)
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 3
    assert db_digest(home) == before
    assert b"acme_payroll" not in (home / "knowledge.sqlite3").read_bytes()


def _re(text: str) -> str:
    import re

    return re.escape(text)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"format": "fixlore-knowledge", "version": 1, "patterns": [', "malformed JSON at line 1"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b"[]", "(document): expected an object"),
        (b"", "malformed JSON"),
    ],
)
def test_malformed_files_are_refused(tmp_path: Path, content: bytes, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    with open_k(tmp_path / "dst") as k, pytest.raises(InvalidImport, match=_re(message)):
        k.import_file(f)


def test_huge_files_are_refused_before_reading(tmp_path: Path, exported: dict[str, Any]) -> None:
    f = tmp_path / "huge.json"
    with f.open("wb") as out:
        out.truncate(65 * 1024 * 1024)  # sparse: 65 MB without writing them
    with open_k(tmp_path / "dst") as k:
        with pytest.raises(InvalidImport, match="file too large"):
            k.import_file(f)
        small = tmp_path / "small.json"
        small.write_text(json.dumps(exported))
        with pytest.raises(InvalidImport, match="file too large"):
            k.import_file(small, max_bytes=100)
        assert k.stats().patterns == 0


def test_one_bad_entry_among_many_imports_nothing(tmp_path: Path, exported: dict[str, Any]) -> None:
    doc = copy.deepcopy(exported)
    doc["patterns"][-1]["counts"]["rejected"] = -1
    f = tmp_path / "partly-bad.json"
    f.write_text(json.dumps(doc))
    with open_k(tmp_path / "dst") as k:
        with pytest.raises(InvalidImport, match=r"patterns\[3\]"):
            k.import_file(f)
        assert k.stats().patterns == 0


def test_shipped_base_knowledge_is_valid_and_passes_the_privacy_verifier() -> None:
    data = json.loads((REPO / "knowledge" / "base" / "patterns.json").read_text())
    jsonschema.validate(data, SCHEMA)
    loaded = base_records(check_privacy)
    assert len(loaded) == len(data["patterns"]) > 0


def test_export_file_is_one_record_per_line_so_a_new_count_is_a_one_line_diff(tmp_path: Path) -> None:
    # A team commits the workspace scope (same format); a diff must show what changed.
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    with open_k(tmp_path / "src") as k:
        fill(k)
        assert k.export(out1) == 4
        k.record(Event(EventKind.ACCEPTED, NOQA, "w1", time.time()))
        k.flush()
        assert k.export(out2) == 4
    a, b = out1.read_text().splitlines(), out2.read_text().splitlines()
    assert len(a) == len(b) == 4 + 2
    changed = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    assert changed == [0, 1 + sorted([FIX, NOQA, LEARNED, REMOVE], key=lambda p: p.fingerprint).index(NOQA)]
    doc = json.loads(out2.read_text())
    jsonschema.validate(doc, SCHEMA)
    with open_k(tmp_path / "dst") as k:
        assert k.import_file(out2).imported == 4
        assert k.evidence(NOQA.signature.rule_key)[NOQA.fingerprint].counts.accepted == 2
