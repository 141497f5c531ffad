"""How far a robot position is from a subtask's goal, in the benchmark's success metric.

GOAT-Bench (its task config) counts a STOP less than 0.25 m geodesic from any view point of any goal instance; the
GOAT paper's text says 1 m euclidean to the object. Both are offered; the geodesic one is the default everywhere.
Geodesic distances come from ``sim_bridge.embedded.geodesic`` (exact in sight of a view point, within about 2 cm
around corners).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from goat_core.errors import GoatError
from goat_core.frames import habitat_to_ros_position
from goat_suites.common.episodes import GoalObject
from goat_suites.common.failures import SceneObject
from sim_bridge.embedded.geodesic import GoalDistance
from sim_bridge.embedded.home import Home, ObjectSpec
from sim_bridge.embedded.navgrid import NavGrid

# "visible_object": CoW / PASTURE (robothor_challenge.py l.390-391): the target shows in the final image and is
# within the distance; see target_visible_m.
SUCCESS_METRICS = ("geodesic_viewpoint", "euclidean_object", "visible_object")


class SuccessRegion:
    """Distances (world frame, metres) to the goal objects of one subtask."""

    def __init__(self, navgrid: NavGrid, goals: Sequence[GoalObject], success_metric: str) -> None:
        if success_metric not in SUCCESS_METRICS:
            raise ValueError(f"success_metric must be one of {SUCCESS_METRICS}, got {success_metric!r}")
        self._grid = navgrid
        self._metric = success_metric
        view_xy = [habitat_to_ros_position(vp.position)[:2] for g in goals for vp in g.view_points]
        if not view_xy:
            ids = [g.object_id for g in goals]
            raise GoatError(f"goal objects {ids} have no view points: cannot score this subtask")
        self._geodesic = GoalDistance(navgrid, np.asarray(view_xy, dtype=np.float64))
        self._object_xy = np.asarray([habitat_to_ros_position(g.position)[:2] for g in goals])

    def geodesic_m(self, xy: np.ndarray) -> float:
        """Geodesic distance to the nearest view point; inf off the grid or off the navigable space."""
        return self._geodesic.distance_m(np.asarray(xy, dtype=np.float64))

    def distance_m(self, xy: np.ndarray) -> float:
        """Distance in the configured success metric (``visible_object``: the geodesic one; the visibility
        test needs the image, :func:`target_visible_m`)."""
        if self._metric in ("geodesic_viewpoint", "visible_object"):
            return self.geodesic_m(xy)
        return float(np.min(np.linalg.norm(self._object_xy - np.asarray(xy)[None, :2], axis=1)))


def scene_objects(home: Home) -> list[SceneObject]:
    """Every object of a home by its centre (world frame), for telling which one the agent stopped at."""
    return [SceneObject(o.object_id, (float(o.position_m[0]), float(o.position_m[1])), o.category)
            for o in home.objects]


def target_visible_m(home_objects: Sequence[ObjectSpec], goals: Sequence[GoalObject], base_xy_m: np.ndarray,
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
    wanted = {g.object_id for g in goals}
    shown = set(np.unique(segmentation).tolist())
    best = math.inf
    for obj in home_objects:
        if obj.object_id in wanted and obj.instance_id in shown:
            lo, hi = np.asarray(obj.bbox_min_m[:2]), np.asarray(obj.bbox_max_m[:2])
            best = min(best, float(np.linalg.norm(np.clip(base_xy_m[:2], lo, hi) - base_xy_m[:2])))
    return best
