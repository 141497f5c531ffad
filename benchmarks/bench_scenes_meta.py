"""What the driver of ``goat-nav bench`` spends on ``meta.scenes``, from the episodes against building every home.

    python benchmarks/bench_scenes_meta.py --homes large-furnished --seed 1000 --episodes 3

Generates the episodes as ``goat-nav bench`` does (each in its own home), then fills ``meta.scenes`` twice in this
process and prints the CPU time of each: from the statistics every procedural episode carries (``info.scene_stats``,
computed where the generator built the home; what the driver does now) and by building every home again (what it
did before, while the workers of a ``--workers 2`` run were already running episodes). The two must be equal.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from goat_suites.common.home_stats import scenes_meta
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HOME_KINDS, Home, home_config_for


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homes", choices=HOME_KINDS, required=True)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=3)
    args = parser.parse_args()
    print("load average (1, 5, 15 min) at start: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    config = home_config_for(args.homes)
    c = time.process_time()
    episodes = generate_dataset(args.episodes, args.seed, config, episode_config_for(config)).episodes
    print(f"generating {len(episodes)} episodes ({args.homes}, seed {args.seed}): {time.process_time() - c:.2f} s CPU")
    scene_ids = [e.scene_id for e in episodes]

    def no_build(scene_id: str) -> Home:
        raise RuntimeError(f"meta.scenes built the home of {scene_id} although its episode carries its statistics")

    c = time.process_time()
    carried = scenes_meta(scene_ids, no_build, episodes)
    carried_s = time.process_time() - c
    c = time.process_time()
    built = scenes_meta(scene_ids)
    built_s = time.process_time() - c
    if carried != built:
        print(f"DIFFERENT meta.scenes:\n  from the episodes {carried}\n  homes built       {built}")
        return 1
    print(f"meta.scenes of {len(built)} homes, the same both ways: from the episodes {1000 * carried_s:.1f} ms CPU; "
          f"building every home again {built_s:.2f} s CPU ({built_s / max(1, len(built)):.2f} s a home)")
    print("load average (1, 5, 15 min) at end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
