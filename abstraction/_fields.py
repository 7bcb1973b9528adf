"""The grammar of a pattern's ``language``, ``source``, ``code`` and action ``kind`` in shared knowledge.

Knowledge that comes from elsewhere (an import, the team store, a committed
``.fixlore/patterns.json``, the base knowledge) may name only what fixlore
knows in these four fields, so that none of them can carry a word of someone's
code (``zq_smuggled_code`` as a code, ``acme_internal.billing`` as a kind):

* ``language``: an LSP language id fixlore parses (:func:`supported_languages`);
* ``source``: a tool of :data:`TOOLS` (any case: ruff reports ``Ruff``), or ``""``;
* ``code``: the grammar of that tool's codes (:data:`_CODES`): ruff's ``F401``
  (one of ruff's own prefixes),
  TypeScript's ``2304``, Biome's ``lint/style/useConst``, pyright's
  ``reportUndefinedVariable``, ESLint's ``no-unused-vars``, ...; a rule name
  is accepted when it is listed (``fields.json``) or every word of it
  (split at ``-``, ``_``, ``/``, ``::`` and camel humps) is in the vocabulary:
  the words of the listed rule names and the message vocabulary;
* action ``kind``: LSP's kind grammar, dot-separated: the first part an LSP base
  kind (``quickfix``, ``refactor``, ``source``, ``notebook``), every other part
  a tool name or a rule-name part as above (``source.fixAll.ruff``,
  ``quickfix.biome.style.useConst``).

Patterns learned live are the user's own, from the user's own linters: they
keep any short plain ``source``/``code``/``kind`` (``_templates.STRICT``;
anything else is masked to ``""``) and work locally whatever tool reported
them. Only what fits this grammar leaves the store (export, team publish, the
workspace file); see ``docs/knowledge.md``, "Privacy of the fields".
"""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from pathlib import Path

from fixlore.abstraction._vocab import prose_words
from fixlore.abstraction.languages import supported_languages

_ALNUM = re.compile(r"[A-Z]{1,5}[0-9]{1,5}\Z")
"""``F401``, ``UP034``, ``ASYNC100``, ``PLR2004``, ``SC2086``, ``E0425``."""
_NUMBER = re.compile(r"[0-9]{1,10}\Z")
"""TypeScript's ``2304``, Java's problem ids."""
_PARTS = re.compile(r"::|[-_/.@]")
_HUMPS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MAX = 64

BASE_KINDS = frozenset({"quickfix", "refactor", "source", "notebook"})
"""The roots of LSP's code action kinds (3.18: ``notebook.source.*``)."""

_KIND_WORDS = frozenset(
    {"extract", "inline", "move", "rewrite", "organizeImports", "fixAll", "source", "suppressRule", "topLevel"}
)

TOOLS: frozenset[str] = frozenset(
    """ruff flake8 pycodestyle pyflakes pydocstyle mccabe pylint mypy pyright basedpyright pylance pylsp ty
    biome eslint typescript ts tsc deno deno-lint deno-ts oxlint oxc rust-analyzer rustc clippy cargo
    clang clangd clang-tidy shellcheck bash-language-server java jdtls fixlore source-action""".split()
)
"""Tools whose diagnostics fixlore knows, lower case (Go's analyzers are added from ``fields.json``)."""

_WORD_TOOLS = frozenset({"eslint", "deno", "deno-lint", "oxlint", "oxc", "mypy", "pylint", "ty", "pylsp", "clang-tidy"})

_CODES: dict[str, tuple[str, ...]] = {
    "ruff": ("ruff",),
    **dict.fromkeys(("flake8", "pycodestyle", "pyflakes", "pydocstyle", "mccabe", "shellcheck"), ("alnum",)),
    **dict.fromkeys(("typescript", "ts", "tsc", "deno-ts", "java", "jdtls"), ("number",)),
    **dict.fromkeys(("pyright", "basedpyright", "pylance"), ("pyright",)),
    **dict.fromkeys(_WORD_TOOLS | {"rust-analyzer", "rustc", "clippy", "cargo", "clang", "clangd"}, ("alnum", "words")),
    "biome": ("biome",),
    "fixlore": ("fixlore",),
    "source-action": ("kind",),
    "": ("alnum", "number", "words"),
}
"""Which code grammars each tool's codes follow (Go's analyzers: ``alnum`` and ``words``)."""

_FIXLORE_CODES = frozenset({"syntax-error", "missing-token", "python-syntax"})
_BIOME_CATEGORIES = frozenset({"lint", "assist", "syntax", "parse", "format", "suppressions", "organizeImports"})


@cache
def _data() -> dict[str, object]:
    text = Path(__file__).with_name("fields.json").read_text("utf-8")  # as _vocab reads its table
    loaded: dict[str, object] = json.loads(text)
    return loaded


@cache
def _biome() -> dict[str, dict[str, frozenset[str]]]:
    raw = _data()["biome"]
    assert isinstance(raw, dict)
    return {cat: {g: frozenset(rules) for g, rules in groups.items()} for cat, groups in raw.items()}


@cache
def _rules() -> frozenset[str]:
    """Every listed rule name: Biome's, pyright's, ESLint's, mypy's, Rust's, Go's."""
    raw = _data()["rules"]
    assert isinstance(raw, dict)
    listed = {str(r) for rules in raw.values() for r in rules}
    return frozenset(listed | {r for groups in _biome().values() for rules in groups.values() for r in rules})


@cache
def _ruff_prefixes() -> frozenset[str]:
    """The letters ruff's codes start with (``F``, ``UP``, ``PLR``, ``ASYNC``, ...)."""
    raw = _data()["ruff_prefixes"]
    assert isinstance(raw, list)
    return frozenset(str(p) for p in raw)


@cache
def go_tools() -> frozenset[str]:
    """Go's sources: ``compiler``, ``staticcheck`` and gopls' analyzers (``unusedvariable``, ...)."""
    raw = _data()["go_sources"]
    assert isinstance(raw, list)
    return frozenset(str(s) for s in raw)


@cache
def rule_words() -> frozenset[str]:
    """Lower-case words a rule name may be built from: those of the listed rules, and the message vocabulary."""
    words = {w.lower() for rule in _rules() for part in _PARTS.split(rule) for w in _HUMPS.findall(part)}
    groups = {g.lower() for groups in _biome().values() for g in groups} | _BIOME_CATEGORIES
    return frozenset(words | groups | prose_words() | _known_tools() | {k.lower() for k in _KIND_WORDS})


@cache
def _known_tools() -> frozenset[str]:
    return TOOLS | go_tools()


def _is_words(value: str) -> bool:
    """Every part and camel hump of ``value`` is a rule word, a number or an ``F401``-like code.

    A single letter is not a word: ``a-c-m-e`` would spell anything.
    """
    vocab = rule_words()
    parts = [p for p in _PARTS.split(value.removeprefix("-W")) if p]  # clang's -Wunused-variable
    for part in parts:
        if _ALNUM.match(part) or part in _rules() or (len(part) > 1 and part.lower() in vocab):
            continue
        humps = _HUMPS.findall(part)
        if "".join(humps) != part:
            return False
        if not all((h.isdigit() and len(h) <= 5) or (len(h) > 1 and h.lower() in vocab) for h in humps):
            return False
    return bool(parts)


def _biome_code(code: str) -> bool:
    category, _, rest = code.partition("/")
    if category not in _BIOME_CATEGORIES:
        return False
    if not rest:
        return True
    group, _, rule = rest.partition("/")
    groups = _biome().get(category, {})
    if rule and group in groups and rule in groups[group]:
        return True
    return (not groups or group in groups) and _is_words(rest)


def _fits(grammar: str, code: str) -> bool:
    if grammar == "alnum":
        return bool(_ALNUM.match(code))
    if grammar == "number":
        return bool(_NUMBER.match(code))
    if grammar == "ruff":
        return code == "invalid-syntax" or (bool(_ALNUM.match(code)) and code.rstrip("0123456789") in _ruff_prefixes())
    if grammar == "pyright":
        return code.startswith("report") and code[6:7].isupper() and code.isalpha() and _is_words(code)
    if grammar == "biome":
        return _biome_code(code)
    if grammar == "fixlore":
        return code in _FIXLORE_CODES
    if grammar == "kind":
        return not kind_problem(code)
    return _is_words(code)


def source_problem(source: str) -> str:
    """Why ``source`` may not be shared, or ``""``."""
    if source and source.lower() not in _known_tools():
        return "not a tool fixlore knows"
    return ""


def code_problem(source: str, code: str) -> str:
    """Why ``code`` may not be shared as a code of ``source``, or ``""`` (an empty code always may)."""
    if not code:
        return ""
    if len(code) > _MAX:
        return "too long for a code"
    tool = source.lower()
    grammars = _CODES.get(tool) or (("alnum", "words") if tool in go_tools() else ())
    if not any(_fits(g, code) for g in grammars):
        return f"not a code of {source}" if source else "not a diagnostic code"
    return ""


def kind_problem(kind: str) -> str:
    """Why ``kind`` is not an LSP code action kind fixlore knows, or ``""`` (an empty kind is LSP's own)."""
    if not kind:
        return ""
    if len(kind) > _MAX:
        return "too long for a kind"
    root, *rest = kind.split(".")
    if root not in BASE_KINDS:
        return "not an LSP code action kind"
    for part in rest:
        if not part or not (part in _KIND_WORDS or part.lower() in _known_tools() or _is_words(part)):
            return "a part that is neither an LSP kind, a tool nor a rule name"
    return ""


def language_problem(language: str) -> str:
    """Why ``language`` is not a language fixlore parses, or ``""``."""
    return "" if language in _languages() else "not a language fixlore knows"


@cache
def _languages() -> frozenset[str]:
    return supported_languages()


@lru_cache(maxsize=4096)
def shared_problem(language: str, source: str, code: str, kind: str | None) -> tuple[str, str]:
    """``(field, reason)`` of the first field outside the grammar, or ``("", "")``.

    Memoised: an import of 100k patterns names the same few hundred rules over and over.
    """
    checks = (
        ("signature.language", language_problem(language)),
        ("signature.source", source_problem(source)),
        ("signature.code", code_problem(source, code)),
        ("action.kind", kind_problem(kind) if kind is not None else ""),
    )
    for field, reason in checks:
        if reason:
            return field, reason
    return "", ""
