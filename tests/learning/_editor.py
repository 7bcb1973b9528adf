"""A scripted editor for learning tests: real ``fixlore serve`` with real ``ruff server``.

The editor itself is :class:`fixlore.lsp.tools.editor_session.EditorSession` (raw
JSON-RPC, so code actions arrive exactly as sent; edits applied the way an
editor does; waits on notifications, never on sleeps). What is particular to
these tests: the ``fixlore serve`` command line, the workspace's ruff rules,
fixlore's settings sent as ``initializationOptions``, waiting for the
knowledge store to open, and ``fixlore.stats``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from fixlore.lsp.tools.editor_session import EDITOR_CAPABILITIES, EditorSession

BIN = Path(sys.executable).parent
TIMEOUT = 20.0

CAPABILITIES: dict[str, Any] = {
    **EDITOR_CAPABILITIES,
    # No `configuration`: fixlore's settings come only from initializationOptions here.
    "workspace": {"applyEdit": True, "executeCommand": {}},
    "textDocument": {**EDITOR_CAPABILITIES["textDocument"], "synchronization": {"didSave": True}},
}


class Editor(EditorSession):
    """One editor session against one fixlore server (an async context manager)."""

    CLIENT_CAPABILITIES: ClassVar[dict[str, Any]] = CAPABILITIES

    def __init__(
        self,
        root: Path,
        *,
        ruff: bool = True,
        settings: dict[str, Any] | None = None,
        upstreams: tuple[str, ...] = (),
        flags: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(root, timeout=TIMEOUT)
        self.ruff = ruff
        self.upstreams = upstreams
        """More ``--upstream`` flag values (``python=CMD ...``)."""
        self.flags = flags
        """More ``fixlore serve`` flags (``--no-learning``)."""
        self.env = env
        self.settings = {"manualFixPauseMs": 300, **(settings or {})}

    async def __aenter__(self) -> Editor:
        assert self.root is not None
        pyproject = self.root / "pyproject.toml"
        if not pyproject.exists():
            # E711 (`== None`) is not in ruff's default rules; the tests use it.
            pyproject.write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
        command = [str(BIN / "fixlore"), "serve"]
        if self.ruff:
            command += ["--upstream", f"python={BIN / 'ruff'} server"]
        for flag in self.upstreams:
            command += ["--upstream", flag]
        command += list(self.flags)
        await self.start(command, cwd=str(self.root), env={**os.environ, **(self.env or {})})
        try:
            await self.initialize(init_options={"fixlore": self.settings})
            # fixlore/status follows the knowledge store's opening: from then on
            # what the session teaches is visible to ranking at once.
            await self.wait_for(
                lambda: any(m == "fixlore/status" for m, _ in self.notifications), what="fixlore/status"
            )
        except BaseException:
            await self.kill()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def stats(self) -> dict[str, Any]:
        """fixlore.stats."""
        return await self.execute("fixlore.stats", [])

    async def until_stats(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """Poll fixlore.stats (the store writes in the background) until ``predicate`` holds."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            stats = await self.stats()
            if predicate(stats):
                return stats
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"stats never matched: {stats}")
            await asyncio.sleep(0.1)  # polling interval of a query, not synchronisation by sleep
