"""Latency targets of the main job, as medians on this machine.

    python benchmarks/bench_speed.py [--steps 300] [--seed 1000] [--homes furnished] [--baseline small]

* home build: generating a furnished home and its MuJoCo model, first with an empty model cache (every model
  converted) and then with the cache filled (each in a fresh process);
* render: one RGB + depth + segmentation observation of a generated home (target <= 40 ms);
* agent step: Agent.act() on the observations of a real episode, rendering excluded (target <= 30 ms);
* episode: wall time of a whole procedural episode (20 of them must fit in 20 minutes).

With ``--baseline KIND`` render and agent step are measured on those homes too, in the same run, and the ratios
printed (the large homes' targets: render <= 1.3x, agent step <= 1.2x the small homes').
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
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
t = time.perf_counter()
from sim_bridge.embedded.home import generate_home, home_config_for
from sim_bridge.embedded.world import build_model
home = generate_home({seed}, home_config_for({homes!r}))
model = build_model(home, 360, 640, 1.0)
print(f"{{time.perf_counter() - t:.2f}} {{len(home.objects)}} {{model.nmeshface}}")
"""


def bench_build(seed: int, homes: str) -> None:
    """Home + MuJoCo model build time in fresh processes: empty model cache, then filled (imports included)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        for label in ("first (empty cache)", "cached"):
            out = subprocess.run([sys.executable, "-c", _BUILD.format(seed=seed, homes=homes)], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            print(f"home build {label}: {float(out[0]):.2f} s ({out[1]} objects, {out[2]} mesh triangles)")


def bench_render(seed: int, steps: int, homes: str) -> float:
    home = generate_home(seed, home_config_for(homes))
    with EmbeddedSim(home) as sim:
        rng = np.random.default_rng(seed)
        sim.reset(sim.navgrid.sample_navigable(rng), 0.0)
        times = []
        for k in range(steps):
            if k % 4 == 3:
                sim.step(DiscreteAction.MOVE_FORWARD)
            else:
                sim.step(DiscreteAction.TURN_LEFT)
            t = time.perf_counter()
            sim.observe()
            times.append(time.perf_counter() - t)
    print(f"render rgb+depth+seg 360x640 ({homes}): {summarise_ms(1000.0 * np.asarray(times[5:]))}  "
          "(target <= 40 ms)")
    return float(np.median(times[5:]))


def bench_agent(seed: int, steps: int, homes: str) -> float:
    config = home_config_for(homes)
    episode = generate_dataset(1, seed, config, episode_config_for(config)).episodes[0]
    act_times: list[float] = []
    with EpisodeRunner(RunConfig(max_actions_per_subtask=steps), AgentConfig(), MatcherConfig()) as runner:
        original = runner.agent.act

        def timed_act(obs: Observation) -> DiscreteAction:
            t = time.perf_counter()
            action = original(obs)
            act_times.append(time.perf_counter() - t)
            return action

        runner.agent.act = timed_act  # type: ignore[method-assign]
        t0 = time.perf_counter()
        records, _ = runner.run_episode(episode)
        elapsed = time.perf_counter() - t0
    actions = sum(r.num_actions for r in records)
    print(f"agent step (no rendering, {homes}): {summarise_ms(1000.0 * np.asarray(act_times))}  (target <= 30 ms)")
    print(f"episode ({homes}): {len(records)} subtasks, {actions} actions in {elapsed:.1f} s "
          f"({1000 * elapsed / max(actions, 1):.1f} ms per action incl. rendering)")
    return float(np.median(act_times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--homes", choices=HOME_KINDS, default=HomeConfig().furniture)
    parser.add_argument("--baseline", choices=HOME_KINDS, default=None,
                        help="also measure render and agent step on these homes and print the ratios")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}, "
          f"MUJOCO_GL={os.environ.get('MUJOCO_GL', 'egl (default)')}, {args.homes} homes")
    print("load average (1, 5, 15 min) at start: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    if home_config_for(args.homes) != HomeConfig():
        bench_build(args.seed, args.homes)
    render_s = bench_render(args.seed, args.steps, args.homes)
    agent_s = bench_agent(args.seed, args.steps, args.homes)
    if args.baseline is not None:
        base_render_s = bench_render(args.seed, args.steps, args.baseline)
        base_agent_s = bench_agent(args.seed, args.steps, args.baseline)
        print(f"ratios {args.homes} / {args.baseline} (medians, same run): render {render_s / base_render_s:.2f}x, "
              f"agent step {agent_s / base_agent_s:.2f}x")
    print("load average (1, 5, 15 min) at end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
