"""A parse that shares the GIL (the server's) gives the tree a parse in one go gives, and lets the loop run."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from fixlore.abstraction import _tree, share_gil_while_parsing
from fixlore.abstraction._tree import SHARE_CHUNK, Source

LINE = "def f_{i}(a, b='é🔑'):\n    return a + b  # ½ ünïcode {i}\n"


def _nodes(src: Source) -> list[tuple[str, int, int]]:
    out, stack = [], [src.root]
    while stack:
        node = stack.pop()
        out.append((node.type, node.start_byte, node.end_byte))
        stack.extend(node.children)
    return out


@pytest.fixture
def sharing() -> Iterator[None]:
    was = _tree._share_gil
    share_gil_while_parsing(True)
    yield
    share_gil_while_parsing(was)


def _in_one_go(language: str, text: str, previous: Source | None = None) -> Source:
    was = _tree._share_gil
    share_gil_while_parsing(False)
    try:
        return Source(language, text, previous=previous)
    finally:
        share_gil_while_parsing(was)


@pytest.mark.parametrize("lines", [10, 700, 3000])
def test_a_sharing_parse_gives_the_same_tree(sharing: None, lines: int) -> None:
    # Multi-byte characters on every line: chunk ends fall inside characters.
    text = "".join(LINE.format(i=i) for i in range(lines))
    assert lines < 100 or len(text.encode()) > 4 * SHARE_CHUNK
    shared = Source("python", text)
    assert _nodes(shared) == _nodes(_in_one_go("python", text))
    assert not shared.root.has_error
    edited = text.replace("return a + b", "return (a - b", 1)  # incrementally, from the version before
    assert _nodes(Source("python", edited, previous=shared)) == _nodes(_in_one_go("python", edited))


def test_other_threads_run_while_a_sharing_parse_runs(sharing: None) -> None:
    text = "".join(f"value_{i} = compute({i}, 'text', [{i}, {i + 1}])\n" for i in range(25_000))  # ~1 MB
    done = threading.Event()
    trees: list[Source] = []

    def parse() -> None:
        trees.append(Source("python", text))
        done.set()

    thread = threading.Thread(target=parse)
    turns = 0
    thread.start()
    while not done.is_set():
        time.sleep(0.0005)  # an event loop's turn: wakes, wants the GIL, runs a little
        turns += 1
    thread.join()
    assert len(trees) == 1 and not trees[0].root.has_error
    # ~130 chunks, the GIL given up before each: this thread gets a turn about as often (measured
    # 156; in one go 8, in 300 ms of parsing on a loaded machine).
    assert turns >= 50, turns
