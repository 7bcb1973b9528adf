"""A unit's tokens with a limit are the first of its tokens, one past the limit at most."""

from __future__ import annotations

from fixlore.abstraction._templates import Namer
from fixlore.abstraction._tree import parsed, tokens

CODE = (
    "class Basket:\n"
    "    def add(self, item, count=1):\n"
    "        label = 'item %s x %d' % (item, count)\n"
    "        self.items.append((label, f'{item!r}'))\n"
    "        return len(self.items)\n"
)


def test_a_limited_walk_is_a_prefix_of_the_full_one_and_stops_past_the_limit() -> None:
    src = parsed("python", CODE)
    full = tokens(src, 0, len(src.data), Namer())
    assert len(full) > 40
    for limit in (0, 1, 5, 17, len(full) - 1, len(full), len(full) + 3):
        cut = tokens(src, 0, len(src.data), Namer(), limit=limit)
        assert len(cut) <= min(len(full), limit + 1 + 16)  # a string's pieces come in one go
        assert [t.abstract for t in cut] == [t.abstract for t in full[: len(cut)]]
        assert len(cut) > limit or cut == full[: len(cut)] == full
