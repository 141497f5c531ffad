"""How far a robot position is from a subtask's goal, in the benchmark's success metric.

GOAT-Bench (its task config) counts a STOP less than 0.25 m geodesic from any view point of any goal instance; the
GOAT paper's text says 1 m euclidean to the object. Both are offered; the geodesic one is the default everywhere.
Geodesic distances come from ``sim_bridge.embedded.geodesic`` (exact in sight of a view point, within about 2 cm
around corners).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from goat_core.bench.episodes import GoalObject
from goat_core.bench.failures import SceneObject
from goat_core.errors import GoatError
from goat_core.frames import habitat_to_ros_position
from sim_bridge.embedded.geodesic import GoalDistance
from sim_bridge.embedded.home import Home
from sim_bridge.embedded.navgrid import NavGrid

SUCCESS_METRICS = ("geodesic_viewpoint", "euclidean_object")


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
        """Distance in the configured success metric."""
        if self._metric == "geodesic_viewpoint":
            return self.geodesic_m(xy)
        return float(np.min(np.linalg.norm(self._object_xy - np.asarray(xy)[None, :2], axis=1)))


def scene_objects(home: Home) -> list[SceneObject]:
    """Every object of a home by its centre (world frame), for telling which one the agent stopped at."""
    return [SceneObject(o.object_id, (float(o.position_m[0]), float(o.position_m[1])), o.category)
            for o in home.objects]
