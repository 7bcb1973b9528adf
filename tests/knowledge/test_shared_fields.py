"""Language, source, code and action kind of shared knowledge: only what fixlore knows crosses the store's edge.

A forger who recomputes the fingerprint can put any short identifier into
these four fields; an import, a team row or a workspace file holding one is
refused (naming the field, never its text) and changes nothing. Patterns
learned live from a tool fixlore does not know stay the user's own: they work
locally and are left out of exports and the workspace file.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import Pattern, Signature, code_problem, kind_problem, source_problem, verify_shared
from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.knowledge._team import TrustConfig, check_rows
from fixlore.knowledge._teamdb import RawTeamRows
from fixlore.knowledge._verify import check_privacy
from tests._biome import NO_DOUBLE_EQUALS, USE_CONST, USE_TEMPLATE

from ._patterns import ALL, action
from .test_exchange import db_digest, exported, fill, open_k
from .test_hostile_files_e2e import knowledge

__all__ = ["exported"]  # the fixture, used by name

SMUGGLED: list[tuple[str, str, Any, str]] = [
    ("a code", "signature.code", "zq_smuggled_code", "not a code of Ruff"),
    ("an action kind", "action.kind", "acme_internal.billing", "not an LSP code action kind"),
    ("a kind's part", "action.kind", "quickfix.acme_internal", "neither an LSP kind, a tool nor a rule name"),
    ("a language", "signature.language", "acme_lang", "signature.language"),
    ("a source", "signature.source", "acme_internal", "not a tool fixlore knows"),
]


def smuggle(exported: dict[str, Any], field: str, value: str) -> dict[str, Any]:
    """``exported`` with ``value`` in ``field`` of its first action pattern, the fingerprint forged to match."""
    doc = copy.deepcopy(exported)
    rec = next(r for r in doc["patterns"] if r["pattern"]["action"])
    part, name = field.split(".")
    rec["pattern"]["signature" if part == "signature" else "action"][name] = value
    rec["fingerprint"] = Pattern.from_dict(rec["pattern"]).fingerprint
    return doc


@pytest.mark.e2e
@pytest.mark.parametrize(("field", "value", "message"), [s[1:] for s in SMUGGLED], ids=[s[0] for s in SMUGGLED])
def test_an_import_smuggling_a_word_into_a_field_is_refused_and_changes_nothing(
    tmp_path: Path, exported: dict[str, Any], field: str, value: str, message: str
) -> None:
    home = tmp_path / "dst"
    with open_k(home) as k:
        fill(k)
    before = db_digest(home)
    f = tmp_path / "smuggled.json"
    f.write_text(json.dumps(smuggle(exported, field, value)))

    done = knowledge("import", str(f), home=home, timeout=60)

    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("fixlore: import refused, nothing was changed: ")
    assert field in done.stderr and message in done.stderr and done.stderr.count("\n") == 1
    assert value not in done.stderr + done.stdout
    assert db_digest(home) == before
    assert value.encode() not in (home / "knowledge.sqlite3").read_bytes()


@pytest.mark.parametrize(("field", "value", "message"), [s[1:] for s in SMUGGLED], ids=[s[0] for s in SMUGGLED])
def test_a_team_row_smuggling_a_word_into_a_field_is_refused(
    exported: dict[str, Any], field: str, value: str, message: str
) -> None:
    rec = next(r for r in smuggle(exported, field, value)["patterns"] if r["pattern"]["action"])
    fp, c = rec["fingerprint"], rec["counts"]
    counts = (c["offered"], c["accepted"], c["rejected"], c["succeeded"], c["failed"], c["manual"], c["undone"])
    row = (fp, *counts, rec["first_seen"], rec["last_seen"], 3)
    raw = RawTeamRows(aggregates=[row], bodies={fp: [json.dumps(rec["pattern"])]}, reviews={})
    heard: list[str] = []

    read = check_rows(raw, check_privacy, TrustConfig(), on_refused=lambda _, why: heard.append(why))

    assert (read.patterns, read.refused) == ((), 1)
    assert heard and field in heard[0] and value not in heard[0]


def test_the_shipped_base_knowledge_and_the_test_patterns_fit_the_grammar() -> None:
    from fixlore.knowledge._admin import base_records

    base = base_records(check_privacy)
    assert len(base) >= 20
    for p in [r.pattern for r in base] + list(ALL):
        assert verify_shared(p).ok, (p.signature, p.action)


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("Ruff", "F401"),
        ("Ruff", "ASYNC100"),
        ("Ruff", "PLR2004"),
        ("Ruff", "invalid-syntax"),
        ("biome", USE_CONST),
        ("biome", NO_DOUBLE_EQUALS),
        ("biome", USE_TEMPLATE),
        ("biome", "assist/source/organizeImports"),
        ("typescript", "2304"),
        ("basedpyright", "reportUndefinedVariable"),
        ("eslint", "@typescript-eslint/no-unused-vars"),
        ("mypy", "attr-defined"),
        ("rust-analyzer", "unused_variables"),
        ("clippy", "clippy::needless_return"),
        ("compiler", "UnusedVar"),
        ("clangd", "-Wunused-variable"),
        ("fixlore", "syntax-error"),
        ("source-action", "source.organizeImports.ruff"),
        ("", "E501"),
    ],
)
def test_real_tools_codes_fit_their_grammar(source: str, code: str) -> None:
    assert source_problem(source) == "" and code_problem(source, code) == ""


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("Ruff", "zq_smuggled_code"),
        ("Ruff", "2304"),
        ("Ruff", "ACME1"),
        ("typescript", "F401"),
        ("biome", "lint/acme/useConst"),
        ("biome", "lint/style/useAcmeBilling"),
        ("basedpyright", "reportZqSmuggled"),
        ("eslint", "acme-internal/no-payroll"),
        ("eslint", "z-q-s-m-u-g"),
        ("eslint", "--"),
        ("fixlore", "python-acme"),
        ("", "zq_smuggled_code"),
    ],
)
def test_a_code_outside_its_tools_grammar_is_refused(source: str, code: str) -> None:
    assert code_problem(source, code)


@pytest.mark.parametrize(
    "kind",
    [
        "",
        "quickfix",
        "source.fixAll.ruff",
        "notebook.source.organizeImports.ruff",
        "refactor.rewrite",
        "quickfix.biome",
        "quickfix.biome.style.useConst",
        "source.fixAll.biome",
        "source.organizeImports.ts",
        "refactor.extract.function",
    ],
)
def test_lsp_kinds_of_real_tools_fit_the_kind_grammar(kind: str) -> None:
    assert kind_problem(kind) == ""


def test_the_biome_rule_list_holds_every_rule_of_the_pinned_biome(biome: Path) -> None:
    """``fields.json`` lists Biome's rules; the pinned Biome's own schema says which there are."""
    from importlib import resources

    schema_path = (
        next(p for p in biome.parents if p.name == "node_modules") / "@biomejs/biome/configuration_schema.json"
    )
    defs = json.loads(schema_path.read_text())["$defs"]
    listed = json.loads(resources.files("fixlore.abstraction").joinpath("fields.json").read_text())["biome"]
    for group, rules in listed["lint"].items():
        actual = set(defs[group.capitalize() if group != "a11y" else "A11y"]["properties"])
        assert actual - {"recommended", "all", "preset"} <= set(rules), group
        for rule in rules:
            assert code_problem("biome", f"lint/{group}/{rule}") == ""


def test_the_ruff_prefixes_are_those_of_the_installed_ruff() -> None:
    """Every code the installed ``ruff`` has fits; the list is data (``fields.json``), the real ruff says which."""
    import subprocess

    from tests.learning._editor import BIN

    done = subprocess.run(
        [str(BIN / "ruff"), "rule", "--all", "--output-format", "json"], capture_output=True, timeout=60, check=True
    )
    codes = [r["code"] for r in json.loads(done.stdout) if r.get("code")]
    assert len(codes) > 800
    assert [c for c in codes if code_problem("Ruff", c)] == []


UNKNOWN = Signature("python", "slowlint", "SL1", "`$1` is deprecated")


def test_patterns_of_an_unknown_tool_work_locally_and_stay_out_of_exports_and_the_workspace(tmp_path: Path) -> None:
    local = action(UNKNOWN, "Replace with `$2`")
    root = tmp_path / "repo"
    root.mkdir()
    with Knowledge.open(
        tmp_path / "home", base=False, auto_prune=False, workspace_root=root, workspace_scope=True
    ) as k:
        for p in (local, action()):
            k.record(Event(EventKind.ACCEPTED, p, "w1", time.time()))
        k.flush()
        assert k.evidence(UNKNOWN.rule_key)[local.fingerprint].counts.accepted == 1
        text, n = k.export_text()
    assert n == 1 and "slowlint" not in text
    shared = (root / ".fixlore" / "patterns.json").read_text()
    assert "slowlint" not in shared and json.loads(shared)["patterns"]
    with Knowledge.open(
        tmp_path / "home", base=False, auto_prune=False, workspace_root=root, workspace_scope=True
    ) as k:  # the workspace file is still valid: read back, not ignored
        assert k.evidence(action().signature.rule_key)[action().fingerprint].counts.accepted >= 1


def test_fixlore_s_own_codes_are_those_of_its_syntax_diagnostics() -> None:
    from fixlore.abstraction.syntax import SyntaxCode

    assert all(code_problem("fixlore", c.value) == "" for c in SyntaxCode)
    assert code_problem("fixlore", "python-acme")
