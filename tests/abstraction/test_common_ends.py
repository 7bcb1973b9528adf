"""``common_ends``: the lines two texts share at their head and tail, found by halving, as a loop finds them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixlore.abstraction import common_ends

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "", "a"]), max_size=30)


def _one_by_one(old: list[str], new: list[str]) -> tuple[int, int]:
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


@settings(max_examples=500, deadline=None)
@given(old=LINES, new=LINES, shared=LINES)
def test_the_same_ends_as_a_loop_over_the_lines(old: list[str], new: list[str], shared: list[str]) -> None:
    for a, b in (
        (old, new),
        (shared + old, shared + new),
        (old + shared, new + shared),
        (shared + old + shared, shared),
    ):
        assert common_ends(a, b) == _one_by_one(a, b)
        assert common_ends(tuple(a), tuple(b)) == _one_by_one(a, b)  # any sequence, left as it was
        assert common_ends(a, b) == common_ends(list(a), list(b))


def test_a_change_in_the_middle_of_a_long_file() -> None:
    old = [f"line {i}\n" for i in range(5000)]
    new = [*old[:1234], "changed\n", *old[1236:]]
    assert common_ends(old, new) == (1234, 3764)
    assert old[0] == "line 0\n" and new[-1] == "line 4999\n"  # the inputs are not reordered
