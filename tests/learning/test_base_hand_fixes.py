"""Base knowledge's hand fixes: offered from the first diagnostic, for the code at hand, never preferred unasked.

ruff has no fix for a missing import (F821), a bare ``except`` (E722), a type
compared with ``==`` (E721) or a ``raise`` without ``from`` in an ``except``
clause (B904) or a Python 2 builtin Python 3 renamed (F821) or an ambiguous name (E741),
a method without ``self`` (F821) or an unused import of a package's ``__init__.py`` (F401), for a pattern of
``re`` whose other escapes a raw prefix would reread only the doubled backslash (W605), and for ``%`` formatting
(UP031) only one that leaves a
``.format`` call (UP032's next). fixlore ships one
made-up hand fix of each kind (``knowledge/base/generate.py``), learned the way
the server learns a user's; the code here uses other names, modules and shapes
than those examples, so what is checked is that they generalise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import Instantiated, Skipped, apply_edits, instantiate
from fixlore.knowledge.base import generate
from tests.knowledge.test_base_fresh import SHIPPED, _hand, _ruff
from tests.learning._editor import Editor

LEARNED = "Apply learned fix: "

CODE = """\
import sys


def lookup(table, key):
    try:
        return table[key]
    except KeyError as missing:
        raise LookupError(key, len(table))


def first_line(path):
    try:
        return open(path).readline()
    except:
        return ""


def stamp():
    return sys.argv, re.compile("[a-z]+"), defaultdict(list)


def convert(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        sys.stderr.write("no number")
        raise RuntimeError(text)


def same_kind(a, b):
    return type(a) != type(b)


def total(numbers):
    return sum(nubmers)


def widths(text):
    return [len(l) for l in text.splitlines()]
"""

FIXED = {  # (code, line, column): a line of the fixed text
    ("B904", 7, 8): "        raise LookupError(key, len(table)) from missing\n",
    ("E722", 13, 4): "    except Exception:\n",
    ("F821", 18, 21): "import re\nimport sys\n",
    ("F821", 18, 43): "import sys\nfrom collections import defaultdict\n",
    ("B904", 26, 8): '    except (TypeError, ValueError) as err:\n        sys.stderr.write("no number")\n'
    "        raise RuntimeError(text) from err\n",
    ("E721", 30, 11): "    return type(a) is not type(b)\n",
    ("F821", 34, 15): "    return sum(numbers)\n",
    ("E741", 38, 23): "    return [len(line) for line in text.splitlines()]\n",
}


def test_the_shipped_file_holds_one_pattern_per_hand_fix_and_none_of_the_examples_names() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    assert len(_hand()) == len(generate.HAND_FIXES)
    assert "zz_" not in text  # the made-up names of the examples (and of the rule table) stay out
    assert all(p.signature.source == "Ruff" for p in _hand())


@pytest.mark.parametrize(
    ("before", "code", "after"),
    [
        ("try:\n    import yaml\nexcept:\n    yaml = None\n", "E722", "try:\n    import yaml\nexcept Exception:\n"),
        (
            "def f(key):\n    try:\n        g(key)\n    except (OSError, KeyError) as e:\n        log(e)\n"
            "        raise Abort(key, 2)\n",
            "B904",
            "        raise Abort(key, 2) from e\n",
        ),
        ("import os\n\nprint(os.sep, textwrap.dedent('x'))\n", "F821", "import os\nimport textwrap\n"),
        ("x = OrderedDict()\n", "F821", "from collections import OrderedDict\n"),
        # `time` is a module and a function of it: used as a module, only the module import fits,
        # and called, only the function's (either other one fails at run time)
        ("import sys\n\ntime.sleep(len(sys.argv))\n", "F821", "import sys\nimport time\n"),
        ("import sys\n\nstarted = time()\n", "F821", "import sys\nfrom time import time\n"),
        ("if int != node.kind:\n    pass\n", "E721", "if int is not node.kind:\n"),
        ("def f(filename):\n    return open(fileanme)\n", "F821", "    return open(filename)\n"),
        ("if isisntance(x, int):\n    pass\n", "F821", "if isinstance(x, int):\n"),
        # a redefinition: the earlier, unused import goes, the one in use stays
        (
            "from pkg.mod import thing\nimport sys\n\nfrom pkg.mod import thing\n\nprint(sys.argv, thing)\n",
            "F811",
            "import sys\n\nfrom pkg.mod import thing\n\nprint(sys.argv, thing)\n",
        ),
        # code still on Python 2 too: its own name for it, not Python 3's
        (
            "import six\n\ndef f(n):\n    return isinstance(n, (int, long))\n",
            "F821",
            "    return isinstance(n, six.integer_types)\n",
        ),
        # a Python 2 builtin: its Python 3 name, merged into a tuple that has it already
        ("def f(v):\n    return unicode(v).strip()\n", "F821", "    return str(v).strip()\n"),
        ("def f(n):\n    return isinstance(n, (int, long))\n", "F821", "    return isinstance(n, int)\n"),
        ("def f(path):\n    with file(path) as fh:\n        fh.read()\n", "F821", "    with open(path) as fh:\n"),
        # an ambiguous name renamed after what it holds, every use with it
        (
            "def f(lines):\n    for l in lines:\n        print(l)\n",
            "E741",
            "    for line in lines:\n        print(line)\n",
        ),
        (
            "def f(x):\n    l = Locale.parse(x)\n    return l.name\n",
            "E741",
            "    locale = Locale.parse(x)\n    return locale.",
        ),
        # a method that forgot its instance: given it, before the parameters it has
        (
            "class Store:\n    def put(item, *, key=None):\n        self.items[key] = item\n",
            "F821",
            "    def put(self, item, *, key=None):\n",
        ),
        # a pattern of re with a newline escape made raw: ruff offers only the doubled backslash
        (
            'import re\n\nfor m in re.finditer("\\n(\\w+):", text):\n    pass\n',
            "W605",
            'for m in re.finditer(r"\\n(\\w+):", text):\n',
        ),
        # every operand carried over, in order, with its conversion
        (
            'log.info("user %r logged in at %s" % (user.name, when))\n',
            "UP031",
            'log.info(f"user {user.name!r} logged in at {when}")\n',
        ),
    ],
)
def test_each_hand_fix_applies_to_other_code(before: str, code: str, after: str) -> None:
    results = _tried(before, code)
    texts = [apply_edits(before, list(r.edits)) for r in results if isinstance(r, Instantiated) and r.edits]
    assert len(texts) == 1, results
    assert after in texts[0], texts[0]


@pytest.mark.parametrize(
    ("before", "code"),
    [
        ("x = frobnicate()\n", "F821"),  # not a standard-library name: nothing to import
        ("class Store:\n    @staticmethod\n    def put(item):\n        self.items.append(item)\n", "F821"),
        ("def f(self):\n    return self.x, items\n", "F821"),
        ("def f(frame):\n    return Frame(frame)\n", "F821"),  # case alone is not a typo: a class is meant
        ("str = 'x'\nprint(unicode(str))\n", "F821"),  # `str` is not the builtin here
        ("def f(fh):\n    return isinstance(fh, file)\n", "F821"),  # only a call of `file` is `open`
        ("class A:\n    value = 1\n\n    def f(self):\n        return vlaue\n", "F821"),  # not visible there
        # the name the clause would take is the function's parameter: never shadow it
        ("def f(err):\n    try:\n        g(err)\n    except OSError:\n        raise Abort(err)\n", "B904"),
        # a name holding the tuple (two directives, one operand), and a mapping: left alone
        ('def f(pair):\n    return "%s-%s" % pair\n', "UP031"),
        ('def f(data):\n    return "%(name)s is %(age)s" % data\n', "UP031"),
        # bound twice (each its own diagnostic, named after what it holds), a name no code says
        ("def f(a, b):\n    for l in a.lines:\n        g(l)\n    for l in b.links:\n        g(l)\n", "E741"),
        ("def f(x):\n    l = [x, 1]\n    return l\n", "E741"),
        # a raw prefix would reread the escapes of a string that is no pattern of re
        ('import re\n\nprint("\\n\\w+")\n', "W605"),
    ],
)
def test_a_hand_fix_that_does_not_fit_is_not_offered(before: str, code: str) -> None:
    results = _tried(before, code)
    assert results and all(isinstance(r, Skipped) for r in results), results


def test_an_unused_import_of_a_package_is_made_an_explicit_re_export_and_elsewhere_left_to_ruff() -> None:
    text = "from .models import Request, Response\n\n__version__ = '1'\n"
    results = _tried(text, "F401", filename="__init__.py")
    fixed = [apply_edits(text, list(r.edits)) for r in results if isinstance(r, Instantiated)]
    assert fixed == ["from .models import Request as Request, Response\n\n__version__ = '1'\n"], results
    # In a module the re-export's message is not the diagnostic's: the import is dropped there
    # (ruff's own fix, whose twin the removal is: the server shows the one of the two that ranks first).
    elsewhere = _tried(text, "F401")
    fixed = [apply_edits(text, list(r.edits)) for r in elsewhere if isinstance(r, Instantiated)]
    assert fixed == ["from .models import Response\n\n__version__ = '1'\n"], elsewhere


def test_an_unused_import_of_another_package_in_an_init_is_dropped_where_ruff_offers_nothing() -> None:
    text = "import json\nfrom collections import OrderedDict, defaultdict\n\nREGISTRY = defaultdict(list)\n"
    assert "fix" not in _diagnostic_json(text, "F401", "__init__.py")  # ruff withholds its fix in a package
    results = _tried(text, "F401", filename="__init__.py")
    fixed = [apply_edits(text, list(r.edits)) for r in results if isinstance(r, Instantiated)]
    assert fixed == ["from collections import OrderedDict, defaultdict\n\nREGISTRY = defaultdict(list)\n"], results


def _tried(text: str, code: str, filename: str = "x.py") -> list[Any]:
    """Each base hand fix of rule ``code`` instantiated at the pinned ruff's first such diagnostic of ``text``."""
    diag = _diagnostic(_ruff(), text, code, filename)
    return [instantiate(p, "python", text, diag, seen=1) for p in _hand() if p.signature.code == code]


def _diagnostic_json(text: str, code: str, filename: str = "x.py") -> dict[str, Any]:
    """The first diagnostic of ``code`` the pinned ruff reports for ``text``, as its JSON output has it."""
    import json
    import subprocess

    ruff = _ruff()
    assert ruff is not None, "ruff is not installed"
    args = [ruff, "check", "--isolated", "--select", code, "--output-format", "json", "--stdin-filename", filename, "-"]
    found: list[dict[str, Any]] = json.loads(
        subprocess.run(args, input=text, capture_output=True, text=True, check=False).stdout
    )
    return {k: v for k, v in found[0].items() if v is not None}


def _diagnostic(ruff: str | None, text: str, code: str, filename: str = "x.py") -> Any:
    """The first diagnostic of ``code`` the pinned ruff reports for ``text``, as abstraction sees it."""
    from fixlore.abstraction import DiagnosticInfo, Position, TextRange

    assert ruff is not None, "ruff is not installed"
    d = _diagnostic_json(text, code, filename)
    start, end = d["location"], d["end_location"]
    rng = TextRange(Position(start["row"] - 1, start["column"] - 1), Position(end["row"] - 1, end["column"] - 1))
    return DiagnosticInfo("Ruff", d["code"], d["message"], rng)


@pytest.mark.e2e
async def test_a_new_user_is_offered_the_hand_fixes_ruff_has_none_for(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F821", "E722", "B904", "E721", "E741"]\n')
    async with Editor(tmp_path) as editor:
        uri = editor.open("handy.py", CODE)
        await editor.diagnostic(uri, "B904")
        offered: dict[tuple[str, int, int], dict[str, Any]] = {}
        for diag in editor.current(uri):
            actions = await editor.code_actions(uri, diag)
            quick = [a for a in actions if a.get("kind") == "quickfix"]
            assert [a for a in actions if a.get("isPreferred")] == [], "a fix this user never took is applied unasked"
            start = diag["range"]["start"]
            key = (diag["code"], start["line"], start["character"])
            assert quick and quick[0]["title"].startswith(LEARNED), (key, [a["title"] for a in quick])
            offered[key] = quick[0]
        assert set(offered) == set(FIXED)
        for key, fixed in FIXED.items():
            assert fixed in _applied(CODE, await editor.resolved(offered[key]), uri), key

        await editor.apply(offered[("E722", 13, 4)])
        await editor.gone(uri, "E722")
        stats = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1)
        assert stats["counts"]["accepted"] >= 1


@pytest.mark.e2e
async def test_without_base_knowledge_nothing_is_offered(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["E722"]\n')
    async with Editor(tmp_path, settings={"baseKnowledge": False}) as editor:
        uri = editor.open("handy.py", CODE)
        diag = await editor.diagnostic(uri, "E722")
        titles = [a["title"] for a in await editor.code_actions(uri, diag)]
        assert not [t for t in titles if t.startswith(LEARNED)], titles


def _applied(text: str, action: dict[str, Any], uri: str) -> str:
    from fixlore.abstraction import Position, TextEdit, TextRange

    edits = [
        TextEdit(
            TextRange(
                Position(e["range"]["start"]["line"], e["range"]["start"]["character"]),
                Position(e["range"]["end"]["line"], e["range"]["end"]["character"]),
            ),
            e["newText"],
        )
        for e in action["edit"]["changes"][uri]
    ]
    return apply_edits(text, edits)


PERCENT = 'def greet(name, when):\n    return "hello %s, it is %s" % (name, when)\n'


@pytest.mark.e2e
async def test_percent_format_becomes_an_f_string_first_until_the_user_shows_they_want_format(tmp_path: Path) -> None:
    """ruff's own fix leaves ``"…".format(…)``, which UP032 flags next; the f-string ends it in one step."""
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["UP031"]\n')
    async with Editor(tmp_path) as editor:
        uri = editor.open("greet.py", PERCENT)
        diag = await editor.diagnostic(uri, "UP031")
        quick = [a for a in await editor.code_actions(uri, diag) if a.get("kind") == "quickfix"]
        assert quick[0]["title"].startswith(LEARNED), [a["title"] for a in quick]
        assert 'return f"hello {name}, it is {when}"\n' in _applied(PERCENT, await editor.resolved(quick[0]), uri)
        assert not quick[0].get("isPreferred")
        ruffs = next(a for a in quick if "format specifiers" in a["title"])
        await editor.apply(ruffs)  # this user wants `.format`
        await editor.gone(uri, "UP031")
        await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1)
        other = editor.open("other.py", PERCENT.replace("greet", "welcome"))
        diag = await editor.diagnostic(other, "UP031")
        quick = [a for a in await editor.code_actions(other, diag) if a.get("kind") == "quickfix"]
        assert "format specifiers" in quick[0]["title"], [a["title"] for a in quick]


@pytest.mark.e2e
async def test_an_unused_import_in_a_package_gets_a_removal_and_elsewhere_ruffs_own_stays(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F401"]\n')
    (tmp_path / "pkg").mkdir()
    text = "import json\nimport os\n\nHOME = os.sep\n"
    async with Editor(tmp_path) as editor:
        package = editor.open("pkg/__init__.py", text)
        diag = await editor.diagnostic(package, "F401")
        titles = [a["title"] for a in await editor.code_actions(package, diag) if a.get("kind") == "quickfix"]
        assert titles[0] == LEARNED + "Remove `import json`", titles  # ruff's only action there: disable
        module = editor.open("pkg/tool.py", text)
        diag = await editor.diagnostic(module, "F401")
        titles = [a["title"] for a in await editor.code_actions(module, diag) if a.get("kind") == "quickfix"]
        assert titles[0].startswith("Ruff (F401): Remove unused import"), titles  # the twin shown once, ruff's
        assert not [t for t in titles if t.startswith(LEARNED)], titles
        # two unused names of one statement: ruff's fix drops both, above the removal of one
        both = editor.open("pkg/both.py", "from os import sep, getcwd\nimport sys\n\nprint(sys.argv)\n")
        diag = await editor.diagnostic(both, "F401")
        titles = [a["title"] for a in await editor.code_actions(both, diag) if a.get("kind") == "quickfix"]
        assert titles[0] == "Ruff (F401): Remove unused import", titles
