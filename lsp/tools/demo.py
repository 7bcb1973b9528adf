"""``fixlore demo``: drive fixlore over LSP, as an editor would, on a sample workspace.

The shipped sample workspace is copied to a temporary folder (the original is
never touched) and a private knowledge home is used, so the demo leaves
nothing behind. It starts ``fixlore serve`` as a child process over stdio
(with ``ruff server`` as the Python upstream when ruff is installed), opens
each file, and prints the diagnostics it receives. Then it shows both kinds of
learning: fixes accepted from ruff's quick fixes change their order (with ruff);
a fix made by hand twice is offered back in a new file, and once accepted
there and found to work, it is offered as the preferred fix in the next one
(standalone too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixlore.lsp.tools.editor_session import EditorSession

SAMPLE = Path(__file__).resolve().parent / "sample_workspace"
_SKIP = {"README.md", "pyproject.toml"}
_TIMEOUT = 15.0


def _is_text(path: Path) -> bool:
    """Only text files are opened, as an editor would (no byte code, no binaries)."""
    try:
        path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return False
    return True


def _describe(diag: dict[str, Any]) -> str:
    start = diag["range"]["start"]
    code = diag.get("code")
    where = f"{start['line'] + 1}:{start['character'] + 1}"
    label = f"{diag.get('source', '?')}{f' {code}' if code else ''}"
    # Some servers put a help text after a blank line; one line per diagnostic here.
    message = " / ".join(line.strip() for line in str(diag.get("message", "")).splitlines() if line.strip())
    return f"  {where:>6}  {label:<24} {message}"


async def _demo(workspace: Path, use_ruff: bool, out: Callable[[str], None]) -> int:
    command = [sys.executable, "-m", "fixlore.lsp", "serve"]
    beside = Path(sys.executable).parent / "ruff"  # a venv's ruff, even when the venv is not on PATH
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if use_ruff and ruff:
        command += ["--upstream", f"python={ruff} server"]
    session = EditorSession(workspace, timeout=_TIMEOUT)
    await session.start(command, cwd=str(workspace))
    try:
        # A short pause before a hand edit counts as finished, so the demo need not wait 2 s a fix.
        result = await session.initialize(init_options={"fixlore": {"manualFixPauseMs": _PAUSE_MS}})
        info = result.get("serverInfo", {})
        out(f"Connected to {info.get('name', '?')} {info.get('version', '?')} in {workspace}")
        out(f"Upstream for Python: {'ruff server' if use_ruff and ruff else 'none (standalone)'}\n")
        files = sorted(p for p in workspace.rglob("*") if p.is_file() and p.name not in _SKIP and _is_text(p))
        for path in files:
            uri = session.open(path)
            # One source reports per document (fixlore checks syntax itself only
            # where no upstream serves it), so its first publication is complete.
            with contextlib.suppress(TimeoutError):  # a file nobody reports on is listed with no problems
                await session.published(uri)
            diags = session.diagnostics.get(uri, [])
            out(f"{path.relative_to(workspace)}: {len(diags)} problem(s)")
            for diag in sorted(diags, key=lambda d: (d["range"]["start"]["line"], d["range"]["start"]["character"])):
                out(_describe(diag))
        # Until it has loaded, fixlore's early front relays ruff's answers (no learning,
        # no ranking): the status it sends once its knowledge is open says it serves.
        with contextlib.suppress(TimeoutError):
            await session.wait_for(lambda: any(m == "fixlore/status" for m, _ in session.notifications), what="status")
        if use_ruff and ruff:
            await _show_learning(session, workspace, out)
        await _show_hand_learning(session, workspace, "invalid-syntax" if use_ruff and ruff else "python-syntax", out)
        for method, params in session.notifications:
            if method == "window/showMessage":
                out(f"[editor message] {params.get('message', '')}")
        code = await session.close()
        out(f"\nServer exited with code {code}.")
        return 0 if code == 0 else 1
    finally:
        await session.kill()


_LEARN_MODULES = ("json", "shutil", "textwrap", "base64")
_DISABLE = "Disable for this line"


def _learning_text(module: str) -> str:
    return f"import {module}\n\n\ndef main():\n    return 1\n"


async def _actions_for(session: EditorSession, uri: str, code: str) -> list[dict[str, Any]]:
    diag = await session.diagnostic(uri, code)
    return [a for a in await session.code_actions(uri, diag) if a.get("kind") == "quickfix"]


def _show_actions(actions: list[dict[str, Any]], out: Callable[[str], None]) -> None:
    for n, action in enumerate(actions, 1):
        mark = "  <- preferred" if action.get("isPreferred") else ""
        out(f"    {n}. {action['title']}{mark}")


async def _show_learning(session: EditorSession, workspace: Path, out: Callable[[str], None]) -> None:
    """The same diagnostic before and after three accepted fixes: the order changes."""
    out("\nLearning: a user who silences unused imports (F401) instead of removing them")
    for k, module in enumerate(_LEARN_MODULES):
        path = workspace / f"learning_{k}.py"
        path.write_text(_learning_text(module))
        uri = session.open(path)
        actions = await _actions_for(session, uri, "F401")
        if k == 0:
            out("  Before any choice, fixlore keeps ruff's order:")
            _show_actions(actions, out)
        if k == len(_LEARN_MODULES) - 1:
            out(f"  After {k} choices of '{_DISABLE}', for `import {module}`:")
            _show_actions(actions, out)
            explained = await session.execute("fixlore.explain", [uri, {"line": 0, "character": 7}])
            for entry in explained.get("diagnostics", []):
                for row in entry["actions"][:2]:
                    out(f"    why '{row['title']}': {row['explanation'][0]}")
            break
        chosen = next(a for a in actions if _DISABLE in a["title"])
        out(f"  [{k + 1}] picks: {chosen['title']}")
        await session.apply(chosen)  # its edit, then its command (fixlore.accept)


_PAUSE_MS = 300
_HAND_FIXED = ("def total(rows, start)", "def average(amounts, weights)")
_FRESH = "def shipping_cost(order, rate)"
_FRESH_AGAIN = "def discount(order, percent)"


async def _stats_after(session: EditorSession, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """``fixlore.stats`` once ``predicate`` holds (asked again on each server message, or every 0.2 s)."""
    deadline = time.monotonic() + _TIMEOUT
    while True:
        stats: dict[str, Any] = await session.execute("fixlore.stats", [])
        if predicate(stats) or time.monotonic() > deadline:
            return stats
        with contextlib.suppress(TimeoutError):
            await session.next_message(timeout=0.2)


def _more(key: str, than: int) -> Callable[[dict[str, Any]], bool]:
    """A ``fixlore.stats`` predicate: the session's ``key`` count went past ``than``."""
    return lambda stats: int(stats["session"][key]) > than


async def _show_hand_learning(session: EditorSession, workspace: Path, code: str, out: Callable[[str], None]) -> None:
    """Two syntax errors fixed by typing, then the same fix offered, and applied, in a new file."""
    out("\nLearning from hand edits: a missing `:` typed in by hand, twice")
    for k, header in enumerate(_HAND_FIXED):
        path = workspace / f"by_hand_{k}.py"
        path.write_text(f"{header}\n    return len({header.split()[1].split('(')[0]}.__name__)\n")
        settles = (await _stats_after(session, lambda s: True))["session"]["settles"]
        uri = session.open(path)
        await session.diagnostic(uri, code)
        await _stats_after(session, _more("settles", settles))  # the file as opened
        fixes = (await _stats_after(session, lambda s: True))["session"]["manualFixes"]
        session.insert(uri, len(header), ":")
        await session.gone(uri, code)
        await _stats_after(session, _more("manualFixes", fixes))
        out(f"  [{k + 1}] types `:` after `{header}`")
    uri, learned = await _learned_fixes(session, workspace / "by_hand_new.py", _FRESH, code)
    if not learned:
        out("  (no learned fix was offered in time)")
        return
    out(f"  Offered for a new file: {learned[0]['title']}")
    counts = (await _stats_after(session, lambda s: True))["counts"]
    await session.apply(learned[0])  # its edit, then its command (fixlore.accept)
    out(f"  Accepted: {session.texts[uri].splitlines()[0]}")
    # The accepted fix is judged once the file settles: the diagnostic went and nothing broke.
    # Both counts are waited for: the acceptance (the command) and the verdict are recorded apart.
    done = await _stats_after(
        session,
        lambda s: s["counts"]["succeeded"] > counts["succeeded"] and s["counts"]["accepted"] > counts["accepted"],
    )
    gained = {key: done["counts"][key] - counts[key] for key in ("accepted", "succeeded")}
    out(f"  Learned from that choice: accepted +{gained['accepted']}, worked +{gained['succeeded']}")
    _, again = await _learned_fixes(session, workspace / "by_hand_again.py", _FRESH_AGAIN, code)
    if again:
        mark = "  <- preferred" if again[0].get("isPreferred") else ""
        out(f"  Offered for the next file: {again[0]['title']}{mark}")


async def _learned_fixes(
    session: EditorSession, path: Path, header: str, code: str
) -> tuple[str, list[dict[str, Any]]]:
    """A new file that starts with ``header``, and the learned fixes offered for its ``code`` (asked until offered)."""
    path.write_text(f"{header}\n    return 1\n")
    uri = session.open(path)
    for _ in range(50):  # the learned fix is instantiated for this file in the background
        diag = await session.diagnostic(uri, code)
        learned = [a for a in await session.code_actions(uri, diag) if a["title"].startswith("Apply learned fix")]
        if learned:
            return uri, learned
        await _stats_after(session, lambda s: True)
    return uri, []


def run_demo(workspace: str | None = None, use_ruff: bool = True, out: Callable[[str], None] = print) -> int:
    """Run the demo; returns the exit code."""
    with tempfile.TemporaryDirectory(prefix="fixlore-demo-") as tmp:
        root = Path(tmp) / "workspace"
        # An installed copy of the sample has byte-compiled __pycache__ beside it.
        shutil.copytree(
            Path(workspace) if workspace else SAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        os.environ["FIXLORE_HOME"] = str(Path(tmp) / "home")
        return asyncio.run(_demo(root, use_ruff, out))
