"""Why a subtask failed: one class per failed subtask, so that failures can be counted and looked at by kind.

The classes (``FAILURE_CLASSES``):

* ``gave_up``: the agent called STOP without a target it believed in (nothing left to explore, no candidate
  reachable, its recoveries exhausted);
* ``wrong_instance``: it stopped at an instance that is not a goal object;
* ``near_miss``: it stopped at a goal object, but outside the success distance;
* ``budget``: the action budget ran out before STOP;
* ``error``: the run raised (an unreachable or malformed goal, a robot that failed an action).

Whether the instance the agent stopped at "is" a goal object is decided geometrically, so it works for any
perception backend: among the scene's objects of the instance's category (all objects when none has it), the one
nearest (in the plane) to the centroid of the instance must be a goal object of the subtask, within
``SAME_OBJECT_RADIUS_M``. The category matters: a cup standing on a cabinet is nearer to the cabinet's centre than
the cabinet's own centroid may be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from goat_core.errors import GoatError
from goat_core.types import StopDecision

Point2 = Union[Sequence[float], np.ndarray]  # (x, y) metres

FAILURE_CLASSES = ("gave_up", "wrong_instance", "near_miss", "budget", "error")

# A remembered instance is taken for a scene object when the object's centre is the nearest to the instance's
# centroid and closer than this: a perceived centroid is off by up to half the object's size (a bed is 2 m long).
SAME_OBJECT_RADIUS_M = 1.0


class InvalidFailureError(GoatError, ValueError):
    """A failure class or its inputs do not fit together; the message names the bad value."""


@dataclass(frozen=True)
class SceneObject:
    """One object of the scene, for telling what the agent stopped at (world frame, metres)."""

    object_id: str
    xy_m: tuple[float, float]
    category: str = ""


def classify_failure(success: bool, stop_reason: str, stopped_at_target: bool,
                     target_is_goal: Optional[bool]) -> Optional[str]:
    """The failure class of one subtask, or None when it succeeded.

    ``stopped_at_target``: the agent stopped at an instance it believed in (False: it gave up);
    ``target_is_goal``: that instance is a goal object (None when there was no target).
    """
    if success:
        return None
    if stop_reason in ("budget", "error"):
        return stop_reason
    if stop_reason != "stop":
        raise InvalidFailureError(f"stop_reason must be stop, budget or error, got {stop_reason!r}")
    if not stopped_at_target:
        return "gave_up"
    if target_is_goal is None:
        raise InvalidFailureError("a STOP at a target needs target_is_goal (True or False), got None")
    return "near_miss" if target_is_goal else "wrong_instance"


def nearest_object(xy_m: Point2, objects: Iterable[SceneObject]) -> Optional[tuple[SceneObject, float]]:
    """The scene object whose centre is nearest to ``xy_m`` in the plane, with that distance; None if none."""
    best: Optional[tuple[SceneObject, float]] = None
    x, y = float(xy_m[0]), float(xy_m[1])
    for obj in objects:
        d = math.hypot(obj.xy_m[0] - x, obj.xy_m[1] - y)
        if best is None or d < best[1] or (d == best[1] and obj.object_id < best[0].object_id):
            best = (obj, d)
    return best


def target_is_goal(target_xy_m: Point2, goal_ids: Iterable[str], objects: Iterable[SceneObject],
                   category: Optional[str] = None, radius_m: float = SAME_OBJECT_RADIUS_M) -> bool:
    """Whether the instance of ``category`` whose centroid is at ``target_xy_m`` (world) is a goal object."""
    candidates = list(objects)
    same = [o for o in candidates if category and o.category == category]
    found = nearest_object(target_xy_m, same or candidates)
    if found is None:
        return False
    obj, distance_m = found
    return obj.object_id in set(goal_ids) and distance_m <= radius_m


def episode_to_world_xy(start_xy_m: Point2, start_yaw_rad: float, xy_m: Point2) -> np.ndarray:
    """A point of the episode frame (the agent's map: origin and heading of the start pose) in the world frame."""
    c, s = math.cos(start_yaw_rad), math.sin(start_yaw_rad)
    x, y = float(xy_m[0]), float(xy_m[1])
    return np.array([start_xy_m[0] + c * x - s * y, start_xy_m[1] + s * x + c * y])


def failure_of_subtask(success: bool, stop_reason: str, decision: Optional[StopDecision],
                       start_xy_m: Point2, start_yaw_rad: float, goal_ids: Iterable[str],
                       objects: Iterable[SceneObject]) -> Optional[str]:
    """The failure class of a scored subtask from the agent's account of its STOP.

    ``start_xy_m``/``start_yaw_rad``: the episode start pose in the world frame (the agent's map origin);
    ``objects``: the scene's objects, world frame. A STOP without an account (a robot stack that gives none)
    counts as giving up: nothing says it believed in a target.
    """
    at_target = decision is not None and not decision.gave_up
    is_goal: Optional[bool] = None
    if not success and stop_reason == "stop" and at_target:
        assert decision is not None and decision.target_xyz_m is not None
        xy = episode_to_world_xy(start_xy_m, start_yaw_rad, decision.target_xyz_m[:2])
        is_goal = target_is_goal(xy, goal_ids, objects, decision.category)
    return classify_failure(success, stop_reason, at_target, is_goal)


def count_failures(failures: Iterable[Optional[str]]) -> Mapping[str, int]:
    """How many failed subtasks fell into each class (every class listed, zeros included)."""
    counts = {name: 0 for name in FAILURE_CLASSES}
    for failure in failures:
        if failure is not None:
            if failure not in counts:
                raise InvalidFailureError(f"failure must be one of {FAILURE_CLASSES}, got {failure!r}")
            counts[failure] += 1
    return counts
