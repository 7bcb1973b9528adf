"""The names a learned fix brought in, remembered in memory for the session: never stored.

A fix that brings in a name of the user's project (``assert_true(k in d)`` ->
``assert_in(k, d)``, ``assert False`` -> ``checks.fail()``) is learned as a
pattern whose after-shape has a placeholder nothing binds: privacy keeps the
name out of the store, so the pattern could not apply anywhere, not even to
the next place the user fixes the same way. The extractor hands the server
those names beside the pattern (``Extracted.brought``); this keeps them, per
pattern, in the server's memory, and the instantiation worker binds the
placeholders with them. The result is checked like any other learned fix: the
name must be bound where the fix lands (imported, defined, a parameter), or
the fix is not offered.

Why this is private: the names live only in this process, beside the
documents the editor sent it, and go only to the instantiation worker (a
child process, over a pipe). They are never written to the knowledge store,
a workspace file, an export, a log or the team database, and are gone when
the server stops; the patterns stay what they were, abstract. A placeholder
binds its name only once the same fix brought in that same name
:data:`TIMES` times; one that brought in different names is no habit of one
name and stays unbound.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping

from fixlore.abstraction import first_line, quoted_names

TIMES = 2
"""A placeholder binds its name once the fix brought that same name in this many times: a habit, not an example."""
MAX_PATTERNS = 4096
"""Patterns whose names are remembered (the least recently learned forgotten first)."""

_MIXED = ""
"""A placeholder that brought in different names: left unbound."""


Key = tuple[str, tuple[str, ...]]
"""A pattern's fingerprint and the names its diagnostic's message quotes."""


def key_of(fingerprint: str, message: str) -> Key:
    """What names are remembered under: the pattern, and the names the diagnostic is about.

    The names a fix brought in belong to what it fixed: the same fix of
    "Undefined name `key`" twice (``attr`` for ``key``) says nothing of
    "Undefined name `err`" (a replay of real fixes offered ``attr`` there). A
    message that quotes no name keys the pattern alone.
    """
    return fingerprint, subject_of(message)


def subject_of(message: str) -> tuple[str, ...]:
    """The names a diagnostic's message quotes (its first line): the second half of a :data:`Key`."""
    return tuple(quoted_names(first_line(message)))


class Recall:
    """Per pattern and diagnostic subject (:func:`key_of`): placeholder -> the one name it brought in."""

    def __init__(self) -> None:
        self._names: collections.OrderedDict[Key, dict[str, tuple[str, int]]] = collections.OrderedDict()
        """key -> placeholder -> (the name it brought in, how many times)."""

    def remember(self, key: Key, brought: Iterable[tuple[str, str]]) -> None:
        """A fix (pattern and diagnostic: ``key``) was made, bringing in ``brought`` (placeholder, name)."""
        brought = tuple(brought)
        if not brought:
            return
        names = self._names.setdefault(key, {})
        self._names.move_to_end(key)
        for placeholder, name in brought:
            known, times = names.get(placeholder, (name, 0))
            names[placeholder] = (name, times + 1) if known == name else (_MIXED, 0)
        while len(self._names) > MAX_PATTERNS:
            self._names.popitem(last=False)

    def names(self, key: Key) -> Mapping[str, str]:
        """What the pattern brings in for this subject (placeholders that brought in one name, often enough)."""
        names = self._names.get(key)
        if not names:
            return {}
        return {placeholder: name for placeholder, (name, times) in names.items() if times >= TIMES}

    def names_of(self, fingerprints: Iterable[str], message: str) -> dict[str, Mapping[str, str]]:
        """By fingerprint, what each of these patterns brings in for a diagnostic saying ``message``.

        Nothing to do while nothing is remembered (most sessions): a publish asks
        this for every diagnostic that has learned fixes, on the event loop.
        """
        if not self._names:
            return {}
        subject = subject_of(message)
        return {fp: names for fp in fingerprints if (names := self.names((fp, subject)))}

    def clear(self) -> None:
        """Forget everything (the session ends)."""
        self._names.clear()

    def __len__(self) -> int:
        return len(self._names)
