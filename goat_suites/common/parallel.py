"""Benchmark episodes on several workers: in this process, in forked processes, or on a Ray cluster.

Every suite cuts its run into :class:`WorkUnit` s (one episode each, in the order of its plan) and gives
:func:`run_units` a picklable factory of its :class:`EpisodeWorker` (which builds the simulator and the agent once
and runs one unit at a time) and a :class:`ResultSink` (which keeps the results in plan order and rewrites the
results file after every finished episode). With ``--workers 1`` and no ``--ray-address`` the worker runs in this
process, as ``goat-nav bench`` always did; ``--workers N`` forks N worker processes of this machine
(:mod:`goat_suites.common.process_pool`; a local Ray runtime instead for CUDA runs, whose workers share the GPUs through
Ray);
``--ray-address`` makes each worker a Ray actor of the cluster (one CPU each, :mod:`goat_suites.common.ray_scheduler`).
The
results come back to this process (the driver), which alone writes files.

Same numbers as serial: an episode's outcome depends on the episode and the settings only (the runner resets the
agent and the simulator at every episode start), so which worker runs it, and after which other episode, does not
matter; the sink writes episodes in plan order whatever order they finish in. ``--record``: each worker records
its episode into a bag of its own whose clock starts at 0; the driver appends those bags to the run's bag in plan
order with their clocks shifted (:mod:`goat_suites.common.bag_merge`), so the bag equals the serial run's.

Faults: a worker process that dies (killed, out of memory, its node lost) costs its episode one retry on a fresh
worker; a second death records the episode with an error that starts with :data:`WORKER_LOST` (``--resume`` runs
such episodes again). An exception raised by the suite's own code stops the run, as it does in a serial run.

Ray is an optional dependency (``pip install -e ".[cluster]"``), imported only when a run asks for it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import socket
import sys
import time
from typing import Callable, Mapping, Optional, Sequence

from goat_core.errors import ConfigError
from goat_ros.record import RunRecorder
from goat_suites.common.process_pool import ProcessScheduler
from goat_suites.common.ray_scheduler import INSTALL_HINT, RayScheduler, import_ray, ray_runtime
from goat_suites.common.work_units import (
    MAX_ATTEMPTS,
    WORKER_LOST,
    EarlyStart,
    EpisodeWorker,
    Item,
    ParallelConfig,
    Progress,
    Result,
    ResultSink,
    RunClock,
    RunStats,
    Scheduler,
    UnitResult,
    WorkerFactory,
    WorkerInfo,
    WorkUnit,
    prepare_workers,
    rank_correlation,
    worker_info,
)

MAX_LISTED_UNITS = 32  # a parallel run of at most this many episodes lists each one's estimate and CPU time

# ------------------------------------------------------------------------------------------ command line


def add_parallel_args(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--ray-address`` and ``--resume`` of ``goat-nav bench``."""
    g = parser.add_argument_group(f"parallel and cluster runs (Ray: {INSTALL_HINT}; docs/cluster.md)")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run N episodes at a time in N worker processes of this machine (default 1: in this "
                        "process); with --ray-address, N workers on the cluster (default: one per cluster CPU)")
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
    parallel = config.uses_ray or config.forks
    if parallel and getattr(args, "ros", False):
        raise ConfigError(
            "--ros runs with one worker only: the ROS graph of every worker would need its own ROS_DOMAIN_ID and "
            "the graphs of one machine share its DDS discovery; drop --workers/--ray-address (docs/cluster.md)")
    if parallel and getattr(args, "live", None) is not None:
        raise ConfigError("--live serves the run of this process: drop --workers/--ray-address (docs/cluster.md)")
    if config.uses_ray and importlib.util.find_spec("ray") is None:
        what = f"--workers {config.workers}" if config.ray_address is None else f"--ray-address {config.ray_address}"
        raise ConfigError(f"{what} needs Ray, which is not installed in this environment; install it with: "
                          f"{INSTALL_HINT}  (or pip install 'ray==2.60.0'), or run with --workers 1")
    return config


# ------------------------------------------------------------------------------------------ the engine


class WorkerPool:
    """The workers of a run; use as a context manager around everything the run does.

    Opened before the episodes are generated, a pool of several workers starts them at once (forks them, or starts
    the Ray runtime and its actors), and the workers build their simulator and agent, then generate the episodes
    (:meth:`map`); :meth:`run` then hands them the units. One worker without an address is built in this process.
    Leaving the context stops the workers and the runtime the pool started (a cluster keeps running).
    """

    def __init__(self, config: ParallelConfig, factory: WorkerFactory, max_units: Optional[int] = None) -> None:
        """``max_units``: at most this many units will run (no more workers than that are started)."""
        self.config = config
        self.factory = factory
        self.max_units = max_units
        self._stack = contextlib.ExitStack()
        self._worker: Optional[EpisodeWorker] = None  # the in-process one
        self._scheduler: Optional[Scheduler] = None
        self.startup_s = 0.0  # workers (and the Ray runtime) started (RunStats.startup_s)
        self.clock = RunClock()
        self.stats: Optional[RunStats] = None  # of the latest run

    def __enter__(self) -> WorkerPool:
        self.clock.mark("opened")
        try:
            started = time.monotonic()
            if self.config.uses_ray:
                ray, workers = self._stack.enter_context(ray_runtime(self.config))
                self._scheduler = RayScheduler(ray, self.factory, self._at_most(workers), self.config.gpu)
            elif self.config.forks:
                prepare_workers(self.factory)  # before the fork: the workers inherit what it loads
                self.clock.mark("prepared")
                self._scheduler = ProcessScheduler(self.factory, self._at_most(self.config.workers or 1))
            if self._scheduler is not None:
                self.startup_s = time.monotonic() - started
                self.clock.mark("started")
                self._stack.callback(self._scheduler.shutdown)
            else:
                self._worker = self.factory()
                self._stack.callback(self._worker.close)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        self.clock.mark("closed")
        if self._scheduler is not None and self.stats is not None and self.stats.units and exc[0] is None:
            print(describe_clock(self.clock, self.stats, self._scheduler.closed), file=sys.stderr)

    def _at_most(self, workers: int) -> int:
        return min(workers, self.max_units) if self.max_units else workers

    @property
    def distributed(self) -> bool:
        """Whether the work runs in workers outside this process."""
        return self._scheduler is not None

    def map(self, fn: Callable[[Item], Result], items: Sequence[Item],
            on_done: Optional[Callable[[Result], None]] = None, early: Optional[EarlyStart] = None) -> list[Result]:
        """``[fn(item) for item in items]``, computed by the workers (``fn`` picklable, a module-level function or
        a frozen dataclass); ``on_done`` sees each result as it comes. A worker that dies costs its item one retry;
        a second death, or an exception of ``fn``, stops the map. ``early`` (workers outside this process): a
        worker with no item left to take while others finish theirs starts the unit ``early`` picks from the
        results so far, unrecorded, and the next :meth:`run` takes its result (GOAT: the longest episode generated
        so far, rather than waiting for the last ones to be generated); once the last item is made, every idle
        worker starts one (rather than waiting for the driver's next run)."""
        if self._scheduler is not None:
            self.clock.mark("map_started", first=True)
            try:
                return self._scheduler.map(fn, items, on_done, early)
            finally:
                self.clock.mark("map_ended")
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
        progress = Progress(total, total - len(units), quiet, sink)
        stats = RunStats(startup_s=self.startup_s)
        self.stats = stats
        started = time.monotonic()
        self.clock.mark("run_started")
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
            self.clock.mark("run_ended")
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
    where = ("a local Ray runtime" if config.uses_ray and config.ray_address is None
             else "a pool of forked processes" if config.ray_address is None
             else f"the Ray cluster at {config.ray_address}")
    startup = "Ray start-up" if config.uses_ray else "start-up"
    peaks = ", ".join(f"{w.peak_rss_mb:.0f}" for w in sorted(stats.workers.values(), key=lambda w: w.name))
    nodes = len({(w.host, w.node) for w in stats.workers.values()})
    builds = ", ".join(f"{w.build_s:.1f}" for w in sorted(stats.workers.values(), key=lambda w: w.name))
    units = ", ".join(str(stats.units_per_worker.get(name, 0)) for name in sorted(stats.workers))
    cpus = ", ".join(f"{w.cpu_s:.1f}" for w in sorted(stats.workers.values(), key=lambda w: w.name))
    return (f"workers: {len(stats.workers)} processes on {nodes} node(s) of {where}; peak memory per worker "
            f"[{peaks}] MB; {stats.worker_deaths} worker deaths, {len(stats.retried)} episodes retried, "
            f"{len(stats.lost)} lost; time: {startup} {stats.startup_s:.1f} s, worker builds [{builds}] s, "
            f"episodes per worker [{units}], idle at the end {stats.idle_at_end_s:.1f} worker-s, CPU per worker "
            f"[{cpus}] s" + _describe_balance(stats))


def _describe_balance(stats: RunStats) -> str:
    """How the episodes' CPU time split between the workers against what the estimates said, and (short runs)
    each episode's estimate and CPU time."""
    if not stats.units:
        return ""
    names = sorted(stats.workers)
    achieved, estimated = stats.episode_cpu_s(), stats.estimated_cpu_s()
    correlation = rank_correlation([u.cost for u in stats.units], [u.cpu_s for u in stats.units])
    text = (f"; episodes' CPU per worker [{', '.join(f'{achieved.get(n, 0.0):.1f}' for n in names)}] s, estimated "
            f"[{', '.join(f'{estimated.get(n, 0.0):.1f}' for n in names)}] s; estimate vs episode CPU: rank "
            f"correlation {correlation:.2f} over {len(stats.units)} episodes")
    if len(stats.units) <= MAX_LISTED_UNITS:
        listed = [f"{u.cost:.0f}/{u.cpu_s:.2f}/{names.index(u.worker) if u.worker in names else -1}"
                  for u in sorted(stats.units, key=lambda u: u.index)]
        text += f"; per episode (plan order) estimate/CPU s/worker [{', '.join(listed)}]"
    return text


def describe_clock(clock: RunClock, stats: RunStats, closed: Mapping[str, WorkerInfo]) -> str:
    """One line on where the time of a run with workers went outside their episodes: when things happened
    (seconds since the pool opened; worker stamps only for workers of this host), each worker's CPU time by what
    it did, and the driver's own CPU time before, during and after the episodes. CPU seconds are what a loaded
    machine does not stretch. ``closed``: what the workers said as they closed (their CPU time in all)."""
    opened_at, opened_cpu_s = clock.marks["opened"]
    names = sorted(stats.workers)
    info = {n: closed.get(n, stats.workers[n]) for n in names}  # the latest word of each worker
    here = socket.gethostname()
    episodes_cpu_s = stats.episode_cpu_s()

    def since(t: float) -> str:
        return f"{t - opened_at:.2f}"

    def per_worker(values: Sequence[str]) -> str:
        return f"[{', '.join(values)}]"

    def cpu(name: str) -> float:
        return clock.marks[name][1] if name in clock.marks else float("nan")

    text = f"timeline: pool opened at monotonic {opened_at:.3f} s, the driver at {opened_cpu_s:.2f} CPU-s; since then"
    events = [f"{label} {since(clock.marks[mark][0])} s" for mark, label in
              (("prepared", "shared loaded"), ("started", "workers started"),
               ("map_started", "generation started"), ("map_ended", "generation ended"), ("run_started", "run started"))
              if mark in clock.marks]
    if all(info[n].host == here for n in names):
        firsts = [min(u.started_at for u in stats.units if u.worker == n) for n in names if n in episodes_cpu_s]
        lasts = [max(u.ended_at for u in stats.units if u.worker == n) for n in names if n in episodes_cpu_s]
        events += [f"workers built {per_worker([since(info[n].built_at) for n in names])} s",
                   f"first episodes {per_worker([since(t) for t in firsts])} s",
                   f"last episodes ended {per_worker([since(t) for t in lasts])} s"]
    events += [f"{label} {since(clock.marks[mark][0])} s" for mark, label in
               (("run_ended", "run ended"), ("closed", "workers closed")) if mark in clock.marks]
    text += ": " + ", ".join(events)
    rest = [info[n].cpu_s - info[n].build_cpu_s - info[n].calls_cpu_s - episodes_cpu_s.get(n, 0.0) for n in names]
    text += (f"; workers' CPU {per_worker([f'{info[n].cpu_s:.2f}' for n in names])} s: build "
             f"{per_worker([f'{info[n].build_cpu_s:.2f}' for n in names])}, generation "
             f"{per_worker([f'{info[n].calls_cpu_s:.2f}' for n in names])}, episodes "
             f"{per_worker([f'{episodes_cpu_s.get(n, 0.0):.2f}' for n in names])}, the rest "
             f"{per_worker([f'{r:.2f}' for r in rest])} s")
    shared_cpu_s = cpu("prepared") - opened_cpu_s if "prepared" in clock.marks else 0.0
    text += (f"; driver CPU: loading what the workers share {shared_cpu_s:.2f} s, to the run "
             f"{cpu('run_started') - opened_cpu_s - shared_cpu_s:.2f} s, during the episodes "
             f"{cpu('run_ended') - cpu('run_started'):.2f} s (results files {stats.sink_cpu_s:.2f} s, progress "
             f"{stats.progress_cpu_s:.2f} s), closing the workers {cpu('closed') - cpu('run_ended'):.2f} s")
    return text


def _run_in_process(units: Sequence[WorkUnit], worker: EpisodeWorker, sink: ResultSink,
                    recorder: Optional[RunRecorder], progress: Progress, stats: RunStats) -> None:
    for unit in units:
        payload = worker.run_unit(unit, recorder, progress.write)  # --verbose lines print as they come
        info = worker_info()
        stats.workers[info.name] = info
        sink.add(UnitResult(unit, payload=payload, worker=info))
        stats.finished += 1
        progress.update()




__all__ = ["INSTALL_HINT", "MAX_ATTEMPTS", "WORKER_LOST", "EpisodeWorker", "ParallelConfig", "ResultSink",
           "RunStats", "UnitResult", "WorkUnit", "WorkerFactory", "WorkerInfo", "WorkerPool", "add_parallel_args",
           "describe", "describe_clock", "import_ray", "parallel_config", "ray_runtime", "run_units"]
