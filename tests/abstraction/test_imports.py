"""Learned import fixes: one instance covers a class of names, placed where a careful human puts it."""

from __future__ import annotations

from fixlore.abstraction import (
    Extracted,
    Hole,
    Instantiated,
    Pattern,
    Skipped,
    extract_pattern,
    instantiate,
    verify_privacy,
)

from ._helpers import apply, code, diag_at, learn

F821 = ("Ruff", "F821")
W = "Undefined name `Widget`"


def _learn_import(statement: str, name: str) -> Pattern:
    before = f"def f():\n    return {name}.thing\n" if "from" not in statement else f"x = {name}()\n"
    after = f"{statement}\n\n\n{before}"
    return learn("python", before, after, diag_at(before, name, *F821, f"Undefined name `{name}`"))


def _fix(pattern: Pattern, text: str, name: str) -> str:
    return apply(pattern, "python", text, diag_at(text, name, *F821, f"Undefined name `{name}`"))


def test_one_learned_stdlib_import_applies_to_another_stdlib_module() -> None:
    p = _learn_import("import os", "os")
    new = "print(json.dumps(1))\n"
    # a blank line after the new import block, as isort and ruff (I001) want it
    assert _fix(p, new, "json") == "import json\n\nprint(json.dumps(1))\n"


def test_a_stdlib_hole_does_not_bind_a_user_module() -> None:
    p = _learn_import("import os", "os")
    new = "print(mymodule.x)\n"
    result = instantiate(p, "python", new, diag_at(new, "mymodule", *F821, "Undefined name `mymodule`"))
    assert isinstance(result, Skipped)


def test_import_goes_in_sorted_position_among_plain_imports() -> None:
    p = _learn_import("import os", "os")
    new = code("""
        import abc
        import re
        import sys

        print(json.dumps(re, sys, abc))
        """)
    fixed = _fix(p, new, "json")
    assert fixed.splitlines()[:4] == ["import abc", "import json", "import re", "import sys"]


def test_import_goes_before_from_imports_of_its_group() -> None:
    p = _learn_import("import os", "os")
    new = "from pathlib import Path\n\nprint(json.dumps(Path()))\n"
    assert _fix(p, new, "json").splitlines()[:2] == ["import json", "from pathlib import Path"]


def test_stdlib_import_goes_into_the_stdlib_group_not_the_third_party_one() -> None:
    p = _learn_import("import os", "os")
    new = code("""
        import sys

        import attr
        import yaml

        print(json.dumps(sys, attr, yaml))
        """)
    fixed = _fix(p, new, "json")
    assert fixed.splitlines()[:5] == ["import json", "import sys", "", "import attr", "import yaml"]


def test_import_goes_after_future_import_in_its_own_group() -> None:
    p = _learn_import("import os", "os")
    new = '"""Doc."""\nfrom __future__ import annotations\n\nprint(json.dumps(1))\n'
    fixed = _fix(p, new, "json")
    assert fixed.splitlines()[:4] == ['"""Doc."""', "from __future__ import annotations", "", "import json"]


def test_import_goes_after_shebang_and_docstring_above_a_comment_on_code() -> None:
    p = _learn_import("import os", "os")
    new = '#!/usr/bin/env python3\n"""Doc."""\n\n# the entry point\nprint(json.dumps(1))\n'
    fixed = _fix(p, new, "json")
    assert fixed.splitlines()[:3] == ["#!/usr/bin/env python3", '"""Doc."""', "import json"]
    assert fixed.splitlines()[-2:] == ["# the entry point", "print(json.dumps(1))"]


def test_from_import_of_a_stdlib_member_is_lifted_to_member_and_home_holes() -> None:
    p = _learn_import("from pathlib import Path", "Path")
    assert p.shape is not None and p.shape.after == "from $H2 import $H1"
    assert p.signature.message == "Undefined name `$H1`"
    assert p.holes == (Hole("$H1", "python.stdlib_export"), Hole("$H2", "python.stdlib_home"))
    assert verify_privacy(p).ok


def test_from_import_learned_for_path_applies_to_ordered_dict() -> None:
    p = _learn_import("from pathlib import Path", "Path")
    new = "import sys\n\nd = OrderedDict(sys.modules)\n"
    assert _fix(p, new, "OrderedDict").splitlines()[:2] == ["import sys", "from collections import OrderedDict"]


def test_from_import_binds_a_member_the_allowlist_does_not_keep() -> None:
    p = _learn_import("from pathlib import Path", "Path")
    new = "ns = SimpleNamespace(a=1)\n"
    assert _fix(p, new, "SimpleNamespace").splitlines()[0] == "from types import SimpleNamespace"


def test_from_import_joins_an_existing_import_from_the_same_module() -> None:
    p = _learn_import("from pathlib import Path", "Path")
    new = "from collections import defaultdict, deque\n\nd = OrderedDict(defaultdict(deque))\n"
    fixed = _fix(p, new, "OrderedDict")
    assert fixed.splitlines()[0] == "from collections import OrderedDict, defaultdict, deque"


def test_a_name_joining_a_single_imported_name_goes_after_it() -> None:
    """``from six.moves import zip`` + ``xrange``: one name is no sorted list; people append."""
    p = _learn_import("from pathlib import Path", "Path")
    new = "from collections import deque\n\nd = OrderedDict(deque)\n"
    assert _fix(p, new, "OrderedDict").splitlines()[0] == "from collections import deque, OrderedDict"


def test_a_name_joins_a_parenthesised_import_on_a_line_of_its_own() -> None:
    """``from typing import (`` one name per line ``)``, as black writes it: sorted in, trailing comma kept."""
    p = _learn_import("from pathlib import Path", "Path")
    listed = "from typing import (\n    Any,\n    Dict,\n    Optional,\n)\n\n"
    fixed = _fix(p, listed + "x: ContextManager[Any] = Dict()\n", "ContextManager")
    assert fixed.splitlines()[:6] == [
        "from typing import (",
        "    Any,",
        "    ContextManager,",
        "    Dict,",
        "    Optional,",
        ")",
    ]
    last = _fix(p, listed + "x: Union[Any, Dict] = Optional\n", "Union")
    assert last.splitlines()[3:6] == ["    Optional,", "    Union,", ")"]


def test_a_parenthesised_import_in_another_layout_is_left_as_it_is() -> None:
    p = _learn_import("from pathlib import Path", "Path")
    # names sharing a line, and a comment the new name would have to be placed around
    for block in ("from typing import (Any, Dict,\n    Optional)\n\n", "from typing import (\n    Any,  # why\n)\n\n"):
        fixed = _fix(p, block + "x = Union\n", "Union")
        assert fixed.startswith(block.rstrip("\n") + "\nfrom typing import Union\n")


def test_from_import_goes_in_sorted_position_among_from_imports() -> None:
    p = _learn_import("from pathlib import Path", "Path")
    new = "import os\nfrom abc import ABC\nfrom typing import Any\n\nx = dataclass(ABC, Any, os)\n"
    fixed = _fix(p, new, "dataclass")
    assert fixed.splitlines()[:4] == [
        "import os",
        "from abc import ABC",
        "from dataclasses import dataclass",
        "from typing import Any",
    ]


def test_from_import_from_a_module_that_is_not_the_members_home_stays_literal() -> None:
    p = _learn_import("from typing import OrderedDict", "OrderedDict")
    assert p.holes == ()
    assert p.shape is not None and p.shape.after == "from typing import OrderedDict"


def test_from_import_of_a_user_module_is_learned_as_importing_it_as_the_project_does() -> None:
    """The module and the name are the user's: what is kept is "import it as the other files do" (no names)."""
    before = "def f():\n    return Widget\n"
    after = "from mylib import Widget\n\n\n" + before
    result = extract_pattern("python", before, after, diag_at(before, "Widget", *F821, "Undefined name `Widget`"))
    assert isinstance(result, Extracted)
    assert dict(result.pattern.extra)["rewrite"] == "import_as_elsewhere"
    assert "mylib" not in repr(result.pattern) and "Widget" not in repr(result.pattern)


def test_in_a_block_kept_in_no_order_an_import_goes_beside_its_package() -> None:
    """Older code lists imports as they came; people add one next to its package's, not in sort order."""
    from fixlore.abstraction._imports import place_import
    from fixlore.abstraction._tree import Source

    def placed(text: str, statement: str) -> str:
        src = Source("python", text)
        edits = place_import(src, statement)
        assert edits is not None
        data = src.data
        for start, end, new in sorted(edits, reverse=True):
            data = data[:start] + new.encode() + data[end:]
        return data.decode()

    unsorted = "import sys\nimport abc\nimport yaml\nfrom collections import deque\n\nrun(sys, abc, yaml, deque)\n"
    assert placed(unsorted, "from yaml.nodes import Node") == unsorted.replace(
        "import yaml\n", "import yaml\nfrom yaml.nodes import Node\n"
    )
    kin = "import sys\nimport abc\nfrom yaml import load\nfrom yaml.reader import Reader\n\nrun()\n"
    assert placed(kin, "import yaml") == kin.replace("from yaml import load\n", "import yaml\nfrom yaml import load\n")
    assert placed(kin, "from yaml.nodes import Node") == kin.replace(
        "from yaml.reader", "from yaml.nodes import Node\nfrom yaml.reader"
    )
    # a sorted block keeps the sort order, wherever the package's other imports are
    ordered = "import abc\nimport sys\n\nimport yaml\nfrom zipp import Path\n\nrun()\n"
    assert placed(ordered, "import attr") == ordered.replace("import yaml\n", "import attr\nimport yaml\n")


def test_no_import_is_offered_for_a_name_the_module_defines_further_down() -> None:
    """``x: Decimal`` above ``class Decimal:`` is a forward reference: importing ``Decimal`` would shadow it."""
    p = _learn_import("from pathlib import Path", "Path")
    forward = "def run(amount: Decimal) -> None:\n    pass\n\n\nclass Decimal:\n    pass\n"
    result = instantiate(p, "python", forward, diag_at(forward, "Decimal", *F821, "Undefined name `Decimal`"))
    assert isinstance(result, Skipped), result
    # The same name undefined, and the module not defining it: the standard library's import.
    missing = "def run(amount: Decimal) -> None:\n    pass\n"
    assert _fix(p, missing, "Decimal").splitlines()[0] == "from decimal import Decimal"
    # Nor the project's own import of that name from another of its files.
    before = "def f():\n    return Widget\n"
    elsewhere = learn("python", before, "from mylib import Widget\n\n\n" + before, diag_at(before, "Widget", *F821, W))
    imports = {"Widget": "from mylib import Widget"}
    forward = "def show(item: Widget) -> None:\n    pass\n\n\nclass Widget:\n    pass\n"
    result = instantiate(elsewhere, "python", forward, diag_at(forward, "Widget", *F821, W), imports=imports)
    assert isinstance(result, Skipped), result
    assert isinstance(
        instantiate(elsewhere, "python", before, diag_at(before, "Widget", *F821, W), imports=imports), Instantiated
    )


def test_no_import_is_offered_for_a_name_stdlib_modules_export_as_different_things() -> None:
    """``Error`` is copy's, shutil's and csv's: ``from copy import Error`` for ``except Error:`` catches another one."""
    p = _learn_import("from pathlib import Path", "Path")
    new = "try:\n    run()\nexcept Error:\n    pass\n"
    result = instantiate(p, "python", new, diag_at(new, "Error", *F821, "Undefined name `Error`"))
    assert not isinstance(result, Instantiated), result
    for name in ("split", "quote", "escape"):  # re's, os.path's or shlex's; shlex's or urllib's; re's or glob's
        text = f"x = {name}(1)\n"
        assert not isinstance(
            instantiate(p, "python", text, diag_at(text, name, *F821, f"Undefined name `{name}`")), Instantiated
        )
    # One meaning in several modules (typing's OrderedDict is an alias of collections'): the first module's.
    assert _fix(p, "d = OrderedDict()\n", "OrderedDict").splitlines()[0] == "from collections import OrderedDict"
    # Several meanings, one usual (zipfile.Path, datetime.time, string.Formatter are named with their module).
    assert _fix(p, "here = Path(__file__)\n", "Path").splitlines()[0] == "from pathlib import Path"
    assert _fix(p, "started = time()\n", "time").splitlines()[0] == "from time import time"
    assert _fix(p, "f = Formatter()\n", "Formatter").splitlines()[0] == "from logging import Formatter"
