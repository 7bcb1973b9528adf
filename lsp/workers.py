"""One worker process of the server, replaced when it dies, a thread when none can be started.

Parsing and extraction are C code and CPU time that hold the GIL; the server's
request path needs it. :class:`WorkerProcess` owns one spawned child for such
work (the extractor's, the instantiator's, the big files' syntax checks): it
starts the child at the first job (on a thread: never on the caller's, the
event loop), ends it when it has had nothing to do for a while (``idle_stop_s``:
a session's idle process tree is the server alone) and starts it again at the
next job, starts another when one dies (up to a limit), ends it at shutdown,
and runs the jobs on a thread of the server when no process can be started.
The child is a :class:`~fixlore.lsp.pipe_worker.PipeWorker`: one pipe, no
pool machinery between a job and its answer.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from fixlore.lsp.pipe_worker import PipeWorker, settle

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

logger = logging.getLogger(__name__)

T = TypeVar("T")

BACKGROUND_IDLE_S = 60.0
"""A background worker (extraction, big files' syntax checks) ends after this long without a job."""
BACKGROUND_NICE = 10
"""How much a background worker (see :class:`WorkerProcess`) steps back (``os.nice``).

Extraction runs libcst over the file of a fix just made (~0.9 s of CPU to load it,
up to a few hundred ms a fix in long files); on a loaded machine it competed with
the upstream and the instantiation worker that the next lightbulb waits for. At
niceness 10 it gets about a tenth of a contended core and all of an idle one. It steps
back once its first job (the warm-up) is done (:func:`~fixlore.lsp.pipe_worker.step_back`)."""
REQUEST_IDLE_S = 600.0
"""The instantiation worker ends after this long without a job (a restart costs a lightbulb its learned fixes)."""


class WorkerProcess:
    """One spawned worker process for ``name``'s jobs, with a thread to fall back on.

    ``processes``: how many worker processes may be started in all (``None``: no
    limit); once they have died, the jobs run on a thread. A process that cannot
    be started at all sends the jobs to the thread at once.
    """

    def __init__(
        self, name: str, *, processes: int | None = 1, idle_stop_s: float | None = None, background: bool = False
    ) -> None:
        self.name = name
        self._nice = BACKGROUND_NICE if background else 0
        """The process's niceness: a background worker's work waits while the request path is busy."""
        self._limit = processes
        self._started = 0
        """Processes started that did not end idle (the live one and the dead ones)."""
        self._pool: Executor | None = None
        self._on_thread = False
        self._closed = False
        self._lock = threading.Lock()  # the event loop and the pool's own threads both submit and replace
        self._idle_stop_s = idle_stop_s
        self._out = 0
        """Jobs submitted and not done."""
        self._idle: threading.Timer | None = None
        self._active_at = time.monotonic()
        """When the last job ended (the idle check's clock)."""
        self._answered: Executor | None = None
        """The pool whose process has answered a job (it is up, not still starting)."""
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"fixlore-{name}-start")
        """Starts the process for the jobs that find none (in their order)."""

    @property
    def answering(self) -> bool:
        """A process runs and has answered a job since it started.

        A job handed to it now does not wait for a spawn and its imports (0.2-1 s).
        """
        with self._lock:
            return self._pool is not None and self._answered is self._pool and not self._on_thread

    @property
    def on_thread(self) -> bool:
        """The jobs run on a thread of the server (no process could be started, or too many died)."""
        return self._on_thread

    def start(self, warm_up: Callable[[], T], loaded: Callable[[Future[T]], object] | None = None) -> None:
        """Start the worker ahead of its first job and run ``warm_up`` in it; returns at once.

        Starting a process takes its parent ~0.1-0.2 s (multiprocessing's import,
        the spawn): a thread does it (see :meth:`submit`), so the event loop
        never waits for it. ``loaded`` is called with ``warm_up``'s future.
        """
        try:
            future = self.submit(warm_up)  # the process starts on a thread when none runs
        except (BrokenExecutor, OSError, RuntimeError):
            return  # closed meanwhile, or logged where it failed
        if loaded is not None:
            future.add_done_callback(loaded)

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        """Run ``fn(*args)`` in the worker; a worker found dead is replaced and the job tried once more.

        When no process runs (the first job, the first after an idle stop) it is
        started on a thread, and the job is submitted from there. Raises
        :class:`RuntimeError` once closed, and what the second try raised.
        """
        with self._lock:
            starting = self._pool is None and not self._closed and not self._on_thread
        if starting:
            return self._submit_starting(fn, args)
        return self._submit_now(fn, args)

    def _submit_starting(self, fn: Callable[..., T], args: tuple[Any, ...]) -> Future[T]:
        outer: Future[T] = Future()

        def run() -> None:
            try:
                inner = self._submit_now(fn, args)
            except BaseException as exc:  # noqa: BLE001 - the caller hears it through its future
                settle(outer, exc)
                return
            inner.add_done_callback(lambda done: _copy(done, outer))

        try:
            queued = self._starter.submit(run)
        except RuntimeError:  # the starter is shut down: closed meanwhile
            raise RuntimeError(f"the {self.name} worker is closed") from None
        queued.add_done_callback(lambda done: self._dropped(done, outer))
        return outer

    def _dropped(self, queued: Future[None], outer: Future[Any]) -> None:
        """A job still waiting for the process when the worker closed: its caller hears so (never waits on)."""
        if queued.cancelled():
            settle(outer, RuntimeError(f"the {self.name} worker is closed"))

    def _submit_now(self, fn: Callable[..., T], args: tuple[Any, ...]) -> Future[T]:
        try:
            return self._submit(fn, args)
        except (BrokenExecutor, OSError) as exc:
            logger.warning("%s worker failed (%s); trying another", self.name, type(exc).__name__)
            return self._submit(fn, args)

    def processes(self) -> list[BaseProcess]:
        """The live worker process, if there is one (for tests and diagnosis)."""
        with self._lock:
            return _processes_of(self._pool)

    def close(self) -> None:
        """End the worker now: it holds nothing to keep, and the exit must not wait for it."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
            processes = _processes_of(pool)
            if self._idle is not None:
                self._idle.cancel()
        self._starter.shutdown(wait=False, cancel_futures=True)
        if pool is not None:
            _stop(pool, processes)

    def _submit(self, fn: Callable[..., T], args: tuple[Any, ...]) -> Future[T]:
        with self._lock:  # held while a new child spawns: close() then finds and ends it
            if self._closed:
                raise RuntimeError(f"the {self.name} worker is closed")
            pool = self._pool if self._pool is not None else self._new_locked()
            failed: BaseException | None = None
            try:
                future = pool.submit(fn, *args)
            except (BrokenExecutor, OSError) as exc:
                failed, stop = exc, self._failed_locked(pool, spawn=isinstance(exc, OSError))
            else:
                self._out += 1
        if failed is not None:
            if stop is not None:
                _stop(*stop)  # outside the lock: cancelling runs the futures' callbacks, which may submit
            raise failed
        future.add_done_callback(lambda done: self._check(pool, done))
        return future

    def _new_locked(self) -> Executor:
        if not self._on_thread and (self._limit is None or self._started < self._limit):
            try:
                self._pool = worker_process_pool(nice=self._nice)
                self._started += 1
                return self._pool
            except (OSError, RuntimeError) as exc:
                logger.warning("%s worker not started (%s); working in a thread", self.name, type(exc).__name__)
                self._on_thread = True
        self._on_thread = True
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"fixlore-{self.name}")
        return self._pool

    def _check(self, pool: Executor, done: Future[Any]) -> None:
        with self._lock:
            self._out -= 1
            self._active_at = time.monotonic()
            if not done.cancelled() and done.exception() is None:
                self._answered = pool
            idle = self._out == 0 and pool is self._pool and not self._closed
            if idle and self._idle is None and not isinstance(pool, ThreadPoolExecutor):
                self._arm_locked(self._idle_stop_s)
        if done.cancelled() or not isinstance(done.exception(), BrokenExecutor):
            return
        with self._lock:
            stop = self._failed_locked(pool, spawn=False)
        if stop is not None:
            if not _EXITING:  # at exit multiprocessing ends the children: expected, and stderr stays quiet
                logger.warning("%s worker ended unexpectedly; the next job starts another", self.name)
            _stop(*stop)

    def _arm_locked(self, after: float | None) -> None:
        """Check for idleness in ``after`` seconds: one timer at a time, not one per job.

        A job's end only notes the time (:attr:`_active_at`); starting a timer thread
        for each job, and cancelling it at the next, cost the server ~1 ms of its
        event loop per job (the thread start waits for the thread, under the lock
        the next job's submission needs).
        """
        if after is None:
            return
        self._idle = threading.Timer(after, self._stop_idle)
        self._idle.daemon = True
        self._idle.start()

    def _stop_idle(self) -> None:
        """No job for ``idle_stop_s``: end the process (the next job starts another; not a failure)."""
        with self._lock:
            self._idle = None
            pool = self._pool
            if pool is None or self._out or self._closed or isinstance(pool, ThreadPoolExecutor):
                return  # busy (its last job's end arms the next check), stopped, or closed
            left = (self._idle_stop_s or 0.0) - (time.monotonic() - self._active_at)
            if left > 0:
                self._arm_locked(left)  # a job came and went meanwhile
                return
            self._pool = None
            self._started -= 1
            processes = _processes_of(pool)
        logger.debug("%s worker idle for %.0f s; stopped", self.name, self._idle_stop_s or 0)
        _stop(pool, processes)

    def _failed_locked(self, pool: Executor, *, spawn: bool) -> tuple[Executor, list[BaseProcess]] | None:
        """``pool`` failed: forget it (if it is still the current one); what to stop, outside the lock."""
        if pool is not self._pool:
            return None  # another job's failure replaced it already
        if spawn:
            self._on_thread = True
        self._pool = None
        return pool, _processes_of(pool)


def _copy(done: Future[T], outer: Future[T]) -> None:
    if done.cancelled():
        outer.cancel()
        return
    exc = done.exception()
    if exc is not None:
        settle(outer, exc)
    else:
        settle(outer, None, done.result())


def _processes_of(pool: Executor | None) -> list[BaseProcess]:
    return [pool.process] if isinstance(pool, PipeWorker) else []


def _stop(pool: Executor, processes: list[BaseProcess]) -> None:
    for process in processes:
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def worker_process_pool(*, nice: int = 0) -> PipeWorker:
    """One worker process (spawned: no copy of the server's threads) that ends with the server.

    ``nice``: how much it steps back (:data:`BACKGROUND_NICE` for a background worker).
    """
    import multiprocessing  # here: most sessions never start a worker, and `initialize` need not wait for it
    import multiprocessing.util  # its exit hook (which ends the children) registered before ours

    _note_exit()
    return PipeWorker(multiprocessing.get_context("spawn"), os.getpid(), nice=nice)


_EXITING = False
"""The interpreter is exiting: its ``atexit`` hooks run (multiprocessing's then ends the worker processes)."""


@functools.cache
def _note_exit() -> None:
    """Have :data:`_EXITING` set at exit, before multiprocessing's own hook (registered earlier, run later)."""

    def exiting() -> None:
        global _EXITING  # noqa: PLW0603 - the process is ending
        _EXITING = True

    atexit.register(exiting)
