"""What a recording's end-of-subtask pose error is made of (stop 45).

    python benchmarks/localiser_diagnose.py runs/rec_1000_3.npz [field=value ...]

Replays a recording (``benchmarks/localiser_replay.py record``) through the localiser and prints:

- the odometry's true scale errors in the recording (true / odometry turn of the turns on the spot, left and
  right; true / odometry length of the forward steps) against the learnt ones;
- where the heading error was made: the change of the heading error (estimate - truth) summed by the kind of
  frame (a turn on the spot, a forward step, a spin's loop closure) and by phase (before the second spin
  closure, after it);
- the end-of-subtask position error, and what is left of it after the one rigid motion (a rotation about the
  start, and with a shift) that best fits the estimated end positions to the true ones: the part a single
  heading error about the start explains.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from localiser_replay import _override  # noqa: E402

from goat_core.geometry import wrap_angle_rad  # noqa: E402
from goat_core.localisation.localiser import Localiser, LocaliserConfig, compose, inverse  # noqa: E402
from goat_core.types import CameraIntrinsics, Observation, Pose2D  # noqa: E402


def _rigid_fit(est: np.ndarray, true: np.ndarray, shift: bool) -> tuple[float, np.ndarray]:
    """The rotation about the origin (and shift) taking the points ``est`` nearest to ``true`` (least squares):
    the angle (rad) and the residual distances."""
    a, b = est.copy(), true.copy()
    if shift:
        a_c, b_c = a.mean(axis=0), b.mean(axis=0)
    else:
        a_c = b_c = np.zeros(2)
    a0, b0 = a - a_c, b - b_c
    theta = math.atan2(float(np.sum(a0[:, 0] * b0[:, 1] - a0[:, 1] * b0[:, 0])),
                       float(np.sum(a0[:, 0] * b0[:, 0] + a0[:, 1] * b0[:, 1])))
    c, s = math.cos(theta), math.sin(theta)
    moved = np.column_stack([c * a0[:, 0] - s * a0[:, 1], s * a0[:, 0] + c * a0[:, 1]]) + b_c
    return theta, np.hypot(*(moved - b).T)


def diagnose(path: Path, overrides: dict[str, object]) -> int:
    data = np.load(path)
    k = CameraIntrinsics(int(data["width"]), int(data["height"]), float(data["fx"]), float(data["fy"]),
                         float(data["cx"]), float(data["cy"]))
    cfg = LocaliserConfig(**overrides)  # type: ignore[arg-type]
    loc = Localiser(cfg)
    rgb = np.zeros((k.height, k.width, 3), np.uint8)
    odom, truth = data["odom"].astype(float), data["truth"].astype(float)
    depths, tilts = data["depth"], data["tilt"]  # each access to an npz member reads it whole
    n = len(odom)
    est = np.zeros((n, 3))
    closures_before = np.zeros(n, dtype=int)  # spin closures made before frame i
    closed_here = np.zeros(n, dtype=bool)
    for i in range(n):
        obs = Observation(rgb=rgb, depth_m=depths[i].astype(np.float32), pose=Pose2D(*map(float, odom[i])),
                          camera_tilt_rad=float(tilts[i]), camera_height_m=float(data["camera_height_m"]),
                          intrinsics=k)
        closures_before[i] = loc.closures
        p = loc.localise(obs).pose
        closed_here[i] = loc.closures > closures_before[i]
        est[i] = (p.x_m, p.y_m, p.yaw_rad)
    # kinds of frame, from the odometry's motion
    kind = np.array(["start"] + [""] * (n - 1), dtype=object)
    true_turn = {"left": [0.0, 0.0], "right": [0.0, 0.0]}
    fwd = [0.0, 0.0]
    for i in range(1, n):
        m = compose(inverse(Pose2D(*odom[i - 1])), Pose2D(*odom[i]))
        t = compose(inverse(Pose2D(*truth[i - 1])), Pose2D(*truth[i]))
        d = math.hypot(m.x_m, m.y_m)
        if d <= cfg.spin_max_shift_m and abs(m.yaw_rad) > cfg.turn_min_rad:
            kind[i] = "turn"
            side = "left" if m.yaw_rad > 0 else "right"
            true_turn[side][0] += t.yaw_rad
            true_turn[side][1] += m.yaw_rad
        elif d > 0.05:
            kind[i] = "forward"
            fwd[0] += math.hypot(t.x_m, t.y_m)
            fwd[1] += d
        else:
            kind[i] = "other"
        if closed_here[i]:
            kind[i] = "closure"
    scale = {s: (v[0] / v[1] - 1.0 if v[1] else float("nan")) for s, v in true_turn.items()}
    print(f"{path.name}: {n} frames; true odometry scale errors: turn left {scale['left']:+.4f}, right "
          f"{scale['right']:+.4f}, forward {fwd[0] / max(fwd[1], 1e-9) - 1.0:+.4f}; learnt: forward "
          f"{loc.scale_estimate[0]:+.4f}, turn {loc.scale_estimate[1]:+.4f}; {loc.closures} spin closures at frames "
          f"{[int(i) for i in np.flatnonzero(closed_here)]}")
    herr = np.degrees([wrap_angle_rad(est[i, 2] - truth[i, 2]) for i in range(n)])
    oerr = np.degrees([wrap_angle_rad(odom[i, 2] - truth[i, 2]) for i in range(n)])
    dh = np.diff(herr, prepend=0.0)
    second = np.flatnonzero(closures_before >= 2)
    settled = int(second[0]) if second.size else n
    print(f"  heading error change (deg) by frame kind, before frame {settled} (2nd closure) | after:")
    for kd in ("turn", "forward", "closure", "other"):
        sel = kind == kd
        a, b = sel & (np.arange(n) < settled), sel & (np.arange(n) >= settled)
        print(f"    {kd:8s} n={int(a.sum()):3d} sum {dh[a].sum():+6.2f} |sum| {np.abs(dh[a]).sum():6.2f} | "
              f"n={int(b.sum()):3d} sum {dh[b].sum():+6.2f} |sum| {np.abs(dh[b]).sum():6.2f}")
    # turns by side: a registration that turns short loses heading against the turn (left: -, right: +)
    odom_dh = np.diff(np.degrees([wrap_angle_rad(odom[i, 2] - truth[i, 2]) for i in range(n)]), prepend=0.0)
    turned = np.diff(odom[:, 2], prepend=odom[0, 2])
    sides = []
    for phase, sel in (("before", np.arange(n) < settled), ("after", np.arange(n) >= settled)):
        for side, s in (("left", turned > 0.0), ("right", turned < 0.0)):
            m = (kind == "turn") & sel & s
            sides.append(f"{phase} {side} n={int(m.sum())} {dh[m].sum():+.2f} (odometry {odom_dh[m].sum():+.2f})")
    print("  turns by side, heading error change deg: " + "; ".join(sides))
    ends = sorted({int(i) for i in data["subtask_end"] if int(i) < n})
    err = np.hypot(*(est[ends, :2] - truth[ends, :2]).T)
    # along / across the true direction from start (the truth's start is the odometry's origin)
    th_rot, res_rot = _rigid_fit(est[ends, :2] - est[0, :2], truth[ends, :2] - truth[0, :2], shift=False)
    th_rig, res_rig = _rigid_fit(est[ends, :2], truth[ends, :2], shift=True)
    dist = np.hypot(*(truth[ends, :2] - truth[0, :2]).T)
    print(f"  ends {ends}\n  end error m   {' '.join(f'{e:.3f}' for e in err)}  median {np.median(err):.3f}")
    print(f"  end heading   {' '.join(f'{herr[i]:+.2f}' for i in ends)} deg (odometry "
          f"{' '.join(f'{oerr[i]:+.1f}' for i in ends)}); distance from start {' '.join(f'{d:.1f}' for d in dist)} m")
    if loc.config.wall_axis_gain > 0.0:
        axis = "none" if loc.wall_axis_rad is None else f"{math.degrees(loc.wall_axis_rad):+.2f} deg"
        print(f"  wall axis {axis}, {loc.wall_axis_corrections} frames corrected by it")
    print(f"  rotation about the start ({math.degrees(th_rot):+.2f} deg) leaves median {np.median(res_rot):.3f} m; "
          f"rotation + shift ({math.degrees(th_rig):+.2f} deg) leaves {np.median(res_rig):.3f} m")
    # when the heading error appears: the first frame from which |error| stays above 1 deg for 20 frames
    big = np.abs(herr) > 1.0
    born = next((i for i in range(n) if big[i:i + 20].all()), None)
    at = " ".join(f"{herr[min(i, n - 1)]:+.2f}" for i in (12, 24, 48, 96, 192))
    print(f"  heading error at frames 12/24/48/96/192: {at}"
          f"; |err| > 1 deg for 20 frames from frame {born} ({kind[born] if born is not None else '-'})")
    Path("runs").mkdir(exist_ok=True)
    np.savez_compressed(Path("runs") / f"diag_{path.stem}.npz", est=est, truth=truth, odom=odom,
                        kind=kind.astype(str), closures_before=closures_before, ends=np.asarray(ends))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording", type=Path)
    parser.add_argument("overrides", nargs="*", type=_override)
    args = parser.parse_args()
    return diagnose(args.recording, dict(args.overrides))


if __name__ == "__main__":
    sys.exit(main())
