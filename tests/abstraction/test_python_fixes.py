"""Before/after tests for Python fixes (ruff's diagnostics), one behaviour per test."""

from __future__ import annotations

import re

from fixlore.abstraction import (
    Anchor,
    Extracted,
    FixCategory,
    Instantiated,
    Skipped,
    SkipReason,
    apply_edits,
    extract_pattern,
    instantiate,
    syntax_problems,
)
from fixlore.abstraction._text import DiagnosticInfo

from ._helpers import apply, code, diag_at, learn

F821 = ("Ruff", "F821")


def test_import_added_at_top_for_undefined_name_is_an_import_block_pattern() -> None:
    before = code('''
        """Tool."""
        import sys


        def main(argv):
            return os.path.join(argv[1], "out")
        ''')
    after = before.replace("import sys\n", "import os\nimport sys\n")
    p = learn("python", before, after, diag_at(before, "os", *F821, "Undefined name `os`"))
    assert p.category is FixCategory.ADD_IMPORT
    assert p.shape is not None
    # A stdlib module name is lifted to a hole at once: one instance covers every module.
    assert (p.shape.anchor, p.shape.before, p.shape.after) == (Anchor.IMPORT_BLOCK, "", "import $H1")
    assert p.signature.message == "Undefined name `$H1`"


def test_an_import_of_a_user_module_for_its_undefined_name_never_imports_any_undefined_name() -> None:
    """``import $1`` would import every undefined name (``import unicode``): nothing says it is a module.

    What is learned is "import it as the project's other files do", which
    imports nothing where no other file imports the name.
    """
    before = code("""
        def load(path):
            return yamlish.safe_load(path)
        """)
    after = "import yamlish\n\n\n" + before
    result = extract_pattern("python", before, after, diag_at(before, "yamlish", *F821, "Undefined name `yamlish`"))
    assert isinstance(result, Extracted) and dict(result.pattern.extra)["rewrite"] == "import_as_elsewhere"
    other = "def text(value):\n    return unicode(value)\n"
    tried = instantiate(result.pattern, "python", other, diag_at(other, "unicode", *F821, "Undefined name `unicode`"))
    assert isinstance(tried, Skipped)


def test_comparison_to_none_becomes_is_none() -> None:
    before = code("""
        def check(value):
            if value == None:
                return 0
            return 1
        """)
    after = before.replace("== None", "is None")
    d = diag_at(before, "None", "Ruff", "E711", "Comparison to `None` should be `cond is None`")
    p = learn("python", before, after, d)
    assert p.category is FixCategory.REPLACE_TOKEN
    assert p.shape is not None
    assert (p.shape.unit, p.shape.before, p.shape.after) == ("Comparison", "$2 == None", "$2 is None")
    assert p.shape.anchor is Anchor.AT_DIAGNOSTIC
    assert p.context == ("FunctionDef", "If")  # libcst's kinds of the enclosing statements


def test_unused_variable_assignment_removed_is_delete_statement() -> None:
    before = code("""
        def handler(request):
            response_code = compute(request, 3)
            return None
        """)
    after = before.replace("    response_code = compute(request, 3)\n", "")
    d = diag_at(before, "response_code", "Ruff", "F841", "Local variable `response_code` is assigned to but never used")
    p = learn("python", before, after, d)
    assert p.category is FixCategory.DELETE_STATEMENT
    assert p.shape is not None
    assert (p.shape.unit, p.shape.before, p.shape.after) == ("Assign", "$1 = $2 ( $3 , $N )", "")


def test_unused_import_removed_is_remove_import() -> None:
    before = "import os\nimport sys\n\nprint(sys.argv)\n"
    after = "import sys\n\nprint(sys.argv)\n"
    p = learn("python", before, after, diag_at(before, "os", "Ruff", "F401", "`os` imported but unused"))
    assert p.category is FixCategory.REMOVE_IMPORT
    assert ("rewrite", "drop_unused_import") in p.extra  # any import, not just `import os`


def test_missing_colon_added_is_insert_token() -> None:
    before = "def area(width, height)\n    return width * height\n"
    after = "def area(width, height):\n    return width * height\n"
    problem = syntax_problems("python", before)[0]
    d = DiagnosticInfo("fixlore", problem.code, problem.message, problem.range)
    p = learn("python", before, after, d)
    assert p.category is FixCategory.INSERT_TOKEN
    assert p.shape is not None
    assert p.shape.after == p.shape.before + " :"
    assert p.shape.unit == "FunctionDef"


def test_noqa_comment_added_is_add_suppression() -> None:
    before = "def f():\n    unused_total = 1\n    return 2\n"
    after = before.replace("unused_total = 1", "unused_total = 1  # noqa: F841")
    d = diag_at(before, "unused_total", "Ruff", "F841", "Local variable `unused_total` is assigned to but never used")
    p = learn("python", before, after, d)
    assert p.category is FixCategory.ADD_SUPPRESSION
    assert p.shape is not None and p.shape.after.endswith("#\u2423noqa:\u2423$CODE")


def test_a_tools_directive_keeps_the_tools_name_and_nothing_of_the_user() -> None:
    """``# flake8: noqa`` was kept as ``# : noqa`` (the tool's name dropped as if it were user text)."""
    from fixlore.abstraction._suppressions import render_suppression, suppression_token

    for written, rule, kept in (
        ("# flake8: noqa", "F401", "# flake8: noqa"),
        ("# ruff: noqa: F401", "F401", "# ruff: noqa: F401"),
        ("# noqa: F841 because total_secret is legacy", "F841", "# noqa: F841"),
    ):
        token = suppression_token(written, rule)
        assert token is not None and "secret" not in token and "legacy" not in token
        assert render_suppression(token, rule) == kept


def test_guard_inserted_on_the_line_above_is_before_statement() -> None:
    before = code("""
        def first_name(person):
            return person.name.split()[0]
        """)
    after = code("""
        def first_name(person):
            if person is None:
                return None
            return person.name.split()[0]
        """)
    d = diag_at(
        before, "person.name", "pyright", "reportOptionalMemberAccess", '"name" is not a known attribute of "None"'
    )
    p = learn("python", before, after, d)
    assert p.category is FixCategory.ADD_GUARD
    assert p.shape is not None and p.shape.anchor in (Anchor.BEFORE_STATEMENT, Anchor.FUNCTION_START)
    assert re.fullmatch(r"if \$\d+ is None :\n    return None", p.shape.after)


def test_expression_wrapped_in_call_is_wrap_expression() -> None:
    before = "def show(count):\n    return 'n=' + count\n"
    after = "def show(count):\n    return 'n=' + str(count)\n"
    d = diag_at(before, "count", "pyright", "reportOperatorIssue", 'Operator "+" not supported', nth=1)
    p = learn("python", before, after, d)
    assert p.category is FixCategory.WRAP_EXPRESSION


def test_edits_in_many_places_are_skipped_with_a_reason() -> None:
    before = "".join(f"def f{i}(a):\n    return a == None\n\n\n" for i in range(5))
    after = before.replace("== None", "is None")
    d = diag_at(before, "None", "Ruff", "E711", "Comparison to `None` should be `cond is None`")
    result = extract_pattern("python", before, after, d)
    assert isinstance(result, Skipped) and result.reason is SkipReason.TOO_MANY_PLACES


def test_edit_far_from_the_diagnostic_is_not_a_fix() -> None:
    before = "def f(a):\n    return a == None\n\n\ndef g(b):\n    return b + 1\n"
    after = before.replace("b + 1", "b + 2")
    d = diag_at(before, "None", "Ruff", "E711", "Comparison to `None` should be `cond is None`")
    result = extract_pattern("python", before, after, d)
    assert isinstance(result, Skipped) and result.reason is SkipReason.NOT_A_FIX


def test_fixed_file_that_does_not_parse_is_skipped() -> None:
    before = "x = a == None\n"
    after = "x = a is None)\n"
    d = diag_at(before, "None", "Ruff", "E711", "Comparison to `None` should be `cond is None`")
    result = extract_pattern("python", before, after, d)
    assert isinstance(result, Skipped) and result.reason is SkipReason.DOES_NOT_PARSE


def test_comment_only_change_is_not_a_fix() -> None:
    before = "x = a == None\n"
    after = "x = a == None  # why not\n"
    d = diag_at(before, "None", "Ruff", "E711", "Comparison to `None` should be `cond is None`")
    result = extract_pattern("python", before, after, d)
    assert isinstance(result, Skipped) and result.reason is SkipReason.NOT_A_FIX


def test_unsupported_language_is_skipped() -> None:
    d = diag_at("a\n", "a", "x", "y", "z")
    result = extract_pattern("cobol", "a\n", "b\n", d)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNSUPPORTED_LANGUAGE


def test_identical_texts_are_no_change() -> None:
    d = diag_at("a = 1\n", "a", "x", "y", "z")
    result = extract_pattern("python", "a = 1\n", "a = 1\n", d)
    assert isinstance(result, Skipped) and result.reason is SkipReason.NO_CHANGE


def test_fingerprint_is_stable_across_names_and_layout() -> None:
    d1 = "def f(alpha):\n    return alpha == None\n"
    d2 = "def gee(beta):\n\n    return beta  ==  None\n"
    msg = "Comparison to `None` should be `cond is None`"
    p1 = learn("python", d1, d1.replace("== None", "is None"), diag_at(d1, "None", "Ruff", "E711", msg))
    p2 = learn("python", d2, d2.replace("==  None", "is  None"), diag_at(d2, "None", "Ruff", "E711", msg))
    assert isinstance(p1, type(p2)) and p1.fingerprint == p2.fingerprint


def test_garbage_input_never_raises() -> None:
    d = diag_at("x\n", "x", "Ruff", "F821", "Undefined name `x`")
    for before, after in [("\x00\x01", "x"), ("(" * 500, ")" * 500), ("", "import os\n")]:
        result = extract_pattern("python", before, after, d)
        assert not isinstance(result, Extracted) or result.pattern.shape is not None


def test_a_string_prefix_removed_is_learned_and_keeps_the_users_string() -> None:
    before = 'def f():\n    return u"first text"\n'
    after = 'def f():\n    return "first text"\n'
    msg = "Remove unicode literals from strings"
    p = learn("python", before, after, diag_at(before, 'u"first text"', "Ruff", "UP025", msg))
    assert ("rewrite", "drop_u_prefixes") in p.extra  # the prefix rewrite (_literals), whatever the run holds
    other = "label = u'other words'\n"
    assert (
        apply(p, "python", other, diag_at(other, "u'other words'", "Ruff", "UP025", msg)) == "label = 'other words'\n"
    )
    # a prefix changed, not dropped: learned as a shape that keeps the string's structure, not its content
    to_bytes = learn(
        "python", before, after.replace('"first', 'b"first'), diag_at(before, 'u"first text"', "Ruff", "UP025", msg)
    )
    assert to_bytes.shape is not None and (to_bytes.shape.before, to_bytes.shape.after) == ("u$S", "b$S")
    # text made bytes changes the value's type: the user's habit only once made twice
    diag = diag_at(other, "u'other words'", "Ruff", "UP025", msg)
    once = instantiate(to_bytes, "python", other, diag)
    assert isinstance(once, Skipped) and once.reason is SkipReason.UNSOUND, once
    twice = instantiate(to_bytes, "python", other, diag, seen=2)
    assert isinstance(twice, Instantiated) and apply_edits(other, twice.edits) == "label = b'other words'\n"


def test_a_raw_prefix_added_for_an_escape_is_learned() -> None:
    before = 'import re\n\nPAT = re.compile("\\d+")\n'
    after = 'import re\n\nPAT = re.compile(r"\\d+")\n'
    msg = "Invalid escape sequence: `\\d`"
    p = learn("python", before, after, diag_at(before, "\\d", "Ruff", "W605", msg))
    other = 'import re\n\nWORD = re.match("\\w+x", line)\n'
    fixed = apply(p, "python", other, diag_at(other, "\\w", "Ruff", "W605", "Invalid escape sequence: `\\w`"))
    assert fixed == 'import re\n\nWORD = re.match(r"\\w+x", line)\n'


def test_a_raw_prefix_learned_on_a_plain_string_never_lands_inside_a_formatted_ones_text() -> None:
    """``"(\\d+)"`` -> ``r"(\\d+)"`` on ``'%s(\\d+)%s' % (a, b)``: the ``r`` went between ``%s`` and ``(``.

    Seen on real fixes replayed offline. The piece of text between the two
    directives is a string's text, not a string: no pattern's unit starts there.
    """
    before = 'import re\n\nPAT = re.compile("(\\d+)")\n'
    after = 'import re\n\nPAT = re.compile(r"(\\d+)")\n'
    msg = "Invalid escape sequence: `\\d`"
    p = learn("python", before, after, diag_at(before, "\\d", "Ruff", "W605", msg))
    other = "import re\n\nRE = re.compile('%s(\\d+)%s' % (util.STX, util.ETX))\n"
    result = instantiate(p, "python", other, diag_at(other, "\\d", "Ruff", "W605", msg), seen=3)
    assert not isinstance(result, Instantiated), apply_edits(other, result.edits)
    inside = "import re\n\nRE = re.compile(f'{prefix}(\\d+)')\n"  # an f-string's text: the same
    result = instantiate(p, "python", inside, diag_at(inside, "\\d", "Ruff", "W605", msg), seen=3)
    assert not isinstance(result, Instantiated) or apply_edits(inside, result.edits).startswith(
        "import re\n\nRE = re.compile(rf'"
    ), apply_edits(inside, result.edits)


UP031 = "Use format specifiers instead of percent format"
UP032 = "Use f-string instead of `format` call"


def test_percent_format_to_f_string_keeps_every_operand() -> None:
    before = 'def show(record):\n    return "record %s" % record\n'
    after = 'def show(record):\n    return f"record {record}"\n'
    p = learn("python", before, after, diag_at(before, '"record %s" % record', "Ruff", "UP031", UP031))
    assert p.shape is not None and (p.shape.before, p.shape.after) == ('" $S %s $S " % $1', 'f" $S { $1 } $S "')
    other = "def log_it(entry):\n    log('entry: %s' % entry)\n"
    fixed = apply(p, "python", other, diag_at(other, "'entry: %s' % entry", "Ruff", "UP031", UP031))
    assert fixed == "def log_it(entry):\n    log(f'entry: {entry}')\n"
    # An operand that is more than a name is carried whole (never `f"entry: {entry}".name`).
    dotted = 'def log_it(entry):\n    log("entry: %s" % entry.name)\n'
    fixed = apply(p, "python", dotted, diag_at(dotted, '"entry: %s" % entry.name', "Ruff", "UP031", UP031))
    assert fixed == 'def log_it(entry):\n    log(f"entry: {entry.name}")\n'


def test_percent_format_with_other_operands_gets_every_one_of_them() -> None:
    before = 'def show(record):\n    return "record %s" % record\n'
    after = 'def show(record):\n    return f"record {record}"\n'
    p = learn("python", before, after, diag_at(before, '"record %s" % record', "Ruff", "UP031", UP031))
    other = 'def pair(a, b):\n    return "%s, %.1f" % (a, b)\n'
    fixed = apply(p, "python", other, diag_at(other, '"%s, %.1f" % (a, b)', "Ruff", "UP031", UP031))
    assert fixed == 'def pair(a, b):\n    return f"{a}, {b:.1f}"\n'


def test_format_call_to_f_string_moves_the_argument_into_its_field() -> None:
    before = 'x = "{} items".format(count)\n'
    after = 'x = f"{count} items"\n'
    p = learn("python", before, after, diag_at(before, '"{} items".format(count)', "Ruff", "UP032", UP032))
    other = "def f(n):\n    return '{} rows'.format(total)\n"
    fixed = apply(p, "python", other, diag_at(other, "'{} rows'.format(total)", "Ruff", "UP032", UP032))
    assert fixed == "def f(n):\n    return f'{total} rows'\n"


def test_print_is_a_name_in_python_3_and_renders_without_a_space() -> None:
    """The grammar still knows Python 2's ``print`` statement: a learned ``print(x)`` is not ``print (x)``.

    (A ``print`` only inserted is a debugging statement, not learned: here it wraps a useless expression.)
    """
    rule = ("Ruff", "B018", "Found useless expression. Either assign it to a variable or remove it.")
    before = code("""
        def show(report):
            report.total
            return 0
        """)
    after = before.replace("    report.total", "    print(report.total)")
    p = learn("python", before, after, diag_at(before, "report.total", *rule))
    other = code("""
        def mean(stats):
            stats.amount
            return 1
        """)
    fixed = apply(p, "python", other, diag_at(other, "stats.amount", *rule))
    assert fixed == "def mean(stats):\n    print(stats.amount)\n    return 1\n"
