"""FindingDory's high level from the frames, side by side with the oracle, without the low-level drives.

    python benchmarks/bench_findingdory_memory.py [--episodes 10] [--seed 3000] [--num-rooms N]

Per episode the experience is collected with its video; then, on the same tasks, HL-SR per task type of:

* ``oracle``: the rule-based selector over the simulator's log (perfect perception);
* ``memory``: the same rules over a memory built from the video with ground-truth perception (the default of
  ``goat-nav bench --suite findingdory``);
* ``no ids``: the memory built from the same masks with their instance ids taken away (per-frame numbering, as a
  detector's), so identity comes from geometry and the gripper only.

It also prints how the memory's inferred picks and places compare with the log's, how many frames got the room the
log gives (under the best one-to-one naming), the memory build time per frame and the encoded video size. The
HL-SR of ``oracle`` and ``memory`` equals that of the full ``goat-nav bench`` runs of the same seed (the same tasks,
the same verifier); only the low level (LL-SR, SPL) is left out.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict

import numpy as np

from goat_core.errors import GoatError, SceneGenerationError
from goat_core.perception.gt import GroundTruthPerception, GroundTruthWithoutIds
from goat_suites.findingdory.experience_video import VideoEncoding
from goat_suites.findingdory.generator import (
    FindingDoryGenConfig,
    TaskJudge,
    collect_experience,
    findingdory_sim_config,
    generate_tasks,
)
from goat_suites.findingdory.memory import MemorySelector, memory_log
from goat_suites.findingdory.policy import EpisodeExperience, HighLevelPolicy, OracleSelector
from goat_suites.findingdory.run import high_level_outcome
from goat_suites.findingdory.tasks import TASK_TYPES
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim

LABELS = [spec.name for spec in CATALOGUE]
POLICIES = ("oracle", "memory", "no ids")


def _room_agreement(truth: list[int | None], ours: tuple[int | None, ...]) -> tuple[int, int]:
    """Frames whose memory room is the one their log room maps to (each log room to its most frequent label)."""
    pairs = Counter((t, o) for t, o in zip(truth, ours, strict=True) if t is not None)
    named: dict[int, int | None] = {}
    for (t, o), _ in pairs.most_common():
        if t not in named and o not in named.values():
            named[t] = o
    return sum(n for (t, o), n in pairs.items() if named.get(t) == o), sum(pairs.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=3000)
    parser.add_argument("--num-rooms", type=int, default=None)
    args = parser.parse_args()
    home_config = HomeConfig() if args.num_rooms is None else HomeConfig(num_rooms=args.num_rooms)
    gen = FindingDoryGenConfig()
    rng = np.random.default_rng(args.seed)
    hits: dict[str, dict[str, list[bool]]] = {p: defaultdict(list) for p in POLICIES}
    events_same = rooms_ok = rooms_all = frames_total = 0
    build_s, video_bytes = [], 0
    done = 0
    for k in range(args.episodes):
        home_seed = int(rng.integers(0, 2**31 - 1))  # as goat-nav bench --suite findingdory draws its homes
        erng = np.random.default_rng(home_seed)
        try:
            with EmbeddedSim(generate_home(home_seed, home_config), findingdory_sim_config()) as sim:
                experience = collect_experience(sim, erng, gen, video=VideoEncoding())
                judge = TaskJudge(sim, experience.start_world)
                tasks = generate_tasks(sim, experience, judge, erng, gen)
                shared = EpisodeExperience(video=experience.video, log=experience.log)
                policies: dict[str, HighLevelPolicy] = {
                    "oracle": OracleSelector(), "memory": MemorySelector(GroundTruthPerception(LABELS), "ground_truth"),
                    "no ids": MemorySelector(GroundTruthWithoutIds(LABELS), "ground_truth without ids")}
                for name, policy in policies.items():
                    started = time.perf_counter()
                    policy.begin_episode(shared)
                    if name == "memory":
                        build_s.append((time.perf_counter() - started) / len(experience.log.frames))
                    for task in tasks:
                        try:
                            selection = policy.select(task.lang)
                        except GoatError:
                            selection = None
                        ok = high_level_outcome(judge, task, selection, experience.log).success
                        hits[name][task.task_type].append(ok)
                memory = policies["memory"]
                assert isinstance(memory, MemorySelector) and memory.memory is not None
                perceived = memory_log(memory.memory)
                events_same += [(f.index, i.kind) for f, i in perceived.events()] == \
                    [(f.index, i.kind) for f, i in experience.log.events()]
                ok_rooms, all_rooms = _room_agreement([f.room_id for f in experience.log.frames],
                                                      memory.memory.frame_rooms)
                rooms_ok, rooms_all = rooms_ok + ok_rooms, rooms_all + all_rooms
                frames_total += len(experience.log.frames)
                assert experience.video is not None
                video_bytes += experience.video.size_bytes()
                done += 1
        except SceneGenerationError as exc:
            print(f"episode {k} (home {home_seed}) skipped: {exc}")
    print(f"FindingDory high level, {done} episodes (seed {args.seed}), ground-truth perception; HL-SR per task type")
    print(f"{'task type':<26}" + "".join(f"{p:>9}" for p in POLICIES) + f"{'n':>5}")
    for task_type in TASK_TYPES + ("overall",):
        cells = []
        for p in POLICIES:
            values = [v for t, vs in hits[p].items() for v in vs] if task_type == "overall" else hits[p][task_type]
            cells.append(f"{np.mean(values):>9.3f}" if values else f"{'-':>9}")
        n = sum(len(v) for v in hits["oracle"].values()) if task_type == "overall" else len(hits["oracle"][task_type])
        print(f"{task_type:<26}" + "".join(cells) + f"{n:>5}")
    print(f"picks and places inferred on the log's frames in {events_same}/{done} episodes; "
          f"rooms: {rooms_ok}/{rooms_all} frames ({100.0 * rooms_ok / max(rooms_all, 1):.1f} %) labelled as the "
          "log's rooms")
    print(f"memory build: median {1000.0 * float(np.median(build_s)):.0f} ms per frame; "
          f"video {video_bytes / 1e6:.0f} MB for {frames_total} frames "
          f"({video_bytes / max(frames_total, 1) / 1e3:.0f} kB a frame)")


if __name__ == "__main__":
    main()
