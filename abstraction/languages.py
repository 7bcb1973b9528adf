"""The tree-sitter grammar registry: which languages fixlore parses, and how.

Grammars come from the official per-language wheels (``tree-sitter-python``,
``tree-sitter-javascript``, ...), which work offline with ``tree-sitter``
0.25/0.26. Each grammar is loaded once, lazily. Parsers are not thread-safe,
so :func:`get_parser` hands out one parser per thread.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from functools import cache
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

import tree_sitter

# LSP language id -> (grammar module, function in it returning the language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "javascriptreact": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "typescriptreact": ("tree_sitter_typescript", "language_tsx"),
    "shellscript": ("tree_sitter_bash", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
}

# File extension -> LSP language id, for clients that send no (or an odd) languageId.
_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".sh": "shellscript",
    ".bash": "shellscript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
}

# Language ids other editors use for the same languages.
_ALIASES: dict[str, str] = {
    "sh": "shellscript",
    "bash": "shellscript",
    "zsh": "shellscript",
    "js": "javascript",
    "jsx": "javascriptreact",
    "ts": "typescript",
    "tsx": "typescriptreact",
    "py": "python",
    "python3": "python",
    "golang": "go",
}

_local = threading.local()


def supported_languages() -> frozenset[str]:
    """The LSP language ids fixlore can parse."""
    return frozenset(_GRAMMARS)


def language_for(language_id: str | None, uri: str) -> str | None:
    """Map an editor's ``languageId`` (or, failing that, the URI's extension) to ours."""
    if language_id:
        lang = _ALIASES.get(language_id.lower(), language_id.lower())
        if lang in _GRAMMARS:
            return lang
    path = unquote(urlparse(uri).path) if "://" in uri else uri
    return _EXTENSIONS.get(PurePosixPath(path).suffix.lower())


@cache
def get_language(language: str) -> tree_sitter.Language | None:
    """The tree-sitter language for an LSP language id, or ``None`` if unsupported."""
    spec = _GRAMMARS.get(language)
    if spec is None:
        return None
    module_name, func_name = spec
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    factory: Callable[[], object] = getattr(module, func_name)
    return tree_sitter.Language(factory())


def get_parser(language: str) -> tree_sitter.Parser | None:
    """A parser for ``language`` owned by the calling thread, or ``None``."""
    parsers: dict[str, tree_sitter.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        lang = get_language(language)
        if lang is None:
            return None
        parser = parsers[language] = tree_sitter.Parser(lang)
    return parser


def grammar_versions() -> dict[str, str]:
    """Installed grammar distributions and their versions (for ``fixlore doctor``)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for module_name, _ in sorted(set(_GRAMMARS.values())):
        dist = module_name.replace("_", "-")
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "missing"
    return out
