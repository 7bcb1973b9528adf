"""The knowledge store's part in freezing the server's heap (fixlore.lsp.heap)."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest

from fixlore.lsp import heap
from fixlore.lsp.config import FixloreConfig
from fixlore.lsp.learning.store import StoreSide
from tests.core.fakes import FakeEditor


class _Follower:
    def knowledge_changed(self, signature: object) -> None:
        pass

    def documents_open(self) -> bool:
        return False


async def _opened(store: StoreSide, previous: object = None) -> None:
    deadline = time.monotonic() + 30
    while store.knowledge is None or store.knowledge is previous:
        assert time.monotonic() < deadline, "the knowledge store did not open"
        await asyncio.sleep(0.01)


def test_the_first_store_opened_is_frozen_with_the_server_and_a_reopened_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store reopened after a settings change replaces one: freezing again would keep the old one's cycles."""
    frozen: list[int] = []
    monkeypatch.setattr(heap, "loaded", lambda: frozen.append(1))

    async def session() -> None:
        store = StoreSide(FakeEditor(), follower=_Follower())
        first = FixloreConfig()
        store.config_changed(first, first, None)
        await _opened(store)
        assert frozen == [1]
        opened = store.knowledge
        other = dataclasses.replace(first, base_knowledge=False)  # another scope: the store is reopened
        store.config_changed(first, other, None)
        await _opened(store, previous=opened)
        assert store.knowledge is not opened
        assert frozen == [1]
        store.close_store()

    asyncio.run(session())
