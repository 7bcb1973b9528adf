"""Files of Windows line ends: the same learned fixes as with Unix ones, and edits that keep their line ends."""

from __future__ import annotations

from fixlore.abstraction import Extracted, Instantiated, apply_edits, extract_pattern, instantiate
from fixlore.abstraction._text import lf
from fixlore.lsp.learning.workspace_imports import WorkspaceImports
from tests.abstraction._helpers import code, diag_at, learn

B904 = (
    "Ruff",
    "B904",
    "Within an `except` clause, raise exceptions with `raise ... from err` or `raise ... from None`",
)
F821 = ("Ruff", "F821")


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


LOAD = code(
    """
    def load(path):
        try:
            return open(path)
        except OSError:
            raise Missing(path)
    """
)
PARSE = code(
    """
    import json


    def parse(text):
        try:
            return int(text)
        except ValueError:
            raise BadValue(text)
    """
)


def test_a_fix_learned_on_either_line_ends_applies_to_both_and_keeps_the_documents() -> None:
    after = LOAD.replace("except OSError:", "except OSError as err:").replace(
        "Missing(path)\n", "Missing(path) from err\n"
    )
    for before, fixed in ((LOAD, after), (crlf(LOAD), crlf(after))):
        result = extract_pattern("python", before, fixed, diag_at(before, "raise Missing(path)", *B904))
        assert isinstance(result, Extracted), result
        want = PARSE.replace("except ValueError:", "except ValueError as err:").replace(
            "BadValue(text)\n", "BadValue(text) from err\n"
        )
        for text, expected in ((PARSE, want), (crlf(PARSE), crlf(want))):
            made = instantiate(result.pattern, "python", text, diag_at(text, "raise BadValue(text)", *B904))
            assert isinstance(made, Instantiated), made
            assert apply_edits(text, made.edits) == expected


def test_an_import_added_to_a_file_of_windows_line_ends_is_a_line_of_its_own() -> None:
    before = code(
        """
        import os


        def here():
            return Path(os.getcwd())
        """
    )
    after = before.replace("import os\n", "import os\nfrom pathlib import Path\n")
    pattern = learn("python", before, after, diag_at(before, "Path", *F821, "Undefined name `Path`"))
    text = crlf("import sys\n\n\ndef where():\n    return Path(sys.prefix)\n")
    made = instantiate(pattern, "python", text, diag_at(text, "Path", *F821, "Undefined name `Path`"))
    assert isinstance(made, Instantiated), made
    fixed = apply_edits(text, made.edits)
    assert fixed == crlf("import sys\nfrom pathlib import Path\n\n\ndef where():\n    return Path(sys.prefix)\n")
    assert "\n" not in fixed.replace("\r\n", "")  # no line of Unix ends in among the Windows ones


def test_the_workspace_reads_the_imports_of_a_file_of_windows_line_ends() -> None:
    imports = WorkspaceImports()
    try:
        imports.update("file:///w/a.py", crlf("from acme.billing import Ledger\nimport acme.tax\n"))
        assert imports.statement_for("Ledger", "file:///w/b.py") == "from acme.billing import Ledger"
        assert imports.statement_for("acme", "file:///w/b.py") == "import acme.tax"
    finally:
        imports.close()
    assert lf(crlf(LOAD)) == LOAD and lf(LOAD) is LOAD


def test_a_file_saved_with_a_byte_order_mark_gets_the_same_fixes_at_the_same_places() -> None:
    """Python's compile() refuses a BOM in a str: every parse check refused such a file, so nothing was offered."""
    bom = "\ufeff"
    before = "import sys\n\n\ndef here():\n    return Path(sys.prefix)\n"
    after = before.replace("import sys\n", "import sys\nfrom pathlib import Path\n")
    # learned from a file with a BOM, applied to one with a BOM and to one without
    pattern = learn("python", bom + before, bom + after, diag_at(bom + before, "Path", *F821, "Undefined name `Path`"))
    for text in (bom + crlf(PATH_USE), bom + PATH_USE, PATH_USE):
        made = instantiate(pattern, "python", text, diag_at(text, "Path", *F821, "Undefined name `Path`"))
        assert isinstance(made, Instantiated), made
        fixed = PATH_USE.replace("import os\n", "import os\nfrom pathlib import Path\n")
        want = text.replace(PATH_USE, fixed) if "\r\n" not in text else bom + crlf(fixed)
        assert apply_edits(text, made.edits) == want
    # a fix on the first line, where the BOM is a character before the code
    first = bom + "import os, sys\nprint(sys.argv)\n"
    removal = learn(
        "python",
        "import os, json\nprint(json.dumps(1))\n",
        "import json\nprint(json.dumps(1))\n",
        diag_at("import os, json\n", "os", "Ruff", "F401", "`os` imported but unused"),
    )
    made = instantiate(removal, "python", first, diag_at(first, "os", "Ruff", "F401", "`os` imported but unused"))
    assert isinstance(made, Instantiated), made
    assert apply_edits(first, made.edits) == bom + "import sys\nprint(sys.argv)\n"


PATH_USE = "import os\n\n\ndef where():\n    return Path(os.getcwd())\n"


def test_a_byte_order_mark_is_no_syntax_error_and_an_error_after_it_stays_where_it_is() -> None:
    from fixlore.abstraction import syntax_problems

    assert syntax_problems("python", "\ufeffimport os\r\nx = 1\r\n") == []
    broken = "import os(\nx = 1\n"
    [plain_problem] = syntax_problems("python", broken)
    [bom_problem] = syntax_problems("python", "\ufeff" + broken)
    assert bom_problem.range.start.character == plain_problem.range.start.character + 1
    assert bom_problem.message == plain_problem.message
