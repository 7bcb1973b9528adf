"""A fix that brings in a name of the project: the name recalled from the session's memory, never stored.

``assert_true(k in d)`` -> ``assert_in(k, d)`` is learned as ``$1 ( $2 in $3 )``
-> ``$4 ( $2 , $3 )``: nothing at the next such call binds ``$4``. The
extractor hands the server the name beside the pattern; the server keeps it in
memory (:mod:`fixlore.lsp.learning.recall`) and the instantiation binds ``$4``
with it once the user has brought that same name in twice, where the name is
bound; such a fix is tried only when nothing else applies, ranks after the
upstream's own fixes and is never preferred (unless its pattern fits a run of
whole statements: ``tests/abstraction/test_statement_runs.py``; then it ranks
on its evidence, still never preferred).
"""

from __future__ import annotations

import string
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Instantiated,
    Pattern,
    Scope,
    Skipped,
    SkipReason,
    apply_edits,
    extract_pattern,
    instantiate,
)
from fixlore.knowledge import Counts, PatternStats
from fixlore.lsp.actions.assemble import LEARNED_PREFIX, action_pattern
from fixlore.lsp.learning import recall as recall_module
from fixlore.lsp.learning.fixes import LearnedFix
from fixlore.lsp.learning.instantiation import instantiate_all
from fixlore.lsp.learning.recall import Recall, key_of
from tests.abstraction._helpers import diag_at
from tests.learning._editor import Editor
from tests.learning.test_assemble_twins import Evidence, assembled
from tests.learning.test_manual_fixes import fix_by_hand

RULE = ("Ruff", "PT009", "Use a regular `assert` instead of a call to `assert_true`")
IMPORTS = "from quuxtools import assert_true, assert_in\n\n\n"


def _example(test: str, key: str, mapping: str, imports: str = IMPORTS) -> str:
    return imports + f"def {test}({key}, {mapping}):\n    assert_true({key} in {mapping})\n"


def _extract(before: str, after: str) -> Extracted:
    result = extract_pattern("python", before, after, diag_at(before, "assert_true", *RULE, nth=1))
    assert isinstance(result, Extracted), result
    return result


def _learned() -> Extracted:
    before = _example("test_one", "k", "d")
    return _extract(before, before.replace("assert_true(k in d)", "assert_in(k, d)"))


def test_the_name_a_fix_brings_in_comes_beside_the_pattern_not_in_it() -> None:
    extracted = _learned()
    assert extracted.brought == (("$4", "assert_in"),)
    assert extracted.pattern.shape is not None and extracted.pattern.shape.after == "$4 ( $2 , $3 )"
    assert "assert_in" not in str(extracted.pattern.to_dict())


def test_with_the_name_recalled_the_fix_applies_where_that_name_is_bound() -> None:
    extracted = _learned()
    text = _example("test_two", "key", "table")
    diag = diag_at(text, "assert_true", *RULE, nth=1)
    without = instantiate(extracted.pattern, "python", text, diag)
    assert isinstance(without, Skipped) and without.reason is SkipReason.NO_MATCH
    made = instantiate(extracted.pattern, "python", text, diag, recalled=dict(extracted.brought))
    assert isinstance(made, Instantiated), made
    assert apply_edits(text, made.edits).endswith("    assert_in(key, table)\n")
    # where the name is not imported (or defined), the fix would break the code: not offered
    bare = _example("test_two", "key", "table", imports="from quuxtools import assert_true\n\n\n")
    refused = instantiate(
        extracted.pattern, "python", bare, diag_at(bare, "assert_true", *RULE, nth=1), recalled=dict(extracted.brought)
    )
    assert isinstance(refused, Skipped) and refused.reason is SkipReason.UNSOUND


_NAMES = st.text(string.ascii_lowercase, min_size=3, max_size=8).map(lambda s: "zq_" + s)


@settings(max_examples=40, deadline=None)
@given(names=st.lists(_NAMES, min_size=4, max_size=4, unique=True))
def test_brought_names_are_exactly_the_new_ones_and_never_reach_the_pattern(names: list[str]) -> None:
    test, key, mapping, helper = names
    imports = f"from quuxtools import assert_true, {helper}\n\n\n"
    before = _example(test, key, mapping, imports)
    extracted = _extract(before, before.replace(f"assert_true({key} in {mapping})", f"{helper}({key}, {mapping})"))
    assert extracted.brought == (("$4", helper),)
    stored = str(extracted.pattern.to_dict())
    assert [name for name in names if name in stored] == []


def test_a_name_is_recalled_once_the_same_fix_brought_it_in_twice_for_the_same_subject() -> None:
    memory = Recall()
    key = key_of("fp", "Undefined name `key`")
    memory.remember(key, [("$2", "attr")])
    assert memory.names(key) == {}  # once is an example
    memory.remember(key, [("$2", "attr")])
    assert memory.names(key) == {"$2": "attr"}
    # the same fix of another undefined name says nothing of it
    assert memory.names(key_of("fp", "Undefined name `err`\n\nhelp: ...")) == {}
    assert key_of("fp", "Undefined name `key`\n\nhelp: Consider `other`") == key
    # a placeholder that brought in two names is no habit of one
    memory.remember(key, [("$2", "attribute")])
    memory.remember(key, [("$2", "attribute")])
    assert memory.names(key) == {}


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_module, "MAX_PATTERNS", 3)
    memory = Recall()
    for n in range(5):
        memory.remember((f"fp{n}", ()), [("$1", "name")])
    assert len(memory) == 3
    assert memory.names(("fp0", ())) == {} and memory.names(("fp4", ())) == {}  # fp4 seen once


def _guess_and_made_here() -> tuple[Pattern, Pattern, str, DiagnosticInfo, dict[str, dict[str, str]]]:
    """A fix that brought in a name (a guess elsewhere), a fix made of the code at hand, and where both may go."""
    extracted = _learned()
    pattern = extracted.pattern
    text = _example("test_two", "key", "table")
    diag = diag_at(text, "assert_true", *RULE, nth=1)
    plain = _example("test_one", "k", "d")
    made_here = _extract(plain, plain.replace("assert_true(k in d)", "assert_true(k in list(d))")).pattern
    return pattern, made_here, text, diag, {pattern.fingerprint: dict(extracted.brought)}


def test_recalled_names_are_the_fallback_and_say_so() -> None:
    pattern, made_here, text, diag, recalled = _guess_and_made_here()
    found = instantiate_all([(pattern, 2)], "python", text, diag, None, recalled)
    assert [(index, title, flag) for index, _, title, flag, _ in found] == [
        (0, "Replace `assert_true(key in table)` with `assert_in(key, table)`", True)
    ]
    # a fix made of the code at hand comes first, and the guess is not tried beside it
    found = instantiate_all([(pattern, 2), (made_here, 1)], "python", text, diag, None, recalled)
    assert [(index, flag) for index, _, _, flag, _ in found] == [(1, False)]


def test_the_offline_replay_sees_every_try_with_the_servers_policy() -> None:
    """``tried`` is told of each instantiation (``bench/humanfix_offline.py`` times them and keeps the reasons)."""
    pattern, made_here, text, diag, recalled = _guess_and_made_here()
    told: list[tuple[str, str]] = []

    def tried(tried_pattern: Pattern, result: object, seconds: float) -> None:
        assert seconds >= 0
        told.append((tried_pattern.fingerprint, type(result).__name__))

    patterns = [(pattern, 2), (made_here, 1)]
    found = instantiate_all(patterns, "python", text, diag, None, recalled, most=None, tried=tried)
    assert [(index, flag) for index, _, _, flag, _ in found] == [(1, False)]  # as the server keeps them
    # without its names the first does not apply; with them it is not tried beside a fix made here
    assert told == [(pattern.fingerprint, "Skipped"), (made_here.fingerprint, "Instantiated")]
    assert instantiate_all(patterns, "python", text, diag, None, recalled, most=0) == []


def _assembled(fix: LearnedFix, text: str) -> list[dict[str, Any]]:
    uri = "file:///w/test_two.py"
    diag = diag_at(text, "assert_true", *RULE, nth=1)
    rng = {
        "start": {"line": diag.range.start.line, "character": diag.range.start.character},
        "end": {"line": diag.range.end.line, "character": diag.range.end.character},
    }
    raw = {"range": rng, "source": "Ruff", "code": "PT009", "message": RULE[2]}
    title = "Ruff (PT009): Replace `assert_true(...)` with `assert`"
    upstream = action_pattern("python", diag, title, "quickfix")
    stats = {
        fix.pattern.fingerprint: fix.stats,
        upstream.fingerprint: PatternStats(upstream.fingerprint, Scope.USER, Counts(offered=5), time.time(), 0.0),
    }
    action = {"title": title, "kind": "quickfix", "diagnostics": [raw], "edit": {"changes": {uri: []}}}
    return assembled(uri, text, raw, [action], fix, Evidence(stats))


@pytest.mark.parametrize(("recalled", "run"), [(False, False), (True, False), (True, True)])
def test_a_fix_with_recalled_names_ranks_after_the_upstreams_and_is_never_preferred(recalled: bool, run: bool) -> None:
    extracted = _learned()
    pattern = extracted.pattern
    text = _example("test_two", "key", "table")
    made = instantiate(
        pattern, "python", text, diag_at(text, "assert_true", *RULE, nth=1), recalled=dict(extracted.brought)
    )
    assert isinstance(made, Instantiated)
    counts = Counts(offered=6, accepted=5, succeeded=5, manual=2)
    stats = PatternStats(pattern.fingerprint, Scope.USER, counts, time.time(), time.time(), pattern=pattern)
    fix = LearnedFix(pattern=pattern, stats=stats, edits=made.edits, title=made.title, recalled=recalled, run=run)
    titles = [a["title"] for a in _assembled(fix, text)]
    learned = LEARNED_PREFIX + made.title
    if run:  # a fix of a run of statements, where the name belongs: ranked on its evidence, still never preferred
        assert titles[0] == learned
        assert not any(a.get("isPreferred") for a in _assembled(fix, text))
    elif recalled:
        assert titles[1] == learned
        assert not any(a.get("isPreferred") for a in _assembled(fix, text))
    else:  # the same fix made of the code at hand ranks first on its evidence (the test can tell them apart)
        assert titles[0] == learned


PLANTED = ("quuxcheck", "zz_fail_now", "zz_probe_one", "zz_probe_two", "zz_probe_three")
B011 = "B011"


@pytest.mark.e2e
async def test_a_project_helper_brought_in_by_hand_twice_is_offered_and_nothing_of_it_is_written(
    tmp_path: Path, fixlore_home: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["B011"]\n')
    log = tmp_path / "fixlore.log"
    flags = ("--log-level", "debug", "--log-file", str(log))
    header = "import quuxcheck\n\n\n"
    async with Editor(tmp_path, flags=flags) as editor:
        for n, name in enumerate(("zz_probe_one", "zz_probe_two")):
            text = header + f"def {name}(value):\n    if value:\n        assert False\n    return value\n"
            await fix_by_hand(
                editor,
                f"t{n}.py",
                text,
                B011,
                lambda uri: editor.replace(uri, "assert False", "quuxcheck.zz_fail_now()"),
            )
        uri = editor.open("t3.py", header + "def zz_probe_three(item):\n    assert False\n")
        action: dict[str, Any] | None = None
        actions: list[dict[str, Any]] = []
        for _ in range(50):
            actions = await editor.code_actions(uri, await editor.diagnostic(uri, B011))
            action = next((a for a in actions if a["title"].startswith(LEARNED_PREFIX)), None)
            if action is not None:
                break
            await editor.until_stats(lambda s: True)  # one round trip before asking again
        assert action is not None, [a["title"] for a in actions]
        assert action["title"] == LEARNED_PREFIX + "Replace `assert False` with `quuxcheck.zz_fail_now()`"
        assert actions.index(action) > 0 and not action.get("isPreferred")  # after ruff's own fix
        await editor.apply(action)
        await editor.gone(uri, B011)
        assert editor.texts[uri].endswith("def zz_probe_three(item):\n    quuxcheck.zz_fail_now()\n")
        # without the import the name would be unbound: not offered
        bare = editor.open("t4.py", "def zz_probe_four(item):\n    assert False\n")
        titles = [a["title"] for a in await editor.code_actions(bare, await editor.diagnostic(bare, B011))]
        assert not any(title.startswith(LEARNED_PREFIX) for title in titles)
        await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1)
    written = [path for path in [*fixlore_home.rglob("*"), log] if path.is_file()]
    assert log in written and "learned a manual fix" in log.read_text(encoding="utf-8")
    leaks = [(str(path), word) for path in written for word in PLANTED if word.encode() in path.read_bytes()]
    assert leaks == []


def test_names_of_a_diagnostics_patterns_read_its_subject_once() -> None:
    memory = Recall()
    assert memory.names_of(["fp"], "Undefined name `key`") == {}  # nothing remembered: nothing done
    for _ in range(2):
        memory.remember(key_of("fp", "Undefined name `key`"), [("$2", "attr")])
    assert memory.names_of(["fp", "other"], "Undefined name `key`\n\nhelp: ...") == {"fp": {"$2": "attr"}}
    assert memory.names_of(["fp"], "Undefined name `err`") == {}
