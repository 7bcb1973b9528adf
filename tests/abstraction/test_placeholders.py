"""The placeholder grammar, and the places where its old copies disagreed.

``_placeholders`` is the one recogniser of ``$1``, ``$H1``, ``$S``, ``$N`` and
``$CODE``. Before it, templating took a placeholder *prefix* (``$1abc`` was
``$1`` then ``abc``) while the privacy verifier took the whole ``$word`` and
refused it; instantiation let a ``$k`` of a fix match any token starting with
``$``. These tests pin the decisions.
"""

from __future__ import annotations

import re

import pytest

from fixlore.abstraction import (
    FixCategory,
    Instantiated,
    Pattern,
    Skipped,
    SkipReason,
    abstract_signature,
    instantiate,
    verify_privacy,
)
from fixlore.abstraction._placeholders import (
    PLACEHOLDER_LIKE,
    hole,
    hole_index,
    is_hole,
    is_literal,
    is_numbered,
    is_placeholder,
    looks_like_placeholder,
    numbered,
    tokenizer,
)
from fixlore.abstraction._templates import Namer, bind_template, template_text

from ._helpers import apply, diag_at, learn


@pytest.mark.parametrize("token", ["$1", "$12", "$H1", "$H20", "$S", "$N", "$CODE"])
def test_placeholders_of_the_grammar(token: str) -> None:
    assert is_placeholder(token)
    assert looks_like_placeholder(token)


@pytest.mark.parametrize("token", ["$", "$H", "$1abc", "$Sx", "$CODEX", "$HOME", "$_x", "${", "$(", "1", "S", ""])
def test_not_placeholders(token: str) -> None:
    assert not is_placeholder(token)


def test_kinds_of_placeholder() -> None:
    assert [is_numbered(t) for t in ("$1", "$H1", "$S", "$1a")] == [True, False, False, False]
    assert [is_hole(t) for t in ("$H1", "$1", "$H", "$Hx")] == [True, False, False, False]
    assert [is_literal(t) for t in ("$S", "$N", "$1", "$CODE")] == [True, True, False, False]
    assert (numbered(3), hole(2), hole_index("$H12")) == ("$3", "$H2", 12)
    assert not any(looks_like_placeholder(t) for t in ("$", "${", "$(", "$((", "x$1"))


def test_a_tokenizer_takes_a_placeholder_whole_never_a_prefix() -> None:
    tok = tokenizer(r"\w+|\s+|.", re.S)
    assert tok.findall("$1-string $H2.x") == ["$1", "-", "string", " ", "$H2", ".", "x"]
    assert tok.findall("$1abc $Sx") == ["$", "1abc", " ", "$", "Sx"]
    words = tokenizer(rf"{PLACEHOLDER_LIKE}|\w+")
    assert words.findall("$1, $1abc") == ["$1", "$1abc"]


@pytest.mark.parametrize(
    ("message", "template"),
    [
        ('Use "$var" not $var.', 'Use "$$1" not $$1.'),
        ("Tilde does not expand in quotes. Use $HOME.", "$1 does not $2 in quotes. Use $$3."),
        ("Use $1abc and $Status", "Use $$N and $$1"),
        ("Use $CODE and $S or $var", "Use $1 and $2 or $$3"),
    ],
)
def test_templating_never_leaves_a_malformed_placeholder(message: str, template: str) -> None:
    # Decision: a ``$word`` in a tool's message is ``$`` then a user word, never
    # kept (``$var`` used to stay and made the pattern fail privacy, so a fix for
    # that message could never be learned); a placeholder-looking text is renamed.
    d = diag_at("echo x\n", "x", "shellcheck", "SC2086", message)
    sig = abstract_signature("shellscript", d)
    assert sig.message == template
    assert verify_privacy(Pattern(signature=sig, category=FixCategory.OTHER)).ok


def test_a_shell_variable_in_a_message_binds_back_to_its_name() -> None:
    template = template_text("shellscript", "Use $HOME, not $HOME", Namer())
    binding = bind_template("shellscript", template, "Use $TMPDIR, not $TMPDIR", ())
    assert binding == {"$1": "TMPDIR"}
    assert bind_template("shellscript", template, "Use $TMPDIR, not $PWD", ()) is None


CD = "Use 'cd ... || exit' or 'cd ... || return' in case cd fails."


def test_a_user_name_placeholder_does_not_match_shell_punctuation() -> None:
    # Decision: ``$k`` in a fix's before-shape matches a user name only. It used
    # to match any token starting with ``$`` (Bash's ``$``, ``${``): a fix that
    # drops an argument turned ``foo $qux`` into ``foo qux``.
    before = "#!/bin/bash\ncd build\nmake\n"
    after = "#!/bin/bash\ncd build || exit\nmake\n"
    p = learn("shellscript", before, after, diag_at(before, "cd build", "shellcheck", "SC2164", CD))
    text = "#!/bin/bash\ncd dist\nls\n"
    assert apply(p, "shellscript", text, diag_at(text, "cd dist", "shellcheck", "SC2164", CD)) == (
        "#!/bin/bash\ncd dist || exit\nls\n"
    )
    for text, needle in (("#!/bin/bash\ncd $dir\nls\n", "cd $dir"), ("#!/bin/bash\ncd ${dir}\nls\n", "cd ${dir}")):
        result = instantiate(p, "shellscript", text, diag_at(text, needle, "shellcheck", "SC2164", CD))
        assert isinstance(result, Skipped) and result.reason is SkipReason.NO_MATCH, result

    before = "#!/bin/bash\nfoo bar baz\n"
    p = learn("shellscript", before, before.replace("bar ", ""), diag_at(before, "bar", "shellcheck", "SC9999", "x"))
    text = "#!/bin/bash\nfoo $qux\n"
    result = instantiate(p, "shellscript", text, diag_at(text, "$qux", "shellcheck", "SC9999", "x"))
    assert not isinstance(result, Instantiated), result
