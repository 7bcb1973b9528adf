"""Work a worker process does when idle: loading what later jobs need, off the path of the jobs waited for."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixlore.lsp.learning import instantiation
from fixlore.lsp.pipe_worker import when_idle
from fixlore.lsp.workers import WorkerProcess

TIMEOUT_S = 60


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    process = WorkerProcess("test", processes=1)
    yield process
    process.close()


def _later(path: str, text: str) -> int:
    """Job: ask the child to write ``text`` to ``path`` once idle; its pid."""
    when_idle(functools.partial(Path(path).write_text, text))
    return os.getpid()


def _later_fails() -> int:
    when_idle(functools.partial(int, "not a number"))
    return os.getpid()


def _sleep_then_pid(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _tables_loaded() -> bool:
    """Job: whether this process has loaded instantiation's lookup tables."""
    from fixlore.abstraction import load_tables

    return load_tables.cache_info().currsize > 0


def _wait_for(path: Path) -> str:
    deadline = time.monotonic() + TIMEOUT_S
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return path.read_text()


def test_the_child_runs_idle_work_once_no_job_waits(worker: WorkerProcess, tmp_path: Path) -> None:
    marker = tmp_path / "idle"
    pid = worker.submit(_later, str(marker), "done").result(TIMEOUT_S)
    assert pid != os.getpid()
    assert _wait_for(marker) == "done"
    # It ran once: written again, it stays.
    marker.write_text("kept")
    assert worker.submit(_sleep_then_pid, 0.1).result(TIMEOUT_S) == pid
    time.sleep(0.2)
    assert marker.read_text() == "kept"


def test_idle_work_that_fails_does_not_end_the_child(worker: WorkerProcess) -> None:
    pid = worker.submit(_later_fails).result(TIMEOUT_S)
    time.sleep(0.2)  # the failing idle work has run by now
    assert worker.submit(os.getpid).result(TIMEOUT_S) == pid
    assert [p.pid for p in worker.processes()] == [pid]


def test_the_instantiation_worker_loads_its_tables_after_the_first_document(worker: WorkerProcess) -> None:
    assert worker.submit(_tables_loaded).result(TIMEOUT_S) is False  # nothing loads them before
    text = "import os\n\nprint(os.sep)\n"
    assert worker.submit(instantiation.run, ("file:///a.py", 1, text, "python", None, [], {})).result(TIMEOUT_S) == []
    deadline = time.monotonic() + TIMEOUT_S
    while not worker.submit(_tables_loaded).result(TIMEOUT_S):
        assert time.monotonic() < deadline, "the tables were never loaded"
        time.sleep(0.05)
