"""Regenerate ``patterns.json``, the base knowledge, from real ruff messages.

Run ``python -m fixlore.knowledge.base.generate`` after the abstraction's
templating changes or a ruff upgrade: the patterns are built with
``abstract_rule_action`` exactly as the server builds them for the actions of
``ruff server``, so their fingerprints match at run time. Each rule gets its
fix (mostly accepted, mostly verified) and ruff's "Disable for this line"
(mostly rejected), with modest counts: anything the user does outranks them.

Then a few fixes people make by hand where ruff has none (``HAND_FIXES``):
``"%s" % x`` -> ``f"{x}"`` (ruff's own fix stops at ``.format``, which UP032
flags next; only the user's own evidence for ruff's fix outranks this one),
a missing standard-library import, a missing import of a name the project's
other files import (``from six.moves import xrange``, as they write it), an
undefined name that is one typo of a name bound where it stands
(``isisntance`` -> ``isinstance``), a Python 2 builtin Python 3 renamed
(``unicode`` -> ``str``), ``except:`` -> ``except Exception:``,
``type(x) == T`` -> ``type(x) is T`` (and ``!=`` -> ``is not``: identity, as
the rule asks, never ``isinstance``, which would also accept subclasses),
``raise ... from err`` in an ``except`` clause, a forward reference in an
annotation quoted (``task: Task`` above ``class Task`` -> ``task: "Task"``), an ambiguous name renamed
after what it holds (``for l in lines:`` -> ``for line in lines:``, ``l = Locale.parse(…)`` -> ``locale``),
``self`` added to a method that uses it without it
(``def get(key):`` -> ``def get(self, key):``), an unused import in a package's
``__init__.py`` made an explicit re-export (``from .core import thing as thing``:
one of the three remedies ruff's message names, and the only one that changes
neither the package's interface nor what it runs; ruff offers none there), an
unused import of another package's there dropped (``import yaml``: ruff's message
is the one it has for any module, but its fix is withheld in an ``__init__.py``;
elsewhere ruff's own removal is the same edit and is the one shown), and
the earlier, unused import
a redefinition points at dropped (ruff's own F811 fix is missing in some layouts). Each is learned with
``extract_pattern`` from a made-up before/after pair, exactly as the server
learns a user's hand fix, and counts as one such fix in the base scope: it is
offered from the first time a diagnostic of its kind appears (instantiated
for the code at hand, under the same soundness guard as any learned fix),
any fix of the user's own outranks it, and it is never marked preferred
until this user has taken it (preferred marks need the user's own counts).
Patterns the privacy verifier refuses are left out.

``tests/knowledge/test_base_fresh.py`` runs the pinned ruff and fails when a
row here no longer matches what it reports: update the row, then run this.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fixlore.abstraction import (
    COMPAT_NAMES,
    PY3_NAMES,
    DiagnosticInfo,
    Extracted,
    Position,
    TextRange,
    abstract_rule_action,
    extract_pattern,
)

from .._exchange import Record, dump_document
from .._model import Counts
from .._verify import check_privacy

SHIPPED_AT = 1767225600.0  # 2026-01-01; base knowledge does not age
HERE = Path(__file__).parent
SOURCE = "Ruff"
RUFF_VERSION = "0.17.6"
"""The ruff the table below was taken from (the project's pinned one)."""
NOQA_TITLE = "Disable for this line"

# (code, first line of the message, fix title) as ruff reports them, with a
# made-up name where the message names user code. ``ruff server`` appends
# "\n\nhelp: <fix title>" to the message (only the first line counts) and
# offers the fix as "Ruff (<code>): <fix title>".
RUFF = (
    ("F401", "`zz_module` imported but unused", "Remove unused import: `zz_module`"),
    # the title ruff gives its fix of a statement with several unused names (it removes them all)
    ("F401", "`zz_module` imported but unused", "Remove unused import"),
    ("F541", "f-string without any placeholders", "Remove extraneous `f` prefix"),
    ("E711", "Comparison to `None` should be `cond is None`", "Replace with `cond is None`"),
    ("E712", "Avoid equality comparisons to `True`; use `zz_flag:` for truth checks", "Replace with `zz_flag`"),
    ("E713", "Test for membership should be `not in`", "Convert to `not in`"),
    ("E714", "Test for object identity should be `is not`", "Convert to `is not`"),
    (
        "F811",
        "Redefinition of unused `zz_name` from line 1: `zz_name` redefined here",
        "Remove definition: `zz_name`",
    ),
    (
        "F841",
        "Local variable `zz_local` is assigned to but never used",
        "Remove assignment to unused variable `zz_local`",
    ),
    (
        "B006",
        "Do not use mutable data structures for argument defaults",
        "Replace with `None`; initialize within function",
    ),
    ("UP034", "Avoid extraneous parentheses", "Remove extraneous parentheses"),
    ("W291", "Trailing whitespace", "Remove trailing whitespace"),
    ("W293", "Blank line contains whitespace", "Remove whitespace from blank line"),
    ("I001", "Import block is un-sorted or un-formatted", "Organize imports"),
)
FIX_COUNTS = Counts(offered=5, accepted=4, rejected=1, succeeded=4)
NOQA_COUNTS = Counts(offered=5, accepted=1, rejected=4, succeeded=1)


def _renamed_call(old: str, new: str, header: str = "") -> tuple[str, str, tuple[int, int, int, int], str, str]:
    """A hand fix of "Undefined name `old`" in ``return old(zz_value)``: ``new`` called instead."""
    line = header.count("\n") + 1
    before = f"{header}def zz_text(zz_value):\n    return {old}(zz_value)\n"
    return ("F821", f"Undefined name `{old}`", (line, 11, line, 11 + len(old)), before, before.replace(old, new))


# (code, message, diagnostic range (0-based line, column, end line, end column),
# before, after[, the file's name where ruff's message depends on it: F401 in a
# package's ``__init__.py``]): made-up code, the diagnostic as the pinned ruff reports it on
# ``before``, and the fix a person makes by hand. Standard-library imports are
# learned over a hole (any module, any exported name: see
# ``abstraction/_imports.py``); the ``raise`` ones bind the caught exception's
# name, or name it when the clause has none.

_RAISE_FROM = (
    "Within an `except` clause, raise exceptions with `raise ... from err` or `raise ... from None`"
    " to distinguish them from errors in exception handling"
)
_Range = tuple[int, int, int, int]
HandFix = tuple[str, str, _Range, str, str] | tuple[str, str, _Range, str, str, str]
"""A row of :data:`HAND_FIXES` (see the comment above it)."""

HAND_FIXES: tuple[HandFix, ...] = (
    (
        "UP031",
        "Use format specifiers instead of percent format",
        (1, 11, 1, 47),
        'def zz_label(zz_name, zz_count):\n    return "%s: %s items" % (zz_name, zz_count)\n',
        'def zz_label(zz_name, zz_count):\n    return f"{zz_name}: {zz_count} items"\n',
    ),
    (
        "UP031",
        "Use format specifiers instead of percent format",
        (1, 11, 1, 21),  # ruff has no fix for %d: its diagnostic covers the literal alone
        'def zz_label(zz_count):\n    return "%d items" % zz_count\n',
        'def zz_label(zz_count):\n    return f"{zz_count:d} items"\n',
    ),
    (
        "W605",
        "Invalid escape sequence: `\\d`",
        (2, 26, 2, 28),  # ruff offers only the doubled backslash: a raw string would spell the tab otherwise
        'import re\n\nZZ_DIGITS = re.compile("\\t\\d+")\n',
        'import re\n\nZZ_DIGITS = re.compile(r"\\t\\d+")\n',
    ),
    (
        "E722",
        "Do not use bare `except`",
        (6, 4, 6, 10),
        "import zz_mod\n\n\ndef zz_load(zz_path):\n    try:\n        return zz_mod.zz_read(zz_path)\n"
        "    except:\n        return None\n",
        "import zz_mod\n\n\ndef zz_load(zz_path):\n    try:\n        return zz_mod.zz_read(zz_path)\n"
        "    except Exception:\n        return None\n",
    ),
    (
        "E721",
        "Use `is` and `is not` for type comparisons, or `isinstance()` for isinstance checks",
        (1, 11, 1, 29),
        "def zz_same(zz_a, zz_b):\n    return type(zz_a) == zz_b\n",
        "def zz_same(zz_a, zz_b):\n    return type(zz_a) is zz_b\n",
    ),
    (
        "B904",
        _RAISE_FROM,
        (4, 8, 4, 32),
        "def zz_parse(zz_value):\n    try:\n        return int(zz_value)\n    except ValueError as zz_err:\n"
        "        raise zz_Error(zz_value)\n",
        "def zz_parse(zz_value):\n    try:\n        return int(zz_value)\n    except ValueError as zz_err:\n"
        "        raise zz_Error(zz_value) from zz_err\n",
    ),
    (
        "B904",
        _RAISE_FROM,
        (4, 8, 4, 32),
        "def zz_parse(zz_value):\n    try:\n        return int(zz_value)\n    except ValueError:\n"
        "        raise zz_Error(zz_value)\n",
        "def zz_parse(zz_value):\n    try:\n        return int(zz_value)\n    except ValueError as err:\n"
        "        raise zz_Error(zz_value) from err\n",
    ),
    (
        "E741",
        "Ambiguous variable name: `l`",
        (1, 8, 1, 9),
        "def zz_emit(zz_rows):\n    for l in zz_rows:\n        zz_out(l)\n",
        "def zz_emit(zz_rows):\n    for row in zz_rows:\n        zz_out(row)\n",
    ),
    (
        "E741",
        "Ambiguous variable name: `l`",
        (1, 4, 1, 5),
        "def zz_check():\n    l = zz_mod.Record(1)\n    return l.zz_size\n",
        "def zz_check():\n    record = zz_mod.Record(1)\n    return record.zz_size\n",
    ),
    (
        "F821",
        "Undefined name `zz_itmes`",
        (1, 15, 1, 23),
        "def zz_count(zz_items):\n    return len(zz_itmes)\n",
        "def zz_count(zz_items):\n    return len(zz_items)\n",
    ),
    *(_renamed_call(old, new) for old, new in PY3_NAMES.items()),
    *(_renamed_call(old, "six." + new, "import six\n\n") for old, new in COMPAT_NAMES.items() if old != "long"),
    (
        "F821",
        "Undefined name `long`",
        (3, 38, 3, 42),
        "import six\n\ndef zz_whole(zz_value):\n    return isinstance(zz_value, (int, long))\n",
        "import six\n\ndef zz_whole(zz_value):\n    return isinstance(zz_value, six.integer_types)\n",
    ),
    (
        "F821",
        "Undefined name `zz_Task`",
        (1, 30, 1, 37),
        "class zz_Queue:\n    def zz_put(self, zz_task: zz_Task) -> None:\n        pass\n\n\n"
        "class zz_Task:\n    pass\n",
        'class zz_Queue:\n    def zz_put(self, zz_task: "zz_Task") -> None:\n        pass\n\n\n'
        "class zz_Task:\n    pass\n",
    ),
    (
        "F821",
        "Undefined name `self`",
        (2, 15, 2, 19),
        "class zz_Store:\n    def zz_get(zz_key):\n        return self.zz_items[zz_key]\n",
        "class zz_Store:\n    def zz_get(self, zz_key):\n        return self.zz_items[zz_key]\n",
    ),
    (
        "F401",
        "`.zz_core.zz_thing` imported but unused; consider removing, adding to `__all__`, or using a redundant alias",
        (0, 21, 0, 29),
        "from .zz_core import zz_thing\nimport os\n\n\ndef zz_where():\n    return os.sep\n",
        "from .zz_core import zz_thing as zz_thing\nimport os\n\n\ndef zz_where():\n    return os.sep\n",
        "__init__.py",  # the message of a package's __init__ (elsewhere the import is dropped: ruff's own fix)
    ),
    (
        "F401",
        "`zz_extra` imported but unused",
        (0, 7, 0, 15),
        "import zz_extra\nimport zz_mod\n\nzz_mod.zz_setup()\n",
        "import zz_mod\n\nzz_mod.zz_setup()\n",
        "__init__.py",  # ruff offers no fix in a package's __init__ (elsewhere its own removal is this fix's twin)
    ),
    (
        "F811",
        "Redefinition of unused `zz_thing` from line 1: `zz_thing` redefined here",
        (3, 19, 3, 27),
        "from zz_pkg import zz_thing\nimport os\n\nfrom zz_pkg import zz_thing\n\nprint(os.sep, zz_thing)\n",
        "import os\n\nfrom zz_pkg import zz_thing\n\nprint(os.sep, zz_thing)\n",
    ),
    (
        "F821",
        "Undefined name `time`",
        (4, 29, 4, 33),
        "import os\n\n\ndef zz_stamp(zz_path):\n    return os.stat(zz_path), time.time()\n",
        "import os\nimport time\n\n\ndef zz_stamp(zz_path):\n    return os.stat(zz_path), time.time()\n",
    ),
    (
        "F821",
        "Undefined name `Path`",
        (4, 11, 4, 15),
        "import os\n\n\ndef zz_where(zz_path):\n    return Path(os.getcwd()) / zz_path\n",
        "import os\nfrom pathlib import Path\n\n\ndef zz_where(zz_path):\n    return Path(os.getcwd()) / zz_path\n",
    ),
    (
        "F821",
        "Undefined name `zz_helper`",
        (4, 11, 4, 20),
        "import os\n\n\ndef zz_join(zz_path):\n    return zz_helper(os.sep, zz_path)\n",
        "import os\n\nfrom zz_pkg.zz_util import zz_helper\n\n\n"
        "def zz_join(zz_path):\n    return zz_helper(os.sep, zz_path)\n",
    ),
)
HAND_COUNTS = Counts(manual=1)
"""One fix made by hand: the least evidence there is, below any of the user's own."""


def lsp_title(code: str, title: str) -> str:
    """A fix's title as ``ruff server`` offers it: ``Ruff (F401): Remove unused import: `x```."""
    return f"{SOURCE} ({code}): {title}"


def records() -> tuple[list[Record], list[str]]:
    """The base records, and the rules left out (refused by the privacy verifier)."""
    zero = Position(0, 0)
    out: list[Record] = []
    skipped: list[str] = []
    for code, message, title in RUFF:
        diag = DiagnosticInfo(SOURCE, code, f"{message}\n\nhelp: {title}", TextRange(zero, zero))
        pair = (
            (abstract_rule_action("python", diag, lsp_title(code, title), "quickfix"), FIX_COUNTS),
            (abstract_rule_action("python", diag, lsp_title(code, NOQA_TITLE), "quickfix"), NOQA_COUNTS),
        )
        if not all(check_privacy(p)[0] for p, _ in pair):
            skipped.append(code)
            continue
        seen = {r.pattern.fingerprint for r in out}  # a rule of two rows has one "Disable for this line"
        out.extend(Record(p, c, SHIPPED_AT, SHIPPED_AT, 1) for p, c in pair if p.fingerprint not in seen)
    for row in HAND_FIXES:
        code, message, (l0, c0, l1, c1), before, after = row[:5]
        diag = DiagnosticInfo(SOURCE, code, message, TextRange(Position(l0, c0), Position(l1, c1)))
        learned = extract_pattern("python", before, after, diag)
        if not isinstance(learned, Extracted) or not check_privacy(learned.pattern)[0]:
            skipped.append(f"{code} (hand fix)")
            continue
        out.append(Record(learned.pattern, HAND_COUNTS, SHIPPED_AT, SHIPPED_AT, 1))
    return out, skipped


def main() -> int:
    """Write ``patterns.json`` next to this file."""
    recs, skipped = records()
    (HERE / "patterns.json").write_text(dump_document(recs, exported_at=SHIPPED_AT), encoding="utf-8")
    print(f"{len(recs)} base patterns written; left out: {', '.join(skipped) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
