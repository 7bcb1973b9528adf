"""Plain stand-ins for the parts the core talks to: no process, no pygls server, no event loop of their own."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from pygls.workspace import TextDocument

from fixlore.lsp.config import FixloreConfig


class FakeEditor:
    """The :class:`~fixlore.lsp.ports.Editor` protocol over a dict of documents; it remembers what it was told."""

    def __init__(self, **config: Any) -> None:
        self.config = FixloreConfig(**config)
        self.documents: dict[str, TextDocument] = {}
        self.sent: list[tuple[str, Any]] = []
        self.told: list[str] = []
        self.tasks: list[asyncio.Task[Any]] = []

    def open(self, uri: str, text: str, version: int = 1, language_id: str = "python") -> TextDocument:
        doc = TextDocument(uri, text, version=version, language_id=language_id)
        self.documents[uri] = doc
        return doc

    def edit(self, uri: str, text: str) -> None:
        old = self.documents[uri]
        self.open(uri, text, (old.version or 0) + 1, old.language_id or "python")

    def open_document(self, uri: str) -> TextDocument | None:
        return self.documents.get(uri)

    def notify_user(self, message: str, *, key: str) -> None:
        self.told.append(key)

    def spawn(self, coro: Awaitable[Any], *, name: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.tasks.append(task)
        return task

    def send_raw_notification(self, method: str, params: Any) -> None:
        self.sent.append((method, params))


class FakeTimer:
    def __init__(self, at: float, callback: Any, args: tuple[Any, ...]) -> None:
        self.at, self.callback, self.args = at, callback, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A :class:`~fixlore.lsp.learning.clock.Clock` whose time moves only in :meth:`advance`."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.timers: list[FakeTimer] = []

    def now(self) -> float:
        return self.time

    def call_later(self, delay: float, callback: Any, *args: Any) -> FakeTimer:
        timer = FakeTimer(self.time + delay, callback, args)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        """Move time on, firing the timers that come due, in order."""
        self.time += seconds
        while due := sorted((t for t in self.timers if t.at <= self.time), key=lambda t: t.at):
            timer = due[0]
            self.timers.remove(timer)
            if not timer.cancelled:
                timer.callback(*timer.args)


async def settle_tasks(editor: FakeEditor) -> None:
    """Wait for every background task the parts started (and those they started in turn)."""
    while editor.tasks:
        await editor.tasks.pop(0)
