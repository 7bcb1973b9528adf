"""A bare ``except:`` narrowed by a learned fix: ``ImportError`` only around an import."""

from __future__ import annotations

import pytest

from fixlore.abstraction import Instantiated, Skipped, instantiate
from tests.abstraction._helpers import apply, diag_at, learn

BARE = ("Ruff", "E722", "Do not use bare `except`")


def _learned_import_error():  # type: ignore[no-untyped-def]
    before = "try:\n    import simplejson as json\nexcept:\n    import json\n"
    return learn("python", before, before.replace("except:", "except ImportError:"), diag_at(before, "except", *BARE))


@pytest.mark.parametrize(
    "text",
    [
        "try:\n    from lxml import etree\nexcept:\n    etree = None\n",
        "def f():\n    try:\n        import yaml\n        return yaml\n    except:\n        return None\n",
        "try:\n    if fast:\n        import ujson as codec\nexcept:\n    codec = None\n",  # under an if, still run
    ],
)
def test_import_error_is_offered_around_an_import(text: str) -> None:
    fixed = apply(_learned_import_error(), "python", text, diag_at(text, "except", *BARE))
    assert "except ImportError:" in fixed


@pytest.mark.parametrize(
    "text",
    [
        "try:\n    value = compute()\nexcept:\n    value = None\n",
        # an import in a function the body defines runs later, not in this try
        "try:\n    def load():\n        import yaml\n    load()\nexcept:\n    pass\n",
    ],
)
def test_import_error_is_not_offered_where_nothing_is_imported(text: str) -> None:
    result = instantiate(_learned_import_error(), "python", text, diag_at(text, "except", *BARE), seen=5)
    assert isinstance(result, Skipped) and "ImportError" in (result.detail or ""), result


def test_other_narrowings_are_not_concerned() -> None:
    before = "try:\n    run()\nexcept:\n    pass\n"
    learned = learn("python", before, before.replace("except:", "except Exception:"), diag_at(before, "except", *BARE))
    text = "try:\n    value = compute()\nexcept:\n    value = None\n"
    assert isinstance(instantiate(learned, "python", text, diag_at(text, "except", *BARE)), Instantiated)
