"""fixlore's ``fixlore.accept`` command on every action it returns, and the offers behind its tokens.

Each action fixlore answers with gets a unique title and the command
``fixlore.accept [token]`` (:func:`with_command`); the token names an
:class:`Offer` kept in memory (:class:`Tokens`, bounded): what was offered,
for which diagnostic and text, and the upstream's own command, run after the
acceptance is recorded.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from fixlore.abstraction import Pattern
from fixlore.lsp.actions.preferred import own_edits

ACCEPT = "fixlore.accept"
MAX_TOKENS = 1024


@dataclass
class Offer:
    """What fixlore knows about one action it returned (in memory, behind its token)."""

    pattern: Pattern | None
    siblings: tuple[Pattern, ...]
    invoked: bool
    uri: str
    version: int | None
    diag: dict[str, Any] | None
    text: str
    """The document text at the request (to notice an undo)."""
    original: dict[str, Any] | None
    """The upstream's own command, run at its owner after recording."""
    learned: bool
    twins: tuple[Pattern, ...] = ()
    """Patterns of the other actions that make the same edit (a learned fix and the upstream's own):
    taking this one does not turn them down."""
    done: bool = False
    withheld: dict[str, Any] | None = None
    """The action's WorkspaceEdit, kept back from the answer to be formatted when the editor resolves it."""


class Tokens:
    """A bounded LRU from token to :class:`Offer`."""

    def __init__(self, size: int = MAX_TOKENS) -> None:
        self._size = size
        self._items: OrderedDict[str, Offer] = OrderedDict()
        self._ids = itertools.count(1)

    def new(self, offer: Offer) -> str:
        """Remember ``offer``; returns its token."""
        token = f"t{next(self._ids)}"
        self._items[token] = offer
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return token

    def get(self, token: str) -> Offer | None:
        """The offer behind ``token`` (``None`` if unknown or evicted)."""
        offer = self._items.get(token)
        if offer is not None:
            self._items.move_to_end(token)
        return offer


def token_of(action: Any) -> str | None:
    """Fixlore's token in a raw action's command, if it carries one."""
    command = action.get("command") if isinstance(action, dict) else None
    if isinstance(command, dict) and command.get("command") == ACCEPT:
        args = command.get("arguments") or []
        if args and isinstance(args[0], str):
            return args[0]
    return None


def with_command(action: dict[str, Any], offer: Offer, tokens: Tokens, titles: set[str]) -> dict[str, Any]:
    """The action with a unique title and fixlore's accept command (the upstream's kept in the offer)."""
    out = dict(action)
    title = str(out.get("title", ""))
    unique, n = title, 2
    if unique in titles and (line := _first_line(out, offer.uri)) is not None:
        unique = f"{title} (line {line + 1})"  # the same words for another place: say which
    while unique in titles:
        unique, n = f"{title} ({n})", n + 1
    titles.add(unique)
    out["title"] = unique
    command = out.get("command")
    if isinstance(command, str):
        # A bare Command: it stays a Command, its own call kept for after recording.
        offer.original = {k: v for k, v in out.items() if k in ("title", "command", "arguments")}
        token = tokens.new(offer)
        return {"title": unique, "command": ACCEPT, "arguments": [token]}
    if isinstance(command, dict):
        offer.original = command
    token = tokens.new(offer)
    out["command"] = {"title": unique, "command": ACCEPT, "arguments": [token]}
    return out


def _first_line(action: dict[str, Any], uri: str) -> int | None:
    """The line (0-based) where ``action``'s inline edit of ``uri`` starts, if it carries one.

    Two actions may have one title and edit different places: a learned
    "Remove `from time import sleep`" for a redefinition, and the same words
    for the import it redefines. A menu of "X" and "X (2)" does not say which is which.
    """
    edits = own_edits(action, uri)
    try:
        line = edits[0]["range"]["start"]["line"]
    except (TypeError, KeyError, IndexError):
        return None
    return line if isinstance(line, int) and line >= 0 else None
