"""Benchmark episodes on several workers: in this process, on a local Ray runtime, or on a Ray cluster.

Every suite cuts its run into :class:`WorkUnit` s (one episode each, in the order of its plan) and gives
:func:`run_units` a picklable factory of its :class:`EpisodeWorker` (which builds the simulator and the agent once
and runs one unit at a time) and a :class:`ResultSink` (which keeps the results in plan order and rewrites the
results file after every finished episode). With ``--workers 1`` and no ``--ray-address`` the worker runs in this
process, as ``goat-nav bench`` always did; otherwise each worker is a Ray actor (one CPU each) and the results
come back to this process (the driver), which alone writes files.

Same numbers as serial: an episode's outcome depends on the episode and the settings only (the runner resets the
agent and the simulator at every episode start), so which worker runs it, and after which other episode, does not
matter; the sink writes episodes in plan order whatever order they finish in. ``--record``: each worker records
its episode into a bag of its own whose clock starts at 0; the driver appends those bags to the run's bag in plan
order with their clocks shifted (:mod:`goat_suites.common.bag_merge`), so the bag equals the serial run's.

Faults: a worker process that dies (killed, out of memory, its node lost) costs its episode one retry on a fresh
worker; a second death records the episode with an error that starts with :data:`WORKER_LOST` (``--resume`` runs
such episodes again). An exception raised by the suite's own code stops the run, as it does in a serial run.

Ray is an optional dependency (``pip install -e ".[cluster]"``), imported only when a run asks for workers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import os
import resource
import shutil
import socket
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Protocol, Sequence, TypeVar

from tqdm import tqdm

from goat_core.errors import ConfigError, GoatError
from goat_ros.record import RunRecorder
from goat_suites.common.bag_merge import BagFragment, FragmentMerger, capture_fragment

INSTALL_HINT = 'pip install -e ".[cluster]"'  # the extra that installs Ray (pyproject.toml)
MAX_ATTEMPTS = 2  # an episode whose worker died is run once more on a fresh worker
WORKER_LOST = "worker lost"  # start of the error of an episode whose worker died on every attempt


@dataclass(frozen=True)
class WorkUnit:
    """One episode of a run's plan."""

    index: int  # position in the plan: results are written in this order
    key: str  # the episode's name in the results file (``--resume`` matches finished episodes by it)
    payload: Any  # what the suite's worker needs to run it (a GoatEpisode, a FindingDory home seed); picklable
    cost: float = 0.0  # expected work (GOAT: subtasks); Ray workers get the costliest first, ties in plan order


class EpisodeWorker(Protocol):
    """Runs units one after another, reusing what it built (simulator, agent, models) across them."""

    def run_unit(self, unit: WorkUnit, recorder: Optional[RunRecorder], emit: Callable[[str], None]) -> Any:
        """Run one episode; ``recorder`` (if given) gets its goals, steps and results, ``emit`` its --verbose lines.
        The return value goes to the suite's :class:`ResultSink` (it must pickle)."""
        ...

    def close(self) -> None: ...


WorkerFactory = Callable[[], EpisodeWorker]  # picklable (a frozen dataclass with __call__): built once per worker
Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass(frozen=True)
class WorkerInfo:
    """Where a unit ran, and the peak memory of that worker process so far."""

    host: str
    pid: int
    peak_rss_mb: float
    node: str = ""  # the Ray node id ("" in this process); several nodes may share a host
    build_s: float = 0.0  # how long building its suite worker (simulator, agent, models) took

    @property
    def name(self) -> str:
        return f"{self.host}:{self.pid}"


@dataclass(frozen=True)
class UnitResult:
    """A finished unit: the worker's output, or (``error``) the reason it has none."""

    unit: WorkUnit
    payload: Any = None
    error: Optional[str] = None  # set when the worker died on every attempt (starts with WORKER_LOST)
    lines: tuple[str, ...] = ()  # --verbose lines (a serial run prints them as they come)
    worker: Optional[WorkerInfo] = None
    attempts: int = 1


class ResultSink(Protocol):
    """The driver side of a suite: keeps results in plan order and writes the files."""

    def add(self, result: UnitResult) -> None:
        """Store one finished unit (out of plan order with workers) and rewrite the results files."""
        ...

    def postfix(self) -> dict[str, str]:
        """The numbers so far for the progress bar (SR, SPL ...)."""
        ...


@dataclass(frozen=True)
class ParallelConfig:
    """How many workers and where: ``workers`` 1 and no ``ray_address`` runs in this process."""

    workers: Optional[int] = None  # None: 1 on this machine, every CPU of the cluster with ray_address
    ray_address: Optional[str] = None  # "auto" or host:port of a running cluster; None: a local runtime if needed
    gpu: bool = False  # the models run on CUDA: each worker asks Ray for its share of the GPUs

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {self.workers}")
        if self.ray_address is not None and not self.ray_address.strip():
            raise ConfigError("--ray-address must be 'auto' or host:port, got an empty string")

    @property
    def uses_ray(self) -> bool:
        return self.ray_address is not None or (self.workers or 1) > 1


@dataclass
class RunStats:
    """What the workers did: peak memory per worker process, deaths, retried and lost episodes."""

    workers: dict[str, WorkerInfo] = field(default_factory=dict)  # by WorkerInfo.name, the latest report
    worker_deaths: int = 0
    retried: list[str] = field(default_factory=list)  # unit keys run a second time
    lost: list[str] = field(default_factory=list)  # unit keys recorded with a WORKER_LOST error
    finished: int = 0
    elapsed_s: float = 0.0
    # Where the time of a run with Ray workers goes (0 without Ray):
    startup_s: float = 0.0  # starting (or reaching) the Ray runtime and its workers, until they were asked to build
    idle_at_end_s: float = 0.0  # worker-seconds spent waiting for the last episodes of other workers
    units_per_worker: dict[str, int] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------ command line


def add_parallel_args(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--ray-address`` and ``--resume`` of ``goat-nav bench``."""
    g = parser.add_argument_group(f"parallel and cluster runs (Ray: {INSTALL_HINT}; docs/cluster.md)")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run N episodes at a time on a local Ray runtime that the command starts and stops (default "
                        "1: in this process, no Ray); with --ray-address, N workers on the cluster (default: one "
                        "per cluster CPU)")
    g.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="submit the episodes to a running Ray cluster: 'auto' (this machine is a node) or host:port "
                        "of its head")
    g.add_argument("--resume", action="store_true",
                   help="continue the run whose results file --out names: episodes already in it are kept, the rest "
                        "run (the episodes and settings must be those of the file)")


def parallel_config(args: argparse.Namespace) -> ParallelConfig:
    """The worker settings of the command line; ConfigError (at once) for a combination that cannot run."""
    config = ParallelConfig(workers=getattr(args, "workers", None), ray_address=getattr(args, "ray_address", None),
                            gpu=str(getattr(args, "device", "cpu")).startswith("cuda"))
    if getattr(args, "resume", False) and getattr(args, "out", None) is None:
        raise ConfigError("--resume needs --out: the results file of the run to continue")
    if config.uses_ray and getattr(args, "ros", False):
        raise ConfigError(
            "--ros runs with one worker only: the ROS graph of every worker would need its own ROS_DOMAIN_ID and "
            "the graphs of one machine share its DDS discovery; drop --workers/--ray-address (docs/cluster.md)")
    if config.uses_ray and getattr(args, "live", None) is not None:
        raise ConfigError("--live serves the run of this process: drop --workers/--ray-address (docs/cluster.md)")
    if config.uses_ray and importlib.util.find_spec("ray") is None:
        what = f"--workers {config.workers}" if config.ray_address is None else f"--ray-address {config.ray_address}"
        raise ConfigError(f"{what} needs Ray, which is not installed in this environment; install it with: "
                          f"{INSTALL_HINT}  (or pip install 'ray==2.60.0'), or run with --workers 1")
    return config


# ------------------------------------------------------------------------------------------ the engine


def _worker_info(node: str = "") -> WorkerInfo:
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: kilobytes
    return WorkerInfo(host=socket.gethostname(), pid=os.getpid(), peak_rss_mb=round(peak_kb / 1024.0, 1), node=node)


def _ray_worker_info() -> WorkerInfo:
    """In a Ray worker (Ray is importable there): where it runs, with its node."""
    import ray

    return _worker_info(ray.get_runtime_context().get_node_id())


class _Progress:
    """One bar over every worker: episodes of the plan, the sink's numbers and episodes per minute."""

    def __init__(self, total: int, done: int, quiet: bool, sink: ResultSink) -> None:
        self.bar = tqdm(total=total, initial=done, desc="episodes", unit="ep", disable=quiet, file=sys.stderr,
                        dynamic_ncols=True)
        self.sink = sink
        self.started = time.monotonic()
        self.finished = 0

    def update(self) -> None:
        self.finished += 1
        minutes = max(time.monotonic() - self.started, 1e-6) / 60.0
        self.bar.set_postfix({**self.sink.postfix(), "ep/min": f"{self.finished / minutes:.1f}"}, refresh=False)
        self.bar.update(1)

    def write(self, line: str) -> None:
        tqdm.write(line, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


class WorkerPool:
    """The workers of a run; use as a context manager around everything the run does.

    Opened before the episodes are generated, a pool with Ray starts the runtime and its workers at once, and the
    workers build their simulator and agent while this process generates the episodes; :meth:`run` then hands them
    the units. Without Ray (one worker, no address) the one worker is built in this process. Leaving the context
    stops the workers and the runtime the pool started (a cluster keeps running).
    """

    def __init__(self, config: ParallelConfig, factory: WorkerFactory, max_units: Optional[int] = None) -> None:
        """``max_units``: at most this many units will run (no more workers than that are started)."""
        self.config = config
        self.factory = factory
        self.max_units = max_units
        self._stack = contextlib.ExitStack()
        self._worker: Optional[EpisodeWorker] = None  # the in-process one
        self._scheduler: Optional[_RayScheduler] = None
        self.startup_s = 0.0  # Ray runtime and workers started (RunStats.startup_s)

    def __enter__(self) -> WorkerPool:
        try:
            if self.config.uses_ray:
                started = time.monotonic()
                ray, workers = self._stack.enter_context(ray_runtime(self.config))
                workers = min(workers, self.max_units) if self.max_units else workers
                self._scheduler = _RayScheduler(ray, self.factory, workers, self.config.gpu)
                self.startup_s = time.monotonic() - started
                self._stack.callback(self._scheduler.close)
            else:
                self._worker = self.factory()
                self._stack.callback(self._worker.close)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def distributed(self) -> bool:
        """Whether the work runs in Ray workers (not in this process)."""
        return self._scheduler is not None

    def map(self, fn: Callable[[Item], Result], items: Sequence[Item],
            on_done: Optional[Callable[[Result], None]] = None) -> list[Result]:
        """``[fn(item) for item in items]``, computed by the workers (``fn`` picklable, a module-level function or
        a frozen dataclass); ``on_done`` sees each result as it comes. A worker that dies costs its item one retry;
        a second death, or an exception of ``fn``, stops the map."""
        if self._scheduler is not None:
            return self._scheduler.map(fn, items, on_done)
        results = []
        for item in items:
            results.append(fn(item))
            if on_done is not None:
                on_done(results[-1])
        return results

    def run(self, units: Sequence[WorkUnit], sink: ResultSink, recorder: Optional[RunRecorder] = None,
            total: Optional[int] = None, quiet: bool = False) -> RunStats:
        """Run ``units`` (the episodes of the plan still to run) and hand every result to ``sink``.

        ``total``: episodes in the whole plan (the bar starts at ``total - len(units)``: those were finished
        before). ``recorder``: the run's open bag, which gets the episodes in plan order.
        """
        total = len(units) if total is None else total
        progress = _Progress(total, total - len(units), quiet, sink)
        stats = RunStats(startup_s=self.startup_s)
        started = time.monotonic()
        try:
            if self._scheduler is not None:
                self._scheduler.run(units, sink, recorder, progress, stats)
            elif self._worker is not None:
                _run_in_process(units, self._worker, sink, recorder, progress, stats)
            else:
                raise RuntimeError("WorkerPool.run outside its context (use: with WorkerPool(...) as pool)")
        finally:
            progress.close()
            stats.elapsed_s = time.monotonic() - started
        if self._scheduler is not None and units:
            print(describe(stats, self.config), file=sys.stderr)
        return stats


def run_units(units: Sequence[WorkUnit], factory: WorkerFactory, sink: ResultSink, config: ParallelConfig,
              recorder: Optional[RunRecorder] = None, total: Optional[int] = None, quiet: bool = False) -> RunStats:
    """:meth:`WorkerPool.run` on a pool of its own."""
    with WorkerPool(config, factory, max_units=len(units)) as pool:
        return pool.run(units, sink, recorder, total, quiet)


def describe(stats: RunStats, config: ParallelConfig) -> str:
    """One line on the workers of a run: where, their peak memory, deaths, retried and lost episodes."""
    where = "a local Ray runtime" if config.ray_address is None else f"the Ray cluster at {config.ray_address}"
    peaks = ", ".join(f"{w.peak_rss_mb:.0f}" for w in sorted(stats.workers.values(), key=lambda w: w.name))
    nodes = len({(w.host, w.node) for w in stats.workers.values()})
    builds = ", ".join(f"{w.build_s:.1f}" for w in sorted(stats.workers.values(), key=lambda w: w.name))
    units = ", ".join(str(stats.units_per_worker.get(name, 0)) for name in sorted(stats.workers))
    return (f"workers: {len(stats.workers)} processes on {nodes} node(s) of {where}; peak memory per worker "
            f"[{peaks}] MB; {stats.worker_deaths} worker deaths, {len(stats.retried)} episodes retried, "
            f"{len(stats.lost)} lost; time: Ray start-up {stats.startup_s:.1f} s, worker builds [{builds}] s, "
            f"episodes per worker [{units}], idle at the end {stats.idle_at_end_s:.1f} worker-s")


def _run_in_process(units: Sequence[WorkUnit], worker: EpisodeWorker, sink: ResultSink,
                    recorder: Optional[RunRecorder], progress: _Progress, stats: RunStats) -> None:
    for unit in units:
        payload = worker.run_unit(unit, recorder, progress.write)  # --verbose lines print as they come
        info = _worker_info()
        stats.workers[info.name] = info
        sink.add(UnitResult(unit, payload=payload, worker=info))
        stats.finished += 1
        progress.update()


# ------------------------------------------------------------------------------------------ Ray


def import_ray() -> Any:
    """The ray module, or ConfigError with the install command."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"parallel runs need Ray ({exc}); install it with: {INSTALL_HINT}") from None
    return ray


@contextlib.contextmanager
def ray_runtime(config: ParallelConfig) -> Iterator[tuple[Any, int]]:
    """(ray, number of workers) on a runtime for the run.

    A Ray already initialised in this process (a Python caller's) is used as it is and left running. Without
    ``ray_address`` a new local runtime (never another one of this machine) with ``workers`` CPUs, workers as nice
    as this process, no dashboard, worker logs kept out of this terminal and a temporary folder of its own is
    started, and stopped (folder removed) afterwards. With ``ray_address`` this
    process connects to the cluster as its driver and disconnects afterwards; the cluster keeps running.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray, config.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        return
    temp_dir: Optional[str] = None
    if config.ray_address is None:
        # Short path: Ray's socket names must fit in 107 bytes.
        temp_dir = tempfile.mkdtemp(prefix="goat-ray-", dir="/tmp" if os.path.isdir("/tmp") else None)
        # Workers as nice as this command: Ray's default (15 above the raylet) would put them behind every other
        # job of a shared machine, and `nice goat-nav bench` should apply to the whole run.
        init: dict[str, Any] = dict(address="local", num_cpus=config.workers or 1, include_dashboard=False,
                                    _temp_dir=temp_dir, _system_config={"worker_niceness": 0})
    else:
        from goat_suites.common.ray_cluster import check_gcs_reachable

        check_gcs_reachable(config.ray_address)  # Ray would retry a dead address for minutes, printing warnings
        init = dict(address=config.ray_address)
    try:
        ray.init(log_to_driver=False, logging_level=logging.WARNING, **init)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
        where = "a local Ray runtime" if config.ray_address is None else f"the Ray cluster at {config.ray_address!r}"
        raise ConfigError(f"cannot start or reach {where}: {exc}") from None
    try:
        # A local runtime has exactly the workers' CPUs; a cluster gives one worker per CPU unless told otherwise.
        workers = config.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        yield ray, workers
    finally:
        ray.shutdown()
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)


@dataclass(frozen=True)
class _Done:
    """What an actor sends back for one unit."""

    payload: Any
    lines: tuple[str, ...]
    fragment: Optional[BagFragment]
    worker: WorkerInfo


class UnitActor:
    """The Ray actor of one worker (wrapped with ``ray.remote`` by the scheduler).

    :meth:`warm_up` builds the suite's worker (a failing build is an error of that call, raised in the driver by
    the next :meth:`run`, not a worker death); :meth:`run` runs one unit with it, and with ``record`` records the
    unit into a bag fragment of its own."""

    def __init__(self, factory: WorkerFactory) -> None:
        self._factory = factory
        self._worker: Optional[EpisodeWorker] = None
        self._build_s = 0.0

    def warm_up(self) -> WorkerInfo:
        if self._worker is None:
            started = time.monotonic()
            self._worker = self._factory()
            self._build_s = time.monotonic() - started
        return self._info()

    def _info(self) -> WorkerInfo:
        info = _ray_worker_info()
        return WorkerInfo(info.host, info.pid, info.peak_rss_mb, info.node, self._build_s)

    def run(self, unit: WorkUnit, record: bool, step_period_ns: int) -> _Done:
        self.warm_up()
        assert self._worker is not None
        lines: list[str] = []
        fragment = None
        if record:
            with tempfile.TemporaryDirectory(prefix="goat-fragment-") as tmp:
                recorder = RunRecorder(Path(tmp) / "episode", step_period_ns=step_period_ns)
                with recorder:
                    payload = self._worker.run_unit(unit, recorder, lines.append)
                fragment = capture_fragment(recorder)
        else:
            payload = self._worker.run_unit(unit, None, lines.append)
        return _Done(payload, tuple(lines), fragment, self._info())

    def call(self, fn: Callable[[Any], Any], item: Any) -> Any:
        """``fn(item)`` in this worker's process (:meth:`WorkerPool.map`)."""
        return fn(item)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def _short(exc: BaseException) -> str:
    """The last meaningful line of a Ray error (its messages run over many lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]


@dataclass
class _Batch:
    """What one :meth:`_RayScheduler.run` hands out and collects."""

    sink: ResultSink
    recorder: Optional[RunRecorder]
    progress: _Progress
    stats: RunStats
    merger: FragmentMerger
    queue: deque[tuple[WorkUnit, int]]  # (unit, attempt) still to hand out


class _RayScheduler:
    """One actor per worker, started (and warming up) at once; keeps every worker busy and runs the unit of a
    worker that died once more on a fresh one."""

    def __init__(self, ray: Any, factory: WorkerFactory, workers: int, gpu: bool) -> None:
        self.ray = ray
        options: dict[str, Any] = dict(num_cpus=1, max_restarts=0, max_task_retries=0)
        if gpu:
            gpus = float(ray.cluster_resources().get("GPU", 0.0))
            if gpus <= 0.0:
                raise ConfigError("--device cuda with workers: the Ray runtime has no GPU")
            options["num_gpus"] = min(1.0, gpus / workers)  # each worker's share; Ray sets CUDA_VISIBLE_DEVICES
        self._actor_class = ray.remote(**options)(UnitActor)
        self._factory_ref = ray.put(factory)  # shipped once, not once per worker
        self._warm_ups: list[Any] = []
        self.idle = [self._new_actor() for _ in range(workers)]

    def _new_actor(self) -> Any:
        actor = self._actor_class.remote(self._factory_ref)
        self._warm_ups.append(actor.warm_up.remote())
        return actor

    def close(self) -> None:
        ray = self.ray
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get([actor.close.remote() for actor in self.idle], timeout=60)
        with contextlib.suppress(ray.exceptions.RayError):  # seen, so that Ray does not report them unhandled
            ray.get(self._warm_ups, timeout=1)
        for actor in self.idle:
            ray.kill(actor)
        self.idle = []

    def map(self, fn: Callable[[Item], Result], items: Sequence[Item],
            on_done: Optional[Callable[[Result], None]]) -> list[Result]:
        ray = self.ray
        fn_ref = ray.put(fn)
        queue: deque[tuple[int, int]] = deque((i, 1) for i in range(len(items)))  # (item index, attempt)
        results: dict[int, Result] = {}
        running: dict[Any, tuple[Any, int, int]] = {}
        try:
            while queue or running:
                while queue and self.idle:
                    actor, (i, attempt) = self.idle.pop(), queue.popleft()
                    running[actor.call.remote(fn_ref, items[i])] = (actor, i, attempt)
                (ref,), _ = ray.wait(list(running), num_returns=1)
                actor, i, attempt = running.pop(ref)
                try:
                    results[i] = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    ray.kill(actor)
                    self.idle.append(self._new_actor())
                    if attempt >= MAX_ATTEMPTS:
                        raise GoatError(f"item {i} of a distributed step ({getattr(fn, '__name__', fn)!r}): its worker "
                                        f"died on all {attempt} attempts; last: {_short(exc)}") from None
                    queue.appendleft((i, attempt + 1))
                    continue
                except ray.exceptions.RayTaskError as exc:
                    self.idle.append(actor)
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, GoatError):
                        raise cause from None
                    raise
                self.idle.append(actor)
                if on_done is not None:
                    on_done(results[i])
        finally:
            for actor, _, _ in running.values():
                ray.kill(actor)
        return [results[i] for i in range(len(items))]

    def run(self, units: Sequence[WorkUnit], sink: ResultSink, recorder: Optional[RunRecorder], progress: _Progress,
            stats: RunStats) -> None:
        ray = self.ray
        # Costliest first (ties in plan order): a long episode started last would leave the other workers idle
        # at the end. The results and the bag are written in plan order whatever order the units finish in.
        order = sorted(units, key=lambda u: -u.cost)
        batch = _Batch(sink, recorder, progress, stats, FragmentMerger(recorder, [u.index for u in units]),
                       deque((u, 1) for u in order))
        last_done: dict[str, float] = {}
        step_period_ns = recorder.step_period_ns if recorder is not None else 1
        running: dict[Any, tuple[Any, WorkUnit, int]] = {}
        try:
            while batch.queue or running:
                while batch.queue and self.idle:
                    actor, (unit, attempt) = self.idle.pop(), batch.queue.popleft()
                    running[actor.run.remote(unit, recorder is not None, step_period_ns)] = (actor, unit, attempt)
                (ref,), _ = ray.wait(list(running), num_returns=1)
                actor, unit, attempt = running.pop(ref)
                result = self._collect(ref, actor, unit, attempt, batch)
                if result is None:
                    continue  # queued again on a fresh worker
                for line in result.lines:
                    progress.write(line)
                sink.add(result)
                stats.finished += 1
                progress.update()
                if result.worker is not None:
                    last_done[result.worker.name] = time.monotonic()
                    stats.units_per_worker[result.worker.name] = stats.units_per_worker.get(result.worker.name, 0) + 1
        finally:
            for actor, _, _ in running.values():  # an error stops the run: units under way are abandoned
                ray.kill(actor)
        end = time.monotonic()
        stats.idle_at_end_s = sum(end - t for t in last_done.values())

    def _collect(self, ref: Any, actor: Any, unit: WorkUnit, attempt: int, batch: _Batch) -> Optional[UnitResult]:
        """The unit's result; None when it was queued again; raises what the suite's code raised."""
        ray = self.ray
        try:
            done: _Done = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            if getattr(exc, "actor_init_failed", False):
                raise GoatError(f"a Ray worker could not start (is goat_nav installed on every node? "
                                f"docs/cluster.md): {_short(exc)}") from None
            return self._worker_died(exc, actor, unit, attempt, batch)
        except ray.exceptions.RayTaskError as exc:
            self.idle.append(actor)
            cause = getattr(exc, "cause", None)
            if isinstance(cause, GoatError):
                raise cause from None  # a suite's own error reads as in a serial run
            raise
        self.idle.append(actor)
        batch.stats.workers[done.worker.name] = done.worker
        batch.merger.add(unit.index, done.fragment)
        return UnitResult(unit, payload=done.payload, lines=done.lines, worker=done.worker, attempts=attempt)

    def _worker_died(self, exc: BaseException, actor: Any, unit: WorkUnit, attempt: int,
                     batch: _Batch) -> Optional[UnitResult]:
        batch.stats.worker_deaths += 1
        self.ray.kill(actor)
        self.idle.append(self._new_actor())
        if attempt < MAX_ATTEMPTS:
            batch.stats.retried.append(unit.key)
            batch.progress.write(f"episode {unit.key}: its worker died ({_short(exc)}); running it again")
            batch.queue.appendleft((unit, attempt + 1))
            return None
        batch.stats.lost.append(unit.key)
        batch.merger.skip(unit.index)
        message = f"{WORKER_LOST}: the worker died on all {attempt} attempts; last: {_short(exc)}"
        batch.progress.write(f"episode {unit.key}: {message}")
        return UnitResult(unit, error=message, attempts=attempt)


__all__ = ["INSTALL_HINT", "MAX_ATTEMPTS", "WORKER_LOST", "EpisodeWorker", "ParallelConfig", "ResultSink",
           "RunStats", "UnitActor", "UnitResult", "WorkUnit", "WorkerFactory", "WorkerInfo", "WorkerPool",
           "add_parallel_args", "describe", "import_ray", "parallel_config", "ray_runtime", "run_units"]
