"""A removed binding is still used, or not, in its function: a sibling function's local of that name does not count."""

from __future__ import annotations

from fixlore.abstraction import Instantiated, Skipped, apply_edits, instantiate
from tests.abstraction._helpers import diag_at, learn

MESSAGE = "Local variable `{}` is assigned to but never used"
LEARNED_ON = """\
def test_alpha():
    start()
    blob = make_blob(load_fixture('alpha.key'))
    signed = Signer(data=blob.raw())
    finish()


def test_beta():
    blob = make_blob(load_fixture('beta.key'))
    check(blob)
"""
LEARNED_TO = """\
def test_alpha():
    start()
    finish()


def test_beta():
    blob = make_blob(load_fixture('beta.key'))
    check(blob)
"""


def _dead_pair_removal():
    """Made twice by hand (a habit): an unused local deleted with the statement that fed only it."""
    return learn(
        "python", LEARNED_ON, LEARNED_TO, diag_at(LEARNED_ON, "signed", "Ruff", "F841", MESSAGE.format("signed"))
    )


def _apply(text: str):
    diag = diag_at(text, "wrapped", "Ruff", "F841", MESSAGE.format("wrapped"))
    return instantiate(_dead_pair_removal(), "python", text, diag, seen=2)


def test_a_dead_local_goes_although_a_sibling_function_has_a_local_of_that_name() -> None:
    text = """\
def test_gamma():
    begin()
    secret = build_secret(read_file('gamma.pem'))
    wrapped = Wrapper(data=secret.raw())
    end()


def test_delta():
    secret = build_secret(read_file('delta.pem'))
    use(secret)
"""
    result = _apply(text)
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits) == text.replace(
        "    secret = build_secret(read_file('gamma.pem'))\n    wrapped = Wrapper(data=secret.raw())\n", ""
    )


def test_a_local_its_own_function_still_reads_is_kept() -> None:
    text = """\
def test_gamma():
    secret = build_secret(read_file('gamma.pem'))
    wrapped = Wrapper(data=secret.raw())
    use(secret)
"""
    result = _apply(text)
    assert isinstance(result, Skipped) and result.detail == "removes a binding the file still uses", result


def test_a_name_the_function_declares_global_is_the_files() -> None:
    text = """\
def test_gamma():
    global secret
    begin()
    secret = build_secret(read_file('gamma.pem'))
    wrapped = Wrapper(data=secret.raw())
    end()


def test_delta():
    use(secret)
"""
    result = _apply(text)
    assert isinstance(result, Skipped) and result.detail == "removes a binding the file still uses", result


def test_at_module_level_the_whole_file_counts() -> None:
    text = """\
secret = build_secret(read_file('gamma.pem'))
wrapped = Wrapper(data=secret.raw())


def test_delta():
    use(secret)
"""
    result = _apply(text)
    assert isinstance(result, Skipped) and result.detail == "removes a binding the file still uses", result
