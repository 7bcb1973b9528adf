"""An undefined name fixed with the import the project's other files use: read, learned, offered, kept private.

A user who writes ``from six.moves import xrange`` once for "Undefined name
`xrange`" has taught fixlore the fix "import it as the project does": for
``unichr`` in another file, that is the import of ``unichr`` the project's other
files have. What is stored is the rewrite's name; the module and the name come
from the workspace at the time (memory only).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Instantiated,
    Position,
    Skipped,
    TextRange,
    apply_edits,
    canonical_json,
    extract_pattern,
    instantiate,
)
from fixlore.abstraction._import_lines import statement_binds, top_level_imports, without_imports
from fixlore.lsp.learning.workspace_imports import WorkspaceImports


def _diag(text: str, name: str, nth: int = 0) -> DiagnosticInfo:
    """Ruff's F821 for the ``nth`` use of ``name`` in ``text`` (after its first mention in an import, if any)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(name, at + 1)
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1)
    return DiagnosticInfo(
        "Ruff", "F821", f"Undefined name `{name}`", TextRange(Position(line, col), Position(line, col + len(name)))
    )


LEARN_BEFORE = "import os\n\nfrom quuxlib.compat import zip_longest\n\n\ndef walk(n):\n    return zrange(n), os.sep\n"
LEARN_AFTER = (
    "import os\n\nfrom quuxlib.compat import zip_longest\nfrom quuxlib.moves import zrange\n\n\n"
    "def walk(n):\n    return zrange(n), os.sep\n"
)


def _learned() -> object:
    result = extract_pattern("python", LEARN_BEFORE, LEARN_AFTER, _diag(LEARN_BEFORE, "zrange"))
    assert isinstance(result, Extracted), result
    return result.pattern


def test_top_level_imports_reads_each_name_a_file_binds_and_nothing_else() -> None:
    text = (
        '"""Docs.\n\nimport this module to get going\n"""\n'
        "from __future__ import annotations\n"
        "import os.path, sys\n"
        "import numpy as np\n"
        "from . import errors\n"
        "from ..core.util import (\n    first,  # the first\n    second as snd,\n)\n"
        "from pkg.mod import *\n"
        "try:\n    from cStringIO import StringIO\nexcept ImportError:\n    from io import StringIO\n"
        "def f():\n    import json\n"
    )
    assert top_level_imports(text) == {
        "os": "import os.path",
        "sys": "import sys",
        "np": "import numpy as np",
        "errors": "from . import errors",
        "first": "from ..core.util import first",
        "snd": "from ..core.util import second as snd",
    }
    assert statement_binds("from a.b import c as d") == "d"
    assert statement_binds("import a, b") is None


def test_a_hand_fix_adding_a_project_import_is_learned_as_the_rewrite_without_its_names() -> None:
    pattern = _learned()
    assert dict(pattern.extra).get("rewrite") == "import_as_elsewhere"
    stored = canonical_json(pattern.to_dict())
    for planted in ("quuxlib", "zrange", "zip_longest", "moves", "compat", "walk"):
        assert planted not in stored, planted


def test_a_standard_library_import_stays_the_import_over_holes() -> None:
    before = "def f():\n    return textwrap.dedent('x')\n"
    after = "import textwrap\n\n\ndef f():\n    return textwrap.dedent('x')\n"
    result = extract_pattern("python", before, after, _diag(before, "textwrap"))
    assert isinstance(result, Extracted)
    assert "rewrite" not in dict(result.pattern.extra)
    assert result.pattern.holes


@pytest.mark.parametrize(
    ("code", "name", "statement", "expected"),
    [
        # joins the statement of the same module
        (
            "from vendored.six import PY2\n\n\ndef f(c):\n    return unichr(c) if PY2 else chr(c)\n",
            "unichr",
            "from vendored.six import unichr",
            "from vendored.six import PY2, unichr\n",
        ),
        # a third-party group after the standard library's
        (
            "import sys\n\n\ndef main():\n    return yaml.safe_load(sys.stdin)\n",
            "yaml",
            "import yaml",
            "import sys\n\nimport yaml\n\n\ndef main",
        ),
        # an alias, in a file with no import yet, after its docstring
        ('"""Tools."""\n\ntable = np.zeros(3)\n', "np", "import numpy as np", '"""Tools."""\nimport numpy as np\n'),
        # a relative import
        ("def boom():\n    raise errors.Bad()\n", "errors", "from . import errors", "from . import errors\n"),
    ],
)
def test_the_learned_fix_adds_the_workspace_import_for_another_name(
    code: str, name: str, statement: str, expected: str
) -> None:
    result = instantiate(_learned(), "python", code, _diag(code, name), imports={name: statement})
    assert isinstance(result, Instantiated), result
    fixed = apply_edits(code, list(result.edits))
    assert expected in fixed, fixed
    # nothing else changed: the one import added, the code as it was
    assert top_level_imports(fixed).items() - top_level_imports(code).items() == {(name, statement)}
    assert without_imports(fixed).split() == without_imports(code).split()
    assert result.title == f"Add `{statement}`"
    compile(fixed, "x.py", "exec")


@pytest.mark.parametrize(
    ("imports", "why"),
    [
        (None, "the workspace imports nothing"),
        ({}, "the workspace imports nothing"),
        ({"other": "from m import other"}, "not the name the diagnostic is about"),
        ({"unichr": "from m import other"}, "a statement that binds another name"),
        ({"unichr": "import m, n"}, "more than one name"),
    ],
)
def test_no_workspace_import_for_the_name_means_no_fix(imports: dict[str, str] | None, why: str) -> None:
    code = "def f(c):\n    return unichr(c)\n"
    result = instantiate(_learned(), "python", code, _diag(code, "unichr"), imports=imports)
    assert isinstance(result, Skipped), (why, result)


def test_a_file_that_does_not_parse_gets_no_import() -> None:
    code = "def f(c:\n    return unichr(c)\n"
    result = instantiate(_learned(), "python", code, _diag(code, "unichr"), imports={"unichr": "from m import unichr"})
    assert not isinstance(result, Instantiated)


# -- the server's index ----------------------------------------------------------------------------


def test_the_index_prefers_what_more_files_use_then_the_file_seen_last() -> None:
    index = WorkspaceImports()
    index.update("file:///p/a.py", "from six.moves import xrange\n")
    index.update("file:///p/b.py", "from compat import xrange\n")
    assert index.statement_for("xrange", "file:///p/new.py") == "from compat import xrange"  # a tie: the last
    index.update("file:///p/c.py", "from six.moves import xrange\n")
    assert index.statement_for("xrange", "file:///p/new.py") == "from six.moves import xrange"
    # a file's own imports never answer for itself, and a file read again forgets what it dropped
    index.update("file:///p/a.py", "import os\n")
    index.update("file:///p/c.py", "import os\n")
    assert index.statement_for("xrange", "file:///p/b.py") is None
    assert index.statement_for("xrange", "file:///p/new.py") == "from compat import xrange"
    assert index.statement_for("missing", "file:///p/new.py") is None


def test_a_relative_import_answers_only_in_its_own_folder() -> None:
    index = WorkspaceImports()
    index.update("file:///p/pkg/a.py", "from . import errors\n")
    assert index.statement_for("errors", "file:///p/pkg/b.py") == "from . import errors"
    assert index.statement_for("errors", "file:///p/other/b.py") is None


def test_a_module_is_never_offered_an_import_of_itself() -> None:
    index = WorkspaceImports()
    index.update("file:///p/pkg/utils.py", "from pkg._compat import unichr\nfrom . import errors\n")
    index.update("file:///p/pkg/views.py", "from .errors import Bad\n")
    assert index.statement_for("unichr", "file:///p/pkg/_compat.py") is None
    assert index.statement_for("unichr", "file:///p/pkg/other.py") == "from pkg._compat import unichr"
    assert index.statement_for("errors", "file:///p/pkg/errors.py") is None
    assert index.statement_for("Bad", "file:///p/pkg/errors.py") is None
    assert index.statement_for("Bad", "file:///p/pkg/forms.py") == "from .errors import Bad"
    index.update("file:///p/pkg/app.py", "from pkg import urls\n")
    assert index.statement_for("urls", "file:///p/pkg/urls.py") is None


def test_the_scan_reads_the_project_and_skips_environments_and_hidden_folders(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("from pkg.util import helper\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text("from venvlib import hidden_one\n")
    (tmp_path / "env2").mkdir()
    (tmp_path / "env2" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "env2" / "y.py").write_text("from envlib import env_one\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "z.py").write_text("from nodelib import node_one\n")
    (tmp_path / "big.py").write_text("from biglib import big_one\n" + "#" * 1_100_000)
    index = WorkspaceImports()
    assert index.scan(tmp_path) == 1
    assert index.scan(tmp_path) == 0  # once per root
    assert index.statement_for("helper", "file:///elsewhere.py") == "from pkg.util import helper"
    for name in ("hidden_one", "env_one", "node_one", "big_one"):
        assert index.statement_for(name, "file:///elsewhere.py") is None, name


def test_a_closed_index_reads_nothing_more(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from lib import thing\n")
    index = WorkspaceImports()
    index.close()  # the session ended while the scan waited to start
    assert index.scan(tmp_path, delay=30.0) == 0  # at once, not after the delay
    assert index.statement_for("thing", "file:///other.py") is None


def test_the_editors_text_wins_over_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("from old import thing\n")
    index = WorkspaceImports()
    index.update(path.as_uri(), "from new import thing\n")  # opened, edited, not saved yet
    index.scan(tmp_path)
    assert index.statement_for("thing", "file:///other.py") == "from new import thing"


def _package(root: Path) -> None:
    """``shop`` (a package with a sub-package), a script beside it, and test modules."""
    for folder in ("shop", "shop/money"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "shop" / "money" / "pricing.py").write_text(
        "class Discount:\n    pass\n\n\nasync def quote_total(n):\n    return n\n\n"
        "RATE: float = 0.2\n_hidden = 1\nif RATE == 2:\n    pass\n    def nested():\n        pass\n"
    )
    (root / "shop" / "money" / "__init__.py").write_text("def money_home():\n    pass\n")
    (root / "shop" / "cart.py").write_text("def quote_total(n):\n    return n\n")  # defined twice: ambiguous
    (root / "shop" / "test_cart.py").write_text("def cart_fixture():\n    pass\n")
    (root / "shop" / "conftest.py").write_text("def shop_fixture():\n    pass\n")
    (root / "run.py").write_text("def script_main():\n    pass\n")  # not in a package
    (root / "shop" / "compat.py").write_text("json = None\n")  # a standard-library module's name


def test_a_name_no_file_imports_yet_comes_from_the_one_package_module_defining_it(tmp_path: Path) -> None:
    _package(tmp_path)
    index = WorkspaceImports()
    index.scan(tmp_path)
    here = (tmp_path / "shop" / "checkout.py").as_uri()
    assert index.statement_for("Discount", here) == "from shop.money.pricing import Discount"
    assert index.statement_for("RATE", here) == "from shop.money.pricing import RATE"
    assert index.statement_for("money_home", here) == "from shop.money import money_home"
    for name in ("quote_total", "_hidden", "nested", "cart_fixture", "shop_fixture", "script_main", "json"):
        assert index.statement_for(name, here) is None, name
    # the module itself is never offered an import of its own name
    assert index.statement_for("Discount", (tmp_path / "shop" / "money" / "pricing.py").as_uri()) is None


def test_an_import_the_project_writes_wins_over_the_definition_and_an_edit_updates_both(tmp_path: Path) -> None:
    _package(tmp_path)
    index = WorkspaceImports()
    index.scan(tmp_path)
    here = (tmp_path / "shop" / "checkout.py").as_uri()
    index.update((tmp_path / "shop" / "views.py").as_uri(), "from shop.money import pricing as Discount\n")
    assert index.statement_for("Discount", here) == "from shop.money import pricing as Discount"
    pricing = (tmp_path / "shop" / "money" / "pricing.py").as_uri()
    index.update(pricing, "class Rebate:\n    pass\n")  # the editor renamed the class
    assert index.statement_for("Rebate", here) == "from shop.money.pricing import Rebate"
    assert index.statement_for("RATE", here) is None


def test_a_package_below_a_folder_without_init_may_be_namespaced_and_gets_no_guess(tmp_path: Path) -> None:
    """``acme/tools/__init__.py`` without ``acme/__init__.py`` is ``acme.tools`` (PEP 420), not ``tools``."""
    (tmp_path / "acme" / "tools").mkdir(parents=True)
    (tmp_path / "acme" / "tools" / "__init__.py").write_text("")
    (tmp_path / "acme" / "tools" / "knives.py").write_text("class Knife:\n    pass\n")
    (tmp_path / "src" / "shop").mkdir(parents=True)
    (tmp_path / "src" / "shop" / "__init__.py").write_text("")
    (tmp_path / "src" / "shop" / "money.py").write_text("class Coin:\n    pass\n")
    index = WorkspaceImports()
    opened = (tmp_path / "src" / "shop" / "money.py").as_uri()
    index.start_scan(tmp_path)  # the scan waits a few seconds; the workspace folder is known at once
    index.update(opened, "class Coin:\n    pass\n\n\nclass Note:\n    pass\n")  # opened before the scan
    here = (tmp_path / "app.py").as_uri()
    assert index.statement_for("Note", here) == "from shop.money import Note"
    index.scan(tmp_path)
    assert index.statement_for("Knife", here) is None
    assert index.statement_for("Coin", here) == "from shop.money import Coin"
    index.close()
