"""Pieces shared by the LangMap and PASTURE episode generators of the embedded simulator.

Both generators draw their homes from a dataset seed exactly as ``episodes.generate_dataset`` does, so
``--suite langmap --seed S`` runs in the homes of ``--suite goat --seed S``; both build the GOAT-Bench goal
objects of their targets (view points, attributes, the text the agent is given) and sample the start 1-30 m
geodesic from the first goal, as GOAT-Bench does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import SceneGenerationError, UnreachableGoalError
from goat_core.frames import habitat_to_ros_position, ros_to_habitat_position, yaw_to_habitat_quaternion
from goat_suites.common.episodes import GoalObject, ViewPoint
from sim_bridge.embedded.home import Home, ObjectSpec
from sim_bridge.embedded.sim import EmbeddedSim

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]

HOME_SEED_HIGH = 2**31 - 1  # home seeds are drawn in [0, HOME_SEED_HIGH), as in episodes.generate_dataset


def home_seeds(seed: int) -> Iterator[int]:
    """The home seeds of a dataset seed, in the order ``episodes.generate_dataset`` uses them (endless)."""
    rng = np.random.default_rng(seed)
    while True:
        yield int(rng.integers(0, HOME_SEED_HIGH))


def footprint_gap_m(a: ObjectSpec, b: ObjectSpec) -> float:
    """Distance between the axis-aligned footprints of two objects (0 when they touch or overlap)."""
    dx = max(0.0, max(a.bbox_min_m[0], b.bbox_min_m[0]) - min(a.bbox_max_m[0], b.bbox_max_m[0]))
    dy = max(0.0, max(a.bbox_min_m[1], b.bbox_min_m[1]) - min(a.bbox_max_m[1], b.bbox_max_m[1]))
    return math.hypot(dx, dy)


@dataclass(frozen=True)
class Placement:
    """Where an object is, in the words a description uses: "on" / "inside" / "under" / "near" an anchor."""

    relation: str
    anchor: ObjectSpec

    @property
    def key(self) -> tuple[str, str]:
        """What a reader can check: the relation and the anchor's category (not which instance it is)."""
        return (self.relation, self.anchor.category)


def placement(obj: ObjectSpec, home: Home, near_radius_m: float) -> Optional[Placement]:
    """The receptacle an object is on, inside or under; else the nearest other furniture within reach.

    Floor objects take the nearest floor object of another category in the same room whose footprint is within
    ``near_radius_m``; None when there is none.
    """
    if obj.receptacle_id is not None:
        holder = home.object(obj.receptacle_id)
        return Placement(home.hidden_relation(obj) or "on", holder)
    others = [o for o in home.objects if o.receptacle_id is None and o.room_id == obj.room_id
              and o.category != obj.category and o.object_id != obj.object_id]
    if not others:
        return None
    gaps = [footprint_gap_m(obj, o) for o in others]
    best = int(np.argmin(gaps))
    return Placement("near", others[best]) if gaps[best] <= near_radius_m else None


def standard_view_points(sim: EmbeddedSim, obj: ObjectSpec, radius_m: float, spacing_m: float
                         ) -> Optional[np.ndarray]:
    """(K, 2) GOAT-Bench style view points of an object (NavGrid.view_points), None when it has none."""
    try:
        points = sim.navgrid.view_points(obj, radius_m=radius_m, spacing_m=spacing_m)
    except UnreachableGoalError:
        return None
    return points if len(points) else None


def visible_from(sim: EmbeddedSim, obj: ObjectSpec, points_xy_m: np.ndarray, min_pixels: int) -> np.ndarray:
    """(K,) bool: the object covers at least ``min_pixels`` of the ground-truth segmentation of a head camera
    standing at each point and aimed at the object's centre (tilt clamped to the camera's range)."""
    centre = np.asarray(obj.position_m, dtype=np.float64)
    cfg = sim.config
    seen = np.zeros(len(points_xy_m), dtype=bool)
    for k, xy in enumerate(np.asarray(points_xy_m, dtype=np.float64)):
        offset = centre[:2] - xy
        yaw_rad = math.atan2(float(offset[1]), float(offset[0]))
        tilt_rad = math.atan2(float(centre[2]) - cfg.camera_height_m, max(float(np.linalg.norm(offset)), 1e-3))
        tilt_rad = min(max(tilt_rad, cfg.min_tilt_rad), cfg.max_tilt_rad)
        segmentation = sim.render_segmentation(xy, yaw_rad, tilt_rad)
        seen[k] = int(np.count_nonzero(segmentation == obj.instance_id)) >= min_pixels
    return seen


def vec3(values: Sequence[float] | np.ndarray) -> Vec3:
    x, y, z = (float(v) for v in values)
    return (x, y, z)


def quat(values: Sequence[float] | np.ndarray) -> Quat:
    x, y, z, w = (float(v) for v in values)
    return (x, y, z, w)


def goal_object(obj: ObjectSpec, points_xy_m: np.ndarray, lang_desc: Optional[str] = None,
                extra_attributes: Optional[Mapping[str, Any]] = None) -> GoalObject:
    """The GOAT-Bench goal object of ``obj`` with the given view points (each facing the object centre)."""
    centre = np.asarray(obj.position_m, dtype=np.float64)
    view_points = []
    for xy in np.asarray(points_xy_m, dtype=np.float64):
        yaw_rad = math.atan2(float(centre[1] - xy[1]), float(centre[0] - xy[0]))
        view_points.append(ViewPoint(position=vec3(ros_to_habitat_position([xy[0], xy[1], 0.0])),
                                     rotation=quat(yaw_to_habitat_quaternion(yaw_rad))))
    attributes: dict[str, Any] = {"colour": obj.colour, "material": obj.material, "size": obj.size_label,
                                  "room_type": obj.room_type, "room_id": obj.room_id,
                                  "receptacle_id": obj.receptacle_id, "instance_id": obj.instance_id}
    attributes.update(extra_attributes or {})
    return GoalObject(object_id=obj.object_id, object_category=obj.category,
                      position=vec3(ros_to_habitat_position(centre)), view_points=tuple(view_points),
                      lang_desc=lang_desc, attributes=attributes)


@dataclass(frozen=True)
class StartPose:
    """An episode start: Habitat-frame position and rotation, and its geodesic distance to the first goal."""

    position: Vec3
    rotation: Quat
    geodesic_m: float


def pick_start(sim: EmbeddedSim, first_goals: Sequence[GoalObject], rng: np.random.Generator,
               min_geodesic_m: float, max_geodesic_m: float, attempts: int) -> StartPose:
    """A navigable start whose geodesic distance to the nearest view point of ``first_goals`` is in range."""
    targets = np.asarray([habitat_to_ros_position(v.position)[:2] for g in first_goals for v in g.view_points])
    if targets.size == 0:
        raise SceneGenerationError(f"home {sim.home.seed}: the first goal has no view points")
    field = sim.navgrid.distance_field(targets)
    for _ in range(attempts):
        xy = sim.navgrid.sample_navigable(rng)
        row, col = sim.navgrid.world_to_cell(xy)
        distance_m = float(field[row, col])
        if min_geodesic_m <= distance_m <= max_geodesic_m:
            yaw_rad = float(rng.uniform(-math.pi, math.pi))
            return StartPose(position=vec3(ros_to_habitat_position([xy[0], xy[1], 0.0])),
                             rotation=quat(yaw_to_habitat_quaternion(yaw_rad)), geodesic_m=distance_m)
    raise SceneGenerationError(
        f"home {sim.home.seed}: no start within {min_geodesic_m}-{max_geodesic_m} m geodesic of the first goal "
        f"after {attempts} samples")


def check_start_range(owner: str, min_geodesic_m: float, max_geodesic_m: float, attempts: int) -> None:
    """Raise SceneGenerationError naming a bad start setting of the config ``owner``."""
    if not (math.isfinite(max_geodesic_m) and 0.0 <= min_geodesic_m < max_geodesic_m):
        raise SceneGenerationError(f"{owner} needs 0 <= min_start_geodesic_m < max_start_geodesic_m, got "
                                   f"{min_geodesic_m!r}, {max_geodesic_m!r}")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise SceneGenerationError(f"{owner}.start_attempts must be an integer >= 1, got {attempts!r}")


def check_positive(owner: str, name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise SceneGenerationError(f"{owner}.{name} must be a finite number > 0, got {value!r}")
