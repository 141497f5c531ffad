"""One subtask in the simulator, as habitat-lab's Env runs one: the goal's region and picture, the agent's steps
until STOP or the budget, and the measures (geodesic distance at the start, path length, distance at the end).

The caller (goat_suites.common.runner) reads the episode into world-frame goals before, and scores the outcome
after; between the two, everything here happens in the simulator, so the subtask never leaves it midway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol, Sequence

import numpy as np

from goat_core.errors import GoatError, UnreachableGoalError
from goat_core.types import DiscreteAction, Observation, Pose2D
from sim_bridge.embedded.geodesic import GoalDistance
from sim_bridge.embedded.goal_image import noisy_goal_image
from sim_bridge.embedded.home import ObjectSpec
from sim_bridge.embedded.navgrid import NavGrid
from sim_bridge.embedded.sim import EmbeddedSim

DISTANCES_TO = ("view_points", "object", "visible_object")  # goat_suites.common.protocols.SuccessRule.distance_to


class Policy(Protocol):
    def act(self, obs: Observation) -> DiscreteAction: ...


@dataclass(frozen=True)
class GoalPlace:
    """Where a subtask's goal is, in the world frame (metres), and its picture for an image goal."""

    object_ids: tuple[str, ...]  # the goal objects that count
    object_xy_m: np.ndarray  # (N, 2) their centres
    view_xy_m: np.ndarray  # (M, 2) their view points
    image_view: Optional[tuple[np.ndarray, float, float]] = None  # camera xy, yaw, tilt of an image goal's picture
    image_noise_seed: Optional[int] = None  # GOAT-Bench's noise study: the picture's noise is drawn from this
    error: Optional[str] = None  # why the goal cannot be given (recorded once the goal is known to be reachable)


@dataclass
class SubtaskOutcome:
    """What the simulator measured of one subtask."""

    geodesic_m: float = math.inf  # from the start to the nearest view point
    actions: list[DiscreteAction] = field(default_factory=list)
    stopped: bool = False  # the agent called STOP (else the budget ended it)
    path_length_m: float = 0.0
    distance_m: float = math.inf  # at the end, to the goal as ``distance_to`` measures it
    forward_xy_m: list[tuple[float, float]] = field(default_factory=list)  # where each MOVE_FORWARD ended
    obs: Optional[Observation] = None  # the last observation
    error: Optional[str] = None  # the subtask could not start (unreachable goal, bad goal)


class GoalRegion:
    """Distances (world frame, metres) to one goal: geodesic to its view points, euclidean to its objects."""

    def __init__(self, navgrid: NavGrid, view_xy_m: np.ndarray, object_xy_m: np.ndarray) -> None:
        self._geodesic = GoalDistance(navgrid, np.asarray(view_xy_m, dtype=np.float64))
        self._object_xy = np.asarray(object_xy_m)

    def geodesic_m(self, xy: np.ndarray) -> float:
        """Geodesic distance to the nearest view point; inf off the grid or off the navigable space."""
        return self._geodesic.distance_m(np.asarray(xy, dtype=np.float64))

    def distance_m(self, xy: np.ndarray, distance_to: str) -> float:
        """``view_points`` and ``visible_object``: the geodesic distance; ``object``: the nearest object centre."""
        if distance_to == "object":
            return float(np.min(np.linalg.norm(self._object_xy - np.asarray(xy)[None, :2], axis=1)))
        return self.geodesic_m(xy)


def target_visible_m(home_objects: Sequence[ObjectSpec], object_ids: Sequence[str], base_xy_m: np.ndarray,
                     segmentation: Optional[np.ndarray]) -> float:
    """Distance (m) from the robot base to the footprint of the nearest goal object that shows in
    ``segmentation`` (matched by instance id); inf when none shows.

    CoW's success (``robothor_challenge.py`` l.390-391) is STOP with AI2-THOR's ``visible`` flag: the object is in
    the camera's view and within ``visibilityDistance`` (1.0 m, ``config_cow.yaml`` l.3). We take the view from
    the ground-truth segmentation of the final observation and the distance in the floor plane, from the base
    centre to the nearest point of the object's footprint.
    """
    if segmentation is None:
        return math.inf
    wanted = set(object_ids)
    shown = set(np.unique(segmentation).tolist())
    best = math.inf
    for obj in home_objects:
        if obj.object_id in wanted and obj.instance_id in shown:
            lo, hi = np.asarray(obj.bbox_min_m[:2]), np.asarray(obj.bbox_max_m[:2])
            best = min(best, float(np.linalg.norm(np.clip(base_xy_m[:2], lo, hi) - base_xy_m[:2])))
    return best


def goal_picture(sim: EmbeddedSim, place: GoalPlace) -> Optional[np.ndarray]:
    """The picture of an image goal from its camera pose (with its noise when a seed is given); None otherwise."""
    if place.image_view is None:
        return None
    xy, yaw, tilt = place.image_view
    image = sim.render_view(xy, yaw, tilt).rgb
    if place.image_noise_seed is not None:
        image, _ = noisy_goal_image(image, place.image_noise_seed)
    return image


def _base_xy(sim: EmbeddedSim) -> np.ndarray:
    pose = sim.base_pose_world
    return np.asarray((pose.x_m, pose.y_m))


def run_subtask(sim: EmbeddedSim, place: GoalPlace, distance_to: str, obs: Observation, max_actions: int,
                begin: Callable[[Optional[np.ndarray]], None], agent: Policy,
                see: Callable[[Observation, Pose2D], Observation],
                on_step: Optional[Callable[[Observation, DiscreteAction], None]] = None) -> SubtaskOutcome:
    """Run one subtask of at most ``max_actions`` actions from observation ``obs``.

    ``begin(picture)`` hands the agent its goal (the picture of an image goal, else None) once the goal is known
    to be reachable; ``see`` is what the agent senses of an observation at a pose (the realism profile's
    localiser). A GoatError before the first step (an unreachable goal, a goal that cannot be given) ends the
    subtask unstarted with ``error`` set. 0 actions: the episode budget is spent; the goal is still given and
    the subtask is measured where the robot stands, as GOAT-Bench scores the subtasks an episode never reached.
    """
    if distance_to not in DISTANCES_TO:
        raise ValueError(f"distance_to must be one of {DISTANCES_TO}, got {distance_to!r}")
    out = SubtaskOutcome(obs=obs)
    start_xy = _base_xy(sim)
    try:
        if place.error is not None and not len(place.view_xy_m):
            raise GoatError(place.error)
        region = GoalRegion(sim.navgrid, place.view_xy_m, place.object_xy_m)
        out.geodesic_m = region.geodesic_m(start_xy)
        if not math.isfinite(out.geodesic_m):
            raise UnreachableGoalError(
                f"goal {list(place.object_ids)} is unreachable from {start_xy.round(2).tolist()}")
        if place.error is not None:
            raise GoatError(place.error)
        begin(goal_picture(sim, place))
    except GoatError as exc:
        out.error = str(exc)
        return out
    prev_xy = start_xy
    for _ in range(max_actions):
        seen = see(obs, sim.episode_pose())
        action = agent.act(seen)
        out.actions.append(action)
        if on_step is not None:
            on_step(seen, action)
        if action is DiscreteAction.STOP:
            out.stopped = True
            break
        obs = sim.step(action)
        xy = _base_xy(sim)
        out.path_length_m += float(np.linalg.norm(xy - prev_xy))
        if action is DiscreteAction.MOVE_FORWARD:
            out.forward_xy_m.append((float(xy[0]), float(xy[1])))
        prev_xy = xy
    final_xy = _base_xy(sim)
    out.obs = obs
    out.distance_m = region.distance_m(final_xy, distance_to)
    if distance_to == "visible_object":  # CoW: the target in the final image, within the distance
        out.distance_m = target_visible_m(sim.current_objects(), place.object_ids, final_xy, obs.segmentation)
    return out
