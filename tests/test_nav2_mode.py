"""The controller's continuous Nav2 mode without ROS: free space from the occupancy grid, the handover decision
and the odom-frame goal. Nav2GoalSender and the controller in nav2 mode: tests/ros/test_ros_nav2_mode.py."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

try:
    import goat_stretch  # noqa: F401
except ImportError:  # not installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ros_ws" / "src" / "goat_stretch"))

from goat_core.agent import DebugState
from goat_core.frames import relative_pose2d
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.matching.base import MatchResult
from goat_core.types import Instance, Pose2D
from goat_ros.nav2_mode import episode_to_odom, handover_instance, instance_goal_pose, occupancy_is_free

# ------------------------------------------------------------------------------------- free space in the grid


def _room_grid() -> OccupancyGrid:
    """A 4 m x 4 m explored room around the origin; a wall along x = 1 m (one cell thick)."""
    grid = OccupancyGrid(OccupancyConfig(resolution_m=0.05, size_m=10.0))
    lo, hi = grid.cell_of(-2.0, -2.0), grid.cell_of(2.0, 2.0)
    grid.explored[lo[0]:hi[0], lo[1]:hi[1]] = 1
    wall = grid.cell_of(1.0, 0.0)[0]
    grid.obstacle[wall, lo[1]:hi[1]] = 1
    grid.recompute_bounds()
    return grid


@pytest.mark.parametrize(("xy", "free"), [
    ((0.0, 0.0), True),  # open floor
    ((1.0, 0.5), False),  # on the wall
    ((0.9, 0.5), False),  # within the robot radius of the wall
    ((0.7, 0.5), True),  # clear of it by more than the radius
    ((1.2, 0.5), True),  # the far side, explored too
    ((3.0, 0.0), False),  # never seen
    ((40.0, 0.0), False),  # outside the grid
])
def test_occupancy_is_free_needs_explored_floor_clear_of_obstacles(xy: tuple[float, float], free: bool) -> None:
    assert occupancy_is_free(_room_grid(), robot_radius_m=0.17)(*xy) is free


def test_occupancy_is_free_counts_collision_marks_and_ignores_later_changes() -> None:
    grid = _room_grid()
    grid.mark_collision(Pose2D(-1.0, 0.0, 0.0), ahead_m=0.3, half_width_m=0.1)  # a bump 0.3 m ahead of (-1, 0)
    is_free = occupancy_is_free(grid, robot_radius_m=0.17)
    assert not is_free(-0.7, 0.0) and is_free(-1.2, 0.0)
    grid.obstacle.fill(1)  # the lookup holds a copy taken when it was made
    assert is_free(-1.2, 0.0)


def test_the_approach_pose_is_free_in_the_grid() -> None:
    grid = _room_grid()
    # A chair just behind the wall's gap-free side: the straight approach from the robot ends on the wall.
    chair = Instance(1, "chair", np.array([[1.5, -0.2, 0.0], [1.7, 0.2, 0.8]]))
    is_free = occupancy_is_free(grid, robot_radius_m=0.17)
    pose = instance_goal_pose(chair, Pose2D(-1.0, 0.0, 0.0), standoff_m=0.4, is_free=is_free)
    assert is_free(pose.x_m, pose.y_m) and pose.x_m > 1.0  # went round to the chair's side of the wall
    centre = chair.centroid_m[:2]
    assert math.hypot(*(centre - pose.xy())) == pytest.approx(0.4 + 0.5 * math.hypot(0.2, 0.4))
    assert pose.yaw_rad == pytest.approx(math.atan2(centre[1] - pose.y_m, centre[0] - pose.x_m))


# ---------------------------------------------------------------------------------------- the handover decision

SOFA = Instance(7, "sofa", np.array([[2.0, 0.0, 0.0], [3.0, 1.0, 0.8]]))
CONFIDENT = MatchResult(7, 0.9, True)


def _state(mode: str = "goto", target_xy: Optional[tuple[float, float]] = (1.0, 0.5), instance_id: Optional[int] = 7,
           match: MatchResult = CONFIDENT) -> DebugState:
    xy = None if target_xy is None else np.array(target_xy)
    return DebugState(mode, xy, np.zeros((2, 2)), instance_id, match)


@pytest.mark.parametrize(("state", "ready", "fell_back", "expected"), [
    (_state(), True, False, SOFA),
    (_state(), False, False, None),  # Nav2 not active yet, or still busy
    (_state(), True, True, None),  # Nav2 already failed this subtask
    (_state(mode="explore", instance_id=None), True, False, None),
    (_state(mode="scan", target_xy=None, instance_id=None), True, False, None),
    (_state(mode="inspect"), True, False, None),  # looking closer at a look-alike of an image goal
    (_state(target_xy=None), True, False, None),  # within reach, turning to face it: no path left
    (_state(match=MatchResult(7, 0.3, False)), True, False, None),  # the best guess once explored
    (_state(match=MatchResult(8, 0.9, True)), True, False, None),  # heading for another instance than the match
    (_state(instance_id=9, match=MatchResult(9, 0.9, True)), True, False, None),  # not in memory
])
def test_handover_only_for_the_approach_to_a_confident_match(state: DebugState, ready: bool, fell_back: bool,
                                                             expected: Optional[Instance]) -> None:
    assert handover_instance(state, {7: SOFA}, nav2_ready=ready, fell_back=fell_back) is expected


@pytest.mark.parametrize("anchor", [Pose2D(0.0, 0.0, 0.0), Pose2D(1.5, -2.0, 0.7), Pose2D(-3.0, 0.4, -2.9)])
def test_episode_to_odom_inverts_the_episode_frame(anchor: Pose2D) -> None:
    episode = Pose2D(0.8, -0.3, 2.5)
    odom = episode_to_odom(episode, anchor)
    back = relative_pose2d(odom, anchor)
    assert (back.x_m, back.y_m, back.yaw_rad) == pytest.approx((episode.x_m, episode.y_m, episode.yaw_rad))


# ----------------------------------------------------- AMCL's initial pose from localisation (goat_ros.nav2_start)


def test_the_map_pose_composes_the_localisers_frame_odom_and_base_link() -> None:
    from goat_ros.nav2_start import MapPoseTracker

    tracker = MapPoseTracker()
    assert tracker.latest() is None
    tracker.on_transform("odom", "base_link", Pose2D(1.0, 0.0, math.pi / 2))
    tracker.on_transform("base_link", "camera_link", Pose2D(0.1, 0.0, 0.0))  # not localisation: ignored
    assert tracker.latest() is None  # odometry alone is no map pose
    tracker.on_transform("nav2_map", "odom", Pose2D(2.0, 3.0, math.pi / 2))
    frame, pose = tracker.latest()  # type: ignore[misc]
    assert frame == "nav2_map"  # the localiser's own frame name, whatever AMCL's global_frame_id is
    assert (pose.x_m, pose.y_m, pose.yaw_rad) == pytest.approx((2.0, 4.0, math.pi))
    tracker.on_amcl_pose("nav2_map", Pose2D(5.0, 6.0, 0.25))  # AMCL's own estimate wins over TF
    assert tracker.latest() == ("nav2_map", Pose2D(5.0, 6.0, 0.25))


def test_a_direct_map_to_base_link_transform_is_a_map_pose() -> None:
    from goat_ros.nav2_start import MapPoseTracker

    tracker = MapPoseTracker()
    tracker.on_transform("map", "base_link", Pose2D(-1.0, 0.5, 0.1))
    assert tracker.latest() == ("map", Pose2D(-1.0, 0.5, 0.1))


def test_waiting_for_a_map_pose_gets_one_published_meanwhile_and_refuses_naming_the_parameter() -> None:
    import threading

    from goat_core.errors import GoatError
    from goat_ros.nav2_start import MapPoseTracker

    tracker = MapPoseTracker()
    threading.Timer(0.1, tracker.on_amcl_pose, ("map", Pose2D(1.0, 2.0, 0.0))).start()
    assert tracker.wait(5.0) == ("map", Pose2D(1.0, 2.0, 0.0))
    with pytest.raises(GoatError, match=r"within 0 s .*/amcl_pose.*controller\.nav2_initial_pose"):
        MapPoseTracker().wait(0.05)
