"""The FindingDory experience (``goat_suites.findingdory.generator`` step 1): a scripted oracle with privileged
access to the navigable grid walks the home, picks small objects up and places them on other receptacles; a
recorder turns every observation into a frame of the log (and, when asked, of the video)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable, Optional, Sequence

import numpy as np

from goat_core.control.planner import descend, line_of_sight
from goat_core.control.policy import free_heading, turn_toward
from goat_core.errors import SceneGenerationError, UnreachableGoalError
from goat_core.geometry import wrap_angle_rad
from goat_core.types import DiscreteAction, Observation, Pose2D
from goat_suites.findingdory.experience import (
    ExperienceFrame,
    ExperienceLog,
    Interaction,
    ObjectInfo,
    SeenObject,
)
from goat_suites.findingdory.experience_video import (
    ExperienceVideo,
    InstanceAnnotation,
    Proprioception,
    VideoEncoding,
    VideoFrame,
    encode_frame,
)
from goat_suites.findingdory.generator_config import FindingDoryGenConfig
from sim_bridge.embedded.home import ObjectSpec
from sim_bridge.embedded.sim import MOVE_INCREMENT_M, EmbeddedSim


@dataclass(frozen=True)
class MoveRecord:
    """Ground truth of one pick-and-place of the experience."""

    object_id: str
    source_id: str  # receptacle it was picked from
    dest_id: str  # receptacle it was placed on
    pick_frame: int  # last frame showing it on the source
    place_frame: int  # first frame showing it on the destination
    neighbours: frozenset[str]  # other objects standing on the source when it was picked


@dataclass(frozen=True)
class Experience:
    log: ExperienceLog  # the structured log: for generating and scoring tasks and for the oracle selector
    start_world: Pose2D  # where the experience began; the episode frame's origin, and the interaction start
    moves: tuple[MoveRecord, ...]
    video: Optional[ExperienceVideo] = None  # what the robot recorded (when asked for): frames and proprioception
    num_actions: int = 0  # discrete actions the oracle took (of the episode's budget)


class _Recorder:
    """Turns observations into experience frames and keeps the clock."""

    def __init__(self, sim: EmbeddedSim, clock_s: float, config: FindingDoryGenConfig,
                 on_frame: Optional[Callable[[Observation], None]], video: Optional[VideoEncoding] = None) -> None:
        self.sim = sim
        self.clock_s = clock_s
        self.config = config
        self.on_frame = on_frame
        self.frames: list[ExperienceFrame] = []
        self.objects: dict[str, ObjectInfo] = {}
        self.video = video
        self.video_frames: list[VideoFrame] = []
        self.annotation: dict[int, InstanceAnnotation] = {}  # every instance a recorded segmentation shows
        self.holding = False  # the gripper holds an object (the oracle's grasps always succeed)
        self.actions = 0  # discrete actions taken (teleports included)

    def record(self, obs: Observation, event: Optional[Interaction] = None) -> ExperienceFrame:
        seg = obs.segmentation
        if seg is None:
            raise SceneGenerationError("the experience needs ground-truth segmentation in every observation")
        counts = np.bincount(seg.ravel() + 1)[1:]  # background -1 lands in bin 0
        seen = []
        for instance_id in np.flatnonzero(counts):
            coverage = float(counts[instance_id]) / seg.size
            if coverage < self.config.min_coverage:
                continue
            spec = self.sim.object_by_instance_id(int(instance_id))
            self.objects.setdefault(spec.object_id, ObjectInfo(spec.object_id, spec.category, spec.colour,
                                                               spec.material, spec.is_receptacle))
            seen.append(SeenObject(spec.object_id, round(coverage, 6), spec.receptacle_id))
        pose = self.sim.base_pose_world
        room = self.sim.home.room_at((pose.x_m, pose.y_m))
        frame = ExperienceFrame(index=len(self.frames), time_s=self.clock_s, pose=obs.pose,
                                camera_tilt_rad=obs.camera_tilt_rad, room_id=None if room is None else room.room_id,
                                seen=tuple(seen), event=event)
        self.frames.append(frame)
        if self.video is not None:
            self._record_video(obs, counts, frame)
        if self.on_frame is not None:
            self.on_frame(obs)
        return frame

    def _record_video(self, obs: Observation, counts: np.ndarray, frame: ExperienceFrame) -> None:
        assert self.video is not None
        if self.video.with_segmentation:
            for instance_id in np.flatnonzero(counts).tolist():
                spec = self.sim.object_by_instance_id(int(instance_id))
                self.annotation.setdefault(int(instance_id), InstanceAnnotation(spec.category, spec.colour,
                                                                                spec.material))
        proprio = Proprioception(gripper_closed=self.holding, holding=self.holding)
        self.video_frames.append(encode_frame(obs, frame.index, frame.time_s, proprio, self.video))

    def step(self, action: DiscreteAction) -> Observation:
        self._count_action()
        obs = self.sim.step(action)
        self.clock_s += self.config.seconds_per_action
        self.record(obs)
        return obs

    def _count_action(self) -> None:
        if self.actions >= self.config.max_experience_actions:
            raise SceneGenerationError(f"home {self.sim.home.seed}: the oracle's experience needs more than its day "
                                       f"of {self.config.max_experience_actions} actions (FindingDory's oracle times "
                                       "out and its episode is dropped)")
        self.actions += 1

    def teleport(self, xy: np.ndarray, yaw_rad: float) -> Observation:
        """Put the robot at a pose (one action on the clock and in the count, as FindingDory's teleport step)."""
        self._count_action()
        obs = self.sim.teleport(xy, yaw_rad)
        self.clock_s += self.config.seconds_per_action
        self.record(obs)
        return obs

    def wait(self, duration_s: float, event: Optional[Interaction] = None) -> ExperienceFrame:
        """Stand still for ``duration_s`` (a pick or a place) and log the view after it."""
        self.clock_s += duration_s
        return self.record(self.sim.observe(), event)

    def mark_last(self, event: Interaction) -> int:
        """Log ``event`` on the latest frame (adding a frame first if it already holds one)."""
        if self.frames[-1].event is not None:
            self.wait(self.config.seconds_per_action)
        self.frames[-1] = replace(self.frames[-1], event=event)
        return self.frames[-1].index


class _Oracle:
    """The scripted experience walker: privileged geodesic paths on the simulator's navigable grid."""

    def __init__(self, sim: EmbeddedSim, recorder: _Recorder, config: FindingDoryGenConfig) -> None:
        self.sim = sim
        self.rec = recorder
        self.config = config

    def view_points_by_distance(self, obj: ObjectSpec) -> list[np.ndarray]:
        """Navigable view points of ``obj``, nearest (geodesic from the robot) first; empty if none."""
        grid = self.sim.navgrid
        try:
            points = grid.view_points(obj, self.config.view_point_radius_m, self.config.view_point_spacing_m)
        except UnreachableGoalError:
            return []
        field_m = grid.distance_field(self.sim.base_pose_world.xy()[None])
        cells = grid.world_to_cells(points)
        dist = field_m[cells[:, 0], cells[:, 1]]
        order = [int(k) for k in np.argsort(dist, kind="stable") if np.isfinite(dist[k])]
        return [points[k] for k in order]

    def walk(self, goal_xy: np.ndarray) -> bool:
        """Follow the geodesic path to ``goal_xy`` by discrete actions; False if it is not reached in time.

        Without sliding a forward step into an obstacle stops there, and a walker that keeps facing the same
        waypoint keeps hitting it (the walk used to spend its whole action budget against a wall corner). So a
        forward step is taken only when the whole step stays navigable; otherwise the walker commits to the
        nearest heading whose step is clear (``free_heading``), turns to it and steps, then faces the path again.
        """
        grid = self.sim.navgrid
        field_m = grid.distance_field(np.asarray(goal_xy, dtype=np.float64)[None])
        turn = self.sim.config.action_sizes.turn_rad
        commit: Optional[float] = None  # a clear heading to step along before facing the path again
        for _ in range(self.config.max_walk_actions):
            pose = self.sim.base_pose_world
            if float(np.linalg.norm(pose.xy() - goal_xy)) <= self.config.arrive_radius_m:
                return True
            if commit is None:
                waypoint = self._waypoint(field_m, pose.xy(), goal_xy)
                bearing = math.atan2(waypoint[1] - pose.y_m, waypoint[0] - pose.x_m)
                action = turn_toward(wrap_angle_rad(bearing - pose.yaw_rad), 0.5 * turn)
                if action is None and not self.step_is_clear(pose.xy(), pose.yaw_rad):
                    commit = free_heading(pose, bearing, turn, partial(self.step_is_clear, pose.xy()))
                    if commit is None:
                        return False  # boxed in: no heading has a clear step
            if commit is not None:
                action = turn_toward(wrap_angle_rad(commit - pose.yaw_rad), 0.5 * turn)
                if action is None:
                    commit = None  # facing the clear heading: step along it
            self.rec.step(DiscreteAction.MOVE_FORWARD if action is None else action)
        return False

    def step_is_clear(self, xy: np.ndarray, yaw_rad: float) -> bool:
        """Whether a whole forward step along ``yaw_rad`` from ``xy`` stays on navigable cells (checked in the
        simulator's increments), so that it cannot end against an obstacle."""
        step_m = self.sim.config.action_sizes.forward_m
        count = max(1, math.ceil(step_m / MOVE_INCREMENT_M))
        direction = np.array([math.cos(yaw_rad), math.sin(yaw_rad)])
        return all(self.sim.navgrid.is_navigable(xy + direction * (step_m * k / count)) for k in range(1, count + 1))

    def stand_on(self, point: np.ndarray) -> None:
        """Step onto ``point`` exactly, as FindingDory's oracle teleports onto the exact view point it places from
        (the path follower only comes close: ``oracle_agent.py`` l.257-262); one action on the clock."""
        pose = self.sim.base_pose_world
        if float(np.linalg.norm(pose.xy() - point)) > 1e-9:
            self.rec.teleport(point, pose.yaw_rad)

    def _waypoint(self, field_m: np.ndarray, xy: np.ndarray, goal_xy: np.ndarray) -> np.ndarray:
        """The farthest point of the descent path within the lookahead that is in a straight navigable line."""
        grid = self.sim.navgrid
        robot = grid.world_to_cell(xy)
        if not (grid.in_grid(*robot) and np.isfinite(field_m[robot])):
            robot = grid.snap(xy)
        path = descend(field_m, robot)[::-1]  # robot cell first, goal cell last
        if path.shape[0] < 2:
            return np.asarray(goal_xy, dtype=np.float64)
        res = grid.resolution_m
        reach = int(self.config.lookahead_m / res)
        start = np.array(robot, dtype=np.float64) + 0.5
        for k in range(min(reach, path.shape[0] - 1), 0, -1):
            if line_of_sight(grid.navigable, start, path[k].astype(np.float64) + 0.5):
                if k == path.shape[0] - 1:
                    return np.asarray(goal_xy, dtype=np.float64)
                return grid.cell_to_world(int(path[k, 0]), int(path[k, 1]))
        return grid.cell_to_world(int(path[1, 0]), int(path[1, 1]))

    def face(self, target_xy: Sequence[float] | np.ndarray) -> None:
        """Turn in place until the target is within half a turn step of the heading."""
        turn = self.sim.config.action_sizes.turn_rad
        for _ in range(int(math.ceil(math.pi / turn)) + 1):
            pose = self.sim.base_pose_world
            bearing = math.atan2(float(target_xy[1]) - pose.y_m, float(target_xy[0]) - pose.x_m)
            action = turn_toward(wrap_angle_rad(bearing - pose.yaw_rad), 0.5 * turn)
            if action is None:
                return
            self.rec.step(action)

    def sees_surface(self, xy: np.ndarray, spot: np.ndarray, receptacle: ObjectSpec) -> bool:
        """Whether the head camera at ``xy`` has a clear line of sight to the receptacle's top under ``spot``."""
        eye = np.array([xy[0], xy[1], self.sim.config.camera_height_m])
        target = np.array([spot[0], spot[1], receptacle.bbox_max_m[2]])
        distance, hit = self.sim.renderer.cast_ray(eye.tolist(), (target - eye).tolist())  # in units of target - eye
        return hit == receptacle.instance_id and distance >= 0.95

    def go_and_see(self, obj: ObjectSpec) -> bool:
        """Walk to a view point of ``obj`` and face it; True once the object is in view there."""
        for point in self.view_points_by_distance(obj)[: self.config.view_point_tries]:
            if not self.walk(point):
                continue
            self.face(obj.position_m[:2])
            if self.rec.frames[-1].coverage_of(obj.object_id) >= self.config.min_coverage:
                return True
        return False


def _free_spot(sim: EmbeddedSim, obj: ObjectSpec, receptacle: ObjectSpec, rng: np.random.Generator,
               config: FindingDoryGenConfig) -> Optional[np.ndarray]:
    """A centre on the receptacle's top where ``obj`` keeps ``place_margin_m`` from the edge and every object,
    its base on the receptacle's surface (a model's mesh, not its bounding box: ``EmbeddedSim.surface_height_m``)."""
    half = (np.asarray(obj.bbox_max_m) - np.asarray(obj.bbox_min_m)) / 2.0
    m = config.place_margin_m
    lo = np.asarray(receptacle.bbox_min_m[:2]) + m + half[:2]
    hi = np.asarray(receptacle.bbox_max_m[:2]) - m - half[:2]
    if np.any(lo > hi):
        return None
    others = [o for o in sim.current_objects()
              if o.receptacle_id == receptacle.object_id and o.object_id != obj.object_id]
    for _ in range(config.place_attempts):
        xy = rng.uniform(lo, hi)
        if not all(_rect_gap(xy - half[:2], xy + half[:2], o) >= m for o in others):
            continue
        surface_m = sim.surface_height_m(receptacle.object_id, xy - half[:2], xy + half[:2])
        if surface_m is not None:
            return np.array([xy[0], xy[1], surface_m + half[2]])
    return None


def _at_spot(obj: ObjectSpec, centre: np.ndarray) -> ObjectSpec:
    """``obj`` as it will stand with its bounding-box centre at ``centre`` (for its view points)."""
    half = (np.asarray(obj.bbox_max_m) - np.asarray(obj.bbox_min_m)) / 2.0
    x0, y0, z0 = (float(v) for v in centre - half)
    x1, y1, z1 = (float(v) for v in centre + half)
    cx, cy, cz = (float(v) for v in centre)
    return replace(obj, position_m=(cx, cy, cz), bbox_min_m=(x0, y0, z0), bbox_max_m=(x1, y1, z1))


def _view_point_test(sim: EmbeddedSim, obj: ObjectSpec, config: FindingDoryGenConfig) -> Callable[[np.ndarray], bool]:
    """A test of whether a point is one of ``obj``'s view points (the verifier's: same lattice and radius)."""
    try:
        points = sim.navgrid.view_points(obj, config.view_point_radius_m, config.view_point_spacing_m)
    except UnreachableGoalError:
        return lambda point: False
    return lambda point: bool(np.any(np.all(np.abs(points - point) < 1e-6, axis=1)))


def _rect_gap(lo: np.ndarray, hi: np.ndarray, other: ObjectSpec) -> float:
    dx = max(other.bbox_min_m[0] - hi[0], lo[0] - other.bbox_max_m[0], 0.0)
    dy = max(other.bbox_min_m[1] - hi[1], lo[1] - other.bbox_max_m[1], 0.0)
    return math.hypot(dx, dy)


def _destinations(sim: EmbeddedSim, obj: ObjectSpec, used: set[str], rng: np.random.Generator,
                  config: FindingDoryGenConfig) -> list[tuple[ObjectSpec, np.ndarray]]:
    """Receptacles ``obj`` can go to (not its own, not used before), each with a free spot, in random order."""
    receptacles = [r for r in sim.current_objects()
                   if r.is_receptacle and r.object_id != obj.receptacle_id and r.object_id not in used]
    out = []
    for k in rng.permutation(len(receptacles)):
        spot = _free_spot(sim, obj, receptacles[int(k)], rng, config)
        if spot is not None:
            out.append((receptacles[int(k)], spot))
    return out


def collect_experience(sim: EmbeddedSim, rng: np.random.Generator,
                       config: Optional[FindingDoryGenConfig] = None,
                       on_frame: Optional[Callable[[Observation], None]] = None,
                       video: Optional[VideoEncoding] = None) -> Experience:
    """Run the oracle in ``sim`` (which it resets and whose objects it moves) and return the logged experience.

    ``on_frame`` sees every observation as it is logged (e.g. a navigator building its map from the video).
    ``video``: also record what the robot would have (:mod:`goat_suites.findingdory.experience_video`), one video frame
    per log frame, same index; the gripper holds from the first frame after a pick up to the place.
    """
    config = config or FindingDoryGenConfig()
    start_xy = sim.navgrid.sample_navigable(rng)
    start_yaw = float(rng.uniform(-math.pi, math.pi))
    obs = sim.reset(start_xy, start_yaw)
    rec = _Recorder(sim, float(rng.uniform(*config.start_clock_range_s)), config, on_frame, video)
    rec.record(obs)
    look = sim.config.action_sizes.look_rad
    while rec.frames[-1].camera_tilt_rad > config.camera_tilt_rad + 0.5 * look:
        rec.step(DiscreteAction.LOOK_DOWN)
    oracle = _Oracle(sim, rec, config)
    wanted = int(rng.integers(config.interactions[0], config.interactions[1] + 1))
    smalls = [o for o in sim.current_objects() if not o.is_receptacle and o.receptacle_id is not None]
    moves: list[MoveRecord] = []
    used: set[str] = set()
    for k in rng.permutation(len(smalls)):
        if len(moves) == wanted:
            break
        move = _pick_and_place(sim, oracle, smalls[int(k)], used, rng, config)
        if move is not None:
            moves.append(move)
            used.add(move.dest_id)
    if len(moves) < config.interactions[0]:
        raise SceneGenerationError(f"home {sim.home.seed}: the oracle managed {len(moves)} pick-and-place moves, "
                                   f"fewer than the {config.interactions[0]} FindingDoryGenConfig asks for")
    rooms = {room.room_id: room.room_type for room in sim.home.rooms}
    log = ExperienceLog(frames=tuple(rec.frames), objects=dict(rec.objects), room_types=rooms)
    recorded = None if video is None else ExperienceVideo(tuple(rec.video_frames), dict(rec.annotation))
    return Experience(log=log, start_world=Pose2D(float(start_xy[0]), float(start_xy[1]), start_yaw),
                      moves=tuple(moves), video=recorded, num_actions=rec.actions)


def _pick_and_place(sim: EmbeddedSim, oracle: _Oracle, obj: ObjectSpec, used: set[str],
                    rng: np.random.Generator, config: FindingDoryGenConfig) -> Optional[MoveRecord]:
    """One move; None (nothing picked) when the object or every destination is out of the oracle's reach."""
    obj = sim.object_by_instance_id(obj.instance_id)
    destinations = [(r, s) for r, s in _destinations(sim, obj, used, rng, config)
                    if oracle.view_points_by_distance(_at_spot(obj, s))]
    if not destinations or not oracle.go_and_see(obj):
        return None
    assert obj.receptacle_id is not None
    neighbours = frozenset(o.object_id for o in sim.current_objects()
                           if o.receptacle_id == obj.receptacle_id and o.object_id != obj.object_id)
    pick_frame = oracle.rec.mark_last(Interaction("pick", obj.object_id, obj.receptacle_id))
    sim.pick_up(obj.instance_id)
    oracle.rec.holding = True
    oracle.rec.wait(config.pick_duration_s)
    for receptacle, spot in destinations:
        # Like a person, the oracle stands in front of the spot it puts the object on (a view point of the
        # object there, with nothing in between), not in front of any part of the receptacle.
        # It places from a view point of the receptacle too (FindingDory's oracle stands on one of the receptacle's
        # view points, which its robot_at_receptacle check measures 0.1 m to), so its place frame passes that check.
        points = oracle.view_points_by_distance(_at_spot(obj, spot))  # nearest first; sorted() keeps that order
        on_receptacle = _view_point_test(sim, receptacle, config)
        ranked = sorted(points, key=lambda p: (not on_receptacle(p), not oracle.sees_surface(p, spot, receptacle)))
        if not ranked or not oracle.walk(ranked[0]):
            continue
        oracle.stand_on(ranked[0])
        oracle.face(spot[:2])
        sim.place_on(obj.instance_id, receptacle.object_id, spot)
        oracle.rec.holding = False
        frame = oracle.rec.wait(config.place_duration_s,
                                Interaction("place", obj.object_id, receptacle.object_id))
        return MoveRecord(obj.object_id, obj.receptacle_id, receptacle.object_id, pick_frame, frame.index,
                          neighbours)
    raise SceneGenerationError(f"home {sim.home.seed}: the oracle picked {obj.object_id} up but reached none of "
                               f"{len(destinations)} receptacles to put it on")
