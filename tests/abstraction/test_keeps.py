"""What an edit keeps of the user's code: the check behind an upstream fix's preferred mark."""

from __future__ import annotations

import pytest

from fixlore.abstraction.keeps import deletes_code, words_and_numbers


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("total == None", "total is None"),  # a keyword swapped, the names kept
        ("u'label'", "'label'"),  # a string prefix
        ("u'", ""),  # ruff's UP025 edit deletes the prefix alone (the region is read with the quote after it)
        ('"%s items" % count', 'f"{count} items"'),  # a name moved into an f-string field
        ("(first, rest) = pair", "first, rest = pair"),
        ("(\n    value\n)", "value"),  # parentheses and layout
        ("'single'", '"single"'),  # a quote style: string contents are not code
        ("var depth = 3", "let depth = 3"),  # a JavaScript keyword
        ("`a ${first} b`", "'a ' + first + ' b'"),  # a template literal's field is code
    ],
)
def test_an_edit_that_keeps_every_name_and_number(old: str, new: str) -> None:
    assert not deletes_code([(old, new)])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("super(Widget, self)", "super()"),
        ('getattr(handle, "buffer")', "handle.buffer"),
        ("(object)", ""),
        ("import textwrap\n", ""),
        ('"{} of {}".format(part, whole)', 'f"{part} of {whole}"'),  # `.format` goes
        ("retries = 3", "retries = 4"),
        ('f"{left!r:>{width}}"', 'f"{left}"'),  # a nested field's name
    ],
)
def test_an_edit_that_deletes_a_name_or_number(old: str, new: str) -> None:
    assert deletes_code([(old, new)])


def test_the_edits_of_one_fix_count_together() -> None:
    """A name one edit removes and another puts back (a move) is kept."""
    assert not deletes_code([("import zlib\n", ""), ("", "import zlib\n")])
    assert deletes_code([("import zlib\n", ""), ("", "import gzip\n")])


def test_fields_of_format_strings_are_code_and_their_text_is_not() -> None:
    assert words_and_numbers('f"{{literal}} {obj.attr!s} 12"') == {"w:obj": 1, "w:attr": 1}
    assert words_and_numbers("x = 0x1F + 1.5e3") == {"w:x": 1, "n:0x1F": 1, "n:1.5e3": 1}
