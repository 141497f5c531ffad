"""How far a robot position is from a subtask's goal, in the benchmark's success metric.

GOAT-Bench (its task config) counts a STOP less than 0.25 m geodesic from any view point of any goal instance; the
GOAT paper's text says 1 m euclidean to the object. Both are offered; the geodesic one is the default everywhere.
Geodesic distances come from ``sim_bridge.embedded.geodesic`` (exact in sight of a view point, within about 2 cm
around corners).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from goat_core.errors import GoatError
from goat_core.frames import habitat_to_ros_position
from goat_suites.common.episodes import GoalObject
from goat_suites.common.failures import SceneObject
from sim_bridge.embedded.home import Home, ObjectSpec
from sim_bridge.embedded.navgrid import NavGrid
from sim_bridge.embedded.subtask_env import GoalRegion
from sim_bridge.embedded.subtask_env import target_visible_m as visible_m

# "visible_object": CoW / PASTURE (robothor_challenge.py l.390-391): the target shows in the final image and is
# within the distance; see target_visible_m.
SUCCESS_METRICS = ("geodesic_viewpoint", "euclidean_object", "visible_object")
# what each metric measures the distance to (goat_suites.common.protocols.SuccessRule.distance_to)
DISTANCE_TO = {"geodesic_viewpoint": "view_points", "euclidean_object": "object", "visible_object": "visible_object"}


class SuccessRegion:
    """Distances (world frame, metres) to the goal objects of one subtask, in a success metric."""

    def __init__(self, navgrid: NavGrid, goals: Sequence[GoalObject], success_metric: str) -> None:
        if success_metric not in SUCCESS_METRICS:
            raise ValueError(f"success_metric must be one of {SUCCESS_METRICS}, got {success_metric!r}")
        self._distance_to = DISTANCE_TO[success_metric]
        view_xy, object_xy = goal_points_xy(goals)
        if not len(view_xy):
            raise GoatError(no_view_points(goals))
        self._region = GoalRegion(navgrid, view_xy, object_xy)

    def geodesic_m(self, xy: np.ndarray) -> float:
        """Geodesic distance to the nearest view point; inf off the grid or off the navigable space."""
        return self._region.geodesic_m(xy)

    def distance_m(self, xy: np.ndarray) -> float:
        """Distance in the configured success metric (``visible_object``: the geodesic one; the visibility
        test needs the image, :func:`target_visible_m`)."""
        return self._region.distance_m(xy, self._distance_to)


def goal_points_xy(goals: Sequence[GoalObject]) -> tuple[np.ndarray, np.ndarray]:
    """(M, 2) view points and (N, 2) centres of ``goals`` in the world frame."""
    view_xy = np.asarray([habitat_to_ros_position(vp.position)[:2] for g in goals for vp in g.view_points],
                         dtype=np.float64).reshape(-1, 2)
    return view_xy, np.asarray([habitat_to_ros_position(g.position)[:2] for g in goals])


def no_view_points(goals: Sequence[GoalObject]) -> str:
    """Why a subtask whose goal objects have no view point cannot be scored."""
    return f"goal objects {[g.object_id for g in goals]} have no view points: cannot score this subtask"


def scene_objects(home: Home) -> list[SceneObject]:
    """Every object of a home by its centre (world frame), for telling which one the agent stopped at."""
    return [SceneObject(o.object_id, (float(o.position_m[0]), float(o.position_m[1])), o.category)
            for o in home.objects]


def target_visible_m(home_objects: Sequence[ObjectSpec], goals: Sequence[GoalObject], base_xy_m: np.ndarray,
                     segmentation: Optional[np.ndarray]) -> float:
    """CoW's success distance to ``goals`` (sim_bridge.embedded.subtask_env.target_visible_m)."""
    return visible_m(home_objects, [g.object_id for g in goals], base_xy_m, segmentation)
