"""Episodes in habitat_sim with the Stretch agent, returning goat_core Observations (REP 103, episode frame).

habitat_sim API used: ``habitat_sim.Simulator(cfg)``, ``sim.initialize_agent(0, habitat_sim.AgentState())``,
``agent.set_state(state)`` / ``agent.get_state()`` (``position`` [x, y, z] Habitat Y-up, ``rotation`` a
numpy-quaternion, ``sensor_states[uuid].rotation``), ``sim.step(name)`` -> observations dict with the sensors and
``"collided"`` (bool: the agent's move was blocked; habitat_sim ``simulator.py`` ``Simulator.step``, v0.2.0 to
v0.3.3; ``previous_step_collided`` is habitat-lab's wrapper, not habitat_sim), ``sim.get_sensor_observations()``
(the sensors only), ``sim.pathfinder`` with ``habitat_sim.MultiGoalShortestPath``
(``requested_start``, ``requested_ends``, ``find_path``, ``geodesic_distance``), ``sim.semantic_scene.objects``
(``semantic_id``, ``category.name()``), and ``habitat_sim.utils.common.quat_from_coeffs`` / ``quat_to_coeffs``
([x, y, z, w] coefficients, the order of episode files).

Observations: ``rgb`` (H, W, 4) uint8 RGBA, ``depth`` (H, W) float32 metres along the optical axis (0 = no return),
``semantic`` (H, W) uint32 object ids (0 = none).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from goat_core.errors import GoatError, UnreachableGoalError
from goat_core.frames import (
    habitat_pose_to_pose2d,
    habitat_quaternion_to_tilt,
    pose2d_to_habitat,
    relative_pose2d,
    yaw_to_habitat_quaternion,
)
from goat_core.types import DiscreteAction, Observation, Pose2D
from sim_bridge.habitat.config import (
    HABITAT_ACTIONS,
    HabitatConfig,
    build_spec,
    import_habitat_sim,
    make_configuration,
)


def camera_rotation_h(yaw_rad: float, tilt_rad: float) -> np.ndarray:
    """Habitat [x, y, z, w] rotation of a camera with ROS heading ``yaw_rad`` tilted up by ``tilt_rad``.

    Heading is a rotation about Habitat +Y (equal to the ROS yaw, see goat_core.frames); tilting up is a rotation
    about the camera's own +X (right), which turns its -Z look direction towards +Y. Body first, then the head:
    q = q_yaw * q_tilt (Hamilton product).
    """
    yx, yy, yz, yw = yaw_to_habitat_quaternion(yaw_rad)
    half = 0.5 * tilt_rad
    tx, ty, tz, tw = np.sin(half), 0.0, 0.0, np.cos(half)
    return np.array([yw * tx + yx * tw + yy * tz - yz * ty, yw * ty - yx * tz + yy * tw + yz * tx,
                     yw * tz + yx * ty - yy * tx + yz * tw, yw * tw - yx * tx - yy * ty - yz * tz])


def observation_from_habitat(raw: Mapping[str, np.ndarray], config: HabitatConfig, pose: Pose2D,
                             camera_tilt_rad: float, collided: bool, step: int,
                             categories: Mapping[int, str]) -> Observation:
    """habitat_sim's sensor dict -> Observation (RGBA -> RGB; semantic id 0 -> -1, 'no instance')."""
    rgb = np.ascontiguousarray(np.asarray(raw["rgb"])[..., :3], dtype=np.uint8)
    depth = np.asarray(raw["depth"], dtype=np.float32)
    if depth.ndim == 3:  # some builds return (H, W, 1)
        depth = depth[..., 0]
    segmentation = None
    in_frame: dict[int, str] = {}
    if "semantic" in raw:
        ids = np.asarray(raw["semantic"]).astype(np.int64)
        segmentation = np.where(ids == 0, -1, ids).astype(np.int32)
        in_frame = {int(i): categories[int(i)] for i in np.unique(segmentation) if int(i) in categories}
    obs = Observation(rgb=rgb, depth_m=depth, pose=pose, camera_tilt_rad=camera_tilt_rad,
                      camera_height_m=config.camera_height_m, intrinsics=config.intrinsics, collided=collided,
                      step=step, segmentation=segmentation, instance_categories=in_frame)
    obs.validate()
    return obs


class HabitatSim:
    """One habitat_sim scene with the Stretch agent; the mirror of the embedded backend's reset/step/observe."""

    def __init__(self, config: HabitatConfig, habitat_sim: Optional[Any] = None) -> None:
        self._hs = habitat_sim if habitat_sim is not None else import_habitat_sim()
        if not config.scene_id:
            raise GoatError("HabitatConfig.scene_id is empty: name a scene file or a scene of the dataset")
        self.config = config
        self._sim = self._hs.Simulator(make_configuration(build_spec(config), self._hs))
        self._agent = self._sim.initialize_agent(0)
        self._start = Pose2D(0.0, 0.0, 0.0)
        self._step = 0
        self._collided = False
        self._categories = self._semantic_categories()

    def close(self) -> None:
        self._sim.close()

    def _semantic_categories(self) -> dict[int, str]:
        scene = getattr(self._sim, "semantic_scene", None)
        objects = getattr(scene, "objects", None) or []
        categories: dict[int, str] = {}
        for obj in objects:
            if obj is None or obj.category is None:
                continue
            categories[int(obj.semantic_id)] = str(obj.category.name())
        return categories

    def reset(self, start_position_h: Union[Sequence[float], np.ndarray],
              start_rotation_xyzw_h: Union[Sequence[float], np.ndarray]) -> Observation:
        """Place the agent at an episode start (Habitat frame, as episode files store it)."""
        from habitat_sim.utils.common import quat_from_coeffs

        state = self._hs.AgentState()
        state.position = np.asarray(start_position_h, dtype=np.float32)
        state.rotation = quat_from_coeffs(np.asarray(start_rotation_xyzw_h, dtype=np.float64))
        self._agent.set_state(state)
        self._start = habitat_pose_to_pose2d(start_position_h, start_rotation_xyzw_h)
        self._step, self._collided = 0, False
        return self._observe(self._sim.get_sensor_observations())

    def reset_world(self, start_xy_m: Union[Sequence[float], np.ndarray], start_yaw_rad: float) -> Observation:
        """sim_bridge's ResetEpisode (a REP 103 world pose): the floor height comes from the navmesh.

        ``pathfinder.snap_point`` returns the nearest navigable point; in multi-storey scenes pass the Habitat
        start position to :meth:`reset` instead, as episode files give it.
        """
        position_h, rotation_h = pose2d_to_habitat(Pose2D(float(start_xy_m[0]), float(start_xy_m[1]),
                                                          float(start_yaw_rad)))
        snapped = np.asarray(self._sim.pathfinder.snap_point(position_h), dtype=np.float64)
        if not np.isfinite(snapped).all():  # snap_point answers NaN when no navigable point is found
            raise UnreachableGoalError(f"start {tuple(float(v) for v in start_xy_m)} has no navigable point near it "
                                       f"in scene {self.config.scene_id}")
        return self.reset(snapped, rotation_h)

    def render_rgb(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float, tilt_rad: float) -> np.ndarray:
        """sim_bridge's RenderView: the head camera ``camera_height_m`` above the floor at a REP 103 world pose.

        The floor height under (x, y) is the navmesh's nearest point to it at the agent's current height (the
        request carries no height); off the navmesh the agent's own floor height is used.
        """
        floor_m = float(self._agent.get_state().position[1])
        position_h, _ = pose2d_to_habitat(Pose2D(float(xy_m[0]), float(xy_m[1]), float(yaw_rad)), height_m=floor_m)
        snapped = np.asarray(self._sim.pathfinder.snap_point(position_h), dtype=np.float64)
        if np.isfinite(snapped).all():
            floor_m = float(snapped[1])
        camera_h = [float(position_h[0]), floor_m + self.config.camera_height_m, float(position_h[2])]
        return self.render_view(camera_h, [float(v) for v in camera_rotation_h(yaw_rad, tilt_rad)])

    def render_view(self, camera_position_h: Sequence[float], camera_rotation_xyzw_h: Sequence[float]) -> np.ndarray:
        """RGB from a camera pose (Habitat frame, as GOAT-Bench ``image_goals`` store it); the agent is restored."""
        from habitat_sim.utils.common import quat_from_coeffs

        saved = self._agent.get_state()
        view = self._hs.AgentState()
        view.position = np.asarray(camera_position_h, dtype=np.float32)
        view.rotation = quat_from_coeffs(np.asarray(camera_rotation_xyzw_h, dtype=np.float64))
        view.sensor_states = {s.uuid: self._hs.agent.SixDOFPose(position=view.position, rotation=view.rotation)
                              for s in build_spec(self.config).sensors}
        try:
            self._agent.set_state(view, infer_sensor_states=False)
            rgb = np.asarray(self._sim.get_sensor_observations()["rgb"])[..., :3]
        finally:
            self._agent.set_state(saved, infer_sensor_states=False)
        return np.ascontiguousarray(rgb, dtype=np.uint8)

    def step(self, action: DiscreteAction) -> Observation:
        if action is DiscreteAction.STOP:
            return self.observe()
        raw = self._sim.step(HABITAT_ACTIONS[action])
        self._step += 1
        self._collided = bool(raw["collided"])
        return self._observe(raw)

    def observe(self) -> Observation:
        return self._observe(self._sim.get_sensor_observations())

    def _observe(self, raw: Mapping[str, np.ndarray]) -> Observation:
        from habitat_sim.utils.common import quat_to_coeffs

        state = self._agent.get_state()
        world = habitat_pose_to_pose2d(state.position, quat_to_coeffs(state.rotation))
        tilt_rad = habitat_quaternion_to_tilt(quat_to_coeffs(state.sensor_states["rgb"].rotation))
        return observation_from_habitat(raw, self.config, relative_pose2d(world, self._start), tilt_rad,
                                        self._collided, self._step, self._categories)

    def geodesic_distance_m(self, start_h: Sequence[float], ends_h: Sequence[Sequence[float]]) -> float:
        """Shortest navmesh path from ``start_h`` to the nearest of ``ends_h`` (view points); inf if none."""
        path = self._hs.MultiGoalShortestPath()
        path.requested_start = np.asarray(start_h, dtype=np.float32)
        path.requested_ends = [np.asarray(e, dtype=np.float32) for e in ends_h]
        if not self._sim.pathfinder.find_path(path):
            return float("inf")
        return float(path.geodesic_distance)
