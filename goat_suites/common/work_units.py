"""What the workers of a run share, whatever runs them (this process, forked processes, Ray actors).

A suite cuts its run into :class:`WorkUnit` s and gives a picklable factory of its :class:`EpisodeWorker`;
:class:`UnitRunner` is the worker's side of one worker (it builds the suite's worker once and runs units with it,
recording each into a bag fragment of its own when asked); :class:`Scheduler` is the driver's side of a pool of
such workers: it hands out the units costliest first, keeps every worker busy, runs the unit of a worker that
died once more on a fresh one, and says where the time went (:class:`RunStats`). Its two kinds of workers are
forked processes of this machine (:mod:`goat_suites.common.process_pool`) and Ray actors
(:mod:`goat_suites.common.ray_scheduler`).
"""

from __future__ import annotations

import os
import resource
import socket
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Callable, Mapping, Optional, Protocol, Sequence, TypeVar

from tqdm import tqdm

from goat_core.errors import ConfigError, GoatError
from goat_ros.record import RunRecorder
from goat_suites.common.bag_merge import BagFragment, FragmentMerger, capture_fragment

MAX_ATTEMPTS = 2  # an episode whose worker died is run once more on a fresh worker
WORKER_LOST = "worker lost"  # start of the error of an episode whose worker died on every attempt


@dataclass(frozen=True)
class WorkUnit:
    """One episode of a run's plan."""

    index: int  # position in the plan: results are written in this order
    key: str  # the episode's name in the results file (``--resume`` matches finished episodes by it)
    payload: Any  # what the suite's worker needs to run it (a GoatEpisode, a FindingDory home seed); picklable
    cost: float = 0.0  # expected work (GOAT: estimated actions); workers get the costliest first, ties in plan order


class EpisodeWorker(Protocol):
    """Runs units one after another, reusing what it built (simulator, agent, models) across them."""

    def run_unit(self, unit: WorkUnit, recorder: Optional[RunRecorder], emit: Callable[[str], None]) -> Any:
        """Run one episode; ``recorder`` (if given) gets its goals, steps and results, ``emit`` its --verbose lines.
        The return value goes to the suite's :class:`ResultSink` (it must pickle)."""
        ...

    def close(self) -> None: ...


WorkerFactory = Callable[[], EpisodeWorker]  # picklable (a frozen dataclass with __call__): built once per worker
# (the map's results so far by item index, the keys of units already started) -> the unit a worker that would wait
# for the map's last items runs meanwhile, or None (Scheduler.map's ``early``)
EarlyStart = Callable[[Mapping[int, Any], AbstractSet[str]], Optional["WorkUnit"]]


def prepare_workers(factory: WorkerFactory) -> None:
    """Before a pool forks its workers: ``factory.prepare()``, where the factory has one, loads in this process
    what each of its workers would otherwise load for itself and keep (GOAT: the WordNet lexicon), so that the
    forked workers share the one copy (a fork server's workers do not: they load it themselves)."""
    prepare = getattr(factory, "prepare", None)
    if callable(prepare):
        prepare()


Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass(frozen=True)
class WorkerInfo:
    """Where a unit ran, and the peak memory of that worker process so far."""

    host: str
    pid: int
    peak_rss_mb: float
    node: str = ""  # the Ray node id ("" outside Ray); several nodes may share a host
    build_s: float = 0.0  # how long building its suite worker (simulator, agent, models) took
    cpu_s: float = 0.0  # CPU time (user + system) of the worker process so far: what a loaded machine does not change
    # Where a worker's time went outside its units (RunClock): stamps are time.monotonic(), which the processes of
    # one machine share (Ray workers of other nodes have clocks of their own).
    started_at: float = 0.0  # the worker began serving (after its fork or its actor's start)
    built_at: float = 0.0  # its suite worker was built
    build_cpu_s: float = 0.0  # CPU time of that build
    calls_cpu_s: float = 0.0  # CPU time of its WorkerPool.map calls so far (generating the episodes)

    @property
    def name(self) -> str:
        return f"{self.host}:{self.pid}"


def process_cpu_s() -> float:
    """CPU time (user + system, every thread) of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def worker_info(node: str = "", build_s: float = 0.0, **clock: float) -> WorkerInfo:
    """This process as a worker; ``clock``: the WorkerInfo fields of its time line (started_at ...)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)  # ru_maxrss: kilobytes on Linux
    return WorkerInfo(socket.gethostname(), os.getpid(), round(usage.ru_maxrss / 1024.0, 1), node, build_s,
                      round(usage.ru_utime + usage.ru_stime, 2), **clock)


@dataclass(frozen=True)
class UnitResult:
    """A finished unit: the worker's output, or (``error``) the reason it has none."""

    unit: WorkUnit
    payload: Any = None
    error: Optional[str] = None  # set when the worker died on every attempt (starts with WORKER_LOST)
    lines: tuple[str, ...] = ()  # --verbose lines (a serial run prints them as they come)
    worker: Optional[WorkerInfo] = None
    attempts: int = 1
    cpu_s: float = 0.0  # CPU time its worker spent on it (0 when lost)
    started_at: float = 0.0  # time.monotonic() in its worker when it started (0 when lost)
    ended_at: float = 0.0  # and when it ended


class ResultSink(Protocol):
    """The driver side of a suite: keeps results in plan order and writes the files."""

    def add(self, result: UnitResult) -> None:
        """Store one finished unit (out of plan order with workers) and rewrite the results files."""
        ...

    def postfix(self) -> dict[str, str]:
        """The numbers so far for the progress bar (SR, SPL ...)."""
        ...


@dataclass(frozen=True)
class UnitTiming:
    """What one finished unit cost against what it was expected to cost."""

    index: int  # WorkUnit.index: its place in the plan
    cost: float  # WorkUnit.cost: the estimate the workers were handed units by
    cpu_s: float  # CPU time its worker spent on it
    worker: str  # WorkerInfo.name
    started_at: float = 0.0  # time.monotonic() in its worker when the unit started
    ended_at: float = 0.0  # and when it ended


@dataclass
class RunStats:
    """What the workers did: peak memory per worker process, deaths, retried and lost episodes."""

    workers: dict[str, WorkerInfo] = field(default_factory=dict)  # by WorkerInfo.name, the latest report
    worker_deaths: int = 0
    retried: list[str] = field(default_factory=list)  # unit keys run a second time
    lost: list[str] = field(default_factory=list)  # unit keys recorded with a WORKER_LOST error
    finished: int = 0
    elapsed_s: float = 0.0
    # Where the time of a run with workers outside this process goes (0 in this process):
    startup_s: float = 0.0  # starting (or reaching) the workers (and the Ray runtime), until they were asked to build
    idle_at_end_s: float = 0.0  # worker-seconds spent waiting for the last episodes of other workers
    units_per_worker: dict[str, int] = field(default_factory=dict)
    units: list[UnitTiming] = field(default_factory=list)  # every finished unit, in the order they finished
    sink_cpu_s: float = 0.0  # the driver's CPU time in ResultSink.add (results files rewritten after each unit)
    progress_cpu_s: float = 0.0  # the driver's CPU time on the progress bar and --verbose lines

    def episode_cpu_s(self) -> dict[str, float]:
        """Per worker: the CPU time of the units it ran (its build and episode generation left out)."""
        out: dict[str, float] = {}
        for u in self.units:
            out[u.worker] = out.get(u.worker, 0.0) + u.cpu_s
        return out

    def estimated_cpu_s(self) -> dict[str, float]:
        """Per worker: what the estimates (``WorkUnit.cost``) of the units it ran said its share of their CPU time
        would be (the estimates scaled so that they add up to the measured total)."""
        total_cost = sum(u.cost for u in self.units)
        scale = sum(u.cpu_s for u in self.units) / total_cost if total_cost > 0 else 0.0
        out: dict[str, float] = {}
        for u in self.units:
            out[u.worker] = out.get(u.worker, 0.0) + u.cost * scale
        return out


@dataclass
class RunClock:
    """When the driver of a run did what: ``time.monotonic()`` (shared by the processes of one machine) and the
    driver's own CPU time at each mark (``goat_suites.common.parallel.describe_clock`` says where the time went)."""

    marks: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (monotonic s, driver CPU s)

    def mark(self, name: str, first: bool = False) -> None:
        """Stamp ``name`` now; ``first``: only where it has no stamp yet."""
        if not (first and name in self.marks):
            self.marks[name] = (time.monotonic(), process_cpu_s())


def longest_first_makespan(costs: Sequence[float], workers: int, order: Optional[Sequence[float]] = None) -> float:
    """The busiest worker's load when each free worker takes the next unit, the units handed out by ``order``
    (their estimates, highest first; default: ``costs`` themselves) and each taking its ``costs`` entry: what
    :meth:`Scheduler.run` does, without waiting."""
    if workers < 1:
        raise ValueError(f"longest_first_makespan needs at least one worker, got {workers}")
    keys = costs if order is None else order
    if len(keys) != len(costs):
        raise ValueError(f"longest_first_makespan: {len(costs)} costs but {len(keys)} estimates")
    loads = [0.0] * workers
    for i in sorted(range(len(costs)), key=lambda i: -keys[i]):
        loads[loads.index(min(loads))] += costs[i]
    return max(loads)


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (tied values share their mean rank); nan for fewer than two
    pairs or when one side is constant."""
    if len(x) != len(y):
        raise ValueError(f"rank_correlation needs two sequences of one length, got {len(x)} and {len(y)}")

    def ranks(values: Sequence[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        start = 0
        while start < len(order):
            end = start
            while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
                end += 1
            for k in range(start, end + 1):
                out[order[k]] = (start + end) / 2.0
            start = end + 1
        return out

    rx, ry = ranks(x), ranks(y)
    n = len(rx)
    if n < 2:
        return float("nan")
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


class Progress:
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


# ------------------------------------------------------------------------------------------ the worker's side


@dataclass(frozen=True)
class UnitDone:
    """What a worker sends back for one unit."""

    payload: Any
    lines: tuple[str, ...]
    fragment: Optional[BagFragment]
    worker: WorkerInfo
    cpu_s: float = 0.0  # CPU time of this process on the unit
    started_at: float = 0.0  # time.monotonic() when the unit started
    ended_at: float = 0.0  # and when it ended


class UnitRunner:
    """One worker outside the driver: a forked process's object, or (wrapped with ``ray.remote``) a Ray actor.

    :meth:`warm_up` builds the suite's worker (a failing build is an error of that call, and of the next
    :meth:`run`, which builds again, not a worker death); :meth:`run` runs one unit with it, and with ``record``
    records the unit into a bag fragment of its own."""

    def __init__(self, factory: WorkerFactory) -> None:
        self._factory = factory
        self._worker: Optional[EpisodeWorker] = None
        self._build_s = 0.0
        self._clock = {"started_at": time.monotonic(), "built_at": 0.0, "build_cpu_s": 0.0, "calls_cpu_s": 0.0}

    def node(self) -> str:
        """The node this worker runs on ("" outside Ray)."""
        return ""

    def warm_up(self) -> WorkerInfo:
        if self._worker is None:
            started, cpu_started_s = time.monotonic(), process_cpu_s()
            self._worker = self._factory()
            self._clock["built_at"] = time.monotonic()
            self._build_s = self._clock["built_at"] - started
            self._clock["build_cpu_s"] = round(process_cpu_s() - cpu_started_s, 3)
        return self.info()

    def info(self) -> WorkerInfo:
        """This worker now: its memory, CPU time and time line."""
        return worker_info(self.node(), self._build_s, **self._clock)

    def run(self, unit: WorkUnit, record: bool, step_period_ns: int) -> UnitDone:
        self.warm_up()
        assert self._worker is not None
        lines: list[str] = []
        fragment = None
        started_at, cpu_started_s = time.monotonic(), process_cpu_s()
        if record:
            with tempfile.TemporaryDirectory(prefix="goat-fragment-") as tmp:
                recorder = RunRecorder(Path(tmp) / "episode", step_period_ns=step_period_ns)
                with recorder:
                    payload = self._worker.run_unit(unit, recorder, lines.append)
                fragment = capture_fragment(recorder)
        else:
            payload = self._worker.run_unit(unit, None, lines.append)
        cpu_s, ended_at = round(process_cpu_s() - cpu_started_s, 3), time.monotonic()
        return UnitDone(payload, tuple(lines), fragment, self.info(), cpu_s, started_at, ended_at)

    def call(self, fn: Callable[[Any], Any], item: Any) -> Any:
        """``fn(item)`` in this worker's process (``WorkerPool.map``)."""
        cpu_started_s = process_cpu_s()
        try:
            return fn(item)
        finally:
            self._clock["calls_cpu_s"] = round(self._clock["calls_cpu_s"] + process_cpu_s() - cpu_started_s, 3)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


# ------------------------------------------------------------------------------------------ the driver's side


class WorkerDied(Exception):
    """The process of a worker ended while it had a call (killed, out of memory, its node lost)."""


@dataclass
class _Batch:
    """What one :meth:`Scheduler.run` hands out and collects."""

    sink: ResultSink
    progress: Progress
    stats: RunStats
    merger: FragmentMerger
    queue: deque[tuple[WorkUnit, int]]  # (unit, attempt) still to hand out


class Scheduler(ABC):
    """The driver's side of a pool of :class:`UnitRunner` workers, one call at a time on each.

    Started (and warming up) at once; keeps every worker busy, and runs the call of a worker that died once more
    on a fresh one. Subclasses say how a worker starts, takes a call and answers."""

    def __init__(self, workers: int) -> None:
        self.idle: list[Any] = [self._new_worker() for _ in range(workers)]
        self.closed: dict[str, WorkerInfo] = {}  # by name: what each worker said as it closed (where it can)
        self.early: dict[Any, tuple[Any, WorkUnit]] = {}  # call -> (worker, unit): units a map started (``early``)

    @abstractmethod
    def _new_worker(self) -> Any:
        """A started worker, already building its suite worker."""

    @abstractmethod
    def _submit(self, worker: Any, method: str, *args: Any) -> Any:
        """Start ``UnitRunner.<method>(*args)`` on ``worker``; the handle of the call."""

    @abstractmethod
    def _wait(self, calls: list[Any]) -> Any:
        """One of ``calls`` that has finished (blocks until one has)."""

    @abstractmethod
    def _result(self, call: Any) -> Any:
        """The value of a finished call; WorkerDied if its worker died; what the worker's code raised."""

    @abstractmethod
    def _discard(self, worker: Any) -> None:
        """End a worker (dead, or with a call abandoned)."""

    @abstractmethod
    def close(self) -> None:
        """End every worker (each closes its suite worker first)."""

    def _share(self, value: Any) -> Any:
        """``value`` as the calls of every worker take it (Ray: an object reference, shipped once)."""
        return value

    def _finish(self, call: Any, worker: Any) -> tuple[Any, Optional[WorkerDied]]:
        """(value, None), or (None, the death) with a fresh worker in its place; the worker's errors raise."""
        try:
            value = self._result(call)
        except WorkerDied as died:
            self._discard(worker)
            self.idle.append(self._new_worker())
            return None, died
        except BaseException:
            self.idle.append(worker)
            raise
        self.idle.append(worker)
        return value, None

    def shutdown(self) -> None:
        """End every worker, those still running a unit a map started (no run took it) included."""
        for worker, _ in self.early.values():
            self._discard(worker)
        self.early = {}
        self.close()

    def map(self, fn: Callable[[Item], Result], items: Sequence[Item],
            on_done: Optional[Callable[[Result], None]], early: Optional[EarlyStart] = None) -> list[Result]:
        """``early``: when the last items are under way and a worker has nothing left to take, it starts the unit
        ``early`` picks (not recorded), and so does every idle worker once the last item is made; the next
        :meth:`run` takes their results instead of running them again."""
        shared = self._share(fn)
        queue: deque[tuple[int, int]] = deque((i, 1) for i in range(len(items)))  # (item index, attempt)
        results: dict[int, Result] = {}
        running: dict[Any, tuple[Any, int, int]] = {}
        try:
            while queue or running:
                while queue and self.idle:
                    worker, (i, attempt) = self.idle.pop(), queue.popleft()
                    running[self._submit(worker, "call", shared, items[i])] = (worker, i, attempt)
                if not queue and running:
                    self._start_early(early, results)
                call = self._wait(list(running))
                worker, i, attempt = running.pop(call)
                value, died = self._finish(call, worker)
                if died is not None:
                    if attempt >= MAX_ATTEMPTS:
                        raise GoatError(f"item {i} of a distributed step ({getattr(fn, '__name__', fn)!r}): its worker "
                                        f"died on all {attempt} attempts; last: {died}") from None
                    queue.appendleft((i, attempt + 1))
                    continue
                results[i] = value
                if on_done is not None:
                    on_done(value)
            # Every item is made: the workers without a unit start the likely longest ones now rather than wait
            # for the driver's next run (what the run would hand them first: the costliest).
            self._start_early(early, results)
        finally:
            for worker, _, _ in running.values():
                self._discard(worker)
        return [results[i] for i in range(len(items))]

    def _start_early(self, early: Optional[EarlyStart], results: Mapping[int, Any]) -> None:
        """Each idle worker starts the unit ``early`` picks from ``results`` (unrecorded), while it picks one."""
        while early is not None and self.idle:
            unit = early(results, {u.key for _, u in self.early.values()})
            if unit is None:
                break
            worker = self.idle.pop()
            self.early[self._submit(worker, "run", unit, False, 1)] = (worker, unit)

    def run(self, units: Sequence[WorkUnit], sink: ResultSink, recorder: Optional[RunRecorder], progress: Progress,
            stats: RunStats) -> None:
        # Costliest first (ties in plan order): a long episode started last would leave the other workers idle
        # at the end. The results and the bag are written in plan order whatever order the units finish in.
        running = self._take_early(units, recorder)  # call -> (worker, unit, attempt)
        started = {unit.key for _, unit, _ in running.values()}
        order = sorted((u for u in units if u.key not in started), key=lambda u: -u.cost)
        batch = _Batch(sink, progress, stats, FragmentMerger(recorder, [u.index for u in units]),
                       deque((u, 1) for u in order))
        last_done: dict[str, float] = {}
        step_period_ns = recorder.step_period_ns if recorder is not None else 1

        def hand_out() -> None:
            while batch.queue and self.idle:
                worker, (unit, attempt) = self.idle.pop(), batch.queue.popleft()
                call = self._submit(worker, "run", unit, recorder is not None, step_period_ns)
                running[call] = (worker, unit, attempt)

        try:
            while batch.queue or running:
                hand_out()
                call = self._wait(list(running))
                worker, unit, attempt = running.pop(call)
                result = self._collect(call, worker, unit, attempt, batch)
                if result is None:
                    continue  # queued again on a fresh worker
                hand_out()  # the worker's next unit before this one's files: it does not wait for the driver
                cpu_s = process_cpu_s()
                for line in result.lines:
                    progress.write(line)
                sink_started_s = process_cpu_s()
                sink.add(result)
                sink_ended_s = process_cpu_s()
                stats.finished += 1
                progress.update()
                stats.sink_cpu_s += sink_ended_s - sink_started_s
                stats.progress_cpu_s += process_cpu_s() - cpu_s - (sink_ended_s - sink_started_s)
                if result.worker is not None:
                    name = result.worker.name
                    last_done[name] = time.monotonic()
                    stats.units_per_worker[name] = stats.units_per_worker.get(name, 0) + 1
                    stats.units.append(UnitTiming(unit.index, unit.cost, result.cpu_s, name, result.started_at,
                                                  result.ended_at))
        finally:
            for worker, _, _ in running.values():  # an error stops the run: units under way are abandoned
                self._discard(worker)
        end = time.monotonic()
        stats.idle_at_end_s = sum(end - t for t in last_done.values())

    def _take_early(self, units: Sequence[WorkUnit], recorder: Optional[RunRecorder],
                    ) -> dict[Any, tuple[Any, WorkUnit, int]]:
        """The calls of units a map started that this run has (unrecorded: a recorded run runs them again); a
        worker running a unit the run does not have is replaced by a fresh one."""
        by_key = {u.key: u for u in units}
        taken: dict[Any, tuple[Any, WorkUnit, int]] = {}
        for call, (worker, unit) in self.early.items():
            if unit.key in by_key and recorder is None:
                taken[call] = (worker, by_key[unit.key], 1)
            else:
                self._discard(worker)
                self.idle.append(self._new_worker())
        self.early = {}
        return taken

    def _collect(self, call: Any, worker: Any, unit: WorkUnit, attempt: int, batch: _Batch) -> Optional[UnitResult]:
        """The unit's result; None when it was queued again; raises what the suite's code raised."""
        done, died = self._finish(call, worker)
        if died is not None:
            return self._worker_died(died, unit, attempt, batch)
        batch.stats.workers[done.worker.name] = done.worker
        batch.merger.add(unit.index, done.fragment)
        return UnitResult(unit, payload=done.payload, lines=done.lines, worker=done.worker, attempts=attempt,
                          cpu_s=done.cpu_s, started_at=done.started_at, ended_at=done.ended_at)

    def _worker_died(self, died: WorkerDied, unit: WorkUnit, attempt: int, batch: _Batch) -> Optional[UnitResult]:
        batch.stats.worker_deaths += 1
        if attempt < MAX_ATTEMPTS:
            batch.stats.retried.append(unit.key)
            batch.progress.write(f"episode {unit.key}: its worker died ({died}); running it again")
            batch.queue.appendleft((unit, attempt + 1))
            return None
        batch.stats.lost.append(unit.key)
        batch.merger.skip(unit.index)
        message = f"{WORKER_LOST}: the worker died on all {attempt} attempts; last: {died}"
        batch.progress.write(f"episode {unit.key}: {message}")
        return UnitResult(unit, error=message, attempts=attempt)


@dataclass(frozen=True)
class ParallelConfig:
    """How many workers and where: ``workers`` 1 and no ``ray_address`` runs in this process."""

    workers: Optional[int] = None  # None: 1 on this machine, every CPU of the cluster with ray_address
    ray_address: Optional[str] = None  # "auto" or host:port of a running cluster; None: this machine
    gpu: bool = False  # the models run on CUDA: each worker asks Ray for its share of the GPUs
    local_ray: bool = False  # workers of this machine on a local Ray runtime rather than forked (tests; GPU runs)

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {self.workers}")
        if self.ray_address is not None and not self.ray_address.strip():
            raise ConfigError("--ray-address must be 'auto' or host:port, got an empty string")

    @property
    def uses_ray(self) -> bool:
        """Whether the workers are Ray actors: on a cluster, or (CUDA, ``local_ray``) on a local Ray runtime."""
        local = (self.workers or 1) > 1
        return self.ray_address is not None or (local and (self.gpu or self.local_ray))

    @property
    def forks(self) -> bool:
        """Whether the workers are processes forked from this one."""
        return (self.workers or 1) > 1 and not self.uses_ray
