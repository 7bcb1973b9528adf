"""A learned fix that brings in a value or a jump ranks first on the habit, but is never preferred.

Seen on the real-fix replay: a user who twice replaced a needless ``pass`` with
``return True``, and once gave ``getattr`` a default, had those fixes marked
preferred on the next such diagnostic, where the human's fix was to delete the
``pass`` (or use the attribute): an editor's Auto Fix would have changed what
the function returns. The diagnostic asked for neither value.
"""

from __future__ import annotations

import time
from typing import Any

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Position,
    Scope,
    TextRange,
    brings_values,
    extract_pattern,
    instantiate,
)
from fixlore.knowledge import Counts, PatternStats
from fixlore.lsp.actions.assemble import LEARNED_PREFIX, action_pattern
from fixlore.lsp.learning.fixes import LearnedFix
from tests.learning.test_assemble_twins import Evidence, assembled

URI = "file:///w/probe.py"
MESSAGE = "Unnecessary `pass` statement"


def _diag(text: str) -> tuple[dict[str, Any], DiagnosticInfo]:
    line = text.splitlines().index("    pass")
    rng = {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 8}}
    raw = {"range": rng, "source": "Ruff", "code": "PIE790", "message": MESSAGE}
    return raw, DiagnosticInfo("Ruff", "PIE790", MESSAGE, TextRange(Position(line, 4), Position(line, 8)))


def _learned(before: str, after: str, at: str, counts: Counts) -> LearnedFix:
    _, info = _diag(before)
    extracted = extract_pattern("python", before, after, info)
    assert isinstance(extracted, Extracted), extracted
    pattern = extracted.pattern
    _, here = _diag(at)
    made = instantiate(pattern, "python", at, here, seen=3)
    stats = PatternStats(pattern.fingerprint, Scope.USER, counts, time.time(), time.time(), pattern=pattern)
    return LearnedFix(pattern=pattern, stats=stats, edits=made.edits, title=made.title)


def _top(fix: LearnedFix, text: str) -> dict[str, Any]:
    raw, info = _diag(text)
    remove = action_pattern("python", info, "Ruff (PIE790): Remove unnecessary `pass`", "quickfix")
    stats = {
        fix.pattern.fingerprint: fix.stats,
        remove.fingerprint: PatternStats(
            remove.fingerprint, Scope.USER, Counts(offered=3, rejected=3), time.time(), time.time()
        ),
    }
    action = {
        "title": "Ruff (PIE790): Remove unnecessary `pass`",
        "kind": "quickfix",
        "diagnostics": [raw],
        "edit": {"changes": {URI: [{"range": raw["range"], "newText": ""}]}},
    }
    return assembled(URI, text, raw, [action], fix, Evidence(stats))[0]


def test_a_return_value_brought_in_for_a_needless_pass_is_never_preferred() -> None:
    before = 'def probe(zz_cache):\n    """Doc."""\n    pass\n'
    after = 'def probe(zz_cache):\n    """Doc."""\n    return True\n'
    at = 'def other(zz_store):\n    """Doc."""\n    pass\n'
    fix = _learned(before, after, at, Counts(offered=4, accepted=4, succeeded=4, manual=2))
    assert fix.pattern.shape is not None
    assert brings_values(fix.pattern.shape.before, fix.pattern.shape.after) in {"return", "True"}
    top = _top(fix, at)
    assert top["title"].startswith(LEARNED_PREFIX)  # the habit ranks it first
    assert "isPreferred" not in top  # but no editor applies it unasked


def test_values_moved_or_kept_do_not_count() -> None:
    assert brings_values("$1 == None", "$1 is None") is None
    assert brings_values("except :", "except Exception :") is None
    assert brings_values('" $S %s $S " % $1', 'f" $S { $1 } $S "') is None
    assert brings_values("raise $1 ( )", "raise $1 ( ) from $2") is None
    assert brings_values("getattr ( $1 , $S )", "getattr ( $1 , $S , None )") == "None"
    assert brings_values("$1 ( $2 )", "$1 ( $2 , stacklevel = 2 )") == "2"
    assert brings_values("$1 . $2 ( )", "$1 . $2 ( $N )") == "$N"
    assert brings_values("pass", "return True") == "return"
    assert brings_values("x = y", "throw x") == "throw"  # TypeScript's jump too
