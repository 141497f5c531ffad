"""Procedural FindingDory episodes in the embedded simulator: an experience, instructions about it, a verifier.

1. Experience (:func:`collect_experience`): a scripted oracle with privileged access to the navigable grid
   walks the home by discrete actions (FindingDory's: 0.25 m steps, 10 deg turns, head tilted down 30 deg),
   goes to a view point of a small object, faces it, picks it up (it leaves the world), walks to a view point
   of a free spot on another receptacle's top and places it there (it is rendered there from then on). Every
   observation is a frame of the log, with its pose, room, time of day (a clock that runs
   ``seconds_per_action`` per action and longer for picks and places), the objects in view and the
   interaction, as :mod:`goat_suites.findingdory.experience` defines it. Ground truth of the moves is kept beside the
   log.
2. Instructions (:func:`generate_tasks`): for each FindingDory task type a template of
   :mod:`goat_suites.findingdory.tasks` is filled from the ground truth of the experience, and its answer
   (the set of correct objects, receptacles or rooms per goal) computed from it. A task is kept only when every
   goal has an answer that some frame of the log satisfies (FindingDory keeps tasks its oracle can solve).
3. Verification (:class:`TaskJudge`): FindingDory's task verifier (findingdory-habitat ``pddl_domain_fp.yaml``
   ``robot_at_object`` / ``robot_at_receptacle`` / ``robot_in_room``, ``pddl.py::is_robot_at_position``): the
   robot is at an object when it is within the distance threshold of it (geodesic to its nearest view point by
   default), the object covers at least ``min_coverage`` of the image and lies within the heading threshold
   (pi/4 for objects, pi/2 for receptacles); in a room when its base is inside the room. The high-level check
   renders the view from a chosen frame's pose in the world as it is after the experience; the relaxed checks
   drop the coverage (DTG) or the distance (SC) threshold, as ``assign_and_validate_high_level_goal`` does.

Differences from FindingDory: the distance thresholds. FindingDory checks ``<=`` 2.0 m geodesic to an object's
view points and 0.1 m to a receptacle's (``pddl_domain_fp.yaml`` l.77-100, ``pddl.py`` l.440;
``goat_suites.common.protocols.FINDINGDORY``), where its oracle stood exactly on view points. Here view points lie
on a 0.25 m lattice the oracle's frames do not stand on: with 0.1 m the frame the oracle picks for a receptacle
task fails the distance check (tried in issue 28). Both thresholds are settings; the default is 1.0 m for both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Callable, Optional, Sequence

import numpy as np

from goat_core.control.planner import descend, line_of_sight
from goat_core.control.policy import turn_toward
from goat_core.errors import ConfigError, SceneGenerationError, UnreachableGoalError
from goat_core.geometry import wrap_angle_rad
from goat_core.types import ActionSizes, DiscreteAction, Observation, Pose2D
from goat_suites.common.success import SUCCESS_METRICS
from goat_suites.findingdory.experience import (
    ExperienceFrame,
    ExperienceLog,
    Interaction,
    ObjectInfo,
    SeenObject,
    format_clock,
    minute_of_day,
)
from goat_suites.findingdory.experience_video import (
    ExperienceVideo,
    InstanceAnnotation,
    Proprioception,
    VideoEncoding,
    VideoFrame,
    encode_frame,
)
from goat_suites.findingdory.tasks import (
    LAST,
    ORDINALS,
    TASK_TYPES,
    FindingDoryTask,
    Subgoal,
    room_of_target,
    room_target_id,
    templates_of,
)
from sim_bridge.embedded.home import ObjectSpec
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig

# FindingDory's embodiment (findingdory-habitat task config): 10 deg turns, 0.25 m steps, head 30 deg down.
FINDINGDORY_ACTIONS = ActionSizes(forward_m=0.25, turn_rad=math.radians(10.0), look_rad=math.radians(30.0))
DURATION_TIE_S = 1.0  # carry durations closer than this are ties (as the selector reads them)


def findingdory_sim_config() -> SimConfig:
    """The embedded simulator with FindingDory's action sizes, everything else as GOAT-Bench's Stretch."""
    # Sliding on, as before issue 28 (FindingDory's config turns it off): without it the experience oracle's walk
    # outgrows its day (ConfigError: time of day beyond 86400 s); a named deviation (docs/protocols.md).
    return SimConfig(action_sizes=FINDINGDORY_ACTIONS, allow_sliding=True)


@dataclass(frozen=True)
class FindingDoryGenConfig:
    """Settings of the experience and of the instructions (one default each)."""

    interactions: tuple[int, int] = (3, 4)  # pick-and-place moves per experience, inclusive range
    start_clock_range_s: tuple[float, float] = (8 * 3600.0, 10 * 3600.0)  # when the day's experience starts
    seconds_per_action: float = 3.0  # clock time of one discrete action
    pick_duration_s: float = 20.0
    place_duration_s: float = 20.0
    camera_tilt_rad: float = -math.radians(30.0)  # FindingDory's head tilt (task config ``camera_tilt``)
    arrive_radius_m: float = 0.2  # the oracle has reached a view point within this distance
    lookahead_m: float = 1.0  # the oracle steers to the farthest path point within this, in line of sight
    max_walk_actions: int = 800  # per walk to one view point
    view_point_radius_m: float = 1.0  # as the GOAT episodes' view points
    view_point_spacing_m: float = 0.25
    view_point_tries: int = 3  # view points tried per object until the object is in view
    min_coverage: float = 0.001  # share of the image an object must cover to count as seen
    place_margin_m: float = 0.03  # a placed object keeps this far from the top's edge and from other objects
    place_attempts: int = 60
    task_attempts: int = 12  # template fillings tried per task type before the type is left out
    max_room_ordinal: int = 5

    def __post_init__(self) -> None:
        lo, hi = self.interactions
        if not 1 <= lo <= hi <= len(ORDINALS):
            raise ConfigError(f"FindingDoryGenConfig.interactions must be (lo, hi) with 1 <= lo <= hi <= "
                              f"{len(ORDINALS)}, got {self.interactions!r}")
        c0, c1 = self.start_clock_range_s
        if not 0.0 <= c0 <= c1 < 20 * 3600.0:
            raise ConfigError(f"FindingDoryGenConfig.start_clock_range_s must be within [0, 20 h), got "
                              f"{self.start_clock_range_s!r}")
        for name in ("seconds_per_action", "arrive_radius_m", "lookahead_m", "view_point_radius_m",
                     "view_point_spacing_m"):
            if not getattr(self, name) > 0.0:
                raise ConfigError(f"FindingDoryGenConfig.{name} must be positive, got {getattr(self, name)!r}")
        if not 0.0 < self.min_coverage < 1.0:
            raise ConfigError(f"FindingDoryGenConfig.min_coverage must be in (0, 1), got {self.min_coverage!r}")


# ----------------------------------------------------------------------------------------------- experience


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
        obs = self.sim.step(action)
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
        """Follow the geodesic path to ``goal_xy`` by discrete actions; False if it is not reached in time."""
        grid = self.sim.navgrid
        field_m = grid.distance_field(np.asarray(goal_xy, dtype=np.float64)[None])
        turn = self.sim.config.action_sizes.turn_rad
        for _ in range(self.config.max_walk_actions):
            pose = self.sim.base_pose_world
            if float(np.linalg.norm(pose.xy() - goal_xy)) <= self.config.arrive_radius_m:
                return True
            waypoint = self._waypoint(field_m, pose.xy(), goal_xy)
            bearing = math.atan2(waypoint[1] - pose.y_m, waypoint[0] - pose.x_m)
            action = turn_toward(wrap_angle_rad(bearing - pose.yaw_rad), 0.5 * turn)
            self.rec.step(DiscreteAction.MOVE_FORWARD if action is None else action)
        return False

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
                       config: FindingDoryGenConfig = FindingDoryGenConfig(),
                       on_frame: Optional[Callable[[Observation], None]] = None,
                       video: Optional[VideoEncoding] = None) -> Experience:
    """Run the oracle in ``sim`` (which it resets and whose objects it moves) and return the logged experience.

    ``on_frame`` sees every observation as it is logged (e.g. a navigator building its map from the video).
    ``video``: also record what the robot would have (:mod:`goat_suites.findingdory.experience_video`), one video frame
    per log frame, same index; the gripper holds from the first frame after a pick up to the place.
    """
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
                      moves=tuple(moves), video=recorded)


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
        points = oracle.view_points_by_distance(_at_spot(obj, spot))
        clear = [p for p in points if oracle.sees_surface(p, spot, receptacle)]
        if not points or not oracle.walk((clear or points)[0]):
            continue
        oracle.face(spot[:2])
        sim.place_on(obj.instance_id, receptacle.object_id, spot)
        oracle.rec.holding = False
        frame = oracle.rec.wait(config.place_duration_s,
                                Interaction("place", obj.object_id, receptacle.object_id))
        return MoveRecord(obj.object_id, obj.receptacle_id, receptacle.object_id, pick_frame, frame.index,
                          neighbours)
    raise SceneGenerationError(f"home {sim.home.seed}: the oracle picked {obj.object_id} up but reached none of "
                               f"{len(destinations)} receptacles to put it on")


# ----------------------------------------------------------------------------------------------- verification


@dataclass(frozen=True)
class JudgeConfig:
    """Thresholds of the task verifier."""

    success_distance_m: float = 1.0  # objects (FindingDory robot_at_object: 2.0; see the module docstring)
    receptacle_distance_m: float = 1.0  # receptacles (FindingDory robot_at_receptacle: 0.1)
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
    """Where a target can be reached from: its view points (or room cells), their distance field, its centre."""

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
            points = grid.view_points(spec, self.config.view_point_radius_m, self.config.view_point_spacing_m)
            centre = np.asarray(spec.position_m[:2])
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
        row, col = self.sim.navgrid.world_to_cell(world_xy)
        return float(goal.field_m[row, col]) if self.sim.navgrid.in_grid(row, col) else math.inf

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

        Rooms: any frame in the room. Objects: the frames that show a target since its last move, the largest
        views first, ``max_frames`` of them per target.
        """
        for target_id in sorted(subgoal.valid_ids):
            room_id = room_of_target(target_id)
            if room_id is not None:
                if any(f.room_id == room_id for f in log.frames):
                    return True
                continue
            moves = [f.index for f, i in log.events() if i.object_id == target_id]
            frames = [f for f in log.frames[(moves[-1] if moves else 0):] if f.coverage_of(target_id) > 0.0]
            frames.sort(key=lambda f: (-f.coverage_of(target_id), f.index))
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


# ----------------------------------------------------------------------------------------------- instructions


@dataclass
class _Facts:
    """Ground truth of an experience that the templates are filled from."""

    sim: EmbeddedSim
    experience: Experience
    config: FindingDoryGenConfig

    def spec(self, object_id: str) -> ObjectSpec:
        return self.sim.home.object(object_id)  # category, colour and material never change

    @property
    def moves(self) -> tuple[MoveRecord, ...]:
        return self.experience.moves

    def time_s(self, frame: int) -> float:
        return self.experience.log.frames[frame].time_s

    def seen_ids(self) -> list[str]:
        return sorted({s.object_id for f in self.experience.log.frames for s in f.seen
                       if s.coverage >= self.config.min_coverage})

    def rooms_visited(self) -> list[int]:
        visited: list[int] = []
        for frame in self.experience.log.frames:
            if frame.room_id is not None and frame.room_id not in visited:
                visited.append(frame.room_id)
        return visited


Built = Optional[tuple[dict[str, str], list[frozenset[str]]]]  # slots and per-goal answers, or None


def _choice(rng: np.random.Generator, items: Sequence[MoveRecord]) -> MoveRecord:
    return items[int(rng.integers(len(items)))]


def _moved_where(facts: _Facts, keep: Callable[[ObjectSpec], bool]) -> frozenset[str]:
    return frozenset(m.object_id for m in facts.moves if keep(facts.spec(m.object_id)))


def _recall_seen(facts: _Facts, rng: np.random.Generator) -> Built:
    moved = {facts.spec(m.object_id).category for m in facts.moves}
    categories = sorted({facts.spec(o).category for o in facts.seen_ids()} - moved)
    if not categories:
        return None
    category = categories[int(rng.integers(len(categories)))]
    return {"category": category}, [frozenset(o for o in facts.seen_ids() if facts.spec(o).category == category)]


def _picked_from(facts: _Facts, rng: np.random.Generator) -> Built:
    category = facts.spec(_choice(rng, facts.moves).source_id).category
    return {"receptacle": category}, [frozenset(m.object_id for m in facts.moves
                                                if facts.spec(m.source_id).category == category)]


def _placed_on(facts: _Facts, rng: np.random.Generator) -> Built:
    category = facts.spec(_choice(rng, facts.moves).object_id).category
    return {"category": category}, [frozenset(m.dest_id for m in facts.moves
                                              if facts.spec(m.object_id).category == category)]


def _attribute(name: str) -> Callable[[_Facts, np.random.Generator], Built]:
    def build(facts: _Facts, rng: np.random.Generator) -> Built:
        value = getattr(facts.spec(_choice(rng, facts.moves).object_id), name)
        return {name: value}, [_moved_where(facts, lambda o: getattr(o, name) == value)]
    return build


def _same_receptacle(facts: _Facts, rng: np.random.Generator) -> Built:
    with_neighbours = [m for m in facts.moves if m.neighbours]
    if not with_neighbours:
        return None
    chosen = _choice(rng, with_neighbours)
    category, receptacle = facts.spec(chosen.object_id).category, facts.spec(chosen.source_id).category
    found: set[str] = set()
    for m in facts.moves:
        if facts.spec(m.object_id).category == category and facts.spec(m.source_id).category == receptacle:
            found |= m.neighbours
    return {"receptacle": receptacle, "category": category}, [frozenset(found)]


def _room_order(facts: _Facts, rng: np.random.Generator) -> Built:
    visited = facts.rooms_visited()
    k = int(rng.integers(min(len(visited), facts.config.max_room_ordinal)))
    return {"ordinal": ORDINALS[k]}, [frozenset({room_target_id(visited[k])})]


def _room_of_pick(facts: _Facts, rng: np.random.Generator) -> Built:
    category = facts.spec(_choice(rng, facts.moves).object_id).category
    return {"category": category}, [frozenset(room_target_id(facts.spec(m.source_id).room_id) for m in facts.moves
                                              if facts.spec(m.object_id).category == category)]


def _ordinal(rng: np.random.Generator, count: int) -> tuple[int, str]:
    k = int(rng.integers(count))
    return k, LAST if k == count - 1 and rng.random() < 0.5 else ORDINALS[k]


def _order_pick(facts: _Facts, rng: np.random.Generator) -> Built:
    k, word = _ordinal(rng, len(facts.moves))
    return {"ordinal": word}, [frozenset({facts.moves[k].object_id})]


def _order_place(facts: _Facts, rng: np.random.Generator) -> Built:
    by_time = sorted(facts.moves, key=lambda m: m.place_frame)
    k, word = _ordinal(rng, len(by_time))
    return {"ordinal": word}, [frozenset({by_time[k].dest_id})]


def _time_pick(facts: _Facts, rng: np.random.Generator) -> Built:
    minute = minute_of_day(facts.time_s(_choice(rng, facts.moves).pick_frame))
    return {"clock": format_clock(minute * 60.0)}, [
        frozenset(m.object_id for m in facts.moves if minute_of_day(facts.time_s(m.pick_frame)) == minute)]


def _time_room(facts: _Facts, rng: np.random.Generator) -> Built:
    frames = facts.experience.log.frames
    minute = minute_of_day(frames[int(rng.integers(len(frames)))].time_s)
    rooms = frozenset(room_target_id(f.room_id) for f in frames
                      if f.room_id is not None and minute_of_day(f.time_s) == minute)
    return ({"clock": format_clock(minute * 60.0)}, [rooms]) if rooms else None


def _duration(longest: bool) -> Callable[[_Facts, np.random.Generator], Built]:
    def build(facts: _Facts, rng: np.random.Generator) -> Built:
        spans = {m.object_id: facts.time_s(m.place_frame) - facts.time_s(m.pick_frame) for m in facts.moves}
        best = max(spans.values()) if longest else min(spans.values())
        return {}, [frozenset(o for o, d in spans.items() if abs(d - best) < DURATION_TIE_S)]
    return build


_BUILDERS: dict[str, Callable[[_Facts, np.random.Generator], Built]] = {
    "recall_seen": _recall_seen,
    "interaction_picked": lambda facts, rng: ({}, [frozenset(m.object_id for m in facts.moves)]),
    "interaction_placed_on": lambda facts, rng: ({}, [frozenset(m.dest_id for m in facts.moves)]),
    "conditional_picked_from": _picked_from,
    "conditional_placed_on": _placed_on,
    "attribute_colour": _attribute("colour"),
    "attribute_material": _attribute("material"),
    "spatial_same_receptacle": _same_receptacle,
    "room_order": _room_order,
    "room_of_pick": _room_of_pick,
    "order_pick": _order_pick,
    "order_place": _order_place,
    "time_pick": _time_pick,
    "time_room": _time_room,
    "duration_longest": _duration(longest=True),
    "duration_shortest": _duration(longest=False),
    "revisit_any_order": lambda facts, rng: ({}, [frozenset({m.object_id}) for m in facts.moves]),
    "revisit_pick_order": lambda facts, rng: ({}, [frozenset({m.object_id}) for m in facts.moves]),
    "revisit_place_order": lambda facts, rng: (
        {}, [frozenset({m.dest_id}) for m in sorted(facts.moves, key=lambda m: m.place_frame)]),
}


def generate_tasks(sim: EmbeddedSim, experience: Experience, judge: TaskJudge, rng: np.random.Generator,
                   config: FindingDoryGenConfig = FindingDoryGenConfig(),
                   task_types: Sequence[str] = TASK_TYPES) -> tuple[FindingDoryTask, ...]:
    """At most one task per type, each with a non-empty answer per goal that some frame of the log satisfies."""
    facts = _Facts(sim, experience, config)
    tasks: list[FindingDoryTask] = []
    for task_type in task_types:
        templates = templates_of(task_type)
        for _ in range(config.task_attempts):
            template = templates[int(rng.integers(len(templates)))]
            built = _BUILDERS[template.key](facts, rng)
            if built is None or not built[1] or any(not ids for ids in built[1]):
                continue
            slots, answer = built
            subgoals = tuple(Subgoal(template.target, ids) for ids in answer)
            if not all(judge.solvable(sg, experience.log) for sg in subgoals):
                continue
            tasks.append(FindingDoryTask(task_id=f"task_{len(tasks) + 1}", task_type=task_type,
                                         template_key=template.key, lang=template.fill(slots), subgoals=subgoals,
                                         revisit=template.revisit))
            break
    return tuple(tasks)


__all__ = ["FINDINGDORY_ACTIONS", "Experience", "FindingDoryGenConfig", "JudgeConfig", "MoveRecord", "NO_VERDICT",
           "TaskJudge", "Verdict", "collect_experience", "findingdory_sim_config", "generate_tasks"]
