"""Before/after tests for the tree-sitter languages, one behaviour per test."""

from __future__ import annotations

from fixlore.abstraction import Anchor, DiagnosticInfo, FixCategory, syntax_problems

from ._helpers import apply, diag_at, learn


def _syntax_diag(language: str, text: str) -> DiagnosticInfo:
    problem = syntax_problems(language, text)[0]
    return DiagnosticInfo("fixlore", problem.code, problem.message, problem.range)


def test_javascript_loose_equality_becomes_strict() -> None:
    before = "function f(item) {\n  if (item == null) { return 0; }\n  return 1;\n}\n"
    after = before.replace("== null", "=== null")
    msg = "Expected '===' and instead saw '=='."
    p = learn("javascript", before, after, diag_at(before, "==", "eslint", "eqeqeq", msg))
    assert p.shape is not None and (p.shape.before, p.shape.after) == ("$1 == null", "$1 === null")
    assert p.category is FixCategory.REPLACE_TOKEN


def test_typescript_missing_import_goes_to_the_import_block() -> None:
    before = "import { a } from './a';\n\nconst m = new Map<string, Widget>();\n"
    after = "import { a } from './a';\nimport { Widget } from './widget';\n\nconst m = new Map<string, Widget>();\n"
    d = diag_at(before, "Widget", "typescript", "2304", "Cannot find name 'Widget'.")
    p = learn("typescript", before, after, d)
    assert p.category is FixCategory.ADD_IMPORT
    assert p.shape is not None and p.shape.anchor is Anchor.IMPORT_BLOCK
    assert p.shape.after == "import { $1 } from $S ;"


def test_tsx_unused_variable_removed() -> None:
    before = "export function App() {\n  const unusedLabel = 'x';\n  return <div />;\n}\n"
    after = "export function App() {\n  return <div />;\n}\n"
    d = diag_at(before, "unusedLabel", "eslint", "no-unused-vars", "'unusedLabel' is assigned a value but never used.")
    p = learn("typescriptreact", before, after, d)
    assert p.category is FixCategory.DELETE_STATEMENT
    assert p.shape is not None and p.shape.before == "const $1 = $S ;"


def test_bash_variable_quoted_is_wrap() -> None:
    before = "#!/bin/bash\nrm -rf $target_dir\n"
    after = '#!/bin/bash\nrm -rf "$target_dir"\n'
    msg = "Double quote to prevent globbing and word splitting."
    p = learn("shellscript", before, after, diag_at(before, "$target_dir", "shellcheck", "SC2086", msg))
    assert p.category is FixCategory.WRAP_EXPRESSION
    assert p.shape is not None and (p.shape.before, p.shape.after) == ("$ $1", '" $ $1 "')


def test_go_unused_import_line_removed() -> None:
    before = 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Println("hi")\n}\n'
    after = before.replace('\t"os"\n', "")
    p = learn("go", before, after, diag_at(before, '"os"', "compiler", "UnusedImport", '"os" imported and not used'))
    assert p.shape is not None and (p.shape.before, p.shape.after) == ('"os"', "")
    assert p.shape.unit == "import_spec"


def test_rust_missing_semicolon_inserted() -> None:
    before = 'fn main() {\n    let total = 5\n    println!("{}", total);\n}\n'
    after = before.replace("= 5\n", "= 5;\n")
    p = learn("rust", before, after, _syntax_diag("rust", before))
    assert p.category is FixCategory.INSERT_TOKEN
    assert p.shape is not None and p.shape.after == "let $1 = $N ;"


def test_java_string_comparison_rewritten_to_equals() -> None:
    before = 'class A {\n  void f(String name) {\n    if (name == "x") { }\n  }\n}\n'
    after = before.replace('name == "x"', 'name.equals("x")')
    d = diag_at(before, 'name == "x"', "pmd", "CompareObjectsWithEquals", "Use equals() to compare object references.")
    p = learn("java", before, after, d)
    assert p.category is FixCategory.REWRITE
    assert p.shape is not None and (p.shape.before, p.shape.after) == ("$1 == $S", "$1 . equals ( $S )")


def test_c_missing_include_added_for_printf() -> None:
    before = '#include <string.h>\n\nint main(void) {\n    printf("%d", 1);\n    return 0;\n}\n'
    after = '#include <string.h>\n#include <stdio.h>\n\nint main(void) {\n    printf("%d", 1);\n    return 0;\n}\n'
    d = diag_at(
        before, "printf", "clang", "-Wimplicit-function-declaration", "call to undeclared library function 'printf'"
    )
    p = learn("c", before, after, d)
    assert p.category is FixCategory.ADD_IMPORT
    assert p.shape is not None and p.shape.after == "#include <stdio.h>"


def test_java_equals_fix_instantiates_on_another_method() -> None:
    before = 'class A {\n  void f(String name) {\n    if (name == "x") { }\n  }\n}\n'
    after = before.replace('name == "x"', 'name.equals("x")')
    msg = "Use equals() to compare object references."
    p = learn("java", before, after, diag_at(before, 'name == "x"', "pmd", "CompareObjectsWithEquals", msg))
    new = 'class B {\n  boolean g(String label) { return label == "y"; }\n}\n'
    fixed = apply(p, "java", new, diag_at(new, 'label == "y"', "pmd", "CompareObjectsWithEquals", msg))
    assert 'return label.equals("y");' in fixed
