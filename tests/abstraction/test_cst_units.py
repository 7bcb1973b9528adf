"""Python units located by libcst: the smallest statement or expression covering a change."""

from __future__ import annotations

from fixlore.abstraction._cst import python_unit
from fixlore.abstraction._shape import statement_at
from fixlore.abstraction._tree import Source

from ._helpers import code, diag_at, learn

E711 = "Comparison to `None` should be `cond is None`"


def _unit_of(text: str, needle: str):  # noqa: ANN202 - a CstUnit
    src = Source("python", text)
    start = src.byte(text.index(needle))
    return src, python_unit(src, start, start + len(needle.encode()))


def test_change_inside_a_call_argument_is_the_comparison_not_the_call() -> None:
    src, unit = _unit_of("log(value == None, other)\n", "==")
    assert unit is not None and unit.kind == "Comparison"
    assert src.slice(unit.start, unit.end) == "value == None"


def test_context_names_enclosing_class_method_and_loop_with_libcst_kinds() -> None:
    text = code("""
        class Box:
            def check(self, items):
                for item in items:
                    return item == None
        """)
    _, unit = _unit_of(text, "==")
    assert unit is not None and unit.context == ("ClassDef", "FunctionDef", "For")


def test_change_of_a_header_keyword_is_the_compound_statement_header() -> None:
    text = "def f(x):\n    if x:\n        return 1\n"
    src, unit = _unit_of(text, "if")
    assert unit is not None and unit.kind == "If" and unit.header
    assert src.slice(unit.start, unit.end) == "if x:"


def test_spans_are_bytes_in_a_file_with_non_ascii_text() -> None:
    text = 'def f(ä):\n    s = "ünïcödé"; t = ä == None\n'
    src, unit = _unit_of(text, "==")
    # A line holding two statements is left to tree-sitter; the statement alone is libcst's.
    assert unit is None
    text = "def f(ä):\n    t = ä == None  # ünïcödé\n"
    src, unit = _unit_of(text, "==")
    assert unit is not None and src.slice(unit.start, unit.end) == "ä == None"


def test_extracted_pattern_unit_and_context_come_from_libcst() -> None:
    before = "class C:\n    def f(self, a):\n        return g(a == None)\n"
    p = learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", "Ruff", "E711", E711))
    assert p.shape is not None and p.shape.unit == "Comparison"
    assert (p.shape.before, p.shape.after) == ("$2 == None", "$2 is None")  # $1 is the message's `cond`
    assert p.context == ("ClassDef", "FunctionDef")


def test_statement_at_a_point_is_the_innermost_and_a_span_climbs_to_a_statement_holding_it() -> None:
    # One helper serves a diagnostic's point (instantiation, extraction) and a
    # change's span (libcst units): the span over two lines of a loop body is
    # the loop, a point inside one line is that line's statement.
    text = code("""
        for item in items:
            total = item
            count = 1
    """)
    src = Source("python", text)
    a, b = src.byte(text.index("total")), src.byte(text.index("1"))
    inner = statement_at(src, a)
    assert inner is not None and src.slice(inner.start_byte, inner.end_byte) == "total = item"
    assert statement_at(src, a, a) == inner
    outer = statement_at(src, a, b)
    assert outer is not None and outer.type == "for_statement"
