"""The role checks of a Python fix parse the statements it edits, framed so they parse alone.

``_python_statement`` picks the innermost run of whole statements that holds
the edits; the frame must keep the run's indentation and must make an emptied
block fail as it would in the file.
"""

from __future__ import annotations

import ast

from fixlore.abstraction._statements import _python_statement
from fixlore.abstraction._tree import Source

CODE = """\
import os


class Box:
    def size(self):
        first = os.sep
        unused = first * 2
        return first

    def only(self):
        value = 1
"""


def _edits_for(old: str, new: str = "") -> list[tuple[int, int, str]]:
    start = CODE.index(old)
    return [(start, start + len(old), new)]


def _parts(edits: list[tuple[int, int, str]]) -> tuple[str, str]:
    found = _python_statement(Source("python", CODE), edits)
    assert found is not None
    return found


def test_a_method_statement_is_parsed_alone_not_with_its_class() -> None:
    old, new = _parts(_edits_for("first * 2", "first * 3"))
    assert "class" not in old and "def size" not in old
    assert "unused = first * 2" in old and "unused = first * 3" in new
    ast.parse(old), ast.parse(new)


def test_a_deleted_line_leaves_a_frame_that_parses() -> None:
    # the human's deletion takes the whole line, indentation and newline
    old, new = _parts(_edits_for("        unused = first * 2\n"))
    assert "unused" in old and "unused" not in new
    ast.parse(old), ast.parse(new)


def test_a_deletion_that_empties_a_block_is_judged_with_the_block_owner() -> None:
    old, new = _parts(_edits_for("        value = 1\n"))
    assert "def only" in old
    try:
        ast.parse(new)
    except SyntaxError:
        pass
    else:
        raise AssertionError("an emptied function body must not parse")


def test_a_top_level_import_removed_is_parsed_without_the_rest_of_the_file() -> None:
    old, new = _parts(_edits_for("import os\n"))
    assert old == "import os\n" and new == ""


def test_a_file_that_does_not_parse_is_left_to_the_whole_file_check() -> None:
    broken = CODE + "def (\n"
    start = broken.index("first * 2")
    assert _python_statement(Source("python", broken), [(start, start + 9, "first")]) is None
