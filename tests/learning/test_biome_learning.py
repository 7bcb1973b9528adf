"""TypeScript end to end with a real Biome upstream: ranking, a hand fix learned (tree-sitter), privacy.

A scripted editor drives a real ``fixlore serve --upstream typescript='biome lsp-proxy'``
(Biome pinned in ``tests/_biome.py``, installed by the session's ``biome`` fixture).
Biome publishes its diagnostics and resolves every action lazily; it offers per
diagnostic its fix, "Suppress rule … for this line." and "… for the whole file.".
Its inline suppression writes ``// biome-ignore RULE: <explanation>`` and flags
that placeholder until a reason is written there, so the scripted user writes one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.transport.jsonrpc import spawn
from tests._biome import NO_DOUBLE_EQUALS, USE_CONST, USE_TEMPLATE, upstream_flags, write_config
from tests.conftest import import_elsewhere
from tests.learning._editor import BIN, Editor

pytestmark = pytest.mark.e2e

LEARNED = "Apply learned fix: "
THIS_LINE = "for this line."


def biome_editor(root: Path, biome: Path, **kwargs: Any) -> Editor:
    write_config(root)
    return Editor(root, ruff=False, upstreams=upstream_flags(biome), **kwargs)


def quick_fixes(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if str(a.get("kind", "")).startswith("quickfix")]


def learned(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if a["title"].startswith(LEARNED)]


async def apply_suppression(editor: Editor, uri: str, action: dict[str, Any], reason: str) -> None:
    """Apply Biome's inline suppression, then write a reason over its placeholder (as Biome asks)."""
    await editor.apply(action)
    editor.replace(uri, "<explanation>", reason)


async def settles(editor: Editor) -> int:
    return int((await editor.stats())["session"]["settles"])


async def fix_by_hand(
    editor: Editor, name: str, text: str, code: str, old: str, new: str, *, learned: bool = True
) -> str:
    """Open ``text``, let it settle with ``code`` shown, replace ``old`` by ``new`` as typed, wait until learned.

    With ``learned=False``, wait only until fixlore has looked at the fixed text.
    """
    uri = editor.open(name, text)
    await editor.diagnostic(uri, code)
    # The opening state, diagnostic shown, is the baseline: a save settles it at once (the
    # pause after opening may have run out before Biome's first answer came in).
    start = await settles(editor)
    editor.save(uri)
    await editor.until_stats(lambda s: s["session"]["settles"] > start)
    before = (await editor.stats())["session"]
    editor.replace(uri, old, new)
    await editor.gone(uri, code)
    editor.save(uri)
    if learned:
        await editor.until_stats(lambda s: s["session"]["manualFixes"] > before["manualFixes"])
    else:
        await editor.until_stats(lambda s: s["session"]["settles"] > before["settles"])
    return uri


async def offered_learned_fix(editor: Editor, uri: str, code: str) -> dict[str, Any]:
    """The learned fix offered for ``code`` (asks again while it is still being instantiated)."""
    for _ in range(50):
        found = learned(await editor.code_actions(uri, await editor.diagnostic(uri, code)))
        if found:
            return found[0]
        await editor.until_stats(lambda s: True)  # one round trip before asking again
    raise AssertionError("no learned fix offered")


# -- ranking ---------------------------------------------------------------------------------------

NAMES = ["order", "basket", "invoice", "ledger"]


def snippet(k: int) -> str:
    return (
        f"export function check_{NAMES[k]}(left_{k}: number, right_{k}: number): number {{\n"
        f"  let bonus_{k} = {k + 2};\n"
        f"  if (left_{k} == right_{k}) {{\n"
        f"    return bonus_{k};\n"
        "  }\n"
        "  return 0;\n"
        "}\n"
    )


def is_habit(action: dict[str, Any], habit: str) -> bool:
    if habit == "suppress":
        return action["title"].endswith(THIS_LINE)
    return action["title"].startswith("Apply ") and "Suppress" not in action["title"]


@pytest.mark.parametrize(
    "habits",
    [{USE_CONST: "suppress", NO_DOUBLE_EQUALS: "fix"}, {USE_CONST: "fix", NO_DOUBLE_EQUALS: "suppress"}],
    ids=["suppresses-useConst-fixes-equals", "fixes-useConst-suppresses-equals"],
)
async def test_three_choices_make_the_habit_first(tmp_path: Path, biome: Path, habits: dict[str, str]) -> None:
    async with biome_editor(tmp_path, biome) as editor:
        # Without evidence Biome's own order stands: its fix, then the two suppressions.
        uri = editor.open("f0.ts", snippet(0))
        first = quick_fixes(await editor.code_actions(uri, await editor.diagnostic(uri, USE_CONST)))
        assert [a["title"] for a in first] == [
            "Apply safe fix for useConst",
            f"Suppress rule {USE_CONST} {THIS_LINE}",
            f"Suppress rule {USE_CONST} for the whole file.",
        ]
        for k in range(3):
            uri = editor.open(f"f{k}.ts", snippet(k)) if k else uri
            for code, habit in habits.items():
                actions = quick_fixes(await editor.code_actions(uri, await editor.diagnostic(uri, code)))
                assert all(a["command"]["command"] == "fixlore.accept" for a in actions)
                chosen = next(a for a in actions if is_habit(a, habit) and not a["title"].startswith(LEARNED))
                if habit == "suppress":
                    await apply_suppression(editor, uri, chosen, "kept on purpose")
                else:
                    await editor.apply(chosen)
                await editor.gone(uri, code)

        uri = editor.open("f3.ts", snippet(3))
        for code, habit in habits.items():
            actions = quick_fixes(await editor.code_actions(uri, await editor.diagnostic(uri, code)))
            assert is_habit(actions[0], habit), [a["title"] for a in actions]
            if habit == "fix" and code == USE_CONST:
                # Biome's safe fix, marked preferred by Biome, and the user's habit.
                assert actions[0].get("isPreferred") is True
                assert [a for a in actions if a.get("isPreferred")] == [actions[0]]
            elif habit == "fix":  # Biome's unsafe fix (left unmarked): first by habit, never applied unasked
                assert not any(a.get("isPreferred") for a in actions)
            else:  # first by habit, but never applied without asking (auto-fix, fix-on-save)
                assert not any(a.get("isPreferred") for a in actions if not a["title"].startswith("Apply "))
        stats = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 6 and s["counts"]["succeeded"] >= 6)
        assert stats["counts"]["rejected"] >= 6
        # Biome's actions are resolved before their edit lands, accepted after: each is judged
        # on the text after its edit (it worked), and is no fix by hand as well.
        assert stats["counts"]["failed"] == 0 and stats["counts"]["manual"] == 0, stats["counts"]


# -- a hand fix learned and offered back -----------------------------------------------------------


def declaration(fn: str, name: str, arg: str) -> str:
    return f"export function {fn}({arg}: number): number {{\n  let {name} = {arg} * 2;\n  return {name} + 1;\n}}\n"


def comparison(fn: str, left: str, right: str) -> str:
    return (
        f"export function {fn}({left}: string, {right}: string): boolean {{\n"
        f"  if ({left} == {right}) {{\n"
        "    return true;\n"
        "  }\n"
        "  return false;\n"
        "}\n"
    )


async def test_let_made_const_by_hand_is_offered_back_with_new_names(tmp_path: Path, biome: Path) -> None:
    async with biome_editor(tmp_path, biome) as editor:
        for k, (fn, name, arg) in enumerate([("alpha", "total", "amount"), ("beta", "count", "size")]):
            await fix_by_hand(editor, f"h{k}.ts", declaration(fn, name, arg), USE_CONST, f"let {name}", f"const {name}")

        uri = editor.open("fresh.ts", declaration("gamma", "width", "span"))
        action = await offered_learned_fix(editor, uri, USE_CONST)
        assert "const width = span * 2;" in action["title"]
        await editor.apply(action)
        await editor.gone(uri, USE_CONST)
        assert editor.texts[uri] == declaration("gamma", "width", "span").replace("let width", "const width")
        stats = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1 and s["counts"]["succeeded"] >= 3)
        assert stats["counts"]["manual"] >= 2


async def test_double_equals_made_strict_by_hand_is_offered_back_with_new_names(tmp_path: Path, biome: Path) -> None:
    async with biome_editor(tmp_path, biome) as editor:
        for k, (fn, left, right) in enumerate([("same", "first", "second"), ("match", "wanted", "found")]):
            await fix_by_hand(
                editor, f"e{k}.ts", comparison(fn, left, right), NO_DOUBLE_EQUALS, f"{left} ==", f"{left} ==="
            )

        fresh = comparison("equalNames", "given", "stored")
        uri = editor.open("fresh.ts", fresh)
        action = await offered_learned_fix(editor, uri, NO_DOUBLE_EQUALS)
        assert "given === stored" in action["title"]
        await editor.apply(action)
        await editor.gone(uri, NO_DOUBLE_EQUALS)
        assert editor.texts[uri] == fresh.replace("given == stored", "given === stored")


def concatenation(fn: str, label: str, operand: str) -> str:
    return f'export function {fn}({operand}: number): string {{\n  return "{label}: " + {operand};\n}}\n'


async def test_a_concatenation_made_a_template_by_hand_keeps_every_operand_or_is_not_offered(
    tmp_path: Path, biome: Path
) -> None:
    # The TypeScript twin of a `%`-format turned f-string: a pattern that saw the
    # template literal as one opaque string would drop the operand on new code.
    async with biome_editor(tmp_path, biome) as editor:
        for k, (fn, label, operand) in enumerate([("describe", "total", "amount"), ("caption", "count", "size")]):
            text = concatenation(fn, label, operand)
            fixed = f"`{label}: ${{{operand}}}`"
            await fix_by_hand(editor, f"t{k}.ts", text, USE_TEMPLATE, f'"{label}: " + {operand}', fixed, learned=False)

        fresh = concatenation("headline", "width", "span")
        uri = editor.open("fresh.ts", fresh)
        diag = await editor.diagnostic(uri, USE_TEMPLATE)
        for _ in range(20):
            offered = learned(await editor.code_actions(uri, diag))
            if offered:
                await editor.apply(offered[0])
                assert editor.texts[uri] == fresh.replace('"width: " + span', "`width: ${span}`")
                break
            await editor.until_stats(lambda s: True)  # one round trip before asking again


# -- privacy ---------------------------------------------------------------------------------------

PLANTED = [
    "zorblaxQuuxident",
    "veltrannicCustomerSsn",
    "hunter2-planted-secret",
    "plantedcommentmarker",
    "grimwoldPrivateMod",
    "XyloquentLedger",
    "quibbleFactorTotal",
]


def planted_source(k: int) -> str:
    return (
        f'import {{ grimwoldPrivateMod{k} }} from "./grimwoldPrivateMod";\n'
        "\n"
        f"// plantedcommentmarker {k}: do not leak\n"
        f"export class XyloquentLedger{k} {{\n"
        f"  /** Docs with hunter2-planted-secret. */\n"
        f"  zorblaxQuuxident(veltrannicCustomerSsn{k}: string): string {{\n"
        f'    let quibbleFactorTotal{k} = "hunter2-planted-secret";\n'
        f"    if (veltrannicCustomerSsn{k} == quibbleFactorTotal{k}) {{\n"
        f"      return grimwoldPrivateMod{k}(quibbleFactorTotal{k});\n"
        "    }\n"
        f"    return veltrannicCustomerSsn{k}; // plantedcommentmarker\n"
        "  }\n"
        "}\n"
    )


def on_disk(path: Path, text: str) -> str:
    """Write ``text`` to ``path`` too (the user's files are on disk); returns it."""
    path.write_text(text)
    return text


class LoggedEditor(Editor):
    """The Biome editor with fixlore's stderr kept in a file (the tests' editor discards it)."""

    def __init__(self, root: Path, biome: Path, stderr: Path, **kwargs: Any) -> None:
        write_config(root)
        super().__init__(root, ruff=False, upstreams=upstream_flags(biome), **kwargs)
        self.stderr_path = stderr

    async def start(self, command: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None) -> None:
        with self.stderr_path.open("wb") as stderr:  # the child keeps its own copy of the descriptor
            self.process, self.conn = await spawn(
                command,
                cwd=cwd,
                env=env,
                stderr=stderr.fileno(),
                on_notification=self._on_notification,
                on_request=self._on_request,
            )


def scan(paths: list[Path]) -> list[tuple[str, str]]:
    leaks: list[tuple[str, str]] = []
    for root in paths:
        for path in [root] if root.is_file() else root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                leaks.extend((str(path), p) for p in PLANTED if p.encode() in data)
    return leaks


async def test_nothing_planted_in_typescript_reaches_disk_logs_or_exports(
    tmp_path: Path, biome: Path, fixlore_home: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    stderr = tmp_path / "fixlore-stderr.log"
    export = tmp_path / "export.json"
    env = {"BIOME_LOG_PATH": str(tmp_path / "biome-logs")}  # Biome's daemon logs: Biome's, not fixlore's
    editor = LoggedEditor(workspace, biome, stderr, flags=("--log-level", "debug"), env=env)
    async with editor:
        # Biome's fix accepted on one file, its suppression on another (rankings stored).
        for k, choice in enumerate(["fix", "suppress"]):
            uri = editor.open(f"accepted{k}.ts", on_disk(workspace / f"accepted{k}.ts", planted_source(k)))
            actions = quick_fixes(await editor.code_actions(uri, await editor.diagnostic(uri, USE_CONST)))
            if choice == "fix":
                await editor.apply(actions[0])
            else:
                await apply_suppression(editor, uri, actions[1], "plantedcommentmarker reason")
            await editor.gone(uri, USE_CONST)
            editor.save(uri)
        # Two hand fixes (patterns abstracted with tree-sitter), then the learned fix offered and taken.
        for k in (2, 3):
            await fix_by_hand(
                editor,
                f"hand{k}.ts",
                on_disk(workspace / f"hand{k}.ts", planted_source(k)),
                NO_DOUBLE_EQUALS,
                f"veltrannicCustomerSsn{k} ==",
                f"veltrannicCustomerSsn{k} ===",
            )
        uri = editor.open("fresh.ts", on_disk(workspace / "fresh.ts", planted_source(9)))
        action = await offered_learned_fix(editor, uri, NO_DOUBLE_EQUALS)
        await editor.apply(action)
        await editor.gone(uri, NO_DOUBLE_EQUALS)
        assert "veltrannicCustomerSsn9 === quibbleFactorTotal9" in editor.texts[uri]
        stats = await editor.until_stats(lambda s: s["counts"]["manual"] >= 2 and s["counts"]["accepted"] >= 3)
        assert stats["patterns"] >= 3
        result = await editor.execute("fixlore.export", [str(export)])
        assert result["count"] >= 3
        patterns = await editor.execute("fixlore.patterns", [])
        assert patterns and not any(p in str(patterns) for p in PLANTED)
        assert result["count"] == sum(p["scope"] == "user" for p in patterns)  # nothing left out
        assert scan([fixlore_home]) == []  # while the session runs: the store's WAL and journal files too
        logs = [p["message"] for m, p in editor.notifications if m == "window/logMessage"]
        assert not [(m, p) for m in logs for p in PLANTED if p in m]

    cli_export = tmp_path / "cli-export.json"
    done = subprocess.run(
        [str(BIN / "fixlore"), "knowledge", "export", "--language", "typescript", "-o", str(cli_export)],
        capture_output=True,
        env={**os.environ, "FIXLORE_HOME": str(fixlore_home)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert b"typescript" in cli_export.read_bytes()
    # The logs were captured (on stderr or as window/logMessage, wherever fixlore sends them).
    assert "learned a manual fix" in stderr.read_text(errors="replace") + "\n".join(logs)
    assert any(fixlore_home.rglob("*.sqlite*"))
    assert scan([workspace]), "the scan finds the planted tokens where they belong"
    assert scan([fixlore_home, stderr, export, cli_export]) == []
    assert import_elsewhere(export, tmp_path / "elsewhere")["imported"] == result["count"]
    assert not (workspace / ".fixlore").exists()  # no workspace knowledge unless asked for
    assert not any(p.encode() in done.stdout + done.stderr for p in PLANTED)
