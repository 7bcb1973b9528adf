"""A debugging statement typed in is not learned as a fix, though a diagnostic goes with it."""

from __future__ import annotations

from fixlore.abstraction import Extracted, Skipped, SkipReason, extract_pattern
from fixlore.abstraction._debugging import only_debugging
from tests.abstraction._helpers import code, diag_at

RET504 = "Unnecessary assignment to `{}` before `return` statement"


def test_a_print_that_makes_ret504_go_is_not_learned() -> None:
    before = code(
        """
        def measure(items):
            total = sum(items)
            return total
        """
    )
    diag = diag_at(before, "total", "Ruff", "RET504", RET504.format("total"), nth=1)
    for inserted in ("print(repr(total))", "print('--', total)", "breakpoint()", "import pdb; pdb.set_trace()"):
        after = before.replace("    return", f"    {inserted}\n    return")
        result = extract_pattern("python", before, after, diag)
        assert isinstance(result, Skipped) and result.reason is SkipReason.NOT_A_FIX, (inserted, result)
        assert result.detail == "a debugging statement"


def test_a_debugger_import_at_the_top_and_its_call_are_not_learned_either() -> None:
    before = "import os\n\n\ndef load(path):\n    data = os.stat(path)\n    return 1\n"
    after = "import os\nimport pdb\n\n\ndef load(path):\n    data = os.stat(path)\n    pdb.set_trace()\n    return 1\n"
    message = "Local variable `data` is assigned to but never used"
    result = extract_pattern("python", before, after, diag_at(before, "data", "Ruff", "F841", message))
    assert isinstance(result, Skipped) and result.detail == "a debugging statement", result


def test_an_inserted_import_that_fixes_is_still_learned() -> None:
    before = "def load(path):\n    return os.stat(path)\n"
    after = "import os\n\n\ndef load(path):\n    return os.stat(path)\n"
    result = extract_pattern("python", before, after, diag_at(before, "os", "Ruff", "F821", "Undefined name `os`"))
    assert isinstance(result, Extracted), result


def test_what_counts_as_debugging() -> None:
    assert only_debugging("python", ["    print(x)\n"])
    assert only_debugging("python", ["    from pprint import pprint\n", "    pprint(x)\n"])
    assert not only_debugging("python", ["    logger.info(x)\n"])  # logging stays: it may be the fix
    assert not only_debugging("python", ["    print(x)\n    return x\n"])
    assert not only_debugging("python", ["    x.print()\n"])
    assert not only_debugging("python", ["\n"])
    assert only_debugging("typescript", ["  console.log(value);\n"])
    assert only_debugging("javascript", ["  debugger;\n"])
    assert not only_debugging("typescript", ["  console.log(value);\n  return value;\n"])
    assert not only_debugging("go", ["\tfmt.Println(x)\n"])  # other languages: not judged
