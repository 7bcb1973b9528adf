"""A small Emacs Lisp reader, to check snippets' syntax where Emacs is not installed.

It reads what the shipped snippets use: lists, vectors, strings with escapes,
symbols and keywords, numbers, character literals, comments, and the quote
family (``'``, `````, ``,``, ``,@``, ``#'``). It rejects unbalanced or
mismatched brackets and unterminated strings, as Emacs's reader does. Lists
come back as Python lists, vectors as ``("vector", [...])``, strings as
``("string", text)``, everything else as its symbol text.
"""

from __future__ import annotations

from typing import Any

_CLOSERS = {"(": ")", "[": "]"}
_QUOTES = {"'": "quote", "`": "backquote", ",": "comma", ",@": "comma-at", "#'": "function"}
_DELIMITERS = set("()[]\"';`,") | {" ", "\t", "\n", "\r", "\f"}


class ElispSyntaxError(ValueError):
    """The text is not readable Emacs Lisp."""


def read_elisp(text: str) -> list[Any]:
    """Read every top-level form of ``text``; raise :class:`ElispSyntaxError` if one is malformed."""
    reader = _Reader(text)
    forms = []
    while True:
        reader.skip_blank()
        if reader.at_end():
            return forms
        forms.append(reader.form())


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def error(self, message: str) -> ElispSyntaxError:
        line = self.text.count("\n", 0, self.pos) + 1
        return ElispSyntaxError(f"line {line}: {message}")

    def skip_blank(self) -> None:
        while not self.at_end():
            ch = self.text[self.pos]
            if ch == ";":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end + 1
            elif ch.isspace():
                self.pos += 1
            else:
                return

    def form(self) -> Any:
        self.skip_blank()
        if self.at_end():
            raise self.error("end of text inside a form")
        ch = self.text[self.pos]
        for prefix in (",@", "#'", "'", "`", ","):
            if self.text.startswith(prefix, self.pos):
                self.pos += len(prefix)
                return [_QUOTES[prefix], self.form()]
        if ch in _CLOSERS:
            self.pos += 1
            items = self.sequence(_CLOSERS[ch])
            return items if ch == "(" else ("vector", items)
        if ch in ")]":
            raise self.error(f"unexpected {ch!r}")
        if ch == '"':
            return ("string", self.string())
        if ch == "?":
            return self.character()
        return self.atom()

    def sequence(self, closer: str) -> list[Any]:
        items: list[Any] = []
        while True:
            self.skip_blank()
            if self.at_end():
                raise self.error(f"missing {closer!r}")
            ch = self.text[self.pos]
            if ch == closer:
                self.pos += 1
                return items
            if ch in ")]":
                raise self.error(f"{ch!r} where {closer!r} was expected")
            items.append(self.form())

    def string(self) -> str:
        self.pos += 1
        out = []
        while not self.at_end():
            ch = self.text[self.pos]
            if ch == "\\":
                if self.pos + 1 >= len(self.text):
                    break
                out.append(self.text[self.pos + 1])
                self.pos += 2
            elif ch == '"':
                self.pos += 1
                return "".join(out)
            else:
                out.append(ch)
                self.pos += 1
        raise self.error("unterminated string")

    def character(self) -> str:
        start = self.pos
        self.pos += 1
        if self.at_end():
            raise self.error("end of text in a character literal")
        self.pos += 2 if self.text[self.pos] == "\\" else 1
        return self.text[start : self.pos]

    def atom(self) -> str:
        start = self.pos
        while not self.at_end() and self.text[self.pos] not in _DELIMITERS:
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        return self.text[start : self.pos]
