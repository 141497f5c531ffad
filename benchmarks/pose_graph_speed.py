"""CPU time of the localiser's pose graph solve (goat_core.localisation.pose_graph) on an episode-sized graph.

    python benchmarks/pose_graph_speed.py [--frames 500] [--closures 12] [--iterations 5]

A chain of ``--frames`` frames (0.1 m and 3 deg a step, with noise) and ``--closures`` closure edges across it,
solved as a keyframe closure solves it (``LocaliserConfig.graph_iterations`` Gauss-Newton steps). Prints the CPU
time (process time, so another job's load does not count) per solve: the budget is ~50 ms on a 500-frame episode.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from goat_core.localisation.pose_graph import PoseGraph


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--closures", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    graph = PoseGraph()
    poses = np.zeros((args.frames, 3))
    for k in range(1, args.frames):
        z = np.array([0.1, 0.0, np.radians(3.0)]) + rng.normal(scale=[0.005, 0.005, np.radians(0.3)])
        graph.add_edge(k - 1, k, (float(z[0]), float(z[1]), float(z[2])), np.diag([4e4, 4e4, 4e3]))
        c, s = np.cos(poses[k - 1, 2]), np.sin(poses[k - 1, 2])
        poses[k] = poses[k - 1] + [c * z[0] - s * z[1], s * z[0] + c * z[1], z[2]]
    for a in np.linspace(0, args.frames - 40, args.closures).astype(int):
        graph.add_edge(int(a), int(a) + 35, (0.0, 0.0, 0.0), np.diag([2500.0, 2500.0, 1.3e4]))
    cpu = []
    for _ in range(args.repeats):
        t0 = time.process_time()
        graph.optimise(poses, iterations=args.iterations, tolerance=0.0)
        cpu.append(time.process_time() - t0)
    print(f"pose graph of {args.frames} frames and {len(graph)} edges, {args.iterations} Gauss-Newton steps: "
          f"{1000 * np.median(cpu):.1f} ms CPU median, {1000 * np.max(cpu):.1f} ms max over {args.repeats} solves")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
