"""Message/title templates and the privacy verifier."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fixlore.abstraction import (
    Anchor,
    EditShape,
    FixCategory,
    Hole,
    Pattern,
    Signature,
    abstract_action,
    abstract_signature,
    verify_privacy,
)

from ._helpers import diag_at

TEXT = "x = 1\n"


@pytest.mark.parametrize(
    ("message", "template"),
    [
        ("Undefined name `os`", "Undefined name `os`"),
        ("Undefined name `frobnicate`", "Undefined name `$1`"),
        ("`os` imported but unused", "`os` imported but unused"),
        ("`mypkg.widgets` imported but unused", "`$1.$2` imported but unused"),
        ("Comparison to `None` should be `cond is None`", "Comparison to `None` should be `$1 is None`"),
        ("Local variable `x` is assigned to but never used", "Local variable `$1` is assigned to but never used"),
        (
            "Avoid equality comparisons to `True`; use `cond:` for truth checks",
            "Avoid equality comparisons to `True`; use `$1:` for truth checks",
        ),
        ("Line too long (91 > 88)", "Line too long ($N > $N)"),
        ("Syntax error: unexpected `secret_token`", "Syntax error: unexpected `$1`"),
    ],
)
def test_ruff_messages_template_user_names_and_keep_allowlisted_ones(message: str, template: str) -> None:
    sig = abstract_signature("python", diag_at(TEXT, "x", "Ruff", "F821", message))
    assert sig.message == template


def test_title_shares_placeholders_with_the_message() -> None:
    d = diag_at(TEXT, "x", "Ruff", "F841", "Local variable `total` is assigned to but never used")
    p = abstract_action("python", d, "Remove assignment to unused variable `total`", "quickfix")
    assert p.action is not None and p.action.title == "Remove assignment to unused variable `$1`"
    assert p.signature == abstract_signature("python", d)
    assert p.category is FixCategory.DELETE_STATEMENT
    assert verify_privacy(p).ok


@pytest.mark.parametrize(
    ("title", "kind", "category"),
    [
        ("Remove unused import: `os`", "quickfix", FixCategory.REMOVE_IMPORT),
        ("Disable for this line", "quickfix", FixCategory.ADD_SUPPRESSION),
        ("Fix all auto-fixable problems", "source.fixAll.ruff", FixCategory.OTHER),
        ("Organize imports", "source.organizeImports.ruff", FixCategory.REMOVE_IMPORT),
    ],
)
def test_ruff_action_titles(title: str, kind: str, category: FixCategory) -> None:
    p = abstract_action("python", diag_at(TEXT, "x", "Ruff", "F401", "`os` imported but unused"), title, kind)
    assert p.category is category and p.action is not None and p.action.kind == kind
    assert verify_privacy(p).ok


def _pattern(before: str = "$1 == None", after: str = "$1 is None") -> Pattern:
    return Pattern(
        signature=Signature("python", "Ruff", "E711", "Comparison to `None`"),
        category=FixCategory.REPLACE_TOKEN,
        shape=EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", before, after),
        context=("function_definition",),
    )


def test_verifier_accepts_an_abstract_pattern() -> None:
    assert verify_privacy(_pattern()).ok


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"shape": EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", "customer_id == None", "")}, "shape.before"),
        ({"shape": EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", "", "x = 'hunter2'")}, "shape.after"),
        ({"shape": EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", "", "x = 42")}, "shape.after"),
        ({"signature": Signature("python", "Ruff", "E711", "Undefined name `acme_billing`")}, "signature.message"),
        ({"signature": Signature("python", "Ruff", "E 711; rm", "m")}, "signature.code"),
        ({"context": ("secret_function",)}, "context"),
        ({"holes": (Hole("$H1", "python.customers"),)}, "holes"),
        ({"extra": (("note", "acme"),)}, "extra"),
        ({"shape": EditShape(Anchor.AT_DIAGNOSTIC, "MyClass", "", "")}, "shape.unit"),
    ],
)
def test_verifier_refuses_user_text_in_any_field(change: dict[str, object], field: str) -> None:
    verdict = verify_privacy(replace(_pattern(), **change))  # type: ignore[arg-type]
    assert not verdict.ok and verdict.field == field


def test_verifier_never_raises_on_garbage() -> None:
    assert not verify_privacy("not a pattern").ok  # type: ignore[arg-type]
    assert not verify_privacy(replace(_pattern(), context=(None,))).ok  # type: ignore[arg-type]


def test_listed_libcst_node_kinds_match_the_installed_libcst() -> None:
    """The verifier's list of libcst kinds (kept as data, so verifying needs no libcst import)."""
    import json
    from importlib import resources

    import libcst

    data = resources.files("fixlore.abstraction").joinpath("allowlists.json").read_text()
    listed = set(json.loads(data)["libcst_kinds"])
    actual = {n for n in dir(libcst) if n[:1].isupper() and isinstance(getattr(libcst, n), type)}
    assert actual <= listed, sorted(actual - listed)
