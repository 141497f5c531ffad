"""Same actions before and after a restructuring: record or compare every subtask's actions and score.

    python benchmarks/check_same_actions.py --seed 1000 --episodes 6 --write before.json   # on the old code
    python benchmarks/check_same_actions.py --compare before.json                          # on the new code
    python benchmarks/check_same_actions.py --compare benchmarks/baselines/same_actions_seed1000.json
    python benchmarks/check_same_actions.py --homes large-furnished --episodes 3 --write before_large.json

The committed baselines (seeds 1000 and 5000, 6 episodes each) record the behaviour of the official GOAT-Bench
protocol (no sliding), the agent's per-subtask action limit, its mark of a move refused twice at the same pose,
its relaxed field's margin, clear_collisions run again when new marks seal the way, rooms inferred from telling
objects and collision marks that spare the robot's trail (issue 33); the split of the agent into parts was checked
against baselines of the code before it (commit d9b9b35).

Runs procedural GOAT episodes in process (the default agent, ground-truth perception, the default run settings,
memory on) on the homes of ``--homes`` (any kind ``goat-nav bench --homes`` takes, with its episode rules), and
writes per subtask the action sequence (one letter per action), its SHA-1, the stop reason, success and SPL, and
each episode's CPU time. ``--compare`` reruns the episodes named in a file (seed, count and homes come from it) and
exits 1, naming the first subtask and action that differ, if anything does. A change meant to keep behaviour (a
split, a rename, a speed-up) must pass it; a change meant to alter behaviour records a new baseline and says so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_core.types import DiscreteAction
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HOME_KINDS, HomeConfig, home_config_for

# The homes of the committed baselines (benchmarks/baselines/), by the name they record: the small homes of
# primitives, HomeConfig(), whatever the default homes of goat-nav bench are (docs/homes.md).
BASELINE_HOMES = HomeConfig().furniture

LETTER = {DiscreteAction.MOVE_FORWARD: "F", DiscreteAction.TURN_LEFT: "L", DiscreteAction.TURN_RIGHT: "R",
          DiscreteAction.LOOK_UP: "U", DiscreteAction.LOOK_DOWN: "D", DiscreteAction.STOP: "S"}


def run(seed: int, episodes: int, homes: str) -> dict[str, Any]:
    """Every subtask of ``episodes`` procedural episodes of ``seed``: its actions and score."""
    home_config = home_config_for(homes)  # as `goat-nav bench --homes` builds them
    dataset = generate_dataset(episodes, seed, home_config, episode_config_for(home_config))
    run_config = RunConfig()
    subtasks: list[dict[str, Any]] = []
    episode_cpu_s: dict[str, float] = {}
    with EpisodeRunner(run_config, AgentConfig(), MatcherConfig()) as runner:
        for episode in dataset.episodes:
            cpu0 = time.process_time()
            records, _ = runner.run_episode(episode)
            episode_cpu_s[str(episode.episode_id)] = round(time.process_time() - cpu0, 2)
            for r in records:
                letters = "".join(LETTER[a] for a in (r.actions or ()))
                subtasks.append({"episode_id": r.episode_id, "index": r.index, "modality": r.modality.value,
                                 "stop_reason": r.stop_reason, "success": r.success, "spl": round(r.spl, 9),
                                 "num_actions": r.num_actions,
                                 "actions_sha1": hashlib.sha1(letters.encode()).hexdigest(), "actions": letters})
    n = len(subtasks)
    return {"seed": seed, "episodes": episodes, "homes": homes, "subtasks": subtasks, "episode_cpu_s": episode_cpu_s,
            "success_rate": sum(s["success"] for s in subtasks) / n if n else 0.0,
            "spl": round(sum(s["spl"] for s in subtasks) / n, 9) if n else 0.0}


def differences(reference: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Lines naming each subtask whose actions or score differ (empty when the runs agree)."""
    ref, cur = reference["subtasks"], current["subtasks"]
    lines = [] if len(ref) == len(cur) else [f"{len(cur)} subtasks, the reference has {len(ref)}"]
    for a, b in zip(ref, cur, strict=False):  # a length difference is reported above
        where = f"{a['episode_id']}#{a['index']}"
        if (a["episode_id"], a["index"]) != (b["episode_id"], b["index"]):
            lines.append(f"{where}: now {b['episode_id']}#{b['index']} in its place")
            continue
        if a["actions"] != b["actions"]:
            first = next((i for i, (x, y) in enumerate(zip(a["actions"], b["actions"], strict=False)) if x != y),
                         min(len(a["actions"]), len(b["actions"])))
            lines.append(f"{where}: actions differ from action {first} "
                         f"(reference {a['actions'][first:first + 12]!r}, now {b['actions'][first:first + 12]!r})")
        for key in ("stop_reason", "success", "spl", "num_actions"):
            if a[key] != b[key]:
                lines.append(f"{where}: {key} {a[key]!r} -> {b[key]!r}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--homes", choices=HOME_KINDS, default=BASELINE_HOMES,
                        help=f"the homes (default {BASELINE_HOMES}: the small homes of the committed baselines, "
                             "whatever goat-nav bench's default is)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", type=Path, help="record the run as a reference file")
    what.add_argument("--compare", type=Path, help="rerun the reference file's episodes and compare")
    args = parser.parse_args()
    if args.compare is not None:
        reference = json.loads(args.compare.read_text())
        args.seed, args.episodes, args.homes = reference["seed"], reference["episodes"], reference["homes"]
    t0 = time.monotonic()
    current = run(args.seed, args.episodes, args.homes)
    summary = (f"seed {args.seed}, {args.episodes} episodes ({args.homes} homes), {len(current['subtasks'])} "
               f"subtasks: SR {current['success_rate']:.3f}, SPL {current['spl']:.3f} ({time.monotonic() - t0:.0f} s; "
               f"CPU per episode {current['episode_cpu_s']})")
    if args.write is not None:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(json.dumps(current, indent=1) + "\n")
        print(f"wrote {args.write}: {summary}")
        return 0
    lines = differences(reference, current)
    if lines:
        print(f"DIFFERENT from {args.compare}: {summary}")
        print("\n".join(lines))
        return 1
    print(f"same actions and scores as {args.compare}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
