"""WorkerProcess with real spawned children: a job runs in the child, a killed child is replaced, close ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import BrokenExecutor, CancelledError
from typing import TYPE_CHECKING, Any

import pytest

from fixlore.lsp.workers import WorkerProcess, worker_process_pool

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
    from fixlore.lsp.workers import WorkerProcess, worker_process_pool

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


def _closed_mid_write(wakeup: Any) -> bool:
    """Another thread ``close()``s ``wakeup`` just after ``wakeup()`` checked it is open: did the write fail?

    As at exit: ``_python_exit`` wakes every pool's manager thread while the
    manager of a pool just closed is closing its wakeup. The interleaving is
    made, not waited for: the write starts the closer and gives it 0.3 s to
    close the pipe under it. A wakeup whose ``close`` waits for its ``wakeup``
    (the lock) makes the closer wait for the write instead.
    """
    writer = wakeup._writer
    send = writer.send_bytes

    def send_while_closing(data: bytes) -> None:
        closer = threading.Thread(target=wakeup.close)
        closer.start()
        closer.join(0.3)  # with the lock the closer waits for this write; without, it closes the pipe now
        send(data)

    writer.send_bytes = send_while_closing
    try:
        wakeup.wakeup()
    except (OSError, TypeError):  # EBADF ("handle is closed"), or the handle already None
        return True
    finally:
        wakeup.close()  # waits for the closer's close (the lock), or finds it done
    return False


def test_a_pools_wakeup_is_never_written_while_it_closes() -> None:
    from concurrent.futures.process import _ThreadWakeup

    pool: Any = worker_process_pool()
    try:
        ours = pool._executor_manager_thread_wakeup
        assert pool._call_queue.thread_wakeup is ours  # one wakeup, for the manager thread and the exit hook
        assert not _closed_mid_write(type(ours)())
        if not hasattr(_ThreadWakeup(), "_lock"):  # this CPython's own wakeup races (gh-125451)
            assert _closed_mid_write(_ThreadWakeup())
    finally:
        pool.shutdown()


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
