"""WorkerProcess with real spawned children: a job runs in the child, a killed child is replaced, close ends it."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import BrokenExecutor, CancelledError
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fixlore.lsp.learning import instantiation
from fixlore.lsp.pipe_worker import when_idle
from fixlore.lsp.workers import BACKGROUND_NICE, WorkerProcess

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

TIMEOUT_S = 60


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    process = WorkerProcess("test", processes=2)
    yield process
    process.close()


def _ended(child: BaseProcess, deadline: float) -> bool:
    """Whether ``child`` is seen ended by ``deadline``.

    The pool's own thread reaps the child too: a join racing it may return while
    the exit status is not yet recorded (``is_alive()`` still true), so look until it is.
    """
    child.join(max(0.0, deadline - time.monotonic()))
    while child.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    return not child.is_alive()


def _kill_while_busy(worker: WorkerProcess) -> int:
    """Kill the worker in the middle of a job; its pid. The job fails as a dead worker's does."""
    pid = worker.submit(os.getpid).result(TIMEOUT_S)
    busy = worker.submit(time.sleep, TIMEOUT_S)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(BrokenExecutor):
        busy.result(TIMEOUT_S)
    return pid


def test_a_job_runs_in_a_spawned_child(worker: WorkerProcess) -> None:
    pid = worker.submit(os.getpid).result(TIMEOUT_S)
    assert pid != os.getpid()
    assert [p.pid for p in worker.processes()] == [pid]
    assert worker.submit(os.getpid).result(TIMEOUT_S) == pid  # one child, kept between jobs
    assert not worker.on_thread


def test_a_killed_worker_is_replaced_by_a_new_child(worker: WorkerProcess) -> None:
    dead = _kill_while_busy(worker)
    pid = worker.submit(os.getpid).result(TIMEOUT_S)
    assert pid not in {dead, os.getpid()}
    assert [p.pid for p in worker.processes()] == [pid]


def test_past_its_processes_the_worker_runs_jobs_on_a_thread(worker: WorkerProcess) -> None:
    _kill_while_busy(worker)
    _kill_while_busy(worker)  # the second and last child of a worker allowed two
    assert worker.submit(os.getpid).result(TIMEOUT_S) == os.getpid()
    assert worker.on_thread and worker.processes() == []


def test_close_ends_the_child_at_once_and_refuses_later_jobs(worker: WorkerProcess) -> None:
    worker.submit(os.getpid).result(TIMEOUT_S)
    (child,) = worker.processes()
    busy = worker.submit(time.sleep, TIMEOUT_S)
    started = time.monotonic()
    worker.close()
    assert _ended(child, started + TIMEOUT_S / 2) and time.monotonic() - started < TIMEOUT_S / 2  # not after the sleep
    with pytest.raises((BrokenExecutor, CancelledError)):
        busy.result(TIMEOUT_S)
    with pytest.raises(RuntimeError, match="closed"):
        worker.submit(os.getpid)


def test_started_in_the_background_the_warm_up_runs_in_the_child(worker: WorkerProcess) -> None:
    loaded: list[int] = []
    worker.start(os.getpid, lambda done: loaded.append(done.result()))
    deadline = time.monotonic() + TIMEOUT_S
    while not loaded and time.monotonic() < deadline:
        time.sleep(0.05)
    assert loaded == [worker.submit(os.getpid).result(TIMEOUT_S)] and loaded[0] != os.getpid()


# No file descriptor left for the child's pipes: the process cannot be started (a
# real failure, as with EMFILE in an editor's crowded server). Run in a process of
# its own so the limit stays there.
NO_SPAWN = textwrap.dedent(
    """
    import concurrent.futures.process, multiprocessing.connection, multiprocessing.popen_spawn_posix
    import multiprocessing.queues, multiprocessing.synchronize, os, resource
    from fixlore.lsp.workers import WorkerProcess

    worker = WorkerProcess("test")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")), hard))
    print(worker.submit(os.getpid).result(60) == os.getpid(), worker.on_thread, worker.processes())
    worker.close()
    """
)


def test_when_no_process_can_be_started_the_jobs_run_on_a_thread() -> None:
    done = subprocess.run([sys.executable, "-c", NO_SPAWN], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "[]"]
    assert "test worker not started (OSError); working in a thread" in done.stderr


class _FailsInTheChild:
    """Pickles in the server; unpickling it in the child raises (``int("not a number")``)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (int, ("not a number",))


def test_a_job_or_an_answer_that_cannot_cross_fails_alone(worker: WorkerProcess) -> None:
    pid = worker.submit(os.getpid).result(TIMEOUT_S)
    with pytest.raises(ValueError, match="not a number"):  # the job's arguments, unpickled in the child
        worker.submit(len, _FailsInTheChild()).result(TIMEOUT_S)
    with pytest.raises(RuntimeError, match="the answer could not be sent"):  # a lock does not pickle
        worker.submit(threading.Lock).result(TIMEOUT_S)
    with pytest.raises(Exception, match="pickle"):  # nor does a job made of a lambda: refused in the server
        worker.submit(lambda: 1).result(TIMEOUT_S)
    assert worker.submit(os.getpid).result(TIMEOUT_S) == pid  # the same child serves on
    assert [p.pid for p in worker.processes()] == [pid]


def test_a_job_for_a_busy_child_is_queued_not_written_by_the_caller(worker: WorkerProcess) -> None:
    """The event loop submits jobs: a write to a busy child's full pipe must not hold it up.

    The child sleeps 0.5 s; a 4 MB job (a pipe holds 64 KB) submitted meanwhile
    returns at once, and the answers come in order.
    """
    worker.submit(os.getpid).result(TIMEOUT_S)
    answered: list[str] = []
    asleep = worker.submit(time.sleep, 0.5)
    asleep.add_done_callback(lambda _: answered.append("asleep"))
    started = time.monotonic()
    big = worker.submit(len, "x" * 4_000_000)
    assert time.monotonic() - started < 0.25
    big.add_done_callback(lambda _: answered.append("big"))
    assert big.result(TIMEOUT_S) == 4_000_000 and asleep.result(TIMEOUT_S) is None
    assert answered == ["asleep", "big"]


EXITS = textwrap.dedent(
    """
    import os, time
    from fixlore.lsp.workers import WorkerProcess

    if __name__ == "__main__":
        workers = [WorkerProcess(f"test{i}", processes=1) for i in range(3)]
        for worker in workers:
            worker.submit(os.getpid).result(60)
        slow = [worker.submit(time.sleep, 5) for worker in workers]
        for worker in workers[:2]:
            worker.close()
        print("exiting")  # the third ends with the interpreter, busy
    """
)


def test_an_exit_with_workers_busy_or_closed_is_silent_and_leaves_no_child(tmp_path: Any) -> None:
    """Editors show a server's stderr as errors: its exit says nothing, and no worker outlives it.

    ``ProcessPoolExecutor``'s exit hook wrote to a pipe its pool was closing on
    CPython before 3.12.8 (gh-125451, about 1 exit in 25 with three workers); the
    pipe worker has no such hook. Five exits.
    """
    script = tmp_path / "exits.py"
    script.write_text(EXITS)
    for _ in range(5):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=TIMEOUT_S)
        assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "exiting", "")


def test_no_process_runs_before_the_first_job_and_jobs_that_find_none_run_in_order() -> None:
    worker = WorkerProcess("test", processes=1)
    try:
        assert worker.processes() == []
        stamps = [worker.submit(time.monotonic_ns) for _ in range(5)]  # the first one starts the process
        done = [future.result(TIMEOUT_S) for future in stamps]
        assert done == sorted(done) and len(set(done)) == 5
        assert len(worker.processes()) == 1 and not worker.on_thread
    finally:
        worker.close()


def _until_no_process(worker: WorkerProcess) -> bool:
    deadline = time.monotonic() + TIMEOUT_S
    while worker.processes() and time.monotonic() < deadline:
        time.sleep(0.02)
    return worker.processes() == []


def test_an_idle_worker_ends_its_process_and_the_next_job_starts_another() -> None:
    worker = WorkerProcess("test", processes=1, idle_stop_s=0.3)
    try:
        first = worker.submit(os.getpid).result(TIMEOUT_S)
        (child,) = worker.processes()
        assert worker.submit(time.sleep, 0.6).result(TIMEOUT_S) is None  # busy longer than idle_stop_s: kept
        assert worker.submit(os.getpid).result(TIMEOUT_S) == first
        assert _until_no_process(worker)
        assert _ended(child, time.monotonic() + TIMEOUT_S)
        second = worker.submit(os.getpid).result(TIMEOUT_S)
        # An idle stop is not a death: a worker allowed one process starts another, not a thread.
        assert second not in {first, os.getpid()} and not worker.on_thread
    finally:
        worker.close()


def test_jobs_coming_and_going_start_one_idle_timer_not_one_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timer thread per job (started, then cancelled by the next) cost the event loop ~1 ms a job."""
    import fixlore.lsp.workers as workers

    started: list[object] = []

    class CountedTimer(threading.Timer):
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(workers.threading, "Timer", CountedTimer)
    worker = WorkerProcess("test", processes=1, idle_stop_s=0.4)
    try:
        first = worker.submit(os.getpid).result(TIMEOUT_S)
        deadline = time.monotonic() + 0.8  # jobs keep coming for twice the idle time: the process is kept
        jobs = 0
        while time.monotonic() < deadline:
            assert worker.submit(os.getpid).result(TIMEOUT_S) == first
            jobs += 1
            time.sleep(0.01)
        assert jobs > 20
        assert 1 <= len(started) <= 4, len(started)  # re-armed as each check found recent work
        assert _until_no_process(worker)  # and then idle: stopped
    finally:
        worker.close()


# --- work a worker does when idle: loading what later jobs need, off the path of the jobs waited for


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
    """What the child wrote to ``path`` (it creates the file, then writes: an empty file is not written yet)."""
    deadline = time.monotonic() + TIMEOUT_S
    while not (path.exists() and path.read_text()) and time.monotonic() < deadline:
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
    assert (
        worker.submit(instantiation.run, ("file:///a.py", 1, text, "python", None, [], {}, {})).result(TIMEOUT_S) == []
    )
    deadline = time.monotonic() + TIMEOUT_S
    while not worker.submit(_tables_loaded).result(TIMEOUT_S):
        assert time.monotonic() < deadline, "the tables were never loaded"
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no process priorities here")
def test_a_background_worker_steps_back_once_loaded_and_a_request_worker_does_not() -> None:
    background = WorkerProcess("learning", background=True)
    request = WorkerProcess("lightbulb")
    try:
        ours = os.nice(0)
        # its first job (the warm-up: loading libcst) at the server's priority, the rest stepped back
        assert background.submit(os.nice, 0).result(TIMEOUT_S) == ours
        assert background.submit(os.getpid).result(TIMEOUT_S) != os.getpid()
        assert background.submit(os.nice, 0).result(TIMEOUT_S) == min(ours + BACKGROUND_NICE, 19)
        assert request.submit(os.nice, 0).result(TIMEOUT_S) == ours
        assert os.nice(0) == ours  # the server itself is left as it was
    finally:
        background.close()
        request.close()


def _collector() -> tuple[bool, int]:
    import gc

    return gc.isenabled(), gc.get_freeze_count()


def test_a_worker_collects_while_loading_and_freezes_what_it_loaded(worker: WorkerProcess) -> None:
    # The first job (loading) runs with the collector on and nothing frozen: its garbage is collected.
    assert worker.submit(_collector).result(TIMEOUT_S) == (True, 0)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        enabled, frozen = worker.submit(_collector).result(TIMEOUT_S)
        if frozen:
            break
        assert time.monotonic() < deadline, "the worker never froze what it had loaded"
        time.sleep(0.05)
    # Then what it loaded is out of the full collections' way, and it collects what jobs make.
    assert enabled
    assert frozen > 1000
