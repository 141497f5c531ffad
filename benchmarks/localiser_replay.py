"""Tune the localiser without re-running the agent: record a stretch-profile episode once, replay it many times.

    python benchmarks/localiser_replay.py record --seed 1000 --episode 0 --out runs/rec_1000_0.npz
    python benchmarks/localiser_replay.py replay runs/rec_1000_0.npz                       # the default localiser
    python benchmarks/localiser_replay.py replay runs/rec_1000_0.npz closure=false stride_px=4
    python benchmarks/localiser_replay.py replay runs/rec_1000_0.npz --verbose             # one line per frame

``record`` runs one procedural GOAT episode under ``--realism stretch`` (ground-truth semantics, budget 500
actions per subtask) and saves every observation the agent saw: the noisy depth (float16), the drifting
odometry pose, the camera tilt and the simulator's true pose. ``replay`` passes the saved observations through a
fresh :class:`goat_core.localisation.localiser.Localiser` with ``LocaliserConfig`` fields overridden as
``name=value`` and prints the pose error against the truth (median and 95th percentile, metres and degrees).

The observations do not depend on the localiser, so every variant sees the same frames. The agent's actions do
(it acts on the localised pose), so a replay measures the localiser alone; ``benchmarks/bench_realism.py``
measures the agent under the profile.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

from goat_core.geometry import wrap_angle_rad
from goat_core.localisation.localiser import Localiser, LocaliserConfig
from goat_core.types import CameraIntrinsics, Observation, Pose2D


def record(seed: int, episode_index: int, out: Path) -> int:
    from goat_core.agent import AgentConfig
    from goat_core.matching.embeddings import SentenceEmbedder
    from goat_core.matching.matcher import MatcherConfig
    from goat_suites.common import realism as agent_realism
    from goat_suites.common.runner import EpisodeRunner, RunConfig
    from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
    from sim_bridge.embedded.home import HomeConfig
    from sim_bridge.embedded.realism import realism_profile
    from sim_bridge.embedded.sim import SimConfig

    episode = generate_dataset(episode_index + 1, seed, HomeConfig(), EpisodeGenConfig()).episodes[episode_index]
    frames: dict[str, list[Any]] = {"depth": [], "odom": [], "truth": [], "tilt": []}
    camera: dict[str, float] = {}
    see = agent_realism.AgentSenses.see

    def recording_see(senses: agent_realism.AgentSenses, obs: Observation, truth: Pose2D) -> Observation:
        if senses._last is None or senses._last[0] is not obs:  # each observation once, as the localiser sees it
            frames["depth"].append(obs.depth_m.astype(np.float16))
            frames["odom"].append((obs.pose.x_m, obs.pose.y_m, obs.pose.yaw_rad))
            frames["truth"].append((truth.x_m, truth.y_m, truth.yaw_rad))
            frames["tilt"].append(obs.camera_tilt_rad)
            k = obs.intrinsics
            camera.update(width=k.width, height=k.height, fx=k.fx, fy=k.fy, cx=k.cx, cy=k.cy,
                          camera_height_m=obs.camera_height_m)
        return see(senses, obs, truth)

    agent_realism.AgentSenses.see = recording_see  # type: ignore[method-assign]
    try:
        with EpisodeRunner(RunConfig(max_actions_per_subtask=500), AgentConfig(), MatcherConfig(),
                           SimConfig(realism=realism_profile("stretch", seed=seed)),
                           embedder=SentenceEmbedder()) as runner:
            runner.run_episode(episode)
            subtask_end = list(runner.senses.log.subtask_end)  # the frame each subtask ended on
    finally:
        agent_realism.AgentSenses.see = see  # type: ignore[method-assign]
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **{k: np.asarray(v) for k, v in frames.items()}, **camera,
                        subtask_end=np.asarray(subtask_end, dtype=np.int64))
    print(f"{episode.episode_id}: {len(frames['odom'])} observations saved to {out}")
    return 0


def _override(text: str) -> tuple[str, Any]:
    name, _, value = text.partition("=")
    fields = {f.name: f for f in dataclasses.fields(LocaliserConfig)}
    if name not in fields or not value:
        raise argparse.ArgumentTypeError(f"expected LocaliserConfig field=value, got {text!r}")
    default = getattr(LocaliserConfig(), name)
    if isinstance(default, bool):
        if value.lower() not in ("true", "false", "1", "0"):
            raise argparse.ArgumentTypeError(f"{name} is true or false, got {value!r}")
        return name, value.lower() in ("true", "1")
    try:
        return name, type(default)(value)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{name} must be a {type(default).__name__}, got {value!r}") from None


def _error(pose: Pose2D, truth: np.ndarray) -> tuple[float, float]:
    """Position (m) and absolute heading (deg) error of ``pose`` against ``truth`` (x, y, yaw)."""
    return (math.hypot(pose.x_m - float(truth[0]), pose.y_m - float(truth[1])),
            abs(math.degrees(wrap_angle_rad(pose.yaw_rad - float(truth[2])))))


def replay(path: Path, overrides: dict[str, Any], verbose: bool, frames: Optional[int] = None) -> int:
    data = np.load(path)
    intrinsics = CameraIntrinsics(int(data["width"]), int(data["height"]), float(data["fx"]), float(data["fy"]),
                                  float(data["cx"]), float(data["cy"]))
    localiser = Localiser(LocaliserConfig(**overrides))
    rgb = np.zeros((intrinsics.height, intrinsics.width, 3), np.uint8)
    started = time.monotonic()
    pos, yaw = [], []
    closing: list[tuple[int, int, float, float, float, float, float, float, float]] = []  # keyframe closures, see below
    solve_s: list[float] = []
    optimise = localiser._graph.optimise

    def timed_optimise(*args: Any, **kwargs: Any) -> np.ndarray:
        t0 = time.perf_counter()
        out = optimise(*args, **kwargs)
        solve_s.append(time.perf_counter() - t0)
        return out

    localiser._graph.optimise = timed_optimise  # type: ignore[method-assign]
    closure_s: list[float] = []
    diagnostics: list[str] = []
    n = len(data["odom"]) if frames is None else min(frames, len(data["odom"]))
    for i, (depth, odom, truth, tilt) in enumerate(zip(data["depth"][:n], data["odom"][:n], data["truth"][:n],
                                                       data["tilt"][:n], strict=True)):
        obs = Observation(rgb=rgb, depth_m=depth.astype(np.float32), pose=Pose2D(*map(float, odom)),
                          camera_tilt_rad=float(tilt), camera_height_m=float(data["camera_height_m"]),
                          intrinsics=intrinsics)
        closures = localiser.closures
        keyframe_closures = localiser.keyframe_closures
        t0 = time.perf_counter()
        pose = localiser.localise(obs).pose
        took_s = time.perf_counter() - t0
        if localiser.keyframe_closures > keyframe_closures:
            # against the truth: the pose before the closure and after, the peak's gain and the reference's error
            before = localiser.keyframe_predicted
            ref = localiser.keyframe_reference
            closing.append((i, ref, localiser.keyframe_peak_gain,
                            math.hypot(before.x_m - truth[0], before.y_m - truth[1]),
                            math.hypot(pose.x_m - truth[0], pose.y_m - truth[1]),
                            abs(math.degrees(wrap_angle_rad(before.yaw_rad - float(truth[2])))),
                            abs(math.degrees(wrap_angle_rad(pose.yaw_rad - float(truth[2])))),
                            *_error(localiser._frames[ref].pose, data["truth"][ref])))
            closure_s.append(took_s)
            diagnostics.append(" ".join(f"{v:.3f}" for v in localiser.keyframe_diagnostics))
        pos.append(math.hypot(pose.x_m - truth[0], pose.y_m - truth[1]))
        yaw.append(math.degrees(wrap_angle_rad(pose.yaw_rad - float(truth[2]))))
        if verbose:
            last = localiser.last
            detail = "" if last is None else (f" accepted={int(last.accepted)} pairs={last.pairs}/{last.scan_points}"
                                              f" dyaw={math.degrees(last.correction.yaw_rad):+.2f}")
            if localiser.closures > closures:
                detail += " closure"
            if localiser.keyframe_closures > keyframe_closures:
                detail += " keyframe closure"
            odom_yaw = math.degrees(wrap_angle_rad(float(odom[2]) - float(truth[2])))
            print(f"{i:4d} {pos[-1]:.3f} m {yaw[-1]:+6.2f} deg (odometry {odom_yaw:+6.2f}){detail}")
    p, y = np.asarray(pos), np.abs(yaw)
    ends = [int(i) for i in data["subtask_end"] if int(i) < n] if "subtask_end" in data.files else []
    end = (f"; end of subtask ({len(ends)}) median {np.median(p[ends]):.3f} m, {np.median(y[ends]):.2f} deg"
           if ends else "")
    print(f"{path} {' '.join(f'{k}={v}' for k, v in overrides.items()) or 'defaults'}: {len(p)} frames, pose error "
          f"median {np.median(p):.3f} m / p95 {np.percentile(p, 95):.3f} m, {np.median(y):.2f} / "
          f"{np.percentile(y, 95):.2f} deg{end}; {localiser.closures} loop closures, "
          f"{localiser.keyframe_closures} at revisited views; learnt scale "
          f"{localiser.scale_estimate[0]:+.4f} / {localiser.scale_estimate[1]:+.4f}; "
          f"{time.monotonic() - started:.0f} s")
    if closing:
        worse = sum(1 for c in closing if c[4] > c[3] + 0.02 or c[6] > c[5] + 0.5)
        print(f"keyframe closures: {len(closing)}, {worse} worse against the truth (> 2 cm or 0.5 deg); a closing "
              f"frame took {1000 * np.mean(closure_s):.0f} ms mean / {1000 * np.max(closure_s):.0f} ms max"
              + (f", its pose graph solve {1000 * np.mean(solve_s):.0f} / {1000 * np.max(solve_s):.0f} ms"
                 if solve_s else "") + f" ({len(localiser._frames)} frames at the end)")
        for (i, ref, gain, m0, m1, d0, d1, rm, rd), diag in zip(closing, diagnostics, strict=True):
            print(f"  frame {i:4d} on {ref:4d}: peak gain {gain:.3f}; {m0:.3f} -> {m1:.3f} m, {d0:.2f} -> {d1:.2f} deg "
                  f"(the reference, after: {rm:.3f} m, {rd:.2f} deg) {diag}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run one stretch-profile episode and save its observations")
    rec.add_argument("--seed", type=int, default=1000)
    rec.add_argument("--episode", type=int, default=0, help="index of the episode in the seed's dataset")
    rec.add_argument("--out", type=Path, required=True, help="the .npz file to write")
    rep = sub.add_parser("replay", help="localise a recording and print the pose error")
    rep.add_argument("recording", type=Path)
    rep.add_argument("overrides", nargs="*", type=_override, help="LocaliserConfig field=value")
    rep.add_argument("--verbose", action="store_true", help="one line per frame")
    rep.add_argument("--frames", type=int, default=None, help="replay only the first N frames")
    args = parser.parse_args()
    if args.command == "record":
        return record(args.seed, args.episode, args.out)
    return replay(args.recording, dict(args.overrides), args.verbose, args.frames)


if __name__ == "__main__":
    sys.exit(main())
