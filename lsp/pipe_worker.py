"""A worker process and one pipe to it: the transport under :class:`~fixlore.lsp.workers.WorkerProcess`.

:class:`PipeWorker` is the server's side (an ``Executor`` of one spawned child),
:func:`serve_pipe` the child's, :func:`init_child` what the child does first.
"""

from __future__ import annotations

import collections
import itertools
import os
import pickle
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future, InvalidStateError
from typing import TYPE_CHECKING, Any, TypeVar

from fixlore.lsp import heap

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

T = TypeVar("T")


DIRECT_MAX = 32 * 1024
"""The largest job the caller writes itself (to an idle child: the pipe is empty).

A pipe holds 64 KiB on Linux (as little as 4 KiB where the system runs short of
pipe pages); past what it holds, the write waits for the child to read. The
server's event loop sends each document text opened or changed (up to ~150 KB):
in a replay of real fixes those sends held it 3-5 ms at p90-p99, a code action
waiting behind them. A larger job goes to the writer thread, off the loop.
"""


class WorkerEnded(BrokenExecutor):
    """The worker process ended (killed, crashed, or stopped) before it answered a job."""


class PipeWorker(Executor):
    """One spawned child and a pipe to it: a job's round trip is one write and one read.

    ``concurrent.futures.ProcessPoolExecutor`` hands every job across three threads
    of the server (the caller wakes its manager thread, which queues the job for its
    feeder thread, which writes it; the manager thread reads the answer): 1.6 ms for
    an empty job on this 2-core machine, where a lightbulb waits for one. Here the
    caller writes the job itself when the child is idle and the job fits in the pipe
    (:data:`DIRECT_MAX`; the child is reading, so the write cannot wait on it; a
    writer thread sends the others, so the event loop never waits on a full pipe),
    and one reader thread sets the answers: 0.8 ms.

    Each message is the job's number and a pickle, both ways, so a job that cannot be
    unpickled (or an answer that cannot be) fails that job alone. The child ends at the
    pipe's end; the server's end (:meth:`shutdown`, or the child found dead) fails the
    jobs not answered with :class:`WorkerEnded`, as a dead worker's did.
    """

    def __init__(self, context: Any, server_pid: int, *, nice: int = 0) -> None:
        ours, theirs = context.Pipe()
        self._process: BaseProcess = context.Process(
            target=serve_pipe, args=(theirs, server_pid, nice), name="fixlore-worker", daemon=True
        )
        self._process.start()
        theirs.close()
        self._conn = ours
        self._state = threading.Condition()
        self._pending: dict[int, Future[Any]] = {}
        """Jobs sent or queued, not answered: number -> future."""
        self._outbox: collections.deque[tuple[int, bytes]] = collections.deque()
        self._sending = False
        self._ended: str | None = None
        """Why no more jobs are taken (set at :meth:`shutdown`, or when the child is found ended)."""
        self._reader_gone = False
        self._reading = False
        """The child has answered a job: it is up, and reads the next as soon as it has answered the last."""
        self._numbers = itertools.count()
        threading.Thread(target=self._read, name="fixlore-worker-read", daemon=True).start()
        threading.Thread(target=self._write, name="fixlore-worker-write", daemon=True).start()

    @property
    def process(self) -> BaseProcess:
        """The child."""
        return self._process

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Send ``fn(*args, **kwargs)`` to the child; raises :class:`WorkerEnded` once it has ended."""
        future: Future[T] = Future()
        future.set_running_or_notify_cancel()  # handed over: cancel() cannot take it back
        try:
            payload = pickle.dumps((fn, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - this job cannot go; the worker is fine
            future.set_exception(exc)
            return future
        with self._state:
            if self._ended is not None:
                raise WorkerEnded(self._ended)
            number = next(self._numbers)
            self._pending[number] = future
            busy = self._sending or self._outbox or len(self._pending) > 1 or not self._reading
            if busy or len(payload) > DIRECT_MAX:
                # Behind a busy child, or one still starting (importing, not reading yet), or
                # more than the pipe takes in one write: the writer thread sends it.
                self._outbox.append((number, payload))
                self._state.notify_all()
                return future
            self._sending = True
        self._send(number, payload)  # the child is reading: this write does not wait on it
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """End the child now (it holds nothing to keep); jobs not answered fail with :class:`WorkerEnded`."""
        with self._state:
            if self._ended is None:
                self._ended = "the worker was stopped"
            self._state.notify_all()
        if self._process.is_alive():
            self._process.terminate()
        if wait:
            self._process.join()

    def _send(self, number: int, payload: bytes) -> None:
        """Write one job (its sender set :attr:`_sending`, which this clears)."""
        try:
            self._conn.send_bytes(_NUMBER.pack(number) + payload)
        except (OSError, ValueError):  # the pipe is gone: the child ended (the reader fails its jobs)
            pass
        finally:
            with self._state:
                self._sending = False
                self._state.notify_all()

    def _write(self) -> None:
        """Send the jobs queued behind a busy child, in order; at the end, close the server's end of the pipe."""
        while True:
            with self._state:
                while self._ended is None and (self._sending or not self._outbox):
                    self._state.wait()
                if self._ended is not None:
                    break
                number, payload = self._outbox.popleft()
                self._sending = True
            self._send(number, payload)
        with self._state:
            while self._sending or not self._reader_gone:  # a caller's write under way; the reader on the pipe
                self._state.wait()
        self._conn.close()

    def _read(self) -> None:
        """Set each answer; when the child ends, fail what it did not answer."""
        why = "the worker process ended"
        from multiprocessing.connection import wait  # imported with the first worker

        try:
            while True:
                ready = wait([self._conn, self._process.sentinel])
                if self._conn not in ready:
                    break
                try:
                    data = self._conn.recv_bytes()
                except (EOFError, OSError):
                    break
                (number,) = _NUMBER.unpack_from(data)
                try:
                    ok, value = pickle.loads(memoryview(data)[_NUMBER.size :])
                except Exception as exc:  # noqa: BLE001 - an answer this process cannot read fails its job only
                    ok, value = False, exc
                with self._state:
                    future = self._pending.pop(number, None)
                    self._reading = True
                if future is not None:
                    settle(future, None if ok else value, value if ok else None)
        finally:
            with self._state:
                self._ended = self._ended or why
                failed = list(self._pending.values())
                self._pending.clear()
                self._outbox.clear()
                self._reader_gone = True
                self._state.notify_all()
            for future in failed:
                settle(future, WorkerEnded(self._ended))
            self._process.join(5)  # reap it (ended, or ending at its pipe's end)


_NUMBER = struct.Struct("!Q")


_when_idle: collections.deque[Callable[[], object]] = collections.deque()
"""In a worker process: what to run once no job waits (see :func:`when_idle`)."""


def when_idle(fn: Callable[[], object]) -> None:
    """In a worker process: run ``fn`` once no job waits on the pipe, before reading the next.

    For loading what later jobs need off the path of the jobs waited for now;
    a job sent meanwhile waits for ``fn`` to end. What ``fn`` raises is dropped.
    """
    _when_idle.append(fn)


def serve_pipe(conn: Any, server_pid: int, nice: int = 0) -> None:
    """In the worker process: answer each job of ``conn`` in order until its end (see :class:`PipeWorker`).

    ``nice``: after its first job (a background worker's warm-up, which loads what
    it needs), the worker steps back by that much (:func:`step_back`).
    """
    init_child(server_pid)
    heap.serving()
    settling = False  # the first job is done: once what it left for idle time is loaded too, freeze
    while True:
        if settling and not _when_idle:
            heap.loaded()
            settling = False
        try:
            if _when_idle and not conn.poll():
                _run_idle(_when_idle.popleft())
                continue
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        (number,) = _NUMBER.unpack_from(data)
        try:
            fn, args, kwargs = pickle.loads(memoryview(data)[_NUMBER.size :])
            answer: tuple[bool, Any] = (True, fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - the job's failure is its caller's to hear
            answer = (False, exc)
        try:
            reply = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an answer that cannot be sent is an error, said as text
            reply = pickle.dumps((False, RuntimeError(f"the answer could not be sent: {type(exc).__name__}: {exc}")))
        conn.send_bytes(_NUMBER.pack(number) + reply)
        if number == 0:  # the first job (a background worker's warm-up) is done: loaded
            settling = True
            if nice > 0:
                step_back(nice)


def _run_idle(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001, S110 - best effort: the job that needs it does the work itself
        pass


def settle(outer: Future[T], exc: BaseException | None, result: Any = None) -> None:
    """Set ``outer``'s exception (``exc``) or result, unless its caller cancelled it meanwhile."""
    try:
        if exc is not None:
            outer.set_exception(exc)
        else:
            outer.set_result(result)
    except InvalidStateError:  # the caller cancelled it meanwhile
        pass


def step_back(nice: int) -> None:
    """In a background worker, once it has loaded: lower its priority by ``nice`` (where the system has one).

    Learning from a fix nobody waits for then yields the CPU to the server, the
    upstreams and the editor while they are busy, and runs at full speed when they
    are not. Not from the start: the warm-up (libcst's import, ~0.9 s of CPU) is
    done at once rather than spread over the session's first seconds. In the
    start-up benchmark (first-5-s code-action p99, three paired runs each) niceness
    from the start measured 10.1-11.2 ms against 7.9-10.1 without, after the warm-up
    9.0-10.5 against 9.7-12.0: within that window's noise either way.
    """
    if hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:  # not allowed here: run as it is
            pass


def init_child(server_pid: int | None = None) -> None:
    """In a worker process: let go of the editor's pipes; end with the server.

    The child would otherwise hold the editor's stdout open after the server is
    gone (an editor waits for it to close), and outlive a killed server.
    """
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    # The server's pid as it started us: a child that starts after the server died
    # (its parent already init, pid 1) must not take init for the server.
    parent = server_pid if server_pid is not None else os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)  # a watchdog's period, in a child with nothing else to do
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
