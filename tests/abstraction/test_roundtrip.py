"""Round trip: a pattern learned from one fix applies to a different instance with other names."""

from __future__ import annotations

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Instantiated,
    Skipped,
    SkipReason,
    apply_edits,
    extract_pattern,
    instantiate,
    syntax_problems,
)

from ._helpers import apply, code, diag_at, learn

E711 = "Comparison to `None` should be `cond is None`"


def test_undefined_name_add_import_applies_to_another_module_name() -> None:
    before = "def load(path):\n    return os.getcwd(path)\n"
    after = "import os\n\n\n" + before
    p = learn("python", before, after, diag_at(before, "os", "Ruff", "F821", "Undefined name `os`"))
    new = code('''
        """Module doc."""
        import sys
        from pathlib import Path


        def render(tpl):
            return json.dumps(tpl)
        ''')
    fixed = apply(p, "python", new, diag_at(new, "json", "Ruff", "F821", "Undefined name `json`"))
    # Into the standard-library group, in isort's order (plain imports first, then by module).
    assert fixed.splitlines()[1:5] == ["import json", "import sys", "from pathlib import Path", ""]


def test_an_import_of_the_undefined_name_learned_from_a_user_module_imports_it_as_other_files_do() -> None:
    """``import yamlish`` for "Undefined name `yamlish`" says nothing of other names (``import unicode``).

    It is learned as "import the name as the project's other files do": the
    statement comes from the workspace at the time, for the name at hand.
    """
    before = "def load(path):\n    return yamlish.safe_load(path)\n"
    after = "import yamlish\n\n\n" + before
    result = extract_pattern(
        "python", before, after, diag_at(before, "yamlish", "Ruff", "F821", "Undefined name `yamlish`")
    )
    assert isinstance(result, Extracted)
    new = "import sys\n\nconfig = tomlish.load(sys.stdin)\n"
    diag = diag_at(new, "tomlish", "Ruff", "F821", "Undefined name `tomlish`")
    assert isinstance(instantiate(result.pattern, "python", new, diag), Skipped)
    placed = instantiate(result.pattern, "python", new, diag, imports={"tomlish": "import tomlish"})
    assert isinstance(placed, Instantiated)
    assert apply_edits(new, list(placed.edits)) == "import sys\n\nimport tomlish\n\nconfig = tomlish.load(sys.stdin)\n"


def test_add_import_goes_after_docstring_when_the_file_has_no_imports() -> None:
    before = "def load(path):\n    return os.getcwd(path)\n"
    after = "import os\n\n\n" + before
    p = learn("python", before, after, diag_at(before, "os", "Ruff", "F821", "Undefined name `os`"))
    new = '"""Doc."""\n\nvalue = json.loads("")\n'
    fixed = apply(p, "python", new, diag_at(new, "json", "Ruff", "F821", "Undefined name `json`"))
    assert fixed == '"""Doc."""\nimport json\n\nvalue = json.loads("")\n'


def test_is_none_applies_to_another_variable_and_keeps_layout() -> None:
    before = "def check(value):\n    if value == None:\n        return 0\n"
    p = learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", "Ruff", "E711", E711))
    new = "while other_thing  ==  None:\n    pass\n"
    fixed = apply(p, "python", new, diag_at(new, "None", "Ruff", "E711", E711))
    assert fixed == "while other_thing  is  None:\n    pass\n"


def test_unused_variable_removal_applies_to_another_function() -> None:
    before = "def h():\n    unused_thing = compute(3)\n    return 2\n"
    after = "def h():\n    return 2\n"
    msg = "Local variable `{}` is assigned to but never used"
    p = learn("python", before, after, diag_at(before, "unused_thing", "Ruff", "F841", msg.format("unused_thing")))
    new = "class K:\n    def run(self):\n        result = fetch_rows(10)\n        self.go()\n"
    fixed = apply(p, "python", new, diag_at(new, "result", "Ruff", "F841", msg.format("result")))
    assert fixed == "class K:\n    def run(self):\n        self.go()\n"


def test_missing_colon_applies_to_another_def() -> None:
    before = "def area(width)\n    return width\n"
    after = "def area(width):\n    return width\n"
    problem = syntax_problems("python", before)[0]
    p = learn("python", before, after, DiagnosticInfo("fixlore", problem.code, problem.message, problem.range))
    new = "import os\n\ndef volume(depth)\n    return os.sep\n"
    problem = syntax_problems("python", new)[0]
    fixed = apply(p, "python", new, DiagnosticInfo("fixlore", problem.code, problem.message, problem.range))
    assert fixed == "import os\n\ndef volume(depth):\n    return os.sep\n"


def test_javascript_strict_equality_applies_elsewhere() -> None:
    before = "function f(item) {\n  if (item == null) { return 0; }\n}\n"
    msg = "Expected '===' and instead saw '=='."
    p = learn("javascript", before, before.replace("==", "==="), diag_at(before, "==", "eslint", "eqeqeq", msg))
    new = "const z = (thing) => thing == null ? 1 : 2;\n"
    assert apply(p, "javascript", new, diag_at(new, "==", "eslint", "eqeqeq", msg)) == new.replace("==", "===")


def test_bash_quoting_applies_to_another_command() -> None:
    msg = "Double quote to prevent globbing and word splitting."
    before = "#!/bin/bash\nrm -rf $target_dir\n"
    p = learn(
        "shellscript",
        before,
        before.replace("$target_dir", '"$target_dir"'),
        diag_at(before, "$target_dir", "shellcheck", "SC2086", msg),
    )
    new = "#!/bin/bash\ncp $src_file /tmp\n"
    fixed = apply(p, "shellscript", new, diag_at(new, "$src_file", "shellcheck", "SC2086", msg))
    assert fixed == '#!/bin/bash\ncp "$src_file" /tmp\n'


def test_guard_is_inserted_above_the_statement_with_its_indentation() -> None:
    before = "def first(person):\n    return person.name\n"
    after = "def first(person):\n    if person is None:\n        return None\n    return person.name\n"
    msg = '"name" is not a known attribute of "None"'
    p = learn("python", before, after, diag_at(before, "person.name", "pyright", "reportOptionalMemberAccess", msg))
    new = "class C:\n    def m(self, item):\n        x = 1\n        print(item.name)\n"
    d = diag_at(new, "item.name", "pyright", "reportOptionalMemberAccess", msg)
    result = instantiate(p, "python", new, d)
    # $2 (the guarded name) is not in the message: the pattern cannot know what to guard.
    assert isinstance(result, Skipped) and result.reason is SkipReason.NO_MATCH


def test_pattern_does_not_apply_to_a_different_diagnostic() -> None:
    before = "def check(value):\n    if value == None:\n        return 0\n"
    p = learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", "Ruff", "E711", E711))
    new = "x = y == None\n"
    result = instantiate(p, "python", new, diag_at(new, "y", "Ruff", "F821", "Undefined name `y`"))
    assert isinstance(result, Skipped) and result.reason is SkipReason.SIGNATURE_MISMATCH


def test_instantiation_that_would_not_parse_offers_nothing() -> None:
    before = "def h():\n    unused_thing = compute(3)\n    return 2\n"
    after = "def h():\n    return 2\n"
    msg = "Local variable `{}` is assigned to but never used"
    p = learn("python", before, after, diag_at(before, "unused_thing", "Ruff", "F841", msg.format("unused_thing")))
    new = "def only():\n    result = fetch_rows(10)\n"  # deleting the only statement leaves an empty body
    result = instantiate(p, "python", new, diag_at(new, "result", "Ruff", "F841", msg.format("result")))
    assert isinstance(result, Skipped) and result.reason is SkipReason.DOES_NOT_PARSE
    assert not isinstance(result, Instantiated)


def test_an_added_keyword_argument_is_written_without_spaces_and_on_its_own_line_where_arguments_are() -> None:
    msg = "No explicit `stacklevel` keyword argument found"

    def call(name: str, layout: str) -> str:
        return f"import warnings\n\n\ndef {name}():\n    warnings.warn({layout})\n"

    per_line = '\n        "{}",\n        FutureWarning,\n    '
    before = call("old", per_line.format("gone soon"))
    after = before.replace("FutureWarning,\n", "FutureWarning,\n        stacklevel=2,\n")
    p = learn("python", before, after, diag_at(before, "warnings.warn", "Ruff", "B028", msg))

    other = call("new", per_line.format("later"))
    assert apply(p, "python", other, diag_at(other, "warnings.warn", "Ruff", "B028", msg)) == other.replace(
        "FutureWarning,\n", "FutureWarning,\n        stacklevel=2,\n"
    )
    one_line = call("new", '"later", FutureWarning,')
    assert apply(p, "python", one_line, diag_at(one_line, "warnings.warn", "Ruff", "B028", msg)) == call(
        "new", '"later", FutureWarning, stacklevel=2,'
    )


def test_a_fix_learned_inside_a_function_applies_at_module_level() -> None:
    """The unit is the call, not the function body it was alone in."""
    msg = "No explicit `stacklevel` keyword argument found"
    before = (
        'import warnings\n\n\ndef old():\n    warnings.warn(\n        "gone soon",\n        FutureWarning,\n    )\n'
    )
    after = before.replace("FutureWarning,\n", "FutureWarning,\n        stacklevel=2,\n")
    p = learn("python", before, after, diag_at(before, "warnings.warn", "Ruff", "B028", msg))
    top = 'import warnings\n\nwarnings.warn(\n    "later",\n    FutureWarning,\n)\n'
    assert apply(p, "python", top, diag_at(top, "warnings.warn", "Ruff", "B028", msg)) == top.replace(
        "FutureWarning,\n", "FutureWarning,\n    stacklevel=2,\n"
    )
