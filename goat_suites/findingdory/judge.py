"""FindingDory's task verifier (``goat_suites.findingdory.generator`` step 3) on the world as it is after the
experience: distance, heading and coverage thresholds per target, high-level checks of logged frames, and the
geodesic path lengths of SPL."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import permutations
from typing import Optional

import numpy as np

from goat_core.errors import ConfigError, UnreachableGoalError
from goat_core.geometry import wrap_angle_rad
from goat_core.types import Pose2D
from goat_suites.common.success import SUCCESS_METRICS
from goat_suites.findingdory.experience import (
    ExperienceFrame,
    ExperienceLog,
)
from goat_suites.findingdory.tasks import (
    FindingDoryTask,
    Subgoal,
    room_of_target,
    room_target_id,
)
from sim_bridge.embedded.geodesic import in_sight
from sim_bridge.embedded.home import ObjectSpec
from sim_bridge.embedded.sim import EmbeddedSim


@dataclass(frozen=True)
class JudgeConfig:
    """Thresholds of the task verifier."""

    success_distance_m: float = 2.0  # objects: FindingDory robot_at_object, pddl_domain_fp.yaml l.77-82
    receptacle_distance_m: float = 0.1  # receptacles: FindingDory robot_at_receptacle, l.93-100
    success_metric: str = "geodesic_viewpoint"  # or "euclidean_object": straight line to the object centre
    min_coverage: float = 0.001  # FindingDory semantic_cov_thresh
    object_angle_rad: float = math.pi / 4  # FindingDory robot_at_object angle_thresh
    receptacle_angle_rad: float = math.pi / 2  # FindingDory robot_at_receptacle angle_thresh
    view_point_radius_m: float = 1.0
    view_point_spacing_m: float = 0.25

    def __post_init__(self) -> None:
        if self.success_metric not in SUCCESS_METRICS:
            raise ConfigError(f"success_metric must be one of {SUCCESS_METRICS}, got {self.success_metric!r}")
        for name in ("success_distance_m", "receptacle_distance_m"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ConfigError(f"{name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class Verdict:
    """The verifier's answer for one pose and one goal."""

    success: bool  # every threshold
    dtg: bool  # distance (and heading) only: coverage threshold 0
    sc: bool  # coverage (and heading) only: distance threshold lifted
    target_id: Optional[str] = None  # a target that passed every threshold


NO_VERDICT = Verdict(False, False, False)


@dataclass
class _Goal:
    """Where a target is measured to: a receptacle's view points, a movable object's position snapped to the floor
    or a room's cells; their distance field; its centre."""

    points_xy_m: np.ndarray  # (K, 2) world
    field_m: np.ndarray  # geodesic distance to the nearest point, navgrid cells
    centre_xy_m: np.ndarray
    spec: Optional[ObjectSpec] = None  # None for rooms


@dataclass
class TaskJudge:
    """FindingDory's task verifier on the world as it is after the experience (see the module docstring)."""

    sim: EmbeddedSim
    start_world: Pose2D
    config: JudgeConfig = field(default_factory=JudgeConfig)
    _goals: dict[str, _Goal] = field(default_factory=dict, init=False, repr=False)
    _fields: dict[tuple[float, float], np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _frame_cache: dict[tuple[int, str], Verdict] = field(default_factory=dict, init=False, repr=False)

    def world_pose(self, episode_pose: Pose2D) -> Pose2D:
        """Episode frame (origin: the experience start) -> world frame."""
        s = self.start_world
        c, sn = math.cos(s.yaw_rad), math.sin(s.yaw_rad)
        return Pose2D(s.x_m + c * episode_pose.x_m - sn * episode_pose.y_m,
                      s.y_m + sn * episode_pose.x_m + c * episode_pose.y_m,
                      wrap_angle_rad(s.yaw_rad + episode_pose.yaw_rad))

    def goal(self, target_id: str) -> _Goal:
        """The reachable region of a target (cached; object positions are those after the experience)."""
        cached = self._goals.get(target_id)
        if cached is not None:
            return cached
        grid = self.sim.navgrid
        room_id = room_of_target(target_id)
        if room_id is not None:
            room = next(r for r in self.sim.home.rooms if r.room_id == room_id)
            cells = np.argwhere(grid.navigable)
            xy = grid.origin_xy_m + (cells[:, ::-1] + 0.5) * grid.resolution_m
            points = xy[[room.contains(p) for p in xy]]
            centre = (np.asarray(room.min_xy_m) + np.asarray(room.max_xy_m)) / 2.0
            spec = None
        else:
            spec = next(o for o in self.sim.current_objects() if o.object_id == target_id)
            centre = np.asarray(spec.position_m[:2])
            if spec.is_receptacle:
                points = grid.view_points(spec, self.config.view_point_radius_m, self.config.view_point_spacing_m)
            else:  # a movable object: its position snapped to the navigable floor (as FindingDory measures it)
                points = grid.cell_to_world(*grid.snap(centre))[None]
        if points.shape[0] == 0:
            raise UnreachableGoalError(f"target {target_id} has no navigable point to be reached from")
        goal = _Goal(points, grid.distance_field(points), centre, spec)
        self._goals[target_id] = goal
        return goal

    def distance_m(self, target_id: str, world_xy: np.ndarray) -> float:
        """Distance from a base position to a target in the configured success metric (inf off the grid)."""
        goal = self.goal(target_id)
        if self.config.success_metric == "euclidean_object":
            return float(np.linalg.norm(goal.centre_xy_m - world_xy[:2]))
        grid = self.sim.navgrid
        row, col = grid.world_to_cell(world_xy)
        if not grid.in_grid(row, col):
            return math.inf
        if goal.spec is not None:
            # In sight of an object's goal point the geodesic is the straight segment: exact, where the 5 cm field
            # is off by up to ~8 cm (both ends quantised to a cell), too coarse for the 0.1 m receptacle threshold
            # (sim_bridge.embedded.geodesic). Rooms (every cell of the room) keep the field.
            xy = np.asarray(world_xy, dtype=np.float64).reshape(-1)[:2]
            seen = in_sight(grid, xy, goal.points_xy_m)
            if seen.any():
                return float(np.min(np.linalg.norm(goal.points_xy_m[seen] - xy[None, :], axis=1)))
        return float(goal.field_m[row, col])

    def check(self, subgoal: Subgoal, world: Pose2D, tilt_rad: float,
              segmentation: Optional[np.ndarray] = None) -> Verdict:
        """Is the robot at ``world`` (head tilt ``tilt_rad``, seeing ``segmentation``) at the subgoal?"""
        if subgoal.kind == "room":
            room = self.sim.home.room_at((world.x_m, world.y_m))
            inside = room is not None and room_target_id(room.room_id) in subgoal.valid_ids
            return Verdict(inside, inside, inside, room_target_id(room.room_id) if inside and room else None)
        if segmentation is None:
            segmentation = self.sim.render_view(world.xy(), world.yaw_rad, tilt_rad).segmentation
        dtg = sc = False
        for target_id in sorted(subgoal.valid_ids):
            goal = self.goal(target_id)
            assert goal.spec is not None
            limit = self.config.receptacle_angle_rad if goal.spec.is_receptacle else self.config.object_angle_rad
            bearing = math.atan2(goal.centre_xy_m[1] - world.y_m, goal.centre_xy_m[0] - world.x_m)
            if abs(wrap_angle_rad(bearing - world.yaw_rad)) > limit:
                continue
            threshold_m = (self.config.receptacle_distance_m if goal.spec.is_receptacle
                           else self.config.success_distance_m)
            near = self.distance_m(target_id, world.xy()) <= threshold_m
            seen = float(np.mean(segmentation == goal.spec.instance_id)) >= self.config.min_coverage
            if near and seen:
                return Verdict(True, True, True, target_id)
            dtg, sc = dtg or near, sc or seen
        return Verdict(False, dtg, sc)

    def check_frame(self, subgoal: Subgoal, frame: ExperienceFrame) -> Verdict:
        """The high-level check: teleport to the frame's pose in today's world and verify."""
        key = (frame.index, ",".join(sorted(subgoal.valid_ids)))
        if key not in self._frame_cache:
            self._frame_cache[key] = self.check(subgoal, self.world_pose(frame.pose), frame.camera_tilt_rad)
        return self._frame_cache[key]

    def solvable(self, subgoal: Subgoal, log: ExperienceLog, max_frames: int = 4) -> bool:
        """Whether some frame of the log passes the full check for the subgoal (an oracle answer exists).

        Rooms: any frame in the room. Objects: the frames that show a target since its last move, those of an
        interaction at it first (where the oracle stood on a receptacle's view point), then the largest views,
        ``max_frames`` of them per target.
        """
        for target_id in sorted(subgoal.valid_ids):
            room_id = room_of_target(target_id)
            if room_id is not None:
                if any(f.room_id == room_id for f in log.frames):
                    return True
                continue
            moves = [f.index for f, i in log.events() if i.object_id == target_id]
            frames = [f for f in log.frames[(moves[-1] if moves else 0):] if f.coverage_of(target_id) > 0.0]
            frames.sort(key=lambda f: (not _interacted_at(f, target_id), -f.coverage_of(target_id), f.index))
            if any(self.check_frame(subgoal, f).success for f in frames[:max_frames]):
                return True
        return False

    # ------------------------------------------------------------------------------------------ path lengths
    def _field_from(self, world_xy: np.ndarray) -> np.ndarray:
        key = (round(float(world_xy[0]), 3), round(float(world_xy[1]), 3))
        if key not in self._fields:
            self._fields[key] = self.sim.navgrid.distance_field(np.asarray(world_xy, dtype=np.float64)[None])
        return self._fields[key]

    def geodesic_m(self, a_world_xy: np.ndarray, b_world_xy: np.ndarray) -> float:
        row, col = self.sim.navgrid.snap(b_world_xy)
        return float(self._field_from(np.asarray(a_world_xy))[row, col])

    def _leg(self, from_xy: np.ndarray, subgoal: Subgoal, then: Optional[Subgoal]) -> tuple[float, np.ndarray]:
        """Geodesic length to a reach point of the subgoal, and that point.

        The point minimises the way there plus the way on to the next subgoal ``then`` (one step of look-ahead
        through the next subgoal's distance field), or just the way there for the last subgoal.
        """
        points = np.concatenate([self.goal(t).points_xy_m for t in sorted(subgoal.valid_ids)])
        cells = self.sim.navgrid.world_to_cells(points)
        dist = self._field_from(from_xy)[cells[:, 0], cells[:, 1]]
        onward = np.zeros_like(dist)
        if then is not None:
            field_next = np.min([self.goal(t).field_m for t in sorted(then.valid_ids)], axis=0)
            onward = field_next[cells[:, 0], cells[:, 1]]
        k = int(np.argmin(dist + onward))
        return float(dist[k]), points[k]

    def shortest_path_m(self, task: FindingDoryTask, from_world_xy: np.ndarray) -> float:
        """Geodesic length from the start through every goal (FindingDory SPL's l).

        Single goal: to the nearest view point (room: navigable cell) of any valid target. Ordered goals: leg
        by leg, each leg ending at the reach point that is best for this leg and the next together. Unordered:
        the shortest such chain over every visiting order. Exact for one and two goals; for more, a close upper
        bound of the multi-set shortest path.
        """
        orders = [tuple(range(len(task.subgoals)))]
        if task.revisit == "unordered":
            orders = list(permutations(range(len(task.subgoals))))
        best = math.inf
        for order in orders:
            here, total = np.asarray(from_world_xy, dtype=np.float64), 0.0
            for step, k in enumerate(order):
                then = task.subgoals[order[step + 1]] if step + 1 < len(order) else None
                length, here = self._leg(here, task.subgoals[k], then)
                total += length
                if total >= best:
                    break
            best = min(best, total)
        return best


def _interacted_at(frame: ExperienceFrame, receptacle_id: str) -> bool:
    """The oracle placed something on (or picked something from) ``receptacle_id`` in this frame."""
    return frame.event is not None and frame.event.receptacle_id == receptacle_id
