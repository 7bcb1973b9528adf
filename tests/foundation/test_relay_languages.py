"""The relay decides which upstream serves a document without its language table when the languageId says it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from fixlore.lsp.transport.relay import Relay


def _relay(docs: dict[str, str | None]) -> Any:
    relay = Relay.__new__(Relay)  # only what _serves reads: the documents and the table, not loaded yet
    relay._docs = docs  # noqa: SLF001
    relay._languages = None  # noqa: SLF001
    return relay


def _link(language: str) -> Any:
    return SimpleNamespace(child=SimpleNamespace(language=language))


def test_a_document_in_the_upstreams_own_language_needs_no_table() -> None:
    relay = _relay({"file:///w/a.py": "python"})
    assert relay._serves(_link("python"), "file:///w/a.py")  # noqa: SLF001
    assert relay._languages is None  # noqa: SLF001 - the table (a module compiled from source) never read


def test_other_language_ids_are_looked_up_as_before() -> None:
    relay = _relay({"file:///w/a.py": "python3", "file:///w/b.py": "python", "file:///w/c.py": None})
    assert relay._serves(_link("python"), "file:///w/a.py")  # noqa: SLF001 - the editor's alias, fixlore's language
    assert relay._languages is not None  # noqa: SLF001
    assert not relay._serves(_link("typescript"), "file:///w/b.py")  # noqa: SLF001
    assert relay._serves(_link("python"), "file:///w/c.py")  # noqa: SLF001 - no languageId: the extension
