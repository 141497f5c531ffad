"""Latency targets of the main job, as medians on this machine.

    python benchmarks/bench_speed.py [--steps 300] [--seed 1000] [--homes furnished] [--baseline small] [--skip-build]

* home build: generating a furnished home and its MuJoCo model, first with an empty model cache (every model
  converted) and then with the cache filled (each in a fresh process);
* render: one RGB + depth + segmentation observation of a generated home (target <= 40 ms);
* agent step: Agent.act() on the observations of a real episode, rendering excluded (target <= 30 ms);
* episode: wall time of a whole procedural episode (20 of them must fit in 20 minutes).

With ``--baseline KIND`` render and agent step are measured on those homes too, in the same run, and the ratios
printed (the large homes' targets: render <= 1.3x, agent step <= 1.2x the small homes'). The two kinds are
interleaved so that both see the same load: frames alternate between the two homes, and the two episodes run in
two threads whose agents act in turn, one step each. CPU times are printed beside wall times (the process's for a
frame, llvmpipe's threads included; the acting thread's for an agent step, so work OpenCV hands to its own threads
is not counted): on a loaded machine wall times mostly measure waiting for a core.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from latency import summarise_ms

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_core.types import DiscreteAction, Observation
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HOME_KINDS, HomeConfig, generate_home, home_config_for
from sim_bridge.embedded.sim import EmbeddedSim

_BUILD = """
import sys, time
t, c = time.perf_counter(), time.process_time()
from sim_bridge.embedded.home import generate_home, home_config_for
from sim_bridge.embedded.world import build_model
t1, c1 = time.perf_counter(), time.process_time()
home = generate_home({seed}, home_config_for({homes!r}))
t2, c2 = time.perf_counter(), time.process_time()
model = build_model(home, 360, 640, 1.0)
t3, c3 = time.perf_counter(), time.process_time()
print(t3 - t, t1 - t, t2 - t1, t3 - t2, c3 - c, c1 - c, c2 - c1, c3 - c2, len(home.objects), model.nmeshface)
"""


def bench_build(seed: int, homes: str) -> None:
    """Home + MuJoCo model build time in fresh processes: empty model cache, then filled.

    "Cached" means the disk cache under ``$XDG_CACHE_HOME/goat_nav`` (the furniture models converted to meshes,
    the objects' textures) that the first process filled; the home itself is generated again. Each line gives
    the wall time from the first import to the compiled model and its parts, and the CPU time: the child's own
    (imports, home, model) and the whole child process's (Python's start-up included) from the operating system.
    """
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        for label in ("first (empty cache)", "cached"):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run([sys.executable, "-c", _BUILD.format(seed=seed, homes=homes)], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            process_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            wall, cpu = [float(v) for v in out[0:4]], [float(v) for v in out[4:8]]
            print(f"home build {label}: {wall[0]:.2f} s wall (imports {wall[1]:.2f}, home {wall[2]:.2f}, model "
                  f"{wall[3]:.2f}); CPU {cpu[0]:.2f} s (imports {cpu[1]:.2f}, home {cpu[2]:.2f}, model {cpu[3]:.2f}), "
                  f"{process_cpu:.2f} s for the whole process ({out[8]} objects, {out[9]} mesh triangles)")


def _render_times(sims: list[EmbeddedSim], steps: int, seed: int) -> tuple[list[list[float]], list[list[float]]]:
    """Observation wall and CPU times (the process's, llvmpipe's threads included) of each sim, the sims taking turns
    frame by frame (one load for all of them)."""
    rng = np.random.default_rng(seed)
    for sim in sims:
        sim.reset(sim.navgrid.sample_navigable(rng), 0.0)
    wall: list[list[float]] = [[] for _ in sims]
    cpu: list[list[float]] = [[] for _ in sims]
    for k in range(steps):
        for sim, out, out_cpu in zip(sims, wall, cpu, strict=True):
            sim.step(DiscreteAction.MOVE_FORWARD if k % 4 == 3 else DiscreteAction.TURN_LEFT)
            t, c = time.perf_counter(), time.process_time()
            sim.observe()
            out.append(time.perf_counter() - t)
            out_cpu.append(time.process_time() - c)
    return [out[5:] for out in wall], [out[5:] for out in cpu]


def bench_render(seed: int, steps: int, kinds: list[str]) -> tuple[list[float], list[float]]:
    """Median render wall and CPU time of each kind of home; with two kinds their frames alternate."""
    sims = [EmbeddedSim(generate_home(seed, home_config_for(kind))) for kind in kinds]
    try:
        wall, cpu = _render_times(sims, steps, seed)
    finally:
        for sim in sims:
            sim.close()
    for kind, out, out_cpu in zip(kinds, wall, cpu, strict=True):
        print(f"render rgb+depth+seg 360x640 ({kind}): {summarise_ms(1000.0 * np.asarray(out))}  (target <= 40 ms); "
              f"CPU {summarise_ms(1000.0 * np.asarray(out_cpu))}")
    return [float(np.median(out)) for out in wall], [float(np.median(out)) for out in cpu]


class _Baton:
    """Lets the agents of several threads act one at a time, in turn, so their steps see the same load."""

    def __init__(self, players: int) -> None:
        self._turn = 0
        self._active = list(range(players))
        self._cond = threading.Condition()

    def wait(self, player: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._active[self._turn % len(self._active)] == player)

    def pass_on(self, player: int, finished: bool = False) -> None:
        with self._cond:
            if finished:
                index = self._active.index(player)
                self._active.remove(player)
                if self._active:
                    self._turn = index % len(self._active)
            else:
                self._turn = (self._turn + 1) % len(self._active)
            self._cond.notify_all()


def _agent_run(seed: int, steps: int, kind: str, baton: _Baton, player: int, out: dict[str, object]) -> None:
    config = home_config_for(kind)
    episode = generate_dataset(1, seed, config, episode_config_for(config)).episodes[0]
    act_times: list[float] = []
    act_cpu: list[float] = []
    act_marched: list[bool] = []  # whether the step ran an FMM (whole, or as far as a goal cell needed)
    try:
        with EpisodeRunner(RunConfig(max_actions_per_subtask=steps), AgentConfig(), MatcherConfig()) as runner:
            original = runner.agent.act
            cache = getattr(getattr(runner.agent, "_ctx", None), "fields", None)  # the GOAT agent's FieldCache

            def marches() -> int:  # fields march when their distances are read, whole or only as far as needed
                return 0 if cache is None else cache.marches

            def timed_act(obs: Observation) -> DiscreteAction:
                baton.wait(player)
                try:
                    before = marches()
                    t, c = time.perf_counter(), time.thread_time()
                    action = original(obs)
                    act_times.append(time.perf_counter() - t)
                    act_cpu.append(time.thread_time() - c)
                    act_marched.append(marches() > before)
                finally:
                    baton.pass_on(player)
                return action

            runner.agent.act = timed_act  # type: ignore[method-assign]
            t0 = time.perf_counter()
            records, _ = runner.run_episode(episode)
            out["elapsed_s"] = time.perf_counter() - t0
            out["actions"] = sum(r.num_actions for r in records)
            out["subtasks"] = len(records)
            if cache is not None:
                out["fields"] = (cache.misses, cache.hits, cache.distances_reused, cache.marches)
    finally:
        out["times"] = act_times
        out["cpu"] = act_cpu
        out["marched"] = act_marched
        baton.pass_on(player, finished=True)


def _split(cpu_s: np.ndarray, marched: np.ndarray) -> str:
    """Mean CPU, and the steps that ran an FMM against the others: an agent step's CPU has two modes, and where the
    median falls between them depends on the share of steps that marched."""
    parts = [f"mean {1000.0 * cpu_s.mean():.2f} ms", f"{100.0 * marched.mean():.0f} % of the steps ran an FMM"]
    for label, sel in (("those", marched), ("the others", ~marched)):
        if sel.any():
            parts.append(f"{label} median {1000.0 * np.median(cpu_s[sel]):.2f} ms")
    return ", ".join(parts)


def bench_agent(seed: int, steps: int, kinds: list[str]) -> tuple[list[float], list[float]]:
    """Median Agent.act() time on an episode of each kind of home; with two kinds, in two threads that act in
    turn (step for step under the same load; rendering and the rest of the loop run outside the turns)."""
    baton = _Baton(len(kinds))
    outs: list[dict[str, object]] = [{} for _ in kinds]
    threads = [threading.Thread(target=_agent_run, args=(seed, steps, kind, baton, k, outs[k]))
               for k, kind in enumerate(kinds)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    medians, cpu_medians = [], []
    for kind, out in zip(kinds, outs, strict=True):
        times = np.asarray(out["times"], dtype=np.float64)
        if "elapsed_s" not in out or times.size == 0:
            raise RuntimeError(f"the {kind} episode did not run (see the error above)")
        fields = out.get("fields")
        planned = (f", planning fields computed {fields[0]} (FMM marches run {fields[3]}) / reused {fields[1]}"
                   if isinstance(fields, tuple) else "")
        cpu = np.asarray(out["cpu"], dtype=np.float64)
        print(f"agent step (no rendering, {kind}): {summarise_ms(1000.0 * times)}  (target <= 30 ms); "
              f"CPU of its thread {summarise_ms(1000.0 * cpu)}")
        print(f"  its CPU split: {_split(cpu, np.asarray(out['marched'], dtype=bool))}")
        elapsed, actions = float(out["elapsed_s"]), int(out["actions"])  # type: ignore[arg-type]
        print(f"episode ({kind}): {out['subtasks']} subtasks, {actions} actions in {elapsed:.1f} s "
              f"({1000 * elapsed / max(actions, 1):.1f} ms per action incl. rendering{planned})")
        medians.append(float(np.median(times)))
        cpu_medians.append(float(np.median(cpu)))
    return medians, cpu_medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--homes", choices=HOME_KINDS, default=HomeConfig().furniture)
    parser.add_argument("--baseline", choices=HOME_KINDS, default=None,
                        help="also measure render and agent step on these homes and print the ratios")
    parser.add_argument("--skip-build", action="store_true",
                        help="leave out the home build (two fresh processes, one of them converting every model)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}, "
          f"MUJOCO_GL={os.environ.get('MUJOCO_GL', 'egl (default)')}, {args.homes} homes")
    print("load average (1, 5, 15 min) at start: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    if home_config_for(args.homes) != HomeConfig() and not args.skip_build:
        bench_build(args.seed, args.homes)
    kinds = [args.homes] if args.baseline is None else [args.homes, args.baseline]
    renders, renders_cpu = bench_render(args.seed, args.steps, kinds)
    agents, agents_cpu = bench_agent(args.seed, args.steps, kinds)
    if args.baseline is not None:
        print(f"ratios {args.homes} / {args.baseline} (medians, same run, interleaved): render "
              f"{renders[0] / renders[1]:.2f}x, agent step {agents[0] / agents[1]:.2f}x; in CPU time (what a loaded "
              f"machine does not distort): render {renders_cpu[0] / renders_cpu[1]:.2f}x, agent step "
              f"{agents_cpu[0] / agents_cpu[1]:.2f}x")
    print("load average (1, 5, 15 min) at end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
