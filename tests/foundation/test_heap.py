"""The cycle collector of a serving process (fixlore.lsp.heap), run in a fresh interpreter each."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(body: str) -> str:
    code = "import gc\nfrom fixlore.lsp import heap\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_server_loads_without_collections_then_freezes_what_it_loaded() -> None:
    out = _run(
        """
        heap.loading()
        during = gc.isenabled()
        import json, email.parser  # loading: long-lived objects
        heap.loaded()
        print(during, gc.isenabled(), gc.get_freeze_count() > 1000)
        """
    )
    assert out == "False True True"


@pytest.mark.parametrize("collect", [True, False])
def test_only_a_process_that_serves_is_touched(collect: bool) -> None:
    # A test building servers in its own process: loaded() (the knowledge store opened) changes nothing.
    out = _run(
        f"""
        heap.loaded()
        before = (gc.isenabled(), gc.get_freeze_count())
        heap.loading(collect={collect})
        print(before, gc.isenabled())
        """
    )
    assert out == f"(True, 0) {collect}"
