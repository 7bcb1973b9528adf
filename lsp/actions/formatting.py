"""Quick fixes that come out laid out as the user's formatter lays out the code around them.

A fix edits tokens; in a project whose code is formatted, the fix a person
commits is formatted too: ``super(Pool, self).__init__(`` / ``    a, b`` / ``)``
becomes ``super().__init__(a, b)`` once the call fits on a line again, and a
call that ``stacklevel=2`` makes too long is split one argument a line. The
upstream's fix and a learned one leave the layout as it was, so the fix
offered was not the fix the user makes. Replaying real fixes, formatting a fix
where the code it touches was formatted made 9 more first offers exactly the
human's on the dev set (3 fewer) and 12 on other projects' (1 fewer).

*Where it runs.* At ``codeAction/resolve``: an editor that resolves actions'
edits (``resolveSupport`` naming ``edit``, as VS Code and Neovim do) gets the
quick fixes fixlore holds the edit of without it, and asks for it when the
user picks one (an upstream's fix resolved later is formatted as it comes
back); the lightbulb pays nothing, the resolve the formatter's runs (+11–15
ms at the median: ``bench/bench_formatted_fixes.py``). An editor that does
not resolve edits gets them inline and unformatted, as before.

*When.* Only where the formatter keeps the code the fix touches as it is
(code that is formatted stays formatted; code laid out by hand keeps its
layout); never for a fix that only deletes lines. The formatter is the
document's upstream's own: ``ruff format --range`` for Python when the Python
upstream is ruff (with black's line length and string normalisation, where the
project sets them for black and not for ruff: ruff reads only its own), and
``biome format`` where the upstream is Biome (it formats whole files: only a
file that is formatted whole is), each run on the file's path so the
project's settings apply. A formatter that fails, times out or changes
nothing leaves the fix as it was; the setting ``formatFixes`` turns it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import tomllib
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixlore.abstraction import common_ends

if TYPE_CHECKING:
    from fixlore.lsp.config import FixloreConfig

logger = logging.getLogger(__name__)

TIMEOUT_S = 3.0
"""A formatter that has not answered by then is stopped; the fix stays as it was."""
MAX_REMEMBERED = 64


def _tool(executable: str) -> str:
    """``ruff`` for ``/venv/bin/ruff`` or ``ruff.exe``: which program an upstream's executable is."""
    return Path(executable).name.split(".")[0]


def formatter_command(config: FixloreConfig, language_id: str = "python") -> tuple[str, ...] | None:
    """The formatter of a language's fixes: ``format`` of its upstream, when it is ruff (Python) or Biome.

    ``ruff format`` formats line ranges; ``biome format`` whole files.
    """
    if not config.format_fixes:
        return None
    for upstream in config.upstreams.get(language_id, ()):
        executable = upstream.command[0] if upstream.command else ""
        tool = _tool(executable)
        if (tool == "ruff" and language_id == "python") or tool == "biome":
            return (executable, "format")
    return None


def resolves_edits(capabilities: Any) -> bool:
    """Whether the editor's (typed) client capabilities resolve a code action's ``edit``."""
    try:
        support = capabilities.text_document.code_action.resolve_support
        return "edit" in (support.properties or ())
    except AttributeError:  # a part the editor did not send
        return False


class FixFormatter:
    """Formats the lines a fix writes, where the code it touches was formatted before it."""

    def __init__(self, command: tuple[str, ...]) -> None:
        self.command = command
        self.ranged = _tool(command[0]) == "ruff"
        """ruff formats the lines asked for; Biome a whole file (so it must be formatted whole before the fix)."""
        self._known: OrderedDict[bytes, str | None] = OrderedDict()
        """(text, region) digest -> what the formatter made of it (resolving each action of a menu runs it once)."""

    async def formatted(self, path: Path | None, before: str, after: str) -> str | None:
        """``after`` with the lines it changed from ``before`` formatted, or ``None`` if nothing should change.

        ``None`` when the fix only deletes, when the formatter would change the
        code there before the fix (it is not laid out as the formatter lays it
        out), when it fails, or when it leaves the fix as it is.
        """
        old, new = before.split("\n"), after.split("\n")
        head, tail = common_ends(old, new)
        if len(new) - tail <= head:
            return None  # only lines deleted: nothing written to lay out
        if await self._run(path, before, head, max(len(old) - tail, head + 1)) != before:
            return None
        made = await self._run(path, after, head, len(new) - tail)
        return None if made is None or made == after else made

    async def _run(self, path: Path | None, text: str, first: int, end: int) -> str | None:
        """The formatter's output for ``text`` with lines ``[first, end)`` (0-based) formatted; ``None`` on failure."""
        if not self.ranged:
            first = end = 0
        key = hashlib.blake2b(f"{first}:{end}:".encode() + text.encode("utf-8", "surrogatepass")).digest()
        if key in self._known:
            self._known.move_to_end(key)
            return self._known[key]
        out = await self._format(path, text, self._argv(path, first, end))
        self._known[key] = out
        while len(self._known) > MAX_REMEMBERED:
            self._known.popitem(last=False)
        return out

    def _argv(self, path: Path | None, first: int, end: int) -> tuple[str, ...]:
        if not self.ranged:  # biome: the file's path says its language and settings
            return (*self.command, f"--stdin-file-path={path if path is not None else 'untitled.ts'}")
        return (
            *self.command,
            *(() if path is None else black_settings(path.parent)),
            "--force-exclude",  # a file the project keeps from its formatter comes back as it was
            f"--range={first + 1}:1-{end + 1}:1",
            "--stdin-filename",
            str(path) if path is not None else "untitled.py",
            "-",
        )

    async def _format(self, path: Path | None, text: str, argv: tuple[str, ...]) -> str | None:
        cwd = str(path.parent) if path is not None and path.parent.is_dir() else None
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no formatter reads that
            return None
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=cwd,
            )
        except OSError as exc:
            logger.warning("the formatter could not start: %s", type(exc).__name__)
            return None
        try:
            out, _ = await asyncio.wait_for(process.communicate(data), TIMEOUT_S)
        except (TimeoutError, OSError) as exc:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            logger.warning("the formatter gave up: %s", type(exc).__name__)
            return None
        if process.returncode != 0:  # a syntax error, an excluded file: the fix as it was
            logger.info("the formatter refused a fix (exit %s)", process.returncode)
            return None
        return out.decode("utf-8", "replace")


def black_settings(folder: Path) -> tuple[str, ...]:
    """``ruff format`` options that say what the project's black settings say, where ruff's own do not.

    ruff reads only its own settings; a project formatted by black at 79
    columns, or with its string normalisation off, is formatted that way. The
    nearest ``ruff.toml``, ``.ruff.toml`` or ``pyproject.toml`` decides, as for
    ruff: a ruff file alone says everything. Read again when it changes.
    """
    for place in (folder, *folder.parents):
        if (place / "ruff.toml").is_file() or (place / ".ruff.toml").is_file():
            return ()
        pyproject = place / "pyproject.toml"
        try:
            changed = pyproject.stat().st_mtime_ns
        except OSError:
            continue
        return _pyproject_settings(pyproject, changed)
    return ()


@functools.lru_cache(maxsize=64)
def _pyproject_settings(pyproject: Path, changed: int) -> tuple[str, ...]:
    try:
        tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()
    return _from_black(tool.get("black"), tool.get("ruff"))


def _from_black(black: Any, ruff: Any) -> tuple[str, ...]:
    if not isinstance(black, dict):
        return ()
    ruff = ruff if isinstance(ruff, dict) else {}
    ruff_format = ruff.get("format") if isinstance(ruff.get("format"), dict) else {}
    out: list[str] = []
    width = black.get("line-length")
    if "line-length" not in ruff and isinstance(width, int) and not isinstance(width, bool) and width > 0:
        out += ["--line-length", str(width)]
    if black.get("skip-string-normalization") is True and "quote-style" not in ruff_format:
        out += ["--config", "format.quote-style = 'preserve'"]
    if black.get("skip-magic-trailing-comma") is True and "skip-magic-trailing-comma" not in ruff_format:
        out += ["--config", "format.skip-magic-trailing-comma = true"]
    return tuple(out)


def replacing_lines(before: str, made: str) -> dict[str, Any] | None:
    """One LSP TextEdit that turns ``before`` into ``made``, whole lines replaced (``None`` if not at a line end).

    Positions are at line starts (character 0), the same in every position encoding.
    """
    old, new = before.split("\n"), made.split("\n")
    head, tail = common_ends(old, new)
    if tail == 0:
        return None  # the change reaches a last line without a newline: no line start after it
    end = len(old) - tail
    return {
        "range": {"start": {"line": head, "character": 0}, "end": {"line": end, "character": 0}},
        "newText": "".join(line + "\n" for line in new[head : len(new) - tail]),
    }


def with_edits(edit: dict[str, Any], uri: str, edits: list[dict[str, Any]]) -> dict[str, Any]:
    """A copy of the WorkspaceEdit ``edit`` (of one document, ``uri``) with ``edits`` as its text edits."""
    if isinstance(edit.get("changes"), dict):
        return {**edit, "changes": {uri: edits}}
    documents = edit["documentChanges"]
    return {**edit, "documentChanges": [{**documents[0], "edits": edits}]}


__all__ = ["FixFormatter", "formatter_command", "replacing_lines", "resolves_edits", "with_edits"]
