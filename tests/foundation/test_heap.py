"""The cycle collector of a serving process (fixlore.lsp.heap), run in a fresh interpreter each."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(body: str) -> str:
    code = "import gc\nfrom fixlore.lsp import heap\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_server_freezes_what_it_loaded_and_keeps_collecting_what_comes_after() -> None:
    out = _run(
        """
        heap.serving()
        import json, email.parser  # loading: long-lived objects
        heap.loaded()
        frozen = gc.get_freeze_count()
        later = [[] for _ in range(100)]
        for item in later:
            item.append(item)  # garbage the session makes: cycles
        del later, item
        print(gc.isenabled(), frozen > 1000, gc.collect() >= 100, gc.get_freeze_count() == frozen)
        """
    )
    assert out == "True True True True"


def test_only_a_process_that_serves_is_touched() -> None:
    # A test building servers in its own process: loaded() (the knowledge store opened) changes nothing.
    out = _run(
        """
        heap.loaded()
        print(gc.isenabled(), gc.get_freeze_count())
        """
    )
    assert out == "True 0"


def test_loading_makes_no_full_collection_and_serving_does() -> None:
    out = _run(
        """
        full = []
        gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
        heap.serving()
        loading = [[[] for _ in range(50)] for _ in range(4000)]  # long-lived: survives to the oldest generation
        while_loading = len(full)
        heap.loaded()
        threshold = gc.get_threshold()
        later = [[[] for _ in range(50)] for _ in range(4000)]
        print(while_loading, len(full) > 0, threshold == (700, 10, 10))
        """
    )
    assert out == "0 True True"
