"""A document parsed again from its previous version gets the tree a fresh parse gives."""

from __future__ import annotations

import random

import pytest

from fixlore.abstraction._tree import Source, _edited_tree

BASE = """\
import os


def size(path, unit=1024):
    total = 0
    for name in os.listdir(path):
        total += os.path.getsize(os.path.join(path, name))
    return total // unit


class Box:
    def __init__(self, items):
        self.items = list(items)
"""

PIECES = ["", "x", "\n", "    ", "(", ")", "é", "# note\n", "def f(:\n", "'''", "pass\n", "🔑"]


def _nodes(src: Source) -> list[tuple[str, int, int]]:
    out, stack = [], [src.root]
    while stack:
        node = stack.pop()
        out.append((node.type, node.start_byte, node.end_byte))
        stack.extend(node.children)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_incremental_tree_equals_a_fresh_parse(seed: int) -> None:
    rng = random.Random(seed)
    previous = Source("python", BASE)
    text = BASE
    for _ in range(6):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.randrange(12))
        text = text[:start] + rng.choice(PIECES) + text[end:]
        incremental = Source("python", text, previous=previous)
        fresh = Source("python", text)
        assert _nodes(incremental) == _nodes(fresh)
        assert incremental.root.has_error == fresh.root.has_error
        previous = incremental


def test_another_language_is_parsed_afresh() -> None:
    js = Source("javascript", "let a = 1;\n", previous=Source("python", BASE))
    assert _nodes(js) == _nodes(Source("javascript", "let a = 1;\n"))


def test_another_document_is_parsed_afresh() -> None:
    """A file just opened shares little with the text parsed before it: no re-parse from that tree (slower)."""
    previous = Source("python", BASE)
    other = "import sys\n\n\nclass Reader:\n    def read(self):\n        return sys.stdin.read()\n"
    assert _edited_tree(previous, other.encode()) is None
    edited = BASE.replace("total = 0", "total = 1")
    assert _edited_tree(previous, edited.encode()) is not None
    assert _nodes(Source("python", other, previous=previous)) == _nodes(Source("python", other))
