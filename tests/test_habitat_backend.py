"""The Habitat backend without habitat_sim: frames on known poses, the Stretch configuration, observations.

Tests that need habitat_sim itself skip with the reason (it installs only with conda, see docs/robot.md).
"""

from __future__ import annotations

import math
import os
import sys
import types
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

from goat_core.errors import ConfigError, GoatError
from goat_core.frames import (
    habitat_pose_to_pose2d,
    habitat_quaternion_to_tilt,
    habitat_quaternion_to_yaw,
    habitat_to_episode_frame,
    habitat_to_ros_position,
    habitat_to_ros_quaternion,
    pose2d_to_habitat,
    ros_to_habitat_quaternion,
)
from goat_core.types import ActionSizes, DiscreteAction, Pose2D
from sim_bridge import backends
from sim_bridge.backends import HabitatSceneSettings, make_scene_loader, resolve_habitat_scene
from sim_bridge.embedded.sim import SimConfig
from sim_bridge.habitat import config as habitat_config
from sim_bridge.habitat.config import (
    HABITAT_ACTIONS,
    HabitatConfig,
    HabitatUnavailableError,
    build_spec,
    import_habitat_sim,
    make_configuration,
)
from sim_bridge.habitat.sim import HabitatSim, camera_rotation_h, observation_from_habitat

S45, C45 = math.sin(math.radians(45.0)), math.cos(math.radians(45.0))
YAW_90_H = [0.0, S45, 0.0, C45]  # Habitat [x, y, z, w]: 90 deg about +Y (up)


def _qmul(a: list[float], b: list[float]) -> list[float]:
    """Hamilton product of [x, y, z, w] quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


# ----------------------------------------------------------------------------------------- known poses


def test_habitat_agent_pose_to_ros_pose() -> None:
    # Habitat: 1 m right (+x), 0.2 m up, 3 m ahead (-z) of the origin, turned 90 deg left about +Y.
    assert habitat_to_ros_position([1.0, 0.2, -3.0]) == pytest.approx([3.0, -1.0, 0.2])
    assert habitat_to_ros_quaternion(YAW_90_H) == pytest.approx([0.0, 0.0, S45, C45])  # ROS yaw +90 deg
    pose = habitat_pose_to_pose2d([1.0, 0.2, -3.0], YAW_90_H)
    assert (pose.x_m, pose.y_m, pose.yaw_rad) == pytest.approx((3.0, -1.0, math.pi / 2))


def test_ros_pose_back_to_habitat() -> None:
    position_h, rotation_h = pose2d_to_habitat(Pose2D(3.0, -1.0, math.pi / 2), height_m=0.2)
    assert position_h == pytest.approx([1.0, 0.2, -3.0])
    assert rotation_h == pytest.approx(YAW_90_H)
    assert ros_to_habitat_quaternion([0.0, 0.0, S45, C45]) == pytest.approx(YAW_90_H)


@pytest.mark.parametrize("yaw_deg", [-170.0, -30.0, 0.0, 30.0, 135.0])
def test_yaw_round_trip(yaw_deg: float) -> None:
    pose = Pose2D(1.25, -0.5, math.radians(yaw_deg))
    position_h, rotation_h = pose2d_to_habitat(pose)
    back = habitat_pose_to_pose2d(position_h, rotation_h)
    assert (back.x_m, back.y_m, back.yaw_rad) == pytest.approx((pose.x_m, pose.y_m, pose.yaw_rad))


def test_sensor_tilt_and_heading_of_a_looking_up_camera() -> None:
    s15, c15 = math.sin(math.radians(15.0)), math.cos(math.radians(15.0))
    pitch_up_30 = [s15, 0.0, 0.0, c15]  # about Habitat +X (right): -Z turns towards +Y (up)
    sensor = _qmul(YAW_90_H, pitch_up_30)  # body yaw, then the head's tilt
    assert habitat_quaternion_to_tilt(sensor) == pytest.approx(math.radians(30.0))
    assert habitat_quaternion_to_yaw(sensor) == pytest.approx(math.pi / 2)


@pytest.mark.parametrize(("yaw_deg", "tilt_deg"), [(0.0, 0.0), (90.0, 30.0), (-150.0, -30.0), (45.0, -60.0)])
def test_camera_rotation_composes_heading_and_tilt(yaw_deg: float, tilt_deg: float) -> None:
    q = camera_rotation_h(math.radians(yaw_deg), math.radians(tilt_deg))
    assert habitat_quaternion_to_yaw(q) == pytest.approx(math.radians(yaw_deg))
    assert habitat_quaternion_to_tilt(q) == pytest.approx(math.radians(tilt_deg))
    assert np.linalg.norm(q) == pytest.approx(1.0)


def test_goal_point_in_the_episode_frame() -> None:
    # Start at Habitat (1, 0.2, -3) facing ROS +y; an object 2 m further along Habitat -x is 2 m straight ahead.
    p = habitat_to_episode_frame([-1.0, 0.7, -3.0], [1.0, 0.2, -3.0], YAW_90_H)
    assert p == pytest.approx([2.0, 0.0, 0.5])


# ------------------------------------------------------------------------------------ configuration


def test_stretch_spec_matches_goat_bench() -> None:
    spec = build_spec(HabitatConfig(scene_id="data/scene_datasets/hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb"))
    assert (spec.radius_m, spec.height_m) == (0.17, 1.41)
    assert [s.uuid for s in spec.sensors] == ["rgb", "depth", "semantic"]
    for sensor in spec.sensors:
        assert sensor.resolution == (640, 360)  # rows, columns: portrait 360 wide x 640 tall
        assert sensor.position == (0.0, 1.31, 0.0)
        assert sensor.hfov_deg == 42.0
    assert spec.actions == pytest.approx({"move_forward": 0.25, "turn_left": 30.0, "turn_right": 30.0,
                                          "look_up": 30.0, "look_down": 30.0})
    assert set(HABITAT_ACTIONS.values()) == set(spec.actions)
    assert spec.simulator["scene_id"].endswith("TEEsavR23oF.basis.glb")


def test_step_sizes_are_parameters() -> None:
    spec = build_spec(HabitatConfig(sizes=ActionSizes(turn_rad=math.radians(10.0)), semantic_sensor=False))
    assert spec.actions["turn_left"] == pytest.approx(10.0)
    assert [s.uuid for s in spec.sensors] == ["rgb", "depth"]


def test_intrinsics_of_the_head_camera() -> None:
    intr = HabitatConfig().intrinsics
    assert (intr.width, intr.height) == (360, 640)
    assert math.degrees(intr.hfov_rad) == pytest.approx(42.0)


@pytest.mark.parametrize(("kwargs", "match"), [({"agent_radius_m": 0.0}, "agent_radius_m"),
                                               ({"hfov_deg": 190.0}, "hfov_deg"),
                                               ({"camera_height_m": 1.5}, "above the agent height"),
                                               ({"image_width_px": 0}, "image size")])
def test_config_rejects_bad_values(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        HabitatConfig(**kwargs)


def _fake_habitat_sim() -> Any:
    """A double of the habitat_sim classes make_configuration touches: records what it is given."""
    ns = types.SimpleNamespace
    return ns(
        SimulatorConfiguration=ns, CameraSensorSpec=ns,
        SensorType=ns(COLOR="COLOR", DEPTH="DEPTH", SEMANTIC="SEMANTIC"), SensorSubType=ns(PINHOLE="PINHOLE"),
        agent=ns(AgentConfiguration=ns, ActionSpec=lambda name, actuation: (name, actuation.amount),
                 ActuationSpec=lambda amount: ns(amount=amount)),
        Configuration=lambda sim_cfg, agents: ns(sim_cfg=sim_cfg, agents=agents),
    )


class _Quaternion:
    """What habitat_sim's quat_from_coeffs returns (a numpy-quaternion); only its coefficients are used here."""

    def __init__(self, xyzw: Any) -> None:
        self.xyzw = np.asarray(xyzw, dtype=np.float64)


class _AgentState:
    """habitat_sim.AgentState: position (Habitat Y-up), rotation, sensor_states[uuid] (world-frame SixDOFPose)."""

    def __init__(self) -> None:
        self.position = np.zeros(3, np.float32)
        self.rotation = _Quaternion([0.0, 0.0, 0.0, 1.0])
        self.sensor_states: dict[str, Any] = {}


class _Agent:
    """habitat_sim.Agent with the Stretch action space: moves and turns the body, tilts the sensors. A wall at
    Habitat z = WALL_Z blocks forward motion, as the navmesh does (allow_sliding: the move is cut short)."""

    WALL_Z = -0.6

    def __init__(self, agent_cfg: Any) -> None:
        from scipy.spatial.transform import Rotation

        self._rot = Rotation
        self.cfg = agent_cfg
        self.position = np.zeros(3)
        self.body = Rotation.identity()
        self.tilt_rad = 0.0
        self.sensor_world: Optional[Any] = None  # sensors placed by set_state(infer_sensor_states=False)

    def _sensor_rotation(self) -> _Quaternion:
        if self.sensor_world is not None:
            return _Quaternion(self.sensor_world.as_quat())
        return _Quaternion((self.body * self._rot.from_euler("x", self.tilt_rad)).as_quat())

    def camera_tilt_rad(self) -> float:
        """What the sensors render: the elevation of their world rotation."""
        return habitat_quaternion_to_tilt(self._sensor_rotation().xyzw)

    def get_state(self) -> _AgentState:
        state = _AgentState()
        state.position, state.rotation = self.position.astype(np.float32), _Quaternion(self.body.as_quat())
        state.sensor_states = {s.uuid: types.SimpleNamespace(position=state.position,
                                                             rotation=self._sensor_rotation())
                               for s in self.cfg.sensor_specifications}
        return state

    def set_state(self, state: _AgentState, infer_sensor_states: bool = True) -> None:
        self.position = np.asarray(state.position, np.float64)
        self.body = self._rot.from_quat(state.rotation.xyzw)
        self.tilt_rad, self.sensor_world = 0.0, None
        if not infer_sensor_states:  # the sensors' world rotations are given
            self.sensor_world = self._rot.from_quat(state.sensor_states["rgb"].rotation.xyzw)
            self.tilt_rad = float((self.body.inv() * self.sensor_world).as_euler("xyz")[0])

    def act(self, name: str) -> bool:
        """One action; True when it collided (habitat_sim's Agent.act)."""
        _, amount = self.cfg.action_space[name]
        self.sensor_world = None  # the head keeps its tilt relative to the body from here on
        if name == "move_forward":
            target = self.position + self.body.apply([0.0, 0.0, -amount])
            if target[2] < self.WALL_Z:
                self.position = target + (target - self.position) * (self.WALL_Z - target[2]) / (
                    target[2] - self.position[2])
                return True
            self.position = target
        elif name in ("turn_left", "turn_right"):
            self.body = self.body * self._rot.from_euler("y", amount if name == "turn_left" else -amount, degrees=True)
        else:
            self.tilt_rad += math.radians(amount if name == "look_up" else -amount)
        return False


class _Simulator:
    """habitat_sim.Simulator with its real return shapes: ``step(name)`` -> the sensors' dict plus ``"collided"``
    (bool), ``get_sensor_observations()`` -> the sensors' dict; no ``previous_step_collided`` (habitat-lab's)."""

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        self.agent: Optional[_Agent] = None
        self.pathfinder = types.SimpleNamespace(snap_point=lambda p: np.array([p[0], 0.0, p[2]], np.float32))
        self.semantic_scene = types.SimpleNamespace(objects=[])
        self.closed = False

    def initialize_agent(self, agent_id: int) -> _Agent:
        self.agent = _Agent(self.cfg.agents[agent_id])
        return self.agent

    def get_sensor_observations(self) -> dict[str, np.ndarray]:
        assert self.agent is not None
        obs: dict[str, np.ndarray] = {}
        for spec in self.agent.cfg.sensor_specifications:
            rows, cols = spec.resolution
            if spec.sensor_type == "COLOR":  # RGBA; red encodes the camera height (cm), green its tilt (deg + 128)
                height_cm = round(100 * self.agent.position[1])
                tilt = round(math.degrees(self.agent.camera_tilt_rad())) + 128
                obs[spec.uuid] = np.full((rows, cols, 4), (height_cm, tilt, 0, 255), np.uint8)
            elif spec.sensor_type == "DEPTH":
                obs[spec.uuid] = np.full((rows, cols), 2.0, np.float32)
            else:
                obs[spec.uuid] = np.zeros((rows, cols), np.uint32)
        return obs

    def step(self, action: str) -> dict[str, Any]:
        assert self.agent is not None
        collided = self.agent.act(action)
        obs: dict[str, Any] = dict(self.get_sensor_observations())
        obs["collided"] = collided
        return obs

    def close(self) -> None:
        self.closed = True


def _habitat_sim_double(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The configuration double plus the Simulator, AgentState and utils.common of habitat_sim, importable."""
    hs = _fake_habitat_sim()
    hs.Simulator, hs.AgentState = _Simulator, _AgentState
    hs.agent.SixDOFPose = types.SimpleNamespace
    common = types.SimpleNamespace(quat_from_coeffs=_Quaternion, quat_to_coeffs=lambda q: q.xyzw)
    monkeypatch.setitem(sys.modules, "habitat_sim", hs)
    monkeypatch.setitem(sys.modules, "habitat_sim.utils", types.SimpleNamespace(common=common))
    monkeypatch.setitem(sys.modules, "habitat_sim.utils.common", common)
    return hs


def test_the_habitat_backend_loop_on_habitat_sims_return_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    hs = _habitat_sim_double(monkeypatch)
    sim = HabitatSim(HabitatConfig(scene_id="scene.glb", semantic_sensor=False), habitat_sim=hs)
    obs = sim.reset([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
    assert (obs.pose.x_m, obs.pose.y_m, obs.pose.yaw_rad, obs.step, obs.collided) == (0.0, 0.0, 0.0, 0, False)
    assert obs.rgb.shape == (640, 360, 3) and obs.depth_m.shape == (640, 360)
    obs = sim.step(DiscreteAction.MOVE_FORWARD)  # Habitat -Z is ROS +x: 0.25 m ahead, the wall at 0.6 m
    assert obs.pose.x_m == pytest.approx(0.25) and not obs.collided and obs.step == 1
    sim.step(DiscreteAction.MOVE_FORWARD)
    obs = sim.step(DiscreteAction.MOVE_FORWARD)  # cut short at the wall
    assert obs.collided and obs.pose.x_m == pytest.approx(0.6)
    obs = sim.step(DiscreteAction.TURN_LEFT)
    assert not obs.collided and obs.pose.yaw_rad == pytest.approx(math.radians(30.0))
    obs = sim.step(DiscreteAction.LOOK_DOWN)
    assert obs.camera_tilt_rad == pytest.approx(math.radians(-30.0)) and int(obs.rgb[0, 0, 1]) == 128 - 30
    assert sim.observe().step == 5 and not sim.observe().collided
    view = sim.render_view([1.0, 1.31, 2.0], camera_rotation_h(0.0, math.radians(10.0)))
    assert view.shape == (640, 360, 3) and tuple(view[0, 0, :2]) == (131, 128 + 10)
    after = sim.observe()  # the agent is back where it was, head still tilted down
    assert after.pose.x_m == pytest.approx(0.6) and after.camera_tilt_rad == pytest.approx(math.radians(-30.0))
    sim.close()
    assert sim._sim.closed


def test_make_configuration_fills_the_habitat_sim_objects() -> None:
    cfg = make_configuration(build_spec(HabitatConfig(scene_id="scene.glb")), _fake_habitat_sim())
    # GOAT-Bench's and LangMap's configs set allow_sliding: False; so does ours by default
    assert cfg.sim_cfg.scene_id == "scene.glb" and cfg.sim_cfg.allow_sliding is False
    (agent,) = cfg.agents
    assert (agent.height, agent.radius) == (1.41, 0.17)
    assert [(s.uuid, s.sensor_type, s.resolution, s.hfov) for s in agent.sensor_specifications] == [
        ("rgb", "COLOR", [640, 360], 42.0), ("depth", "DEPTH", [640, 360], 42.0),
        ("semantic", "SEMANTIC", [640, 360], 42.0)]
    assert agent.action_space["look_down"] == ("look_down", pytest.approx(30.0))


def test_observation_from_habitat_sensors() -> None:
    config = HabitatConfig()
    h, w = 640, 360
    semantic = np.zeros((h, w), np.uint32)
    semantic[100:200, 50:80] = 5
    raw: dict[str, np.ndarray] = {"rgb": np.full((h, w, 4), 200, np.uint8),
                                  "depth": np.full((h, w, 1), 2.5, np.float32), "semantic": semantic}
    obs = observation_from_habitat(raw, config, Pose2D(0.5, 0.0, 0.1), math.radians(-30.0), collided=True,
                                   step=3, categories={5: "chair", 7: "bed"})
    assert obs.rgb.shape == (h, w, 3) and obs.depth_m.shape == (h, w)
    assert obs.segmentation is not None and set(np.unique(obs.segmentation)) == {-1, 5}
    assert dict(obs.instance_categories) == {5: "chair"}
    assert obs.collided and obs.step == 3 and obs.camera_height_m == 1.31


def test_missing_habitat_sim_names_the_conda_install() -> None:
    try:
        import habitat_sim  # noqa: F401
    except ImportError:
        with pytest.raises(HabitatUnavailableError, match="conda install habitat-sim"):
            import_habitat_sim()
        with pytest.raises(HabitatUnavailableError):
            HabitatSim(HabitatConfig(scene_id="scene.glb"))
    else:
        pytest.skip("habitat_sim is installed here; the error path cannot be shown")


# ------------------------------------------------------------- the sim_bridge backends (sim_bridge.backends)


@pytest.mark.parametrize(("scene_id", "scenes_dir", "expected"), [
    ("hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb", "data/scene_datasets",
     "data/scene_datasets/hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb"),
    ("data/scene_datasets/hm3d/a.glb", "data/scene_datasets", "data/scene_datasets/hm3d/a.glb"),
    ("/abs/scene.glb", "data/scene_datasets", "/abs/scene.glb"),
    ("TEEsavR23oF", "data/scene_datasets", "TEEsavR23oF"),  # a scene handle of the dataset config
    ("hm3d/a.glb", "", "hm3d/a.glb"),
])
def test_episode_scene_paths_are_joined_to_the_scenes_folder(scene_id: str, scenes_dir: str, expected: str) -> None:
    assert resolve_habitat_scene(scene_id, scenes_dir) == expected


def test_an_unknown_backend_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="embedded, habitat"):
        make_scene_loader("gazebo", SimConfig())


def test_a_bad_embedded_scene_id_fails_before_anything_is_built() -> None:
    load = make_scene_loader("embedded", SimConfig())
    with pytest.raises(GoatError, match="not an embedded-simulator scene"):
        load("hm3d/val/x.glb")


def test_the_habitat_loader_without_habitat_sim_names_the_module_and_the_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "habitat_sim", None)  # import habitat_sim now fails, installed or not
    with pytest.raises(HabitatUnavailableError, match="'habitat_sim' is missing") as info:
        make_scene_loader("habitat", SimConfig())
    assert "docs/robot.md" in str(info.value) and "conda install habitat-sim" in str(info.value)


class RecordingHabitatSim:
    """Test stand-in for HabitatSim (habitat_sim cannot run here): keeps the config it was built with."""

    built: list[HabitatConfig] = []

    def __init__(self, config: HabitatConfig) -> None:
        RecordingHabitatSim.built.append(config)


def test_the_habitat_loader_builds_the_shared_embodiment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(habitat_config, "import_habitat_sim", lambda: types.SimpleNamespace())
    monkeypatch.setattr(backends, "HabitatSim", RecordingHabitatSim)
    monkeypatch.setattr(RecordingHabitatSim, "built", [])
    (tmp_path / "hm3d").mkdir()
    (tmp_path / "hm3d" / "a.glb").write_bytes(b"")
    sizes = ActionSizes(turn_rad=math.radians(10.0))
    load = make_scene_loader("habitat", SimConfig(action_sizes=sizes), HabitatSceneSettings(
        scenes_dir=str(tmp_path), scene_dataset_config="hm3d.scene_dataset_config.json", gpu_device_id=1,
        semantic_sensor=False))
    with pytest.raises(GoatError, match="does not exist"):
        load("hm3d/missing.glb")
    assert RecordingHabitatSim.built == []  # a missing scene file is named before habitat_sim sees it
    load("hm3d/a.glb")()
    (config,) = RecordingHabitatSim.built
    assert config.scene_id == str(tmp_path / "hm3d" / "a.glb")
    assert config.scene_dataset_config_file == "hm3d.scene_dataset_config.json"
    assert (config.image_width_px, config.image_height_px, config.hfov_deg) == (360, 640, 42.0)
    assert (config.agent_radius_m, config.camera_height_m, config.sizes) == (0.17, 1.31, sizes)
    assert (config.gpu_device_id, config.semantic_sensor) == (1, False)
    load("TEEsavR23oF")()  # no file suffix: a scene handle, passed through for habitat_sim to resolve
    assert RecordingHabitatSim.built[-1].scene_id == "TEEsavR23oF"


# ------------------------------------------------------------------------------ with habitat_sim (conda)


def test_habitat_episode_steps() -> None:
    pytest.importorskip("habitat_sim", reason="habitat_sim is not installed (conda only; see docs/robot.md)")
    scene = os.environ.get("GOAT_HABITAT_TEST_SCENE", "")
    if not scene:
        pytest.skip("set GOAT_HABITAT_TEST_SCENE to a scene file (e.g. habitat-test-scenes' skokloster-castle.glb)")
    sim = HabitatSim(HabitatConfig(scene_id=scene, semantic_sensor=False))
    try:
        start = sim._sim.pathfinder.get_random_navigable_point()
        obs = sim.reset(start, YAW_90_H)
        assert (obs.pose.x_m, obs.pose.y_m, obs.pose.yaw_rad) == pytest.approx((0.0, 0.0, 0.0), abs=1e-5)
        obs = sim.step(DiscreteAction.TURN_LEFT)
        assert obs.pose.yaw_rad == pytest.approx(math.radians(30.0), abs=1e-4)
        obs = sim.step(DiscreteAction.LOOK_DOWN)
        assert obs.camera_tilt_rad == pytest.approx(math.radians(-30.0), abs=1e-4)
        assert sim.geodesic_distance_m(start, [start]) == pytest.approx(0.0, abs=1e-3)
    finally:
        sim.close()
