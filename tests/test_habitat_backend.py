"""The Habitat backend without habitat_sim: frames on known poses, the Stretch configuration, observations.

Tests that need habitat_sim itself skip with the reason (it installs only with conda, see docs/robot.md).
"""

from __future__ import annotations

import math
import os
import sys
import types
from pathlib import Path
from typing import Any

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


def test_make_configuration_fills_the_habitat_sim_objects() -> None:
    cfg = make_configuration(build_spec(HabitatConfig(scene_id="scene.glb")), _fake_habitat_sim())
    assert cfg.sim_cfg.scene_id == "scene.glb" and cfg.sim_cfg.allow_sliding is True
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
