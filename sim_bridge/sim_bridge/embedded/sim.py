"""The embedded simulator: a Stretch-like disk robot with a tilting RGB-D head camera in a procedural home.

One discrete action is one world update. The base is a disk of ``robot_radius_m`` moving on the navigable
grid; a blocked forward step stops at the obstacle, as habitat-sim does with ``allow_sliding: False`` (the
setting of GOAT-Bench's and LangMap's task configs), or slides along it like the navmesh's ``try_step`` when
``allow_sliding`` is set. The camera sits ``camera_height_m`` above the base centre, looking along the base
heading tilted by ``camera_tilt_rad`` (positive up). Poses in observations are GPS+compass readings: the base
pose in the episode frame, whose origin is the pose given to ``reset``.

Small objects can be picked up and placed on another receptacle (``pick_up`` / ``place_on``, the experience
phase of FindingDory): the rendered world, segmentation and ``object_by_instance_id`` follow the move. Only
objects standing on a receptacle move, and the navigable grid holds floor objects only, so it never changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence, Union

import numpy as np

from goat_core.errors import SceneGenerationError, UnreachableGoalError
from goat_core.types import ActionSizes, CameraIntrinsics, DiscreteAction, Observation, Pose2D
from sim_bridge.embedded.home import STRETCH_BASE_RADIUS_M, Home, ObjectSpec
from sim_bridge.embedded.navgrid import DEFAULT_GRID_RESOLUTION_M, NavGrid
from sim_bridge.embedded.realism import RealismConfig, SimRealism
from sim_bridge.embedded.world import RenderedView, Renderer

__all__ = ["EmbeddedSim", "RenderedView", "SimConfig"]

MOVE_INCREMENT_M = 0.01  # a forward step is checked against the grid in increments no longer than this
# A carried object is put this far below the floor: under the floor and past the 50 m far clip plane.
CARRIED_DEPTH_M = 100.0
SURFACE_PROBE_M = 0.05  # rays looking for a model receptacle's surface start this far above its bounding box
SURFACE_STEP_M = 0.02  # a footprint whose probes find heights further apart than this straddles a step


@dataclass(frozen=True)
class SimConfig:
    """Embodiment and sensor settings (GOAT-Bench's Stretch: 360 x 640 portrait, 42 deg HFOV, head 1.31 m)."""

    width_px: int = 360
    height_px: int = 640
    hfov_deg: float = 42.0
    camera_height_m: float = 1.31
    robot_radius_m: float = STRETCH_BASE_RADIUS_M
    action_sizes: ActionSizes = field(default_factory=ActionSizes)
    min_tilt_rad: float = math.radians(-90.0)
    max_tilt_rad: float = math.radians(30.0)
    grid_resolution_m: float = DEFAULT_GRID_RESOLUTION_M
    allow_sliding: bool = False  # GOAT-Bench config/tasks/goat_stretch_hm3d.yaml l.78: allow_sliding: False
    # Depth noise, motion noise and odometry drift (sim_bridge.embedded.realism); the default is ideal.
    realism: RealismConfig = field(default_factory=RealismConfig)

    def __post_init__(self) -> None:
        for name in ("width_px", "height_px"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise SceneGenerationError(f"SimConfig.{name} must be a positive integer, got {value!r}")
        if not 0.0 < self.hfov_deg < 180.0:
            raise SceneGenerationError(f"SimConfig.hfov_deg must be in (0, 180), got {self.hfov_deg!r}")
        for name in ("camera_height_m", "robot_radius_m", "grid_resolution_m"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise SceneGenerationError(f"SimConfig.{name} must be a positive number, got {value!r}")
        if not -math.pi / 2 <= self.min_tilt_rad <= 0.0 <= self.max_tilt_rad <= math.pi / 2:
            raise SceneGenerationError(
                "SimConfig tilt limits must satisfy -pi/2 <= min_tilt_rad <= 0 <= max_tilt_rad <= pi/2, got "
                f"min_tilt_rad={self.min_tilt_rad!r}, max_tilt_rad={self.max_tilt_rad!r}")


def _wrap(angle_rad: float) -> float:
    """Angle in [-pi, pi)."""
    return (angle_rad + math.pi) % (2.0 * math.pi) - math.pi


class EmbeddedSim:
    """MuJoCo-rendered home with ground-truth instances; close it (or use ``with``) to free the GL context."""

    def __init__(self, home: Home, config: SimConfig = SimConfig()) -> None:
        self._home = home
        self._config = config
        self._intrinsics = CameraIntrinsics.from_hfov(config.width_px, config.height_px,
                                                      math.radians(config.hfov_deg))
        self._navgrid = NavGrid.from_home(home, config.grid_resolution_m, config.robot_radius_m)
        self._objects = {obj.instance_id: obj for obj in home.objects}  # current state (pick_up / place_on)
        self._carried: set[int] = set()
        self._renderer = Renderer(home, config.width_px, config.height_px, self._intrinsics.vfov_rad)
        # Until the first reset the robot stands on a navigable cell drawn from the home seed.
        start = self._navgrid.sample_navigable(np.random.default_rng(home.seed))
        self._xy = start.copy()
        self._yaw_rad = 0.0
        self._tilt_rad = 0.0
        self._start = Pose2D(float(start[0]), float(start[1]), 0.0)
        self._step = 0
        self._collided = False
        self._realism = SimRealism(config.realism)

    def __enter__(self) -> EmbeddedSim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._renderer.close()

    @property
    def home(self) -> Home:
        return self._home

    @property
    def navgrid(self) -> NavGrid:
        return self._navgrid

    @property
    def config(self) -> SimConfig:
        return self._config

    @property
    def intrinsics(self) -> CameraIntrinsics:
        return self._intrinsics

    @property
    def renderer(self) -> Renderer:
        return self._renderer

    @property
    def base_pose_world(self) -> Pose2D:
        return Pose2D(float(self._xy[0]), float(self._xy[1]), self._yaw_rad)

    @property
    def episode_start_world(self) -> Pose2D:
        """The world pose the episode frame is anchored at (the last reset)."""
        return self._start

    @property
    def camera_tilt_rad(self) -> float:
        return self._tilt_rad

    def reset(self, start_xy_m: Union[Sequence[float], np.ndarray], start_yaw_rad: float) -> Observation:
        """Place the robot, level the camera, zero the step count and anchor the episode frame here."""
        xy = np.asarray(start_xy_m, dtype=np.float64).reshape(-1)
        if xy.shape != (2,) or not np.isfinite(xy).all() or not math.isfinite(start_yaw_rad):
            raise UnreachableGoalError(
                f"reset needs a finite (x, y) and yaw, got {start_xy_m!r}, {start_yaw_rad!r}")
        if not self._navgrid.is_navigable(xy):
            raise UnreachableGoalError(
                f"start position {tuple(float(v) for v in xy)} is not navigable in home {self._home.seed}")
        self._xy = xy.copy()
        self._yaw_rad = _wrap(float(start_yaw_rad))
        self._tilt_rad = 0.0
        self._start = Pose2D(float(xy[0]), float(xy[1]), self._yaw_rad)
        self._step = 0
        self._collided = False
        self._realism.reset(self._start)
        return self.observe()

    def teleport(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float) -> Observation:
        """Put the base at a navigable pose without an action; the episode frame, tilt and step count stay.

        For scripted oracles only: FindingDory's oracle teleports onto the exact view point it places from
        (findingdory-habitat ``policies/heuristic/oracle_agent.py`` l.257-262)."""
        xy = np.asarray(xy_m, dtype=np.float64).reshape(-1)
        if xy.shape != (2,) or not self._navgrid.is_navigable(xy) or not math.isfinite(yaw_rad):
            raise UnreachableGoalError(f"teleport needs a navigable (x, y) and a finite yaw, got {xy_m!r}, {yaw_rad!r}")
        before = self.base_pose_world
        self._xy = xy.copy()
        self._yaw_rad = _wrap(float(yaw_rad))
        self._realism.moved(before, self.base_pose_world)
        return self.observe()

    def reset_world(self, start_xy_m: Union[Sequence[float], np.ndarray], start_yaw_rad: float) -> Observation:
        """sim_bridge's reset (``sim_bridge.backends.BridgeSim``): the world frame here is REP 103 already."""
        return self.reset(start_xy_m, start_yaw_rad)

    def step(self, action: DiscreteAction) -> Observation:
        """Apply one action (one world update) and observe."""
        action = DiscreteAction(action)
        sizes = self._config.action_sizes
        self._collided = False
        if self._config.realism.is_ideal:
            self._step_base_ideal(action)
        else:
            self._step_base_real(action)
        if action is DiscreteAction.LOOK_UP:
            self._tilt_rad = min(self._tilt_rad + sizes.look_rad, self._config.max_tilt_rad)
        elif action is DiscreteAction.LOOK_DOWN:
            self._tilt_rad = max(self._tilt_rad - sizes.look_rad, self._config.min_tilt_rad)
        self._step += 1
        return self.observe()

    def _step_base_ideal(self, action: DiscreteAction) -> None:
        """Exact moves and turns (GOAT-Bench)."""
        sizes = self._config.action_sizes
        if action is DiscreteAction.MOVE_FORWARD:
            self._move_forward(sizes.forward_m)
        elif action is DiscreteAction.TURN_LEFT:
            self._yaw_rad = _wrap(self._yaw_rad + sizes.turn_rad)
        elif action is DiscreteAction.TURN_RIGHT:
            self._yaw_rad = _wrap(self._yaw_rad - sizes.turn_rad)

    def _step_base_real(self, action: DiscreteAction) -> None:
        """Moves and turns with the realism profile's motion error; the odometry sees what really happened."""
        sizes = self._config.action_sizes
        if action is DiscreteAction.MOVE_FORWARD:
            motion = self._realism.forward(sizes.forward_m)
        elif action in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT):
            sign = 1.0 if action is DiscreteAction.TURN_LEFT else -1.0
            motion = self._realism.turn(sign * sizes.turn_rad)
        else:
            return
        before = self.base_pose_world
        dx, dy, dyaw = motion
        distance = math.hypot(dx, dy)
        if distance > 0.0:
            self._move_forward(distance, math.atan2(dy, dx))
        if action is not DiscreteAction.MOVE_FORWARD:
            self._collided = False  # a turn's drift that meets a wall is not a collision of the action
        self._yaw_rad = _wrap(self._yaw_rad + dyaw)
        self._realism.moved(before, self.base_pose_world)

    def _move_forward(self, distance_m: float, heading_offset_rad: float = 0.0) -> None:
        """Advance in small increments; a blocked increment slides along its free axis or stops the move."""
        increments = max(1, math.ceil(distance_m / MOVE_INCREMENT_M - 1e-9))
        heading = self._yaw_rad + heading_offset_rad
        delta = distance_m / increments * np.array([math.cos(heading), math.sin(heading)])
        start = self._xy.copy()
        for _ in range(increments):
            moved = self._try_increment(delta)
            if moved is None:
                break
            self._xy = moved
        travelled = float(np.linalg.norm(self._xy - start))
        self._collided = travelled < distance_m - 1e-6

    def _try_increment(self, delta: np.ndarray) -> Optional[np.ndarray]:
        target = self._xy + delta
        if self._navgrid.is_navigable(target):
            return target
        if not self._config.allow_sliding:
            return None
        # Slide: keep the component of the increment along the blocked surface (walls and footprints are
        # axis-aligned), the larger one first, as habitat-sim's navmesh slides along its boundary.
        for axis in np.argsort(-np.abs(delta)):
            if abs(delta[axis]) < 1e-12:
                continue
            slid = self._xy.copy()
            slid[axis] += delta[axis]
            if self._navgrid.is_navigable(slid):
                return slid
        return None

    def episode_pose(self) -> Pose2D:
        """GPS+compass: the base pose relative to the episode start (x forward, y left at the start)."""
        dx, dy = self._xy[0] - self._start.x_m, self._xy[1] - self._start.y_m
        c, s = math.cos(self._start.yaw_rad), math.sin(self._start.yaw_rad)
        return Pose2D(float(c * dx + s * dy), float(-s * dx + c * dy),
                      _wrap(self._yaw_rad - self._start.yaw_rad))

    def odometry_pose(self) -> Pose2D:
        """What the robot believes: wheel odometry in the episode frame (the true pose when it does not drift)."""
        return self._realism.odometry.pose if self._config.realism.pose_drifts else self.episode_pose()

    def observe(self) -> Observation:
        """The current observation, rendered from the robot's head camera; pose and depth as the profile has
        them (``episode_pose`` stays the truth, for evaluation only)."""
        view = self.render_view(self._xy, self._yaw_rad, self._tilt_rad)
        # Pixel counts per id (+1 so the background -1 lands in bin 0); ids with pixels are in frame.
        present = np.flatnonzero(np.bincount(view.segmentation.ravel() + 1)[1:])
        categories = {int(i): self._objects[int(i)].category for i in present if int(i) in self._objects}
        return Observation(
            rgb=view.rgb, depth_m=self._realism.depth(view.depth_m, self._intrinsics), pose=self.odometry_pose(),
            camera_tilt_rad=self._tilt_rad,
            camera_height_m=self._config.camera_height_m, intrinsics=self._intrinsics,
            collided=self._collided, step=self._step, segmentation=view.segmentation,
            instance_categories=categories)

    def render_view(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float,
                    tilt_rad: float = 0.0) -> RenderedView:
        """What the head camera would see from a world pose, without moving the robot."""
        eye = (float(xy_m[0]), float(xy_m[1]), self._config.camera_height_m)
        return self._renderer.render(eye, yaw_rad, tilt_rad)

    def render_segmentation(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float,
                            tilt_rad: float = 0.0) -> np.ndarray:
        """The instance segmentation of :meth:`render_view` alone (the colour pass is not drawn)."""
        eye = (float(xy_m[0]), float(xy_m[1]), self._config.camera_height_m)
        return self._renderer.render_segmentation(eye, yaw_rad, tilt_rad)

    def render_rgb(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float, tilt_rad: float) -> np.ndarray:
        """sim_bridge's RenderView (``sim_bridge.backends.BridgeSim``): the colour image of :meth:`render_view`."""
        return self.render_view(xy_m, yaw_rad, tilt_rad).rgb

    def object_by_instance_id(self, instance_id: int) -> ObjectSpec:
        try:
            return self._objects[int(instance_id)]
        except KeyError:
            raise SceneGenerationError(f"home {self._home.seed} has no instance id {instance_id!r}") from None

    def objects_of_category(self, category: str) -> list[ObjectSpec]:
        return [obj for obj in self._objects.values() if obj.category == category]

    # ---------------------------------------------------------------- moving objects

    def current_objects(self) -> list[ObjectSpec]:
        """The objects standing in the home now, in home order (carried ones left out)."""
        return [obj for obj in self._objects.values() if obj.instance_id not in self._carried]

    def is_carried(self, instance_id: int) -> bool:
        return int(instance_id) in self._carried

    def pick_up(self, instance_id: int) -> ObjectSpec:
        """Take a small object off its receptacle: it leaves the rendered world until ``place_on``.

        Returns the spec of where it stood. Raises SceneGenerationError for receptacles, floor objects and
        objects already carried.
        """
        obj = self._movable(instance_id)
        if obj.instance_id in self._carried:
            raise SceneGenerationError(f"object {obj.object_id} is already carried")
        original = self._home_object(obj.instance_id)
        self._renderer.set_object_offset(obj.instance_id, (0.0, 0.0, -CARRIED_DEPTH_M - original.position_m[2]))
        self._carried.add(obj.instance_id)
        return obj

    def place_on(self, instance_id: int, receptacle_id: str,
                 centre_xyz_m: Union[Sequence[float], np.ndarray]) -> ObjectSpec:
        """Put a small object on ``receptacle_id`` with its bounding-box centre at ``centre_xyz_m`` (world).

        The caller chooses a free spot on the receptacle's top; this checks that the footprint lies on the top
        and that the base rests on its surface (:meth:`surface_height_m`). Returns the object's new spec
        (position, bounding box, parts, receptacle and room follow the move).
        """
        obj = self._movable(instance_id)
        receptacle = self._receptacle(receptacle_id)
        centre = np.asarray(centre_xyz_m, dtype=np.float64).reshape(-1)
        if centre.shape != (3,) or not np.isfinite(centre).all():
            raise SceneGenerationError(f"place_on needs a finite (x, y, z) centre, got {centre_xyz_m!r}")
        half = (np.asarray(obj.bbox_max_m) - np.asarray(obj.bbox_min_m)) / 2.0
        lo, hi = centre - half, centre + half
        top = receptacle.bbox_max_m
        inside = (lo[0] >= receptacle.bbox_min_m[0] - 1e-6 and hi[0] <= top[0] + 1e-6
                  and lo[1] >= receptacle.bbox_min_m[1] - 1e-6 and hi[1] <= top[1] + 1e-6)
        surface_m = self.surface_height_m(receptacle.object_id, lo[:2], hi[:2]) if inside else None
        if surface_m is None or abs(lo[2] - surface_m) > 1e-3:
            raise SceneGenerationError(
                f"object {obj.object_id} with centre {centre.round(3).tolist()} does not stand on top of "
                f"{receptacle.object_id} (top {np.round(receptacle.bbox_min_m[:2], 3).tolist()}-"
                f"{np.round(top, 3).tolist()}, surface under it "
                f"{'none' if surface_m is None else round(surface_m, 3)} m)")
        original = self._home_object(obj.instance_id)
        shift = centre - np.asarray(obj.position_m)
        moved = replace(  # an object on a receptacle is in the receptacle's room
            obj, receptacle_id=receptacle.object_id, position_m=_vec3(centre), bbox_min_m=_vec3(lo),
            bbox_max_m=_vec3(hi), room_id=receptacle.room_id, room_type=receptacle.room_type,
            parts=tuple(replace(p, centre_m=_vec3(np.asarray(p.centre_m) + shift)) for p in obj.parts))
        self._renderer.set_object_offset(obj.instance_id, centre - np.asarray(original.position_m))
        self._objects[obj.instance_id] = moved
        self._carried.discard(obj.instance_id)
        return moved

    def surface_height_m(self, receptacle_id: str, lo_xy_m: Union[Sequence[float], np.ndarray],
                         hi_xy_m: Union[Sequence[float], np.ndarray]) -> Optional[float]:
        """Height (world z) an object with the footprint [lo_xy_m, hi_xy_m] rests at on top of a receptacle.

        A primitive receptacle is a box: its top. A model's top surface may lie well below its bounding box
        (a couch's seat under its backrest, a table top under a lamp's shade): rays are cast straight down
        (``mj_ray``) at the footprint's centre and corners, and the object rests on the highest point they hit.
        None when a ray hits something else first (the footprint overhangs the edge or something stands
        there) or the hits differ by more than SURFACE_STEP_M (it would straddle a step).
        """
        receptacle = self._receptacle(receptacle_id)
        if receptacle.model is None:
            return float(receptacle.bbox_max_m[2])
        lo = np.asarray(lo_xy_m, dtype=np.float64).reshape(2)
        hi = np.asarray(hi_xy_m, dtype=np.float64).reshape(2)
        inset = np.minimum((hi - lo) / 2.0, 1e-3)  # corners just inside the footprint, off its exact edge
        a, b = lo + inset, hi - inset
        start_z = float(receptacle.bbox_max_m[2]) + SURFACE_PROBE_M
        probes = [(lo + hi) / 2.0, a, b, np.array([a[0], b[1]]), np.array([b[0], a[1]])]
        heights = []
        for x, y in probes:
            distance, hit = self._renderer.cast_ray((float(x), float(y), start_z), (0.0, 0.0, -1.0))
            if hit != receptacle.instance_id:
                return None
            heights.append(start_z - distance)
        if max(heights) - min(heights) > SURFACE_STEP_M:
            return None
        return max(heights)

    def _home_object(self, instance_id: int) -> ObjectSpec:
        return next(o for o in self._home.objects if o.instance_id == instance_id)

    def _movable(self, instance_id: int) -> ObjectSpec:
        obj = self.object_by_instance_id(instance_id)
        if obj.is_receptacle or obj.receptacle_id is None:
            raise SceneGenerationError(
                f"only small objects standing on a receptacle can be moved; {obj.object_id} ({obj.category}) "
                "is furniture")
        return obj

    def _receptacle(self, object_id: str) -> ObjectSpec:
        found = next((o for o in self._objects.values() if o.object_id == object_id), None)
        if found is None or not found.is_receptacle:
            raise SceneGenerationError(f"{object_id!r} is not a receptacle of home {self._home.seed}")
        return found


def _vec3(values: Union[Sequence[float], np.ndarray]) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in values)
    return (x, y, z)
