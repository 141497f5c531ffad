"""Statistics of the procedural homes beside the published HM3D / HM3DSem figures (docs/homes.md).

    python benchmarks/bench_home_stats.py [--homes large] [--seed 1000] [--num-homes 10] [--episodes 0]

Over the homes of ``--num-homes`` episodes of ``--seed`` (the homes ``goat-nav bench --seed S --episodes N`` runs
in): rooms per home, navigable area, objects, objects per room, categories with several instances. With
``--episodes K`` the first K episodes are also generated (image goals are rendered: slower) and the geodesic
distance of every subtask is added.
"""

from __future__ import annotations

import argparse
import time

from goat_suites.common.home_stats import format_table, home_stats, subtask_geodesics_m, summarise
from goat_suites.goat.generator import EpisodeGenConfig, generate_numbered_episode, home_seeds, scene_id_for
from sim_bridge.embedded.home import HOME_KINDS, generate_home, home_config_for
from sim_bridge.embedded.navgrid import NavGrid


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homes", choices=HOME_KINDS, default="large")
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--num-homes", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=0, help="episodes whose subtask distances are measured")
    args = parser.parse_args()
    config = home_config_for(args.homes)
    started = time.monotonic()
    stats, geodesics = [], []
    for k, seed in enumerate(home_seeds(args.num_homes, args.seed)):
        home = generate_home(seed, config)
        grid = NavGrid.from_home(home)
        stats.append(home_stats(home, grid, scene_id_for(seed, config)))
        if k < args.episodes:
            episode = generate_numbered_episode(args.seed, k, seed, config, EpisodeGenConfig())
            geodesics += subtask_geodesics_m(episode, grid)
    print(format_table(summarise(stats), geodesics, len(stats), f"--homes {args.homes}, seed {args.seed}"))
    print(f"\n{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
