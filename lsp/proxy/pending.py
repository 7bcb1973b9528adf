"""Requests written to upstreams whose answers are awaited later: :class:`Pending`, :class:`PendingActions`.

The proxy writes a request to every target at once (in the order the editor's
messages came) and the caller awaits the answers when it has done its own
work: no task per upstream, each of which costs turns of the event loop on
every request. Each upstream's failure costs its own answer only.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from fixlore.lsp.proxy import merge
from fixlore.lsp.proxy.upstream import Unavailable, Upstream, UpstreamId
from fixlore.lsp.transport.jsonrpc import ConnectionClosed, RpcError

logger = logging.getLogger(__name__)

FAILURES = (TimeoutError, RpcError, ConnectionClosed, Unavailable)
"""What an upstream's answer may fail with: logged, and that upstream answers nothing."""


class Pending:
    """Requests to upstreams, all written already: await :meth:`answers`, or :meth:`drop`.

    No task per upstream: each task costs turns of the event loop on every request.
    """

    def __init__(self, method: str, sent: list[tuple[Upstream, Coroutine[Any, Any, Any] | None]]) -> None:
        self._method = method
        self._sent = sent
        """(upstream, its answer to await; ``None`` if the request could not be sent)."""

    async def answers(self) -> list[tuple[Upstream, Any]]:
        """Every upstream's answer in upstream order, ``None`` for one that failed or timed out (logged)."""
        out: list[tuple[Upstream, Any]] = []
        try:
            while self._sent:
                upstream, answer = self._sent.pop(0)  # all on their way already
                out.append((upstream, None if answer is None else await self._one(upstream, answer)))
        except BaseException:
            self.drop()  # cancelled: the others are not waited for
            raise
        return out

    async def _one(self, upstream: Upstream, answer: Coroutine[Any, Any, Any]) -> Any:
        try:
            return await answer
        except FAILURES as exc:
            logger.warning("upstream %s: %s failed (%s)", upstream.id, self._method, type(exc).__name__)
            return None

    def drop(self) -> None:
        """Not waited for after all: their answers are dropped when they come."""
        for _, answer in self._sent:
            if answer is not None:
                answer.close()
        self._sent = []


class PendingActions:
    """Code-action requests on their way to upstreams: await :meth:`answers`, or :meth:`drop`."""

    def __init__(self, pending: Pending) -> None:
        self._pending = pending

    async def answers(self) -> list[tuple[UpstreamId, dict[str, Any]]]:
        """Every upstream's actions, wrapped, in upstream order (failures add nothing)."""
        out: list[tuple[UpstreamId, dict[str, Any]]] = []
        for upstream, result in await self._pending.answers():
            if isinstance(result, list):
                out.extend((upstream.id, merge.wrap_item(a, upstream.id)) for a in result if isinstance(a, dict))
        return out

    def drop(self) -> None:
        """Not waited for after all: their answers are dropped when they come."""
        self._pending.drop()
