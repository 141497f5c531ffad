"""Workers as processes forked from this one: ``--workers N`` (N > 1) on this machine, without Ray.

A forked worker starts in milliseconds with every module of this process already imported (a Ray worker is a
fresh Python that spends seconds importing the stack, after a local Ray runtime spent seconds starting), so short
runs keep their speed-up. The suites open the pool before they generate episodes, while this process has rendered
nothing: a process forked after OpenGL started (Mesa's llvmpipe keeps worker threads, which a fork does not copy)
hangs at its first render. A process that has rendered (a Python caller that ran episodes itself, a test session)
gets its workers from a fork server instead: a fresh process that imports the stack once and forks every worker
(:func:`fork_is_safe` tells them apart). Each worker builds its own suite worker (simulator, agent, models) and
talks to the driver over a pipe of its own, one call at a time; Ctrl-C is the driver's, which ends the workers. A
worker whose process ends while it has a call (killed, out of memory) is seen by its pipe (end of file) and
replaced (``goat_suites.common.work_units.Scheduler``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Optional

from goat_suites.common.work_units import Scheduler, UnitRunner, WorkerDied, WorkerFactory

CLOSE_TIMEOUT_S = 60.0  # a worker closing its suite worker (simulator, models) at the end of a run
# Libraries of an OpenGL driver that has started in a process (EGL/OSMesa through Mesa, or NVIDIA's): their threads
# and locks do not survive a fork.
GL_DRIVER_LIBRARIES = ("_dri.so", "libgallium", "libOSMesa", "libnvidia-eglcore", "libnvidia-glcore")


def fork_is_safe() -> bool:
    """Whether a worker forked from this process may render: no OpenGL driver has been loaded here yet."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:  # not Linux: no way to tell
        return False
    return not any(name in maps for name in GL_DRIVER_LIBRARIES)


@dataclass(eq=False)  # hashed by identity: the handle of the worker's one call
class _Child:
    """A worker process and the driver's end of its pipe."""

    process: BaseProcess
    conn: Connection
    failed: Optional[str] = None  # why a call could not even be sent to it


def _picklable(exc: BaseException) -> Optional[BaseException]:
    """``exc`` when it survives the pipe (some exceptions cannot be rebuilt from their pickle), else None."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return None
    return exc


def renderer_threads(workers: int, cores: Optional[int] = None) -> str:
    """``LP_NUM_THREADS`` for each of ``workers`` processes sharing ``cores`` (default: this machine's); the user's
    own setting where there is one (passed on explicitly: a fork server's workers inherit its environment, not
    this process's). Mesa's llvmpipe starts a rasteriser thread per core in every process that renders:
    a serial run uses them on the otherwise idle cores, but workers that already fill the cores only make their
    threads contend (measured with 2 workers on 2 cores: 40.3 -> 39.6 s for 8 episodes). A share of one core is
    "0": llvmpipe then rasterises in the rendering thread itself, where one rasteriser thread only adds a hand-off
    per frame that the renderer waits for (0.3-0.8 ms less CPU of a 27 ms step and frame of a small home). The
    pixels do not depend on the thread count."""
    if "LP_NUM_THREADS" in os.environ:
        return os.environ["LP_NUM_THREADS"]
    share = (cores or os.cpu_count() or 1) // max(1, workers)
    return str(share) if share > 1 else "0"


def _serve(conn: Connection, factory: WorkerFactory, lp_threads: Optional[str] = None) -> None:
    """A worker process: builds the suite worker, then answers ``(method, args)`` calls of UnitRunner until
    ``None`` (then it closes the suite worker and answers ``("closed", WorkerInfo)``: its CPU time in all) or the
    driver's end closes. ``lp_threads`` sets LP_NUM_THREADS before the worker's renderer starts."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it ends the workers
    if lp_threads is not None:
        os.environ["LP_NUM_THREADS"] = lp_threads
    runner = UnitRunner(factory)
    try:
        runner.warm_up()
    except Exception:  # noqa: S110 - the first call builds again and reports the error as its own
        pass
    asked_to_close = False
    try:
        while True:
            try:
                request = conn.recv()
            except EOFError:
                break
            if request is None:
                asked_to_close = True
                break
            method, args = request
            try:
                answer: tuple[Any, ...] = ("ok", getattr(runner, method)(*args))
            except BaseException as exc:  # noqa: BLE001 - every error of the suite's code goes to the driver
                answer = ("error", _picklable(exc), traceback.format_exc())
            try:
                conn.send(answer)
            except Exception as exc:  # the value did not pickle: the driver gets that error instead
                conn.send(("error", _picklable(exc), traceback.format_exc()))
    finally:
        runner.close()
        if asked_to_close:
            with contextlib.suppress(OSError):
                conn.send(("closed", runner.info()))
        conn.close()


def _ended(process: BaseProcess) -> str:
    """How a worker process ended, for the run's messages."""
    process.join(timeout=5.0)
    code = process.exitcode
    if code is None:
        return f"worker process {process.pid} stopped answering"
    if code < 0:
        return f"worker process {process.pid} was killed by {signal.Signals(-code).name}"
    return f"worker process {process.pid} exited with status {code}"


class ProcessScheduler(Scheduler):
    """``workers`` forked processes of this machine."""

    def __init__(self, factory: WorkerFactory, workers: int) -> None:
        self.method = "fork" if fork_is_safe() else "forkserver"
        self._context: Any = multiprocessing.get_context(self.method)  # typeshed's BaseContext has no Process
        if self.method == "forkserver":  # the server imports these once; ``factory`` must then pickle
            self._context.set_forkserver_preload([__name__, type(factory).__module__])
        self._factory = factory
        self._lp_threads = renderer_threads(workers)
        super().__init__(workers)

    def _new_worker(self) -> _Child:
        driver_end, worker_end = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(worker_end, self._factory, self._lp_threads),
                                        name="goat-worker",
                                        daemon=True)
        process.start()
        worker_end.close()
        return _Child(process, driver_end)

    def _submit(self, worker: Any, method: str, *args: Any) -> Any:
        try:
            worker.conn.send((method, args))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            worker.failed = _ended(worker.process)
        return worker  # a worker has one call at a time: the worker is the handle of its call

    def _wait(self, calls: list[Any]) -> Any:
        failed = [c for c in calls if c.failed is not None]
        if failed:
            return failed[0]
        ready = set(wait([c.conn for c in calls] + [c.process.sentinel for c in calls]))
        return next(c for c in calls if c.conn in ready or c.process.sentinel in ready)

    def _result(self, call: Any) -> Any:
        if call.failed is not None:
            raise WorkerDied(call.failed)
        try:
            if not call.conn.poll():
                raise EOFError
            answer = call.conn.recv()
        except (EOFError, OSError):
            raise WorkerDied(_ended(call.process)) from None
        if answer[0] == "ok":
            return answer[1]
        _, exc, text = answer
        if exc is None:
            raise RuntimeError(f"in worker process {call.process.pid}:\n{text}")
        exc.add_note(f"(raised in worker process {call.process.pid})")
        raise exc

    def _discard(self, worker: Any) -> None:
        if worker.process.is_alive():
            os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.join(timeout=5.0)
        worker.conn.close()

    def close(self) -> None:
        for worker in self.idle:
            try:
                worker.conn.send(None)
            except OSError:  # already gone
                pass
        for worker in self.idle:
            with contextlib.suppress(EOFError, OSError):
                if worker.conn.poll(CLOSE_TIMEOUT_S):
                    answer = worker.conn.recv()
                    if answer[0] == "closed":
                        self.closed[answer[1].name] = answer[1]
            worker.process.join(timeout=CLOSE_TIMEOUT_S)
            self._discard(worker)
        self.idle = []
