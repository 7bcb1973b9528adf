"""``template_text`` on representative messages: exact outputs, pinned.

Message templates are part of a pattern's signature, so a changed output
orphans every stored pattern of that message. These rows pin the output of
prose and code spans (kept vocabulary, keywords, allowlisted names, numbers,
placeholder-like text, non-ASCII names) so a refactor of the templater is
proven byte-identical, and a deliberate change shows up as a changed row.
"""

from __future__ import annotations

import pytest

from fixlore.abstraction._templates import Namer, template_text

ROWS = [
    ("python", "Undefined name `frobnicate`", "Undefined name `$1`"),
    ("python", "Undefined Name frobnicate in Module", "Undefined Name $1 in Module"),
    ("python", "`if x == None:` should be `if x is None:`", "`if $1 == None:` should be `if $1 is None:`"),
    ("python", "'self' is not accessed; \"Widget\" shadows `len`", "'self' is not accessed; \"$1\" shadows `len`"),
    ("python", "Line too long (91 > 88) at 3.14 and 0x1F", "Line too long ($N > $N) at $N and $N"),
    ("python", "`print(3.5e10)` and print 42abc", "`print($N)` and print $N"),
    ("python", "frobnicate and `frobnicate` share one name", "$1 and `$1` $2 one name"),
    ("python", "`None`, None, `True` and True; `If` If", "`None`, None, `True` and True; `$1` If"),
    (
        "python",
        "Already templated: `$1` and $2, hole $H1, literals $S $N",
        "Already $1: `$2` and $3, $4 $5, literals $6 $7",
    ),
    (
        "python",
        "Placeholder-ish: $HOME, $Status, $1abc, $CODE, $CODEX, $_x, $H, $",
        "Placeholder-$1: $$2, $$3, $$N, $4, $$5, $$6, $$7, $",
    ),
    ("python", "`$Status` `$1abc` `$CODE` `${x}`", "`$$1` `$$N` `$2` `${$3}`"),
    ("python", "Unused `__init__` and __name__ in `__Foo__`", "Unused `__init__` and __name__ in `$1`"),
    ("python", "déjà vu `naïve` café", "$1 $2 `$3` $4"),
    (
        "javascript",
        "'foo' is assigned a value but never used. Allowed unused vars must match /^_/u.",
        "'$1' is assigned a value but never used. Allowed unused $2 must $3 /^$4/$5.",
    ),
    (
        "javascript",
        "`const` declarations must be initialized; `let myVar = this.value`",
        "`const` $1 must be $2; `let $3 = this.$4`",
    ),
    (
        "typescriptreact",
        "Property 'widgetCount' does not exist on type 'Props'.",
        "Property '$1' does not $2 on type '$3'.",
    ),
    (
        "go",
        "`fmt.Println` call has possible formatting directive %d",
        "`fmt.Println` call has possible $1 directive %$2",
    ),
    (
        "shellscript",
        'Double quote to prevent globbing and word splitting. Use "$var" not $var, see $1.',
        'Double quote to prevent globbing and word splitting. Use "$$1" not $$1, see $2.',
    ),
    (
        "rust",
        "unused variable: `count` help: prefix it with an underscore: `_count`",
        "unused variable: `$1` $2: prefix it with an $3: `$4`",
    ),
    (
        "c",
        "implicit declaration of function 'mallocx'; did you mean 'malloc'?",
        "implicit declaration of function '$1'; did you mean 'malloc'?",
    ),
    ("python", "", ""),
    ("python", "` `  '' \"\" unbalanced `quote", "` `  '' \"\" $1 `quote"),
]


@pytest.mark.parametrize(("language", "message", "template"), ROWS)
def test_template_text_output_is_pinned(language: str, message: str, template: str) -> None:
    assert template_text(language, message, Namer()) == template


def test_one_namer_numbers_a_name_once_across_prose_code_and_texts() -> None:
    namer = Namer()
    first = template_text("python", "`frobnicate` is undefined", namer)
    second = template_text("python", "Import frobnicate or `widget`", namer)
    assert (first, second) == ("`$1` is undefined", "Import $1 or `$2`")
    assert namer.concrete == {"$1": "frobnicate", "$2": "widget"}
