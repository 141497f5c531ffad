"""The wall direction of a scan modulo a quarter turn, and the localiser's heading reference built on it."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import pytest
from test_localiser import _GivenScans

from goat_core.errors import ConfigError
from goat_core.geometry import wrap_angle_rad
from goat_core.localisation.localiser import LocaliserConfig
from goat_core.localisation.wall_axes import quarter_wrap_rad, wall_axis
from goat_core.types import CameraIntrinsics, Observation, Pose2D


def _side(a: tuple[float, float], b: tuple[float, float], step_m: float = 0.05) -> np.ndarray:
    t = np.arange(0.0, 1.0, step_m / math.dist(a, b))[:, None]
    return np.asarray(a) + t * (np.asarray(b) - np.asarray(a))


def _rotated(points: np.ndarray, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return points @ np.array([[c, s], [-s, c]])


def _room(step_m: float = 0.05) -> np.ndarray:
    """A 5.2 x 4 m room's walls and the sides of some furniture, on the room's axes, points ``step_m`` apart."""
    corners = [(-2.3, -1.6), (2.9, -1.6), (2.9, 2.4), (-2.3, 2.4)]
    walls = [_side(corners[i], corners[(i + 1) % 4], step_m) for i in range(4)]
    pieces = [((1.2, 1.0), (1.8, 1.0)), ((1.8, 1.0), (1.8, 1.5)), ((-1.5, -0.5), (-1.5, 0.3)),
              ((-1.5, 0.3), (-0.9, 0.3)), ((0.4, -1.0), (1.0, -1.0)), ((-0.8, 1.4), (-0.8, 1.9))]
    furniture = [_side(a, b, step_m) for a, b in pieces]
    return np.vstack(walls + furniture)


@pytest.mark.parametrize("deg", [0.0, 10.0, 37.0, 50.0, -80.0])
def test_the_walls_direction_is_found_modulo_a_quarter_turn(deg: float) -> None:
    rng = np.random.default_rng(4)
    noisy = _rotated(_room(), deg) + rng.normal(0.0, 0.01, (_room().shape[0], 2))  # 1 cm of depth noise
    axis = wall_axis(noisy)
    assert axis is not None and axis.coherence > 0.8
    assert abs(math.degrees(quarter_wrap_rad(axis.angle_rad - math.radians(deg)))) < 0.3


def test_walls_on_three_directions_are_not_coherent() -> None:
    """A hexagonal room (walls every 60 deg) has no pair of perpendicular axes: its coherence is low, so the
    localiser's gate (0.5) keeps it out."""
    corners = [(3.0 * math.cos(math.radians(60 * i)), 3.0 * math.sin(math.radians(60 * i))) for i in range(6)]
    hexagon = np.vstack([_side(corners[i], corners[(i + 1) % 6]) for i in range(6)])
    axis = wall_axis(hexagon)
    assert axis is not None and axis.coherence < 0.2
    assert wall_axis(hexagon[:10]) is None  # too few points


def test_bad_wall_axis_settings_name_the_value() -> None:
    with pytest.raises(ConfigError, match="1.5"):
        LocaliserConfig(wall_axis_gain=1.5)
    with pytest.raises(ConfigError, match="wall_axis_max_residual_rad"):
        LocaliserConfig(wall_axis_max_residual_rad=1.0)
    with pytest.raises(ConfigError, match="wall_axis_set_min_points"):
        LocaliserConfig(wall_axis_set_min_points=0)
    with pytest.raises(ConfigError, match="wall_axis_agree_rad"):
        LocaliserConfig(wall_axis_agree_rad=-0.1)


@pytest.mark.parametrize(("gain", "worst_deg"), [(0.0, None), (0.3, 1.5)])
def test_the_walls_hold_the_heading_where_the_odometry_drifts(gain: float, worst_deg: float) -> None:
    """A room whose axes lie 20 deg off the start heading, seen through the head camera's 42 deg. The first scan
    sets the home's axis; the robot looks around (twelve 30 deg turns on exact odometry: the spin closes), then
    turns back and forth on the spot 16 times while the odometry gains 0.4 deg a turn that no turn scale
    explains, and the calibrated odometry carries the turns (register_turns_closures 1). Without the walls the
    heading drifts by the odometry's 6.4 deg; with them it stays within about (1 - gain) / gain of the 0.4 deg a
    frame."""
    room = _rotated(_room(0.01), 20.0)
    k = CameraIntrinsics(360, 640, 468.9, 468.9, 179.5, 320.0)  # the Stretch's D435 (portrait)
    half_deg = math.degrees(math.atan2(k.cx, k.fx))

    def seen_from(yaw_deg: float) -> np.ndarray:
        base = _rotated(room, -yaw_deg)
        return base[np.abs(np.degrees(np.arctan2(base[:, 1], base[:, 0]))) <= half_deg]

    truth = [30.0 * i for i in range(13)] + [360.0 + (30.0 if i % 2 == 0 else 0.0) for i in range(16)]
    odom = truth[:13] + [t + 0.4 * (i + 1) for i, t in enumerate(truth[13:])]
    config = LocaliserConfig(wall_axis_gain=gain, register_turns_closures=1)
    localiser = _GivenScans(config, [seen_from(t) for t in truth])
    errors = []
    for t, o in zip(truth, odom, strict=True):
        obs = Observation(rgb=np.zeros((4, 4, 3), np.uint8), depth_m=np.zeros((4, 4), np.float32),
                          pose=Pose2D(0.0, 0.0, wrap_angle_rad(math.radians(o))), camera_tilt_rad=0.0,
                          camera_height_m=1.3, intrinsics=k)
        pose = localiser.localise(obs).pose
        errors.append(abs(math.degrees(wrap_angle_rad(pose.yaw_rad - math.radians(t)))))
    assert localiser.closures >= 1
    assert (localiser.wall_axis_rad is not None) is (gain > 0.0)
    if worst_deg is None:
        assert errors[-1] > 5.0
    else:
        assert localiser.wall_axis_corrections >= 12
        assert max(errors[13:]) < worst_deg


def _axes_set_by(config: LocaliserConfig, scans: list[np.ndarray]) -> list[Optional[float]]:
    """The home's axis (deg, None: not set) after each of ``scans``, all seen from the same odometry pose."""
    localiser = _GivenScans(config, list(scans))  # it takes the scans off its list
    k = CameraIntrinsics(4, 4, 2.0, 2.0, 2.0, 2.0)
    axes: list[Optional[float]] = []
    for _ in range(len(scans)):
        localiser.localise(Observation(rgb=np.zeros((4, 4, 3), np.uint8), depth_m=np.zeros((4, 4), np.float32),
                                       pose=Pose2D(0.0, 0.0, 0.0), camera_tilt_rad=0.0, camera_height_m=1.3,
                                       intrinsics=k))
        axes.append(None if localiser.wall_axis_rad is None else math.degrees(localiser.wall_axis_rad))
    return axes


@pytest.mark.parametrize(("set_min_points", "agree_deg", "misled"),
                         [(40, 0.0, True), (100, 0.0, False), (40, 1.5, False)])
def test_a_scan_of_few_points_can_set_the_homes_axis_wrong(set_min_points: int, agree_deg: float,
                                                           misled: bool) -> None:
    """The first scan sees two short perpendicular edges 10 deg off the room's axes (a piece of clutter: coherent,
    but 88 points), the next ones the room. Set from the first coherent scan of 40 points or more, the axis is 10 deg
    off (replaying 11000-10 (stop 47) a 43-point scan did this); asked for 100 points, or for two scans that agree,
    the axis is the room's."""
    clutter = _rotated(np.vstack([_side((1.0, -0.5), (1.0, 0.6), 0.025), _side((1.0, 0.6), (2.1, 0.6), 0.025)]), 10.0)
    room = _room(0.02)
    config = LocaliserConfig(wall_axis_set_min_points=set_min_points, wall_axis_agree_rad=math.radians(agree_deg))
    axis_deg = _axes_set_by(config, [clutter, room, room])[-1]
    assert axis_deg is not None
    assert (abs(axis_deg) > 5.0) is misled


def test_the_earlier_of_two_scans_that_agree_sets_the_axis() -> None:
    """Asked for agreement within 1.5 deg: the first scan's axis is a candidate, and the second, 5 deg off it,
    replaces it (neither sets the axis); the third, 1 deg off the second, agrees, and the second's axis is set (the
    earlier of the two carries less of the heading error)."""
    room = _room(0.02)
    config = LocaliserConfig(wall_axis_agree_rad=math.radians(1.5))
    axes = _axes_set_by(config, [_rotated(room, 5.0), room, _rotated(room, 1.0)])
    assert axes[:2] == [None, None]
    assert axes[2] is not None and abs(axes[2]) < 0.5
