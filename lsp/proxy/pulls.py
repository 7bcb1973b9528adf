"""What the diagnostics bridge keeps per upstream and document: stored answers and pulls in flight.

:class:`Stored` is an upstream's latest diagnostics for a document (with the
bytes and the state of the pull answer they came from); :class:`Flight` a pull
on its way, which later pulls for the same state join. Plain values and small
helpers; :class:`~fixlore.lsp.proxy.diagnostics.DiagnosticsBridge` moves them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fixlore.lsp.proxy.upstream import Upstream
from fixlore.lsp.transport.jsonrpc import RawResult

logger = logging.getLogger(__name__)

State = tuple[int | None, int]
"""(document version, upstream epoch): what a pull answer describes."""


@dataclass(slots=True)
class Stored:
    """An upstream's latest diagnostics for one document."""

    items: list[dict[str, Any]]
    version: int | None
    raw: bytes | None = None
    """The bytes of the pull answer ``items`` came from (None: pushed; ``RawResult.key``)."""
    current: State | None = None
    """The state the upstream answered ``items`` for, while nothing has changed it since."""
    passable: bool = False
    """Whether ``raw`` can answer the editor as it is (``RawResult.passable``)."""
    heard: bool = True
    """Whether the hub has these items (a pull answer reaches it just after the editor's answer)."""
    undecoded: RawResult | None = None
    """A pull answer not decoded yet (until then ``items`` are the previous answer's)."""


@dataclass(slots=True)
class Flight:
    """A pull on its way to an upstream; later pulls for the same state wait for it."""

    state: State
    done: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    answer_editor: list[Callable[[], None]] = field(default_factory=list)
    """Called as soon as the answer is stored, before anything else is done with it."""
    landed: bool = False
    """The answer is stored already (:meth:`DiagnosticsBridge._arrived`)."""


def release(flight: Flight) -> None:
    """Call the flight's editor answers (once)."""
    callbacks, flight.answer_editor = flight.answer_editor, []
    for answer_editor in callbacks:
        try:
            answer_editor()
        except Exception:  # noqa: BLE001 - one editor request's failure, logged
            logger.exception("answering a diagnostics pull failed")


def hub_key(upstream_id: str) -> str:
    """The hub key of an upstream's diagnostics."""
    return f"upstream:{upstream_id}"


def offers_pull(upstream: Upstream) -> bool:
    """True if the upstream answers ``textDocument/diagnostic``."""
    if upstream.capabilities.get("diagnosticProvider"):
        return True
    return "textDocument/diagnostic" in upstream.dynamic_methods


def report_items(answer: RawResult) -> list[dict[str, Any]] | None:
    """The diagnostics of a full pull report; None if the answer is malformed or not one."""
    try:
        report = answer.value()
    except ValueError:
        return None
    if not isinstance(report, dict) or report.get("kind") != "full":
        return None  # "unchanged" cannot happen (no previousResultId is ever sent)
    items = report.get("items")
    return [d for d in items if isinstance(d, dict)] if isinstance(items, list) else []
