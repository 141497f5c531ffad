"""`--workers N` on this machine: worker processes forked from the command's own (goat_suites.common.process_pool), no
Ray.

Toy workers (they sleep, or kill their own process with SIGKILL as the kernel's OOM killer would): only the pool is
under test here; tests/test_parallel.py runs real episodes on it and compares them with a serial run.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from pool_sink import Sink

from goat_core.errors import GoatError
from goat_suites.common.parallel import WORKER_LOST, ParallelConfig, WorkerPool, WorkUnit, describe

TWO = ParallelConfig(workers=2)


@dataclass(frozen=True)
class ToyWorkers:
    """Workers whose units sleep ``cost`` s; a worker starting unit ``victim`` kills its own process while
    ``marker_dir`` holds fewer than ``deaths`` markers; unit ``raises`` raises ``error``."""

    marker_dir: str = ""
    victim: str = ""
    deaths: int = 0
    raises: str = ""
    error: str = "goat"

    def __call__(self) -> ToyWorker:
        return ToyWorker(self)


class ToyWorker:
    def __init__(self, spec: ToyWorkers) -> None:
        self.spec = spec

    def run_unit(self, unit: WorkUnit, recorder: Any, emit: Callable[[str], None]) -> tuple[int, int]:
        spec = self.spec
        if unit.key == spec.victim and len(list(Path(spec.marker_dir).iterdir())) < spec.deaths:
            (Path(spec.marker_dir) / f"death-{os.getpid()}").write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        if unit.key == spec.raises:
            raise GoatError("the suite's own error") if spec.error == "goat" else ValueError("a bug in a suite")
        time.sleep(unit.cost)
        emit(f"unit {unit.key} done")
        return unit.index, os.getpid()

    def close(self) -> None:
        pass


def _units(n: int, cost: float = 0.05) -> list[WorkUnit]:
    return [WorkUnit(i, f"u{i}", None, cost=cost) for i in range(n)]


def _no_worker_left() -> bool:
    """Every worker process of the pool has ended (none left behind, none a zombie)."""
    return not multiprocessing.active_children()


def test_two_forked_workers_run_every_unit_without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where Ray is not installed
    sink = Sink()
    units = _units(5)
    with WorkerPool(TWO, ToyWorkers(), max_units=len(units)) as pool:
        assert pool.distributed
        squares = pool.map(_square, [1, 2, 3])
        stats = pool.run(units, sink, quiet=True)
    assert squares == [1, 4, 9]
    assert sorted(sink.results) == list(range(5))
    pids = {r.payload[1] for r in sink.results.values()}
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes, not this one
    assert all(r.lines == (f"unit u{i} done",) for i, r in sink.results.items())  # --verbose lines come back
    # A fork starts a worker with every module already imported: start-up is a small fraction of a second (a Ray
    # runtime took 3.8 s on a quiet machine, and its workers seconds more to import the stack).
    assert stats.startup_s < 2.0
    assert "of a pool of forked processes" in describe(stats, TWO) and "Ray" not in describe(stats, TWO)
    assert _no_worker_left()


def _square(x: int) -> int:
    return x * x


def test_a_killed_worker_costs_its_unit_one_retry(tmp_path: Path) -> None:
    sink = Sink()
    workers = ToyWorkers(str(tmp_path), victim="u1", deaths=1)
    with WorkerPool(TWO, workers, max_units=3) as pool:
        stats = pool.run(_units(3), sink, quiet=True)
    assert len(list(tmp_path.iterdir())) == 1  # the worker really died
    assert stats.worker_deaths == 1 and stats.retried == ["u1"] and stats.lost == []
    assert sorted(sink.results) == [0, 1, 2] and all(r.error is None for r in sink.results.values())
    assert sink.results[1].attempts == 2
    assert _no_worker_left()


def test_a_unit_whose_worker_dies_twice_is_recorded_lost(tmp_path: Path) -> None:
    sink = Sink()
    workers = ToyWorkers(str(tmp_path), victim="u0", deaths=2)
    with WorkerPool(TWO, workers, max_units=3) as pool:
        stats = pool.run(_units(3), sink, quiet=True)
    assert stats.worker_deaths == 2 and stats.lost == ["u0"]
    error = sink.results[0].error
    assert error is not None and error.startswith(WORKER_LOST) and "killed by SIGKILL" in error
    assert sink.results[1].error is None and sink.results[2].error is None
    assert _no_worker_left()


@pytest.mark.parametrize("kind, raised", [("goat", GoatError), ("bug", ValueError)])
def test_an_error_of_the_suite_stops_the_run_as_in_a_serial_run(kind: str, raised: type) -> None:
    sink = Sink()
    with pytest.raises(raised) as info, WorkerPool(TWO, ToyWorkers(raises="u2", error=kind)) as pool:
        pool.run(_units(4, cost=0.2), sink, quiet=True)
    if kind == "bug":
        assert any("raised in worker process" in note for note in getattr(info.value, "__notes__", []))
    assert _no_worker_left()  # the worker still running a unit was ended too


_SCENE = "<mujoco><worldbody><light pos='0 0 3'/><geom type='box' size='.2 .2 .2' rgba='1 0 0 1'/></worldbody></mujoco>"


def _render() -> int:
    """A small MuJoCo render (OpenGL through MUJOCO_GL, as the simulator renders): its pixel sum."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(_SCENE)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, 32, 32) as renderer:
        renderer.update_scene(data)
        return int(renderer.render().sum())


@dataclass(frozen=True)
class RenderingWorkers:
    def __call__(self) -> RenderingWorker:
        return RenderingWorker()


class RenderingWorker:
    def run_unit(self, unit: WorkUnit, recorder: Any, emit: Callable[[str], None]) -> int:
        return _render()

    def close(self) -> None:
        pass


def test_a_process_that_has_rendered_gets_workers_that_render_from_a_fork_server() -> None:
    """A fork of a process whose OpenGL driver has started hangs at its first render (llvmpipe's threads are not
    copied): such a process gets its workers from a fork server, whose renders equal this process's."""
    from goat_suites.common.process_pool import ProcessScheduler, fork_is_safe

    expected = _render()  # OpenGL has started in this process now
    assert expected > 0 and not fork_is_safe()
    sink = Sink()
    with WorkerPool(TWO, RenderingWorkers(), max_units=2) as pool:
        assert isinstance(pool._scheduler, ProcessScheduler) and pool._scheduler.method == "forkserver"
        pool.run(_units(2), sink, quiet=True)
    assert [sink.results[i].payload for i in range(2)] == [expected, expected]
    assert _no_worker_left()


_PREPARED: list[tuple[int, int]] = []  # (process, worker processes alive then) of each PreparedWorkers.prepare


@dataclass(frozen=True)
class PreparedWorkers:
    """Workers whose factory loads something every worker shares (``prepare``); each unit says what it sees."""

    def prepare(self) -> None:
        _PREPARED.append((os.getpid(), len(multiprocessing.active_children())))

    def __call__(self) -> PreparedWorker:
        return PreparedWorker()


class PreparedWorker:
    def run_unit(self, unit: WorkUnit, recorder: Any, emit: Callable[[str], None]) -> tuple[tuple[int, int], ...]:
        return tuple(_PREPARED)

    def close(self) -> None:
        pass


def test_the_pool_prepares_what_its_workers_share_once_before_it_forks_them() -> None:
    """GOAT's workers each read the WordNet lexicon in their first episode, and the driver once more for the
    results' meta: the pool has the factory load it in the driver before the fork, and the forked workers use
    that copy."""
    from goat_suites.common.process_pool import ProcessScheduler

    _PREPARED.clear()
    sink = Sink()
    with WorkerPool(TWO, PreparedWorkers(), max_units=2) as pool:
        assert _PREPARED == [(os.getpid(), 0)]  # in this process, before any worker was started
        pool.run(_units(2), sink, quiet=True)
    assert isinstance(pool._scheduler, ProcessScheduler)
    if pool._scheduler.method == "fork":  # a fork server's workers do not share this process's memory
        assert [sink.results[i].payload for i in range(2)] == [((os.getpid(), 0),)] * 2
    _PREPARED.clear()


def _burn(seconds: float) -> float:
    """Spend ``seconds`` of CPU time."""
    from goat_suites.common.work_units import process_cpu_s

    started = process_cpu_s()
    while process_cpu_s() - started < seconds:
        pass
    return seconds


@dataclass(frozen=True)
class BurningWorkers:
    def __call__(self) -> BurningWorker:
        return BurningWorker()


class BurningWorker:
    def run_unit(self, unit: WorkUnit, recorder: Any, emit: Callable[[str], None]) -> float:
        return _burn(unit.cost)

    def close(self) -> None:
        pass


def test_a_run_on_workers_says_where_its_time_went_outside_the_episodes(capsys: pytest.CaptureFixture[str]) -> None:
    """The timeline line: the CPU time of each worker's generation calls and units apart, every worker's CPU time
    in all as it closed, and the events in their order."""
    from goat_suites.common.parallel import describe_clock

    with WorkerPool(TWO, BurningWorkers(), max_units=4) as pool:
        pool.map(_burn, [0.1, 0.1])
        pool.run(_units(4, cost=0.15), Sink(), quiet=True)
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("timeline: "))
    assert pool.stats is not None and pool._scheduler is not None
    closed = pool._scheduler.closed
    assert len(closed) == 2 and all(w.cpu_s >= w.build_cpu_s + w.calls_cpu_s for w in closed.values())
    assert sum(w.calls_cpu_s for w in closed.values()) >= 0.2  # the two generation calls
    episodes = pool.stats.episode_cpu_s()
    assert sum(episodes.values()) >= 0.6 and all(closed[n].cpu_s >= episodes[n] for n in episodes)
    assert line == describe_clock(pool.clock, pool.stats, closed)
    marks = pool.clock.marks
    order = ["opened", "prepared", "started", "map_started", "map_ended", "run_started", "run_ended", "closed"]
    assert [marks[m][0] for m in order] == sorted(marks[m][0] for m in order)
    firsts = [min(u.started_at for u in pool.stats.units if u.worker == n) for n in episodes]
    assert all(marks["run_started"][0] <= t <= marks["run_ended"][0] for t in firsts)
    assert "generation [" in line and "the rest [" in line and "during the episodes" in line


@dataclass(frozen=True)
class EnvWorkers:
    def __call__(self) -> EnvWorker:
        return EnvWorker()


class EnvWorker:
    def run_unit(self, unit: WorkUnit, recorder: Any, emit: Callable[[str], None]) -> str:
        return os.environ.get("LP_NUM_THREADS", "unset")

    def close(self) -> None:
        pass


def test_renderer_threads_share_the_cores_among_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker's llvmpipe gets its share of the cores (its threads would only contend with the other
    workers'), unless the user has set LP_NUM_THREADS."""
    from goat_suites.common.process_pool import renderer_threads

    monkeypatch.delenv("LP_NUM_THREADS", raising=False)
    assert renderer_threads(2, cores=2) == "0"  # a core each: rasterise in the rendering thread
    assert renderer_threads(4, cores=16) == "4"
    assert renderer_threads(8, cores=2) == "0"
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    sink = Sink()
    with WorkerPool(TWO, EnvWorkers(), max_units=2) as pool:
        pool.run(_units(2), sink, quiet=True)
    assert [sink.results[i].payload for i in range(2)] == ["0", "0"]
    assert "LP_NUM_THREADS" not in os.environ  # the command's own process keeps its threads
    monkeypatch.setenv("LP_NUM_THREADS", "3")
    assert renderer_threads(2, cores=2) == "3"
    sink = Sink()
    with WorkerPool(TWO, EnvWorkers(), max_units=2) as pool:
        pool.run(_units(2), sink, quiet=True)
    assert [sink.results[i].payload for i in range(2)] == ["3", "3"]
