"""The sim_bridge node picks its simulator by the ``backend`` parameter and serves it through one protocol.

habitat_sim cannot be installed here (conda only), so the habitat path is shown with a **test stand-in**:
``StandInSim`` implements ``sim_bridge.backends.BridgeSim`` with tiny synthetic frames and replaces
``HabitatSim`` behind the real habitat loader (with the import guard patched to succeed). The embedded path is
covered by test_ros_identity.py; a real habitat_sim run is tests/test_habitat_backend.py's (skipped without it).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from goat_core.errors import ConfigError, UnreachableGoalError  # noqa: E402
from goat_core.types import CameraIntrinsics, DiscreteAction, Observation, Pose2D  # noqa: E402
from goat_interfaces.action import ExecuteAction  # noqa: E402
from goat_interfaces.srv import RenderView, ResetEpisode  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from sim_bridge import backends  # noqa: E402
from sim_bridge.backends import SimUnsupportedError  # noqa: E402
from sim_bridge.habitat import config as habitat_config  # noqa: E402
from sim_bridge.habitat.config import HabitatConfig, HabitatUnavailableError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
W, H = 8, 12  # a tiny portrait frame


class StandInSim:
    """TEST STAND-IN for a habitat_sim scene (habitat_sim cannot run here): implements BridgeSim.

    The base moves 0.25 m per MOVE_FORWARD and turns 30 deg; every third forward step collides; depth is the
    step count; rendering views is unsupported, to show how the node answers what a backend cannot do.
    """

    instances: list[StandInSim] = []

    def __init__(self, config: HabitatConfig) -> None:
        self.config = config
        self.closed = False
        self._pose = Pose2D(0.0, 0.0, 0.0)
        self._step = 0
        self._collided = False
        StandInSim.instances.append(self)

    def _obs(self) -> Observation:
        return Observation(rgb=np.full((H, W, 3), 10 * self._step, np.uint8),
                           depth_m=np.full((H, W), float(self._step), np.float32), pose=self._pose,
                           camera_tilt_rad=0.0, camera_height_m=self.config.camera_height_m,
                           intrinsics=CameraIntrinsics.from_hfov(W, H, math.radians(42.0)), collided=self._collided,
                           step=self._step, segmentation=np.full((H, W), -1, np.int32))

    def reset_world(self, start_xy_m: Union[Sequence[float], np.ndarray], start_yaw_rad: float) -> Observation:
        if abs(float(start_xy_m[0])) > 100.0:
            raise UnreachableGoalError(f"start {tuple(start_xy_m)} is off the stand-in's navmesh")
        self._pose, self._step, self._collided = Pose2D(0.0, 0.0, 0.0), 0, False
        return self._obs()

    def step(self, action: DiscreteAction) -> Observation:
        self._step += 1
        self._collided = False
        p = self._pose
        if action is DiscreteAction.MOVE_FORWARD:
            self._collided = self._step % 3 == 0
            forward_m = 0.0 if self._collided else 0.25
            p = Pose2D(p.x_m + forward_m * math.cos(p.yaw_rad), p.y_m + forward_m * math.sin(p.yaw_rad), p.yaw_rad)
        elif action is DiscreteAction.TURN_LEFT:
            p = Pose2D(p.x_m, p.y_m, p.yaw_rad + math.radians(30.0))
        self._pose = p
        return self._obs()

    def observe(self) -> Observation:
        return self._obs()

    def render_rgb(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float, tilt_rad: float) -> np.ndarray:
        raise SimUnsupportedError("the stand-in renders no views")

    def close(self) -> None:
        self.closed = True




def _bridge(overrides: dict[str, Any]) -> Any:
    spec = NODES["sim_bridge"]
    return spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides))



def test_without_habitat_sim_the_habitat_bridge_stops_at_start_up_naming_it(
        ros: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "habitat_sim", None)  # import habitat_sim fails, installed or not
    with pytest.raises(HabitatUnavailableError, match="'habitat_sim' is missing") as info:
        _bridge({"backend": "habitat"})
    assert "docs/robot.md" in str(info.value)


def test_an_unknown_backend_stops_the_bridge_at_start_up(ros: None) -> None:
    with pytest.raises(ConfigError, match="unknown sim_bridge backend 'gazebo'"):
        _bridge({"backend": "gazebo"})


@pytest.mark.slow
def test_the_bridge_executable_says_why_without_a_traceback() -> None:
    try:
        import habitat_sim  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("habitat_sim is installed here; the missing-module error cannot be shown")
    proc = subprocess.run([sys.executable, "-m", "sim_bridge.ros.bridge_node", "--ros-args", "-p", "backend:=habitat"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert "sim_bridge backend 'habitat' cannot start" in proc.stderr and "docs/robot.md" in proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_the_habitat_backend_serves_the_contract_through_the_protocol(
        ros: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(habitat_config, "import_habitat_sim", lambda: object())  # habitat_sim "installed"
    monkeypatch.setattr(backends, "HabitatSim", StandInSim)
    monkeypatch.setattr(StandInSim, "instances", [])
    for name in ("a.glb", "b.glb"):
        (tmp_path / name).write_bytes(b"")
    bridge = _bridge({"backend": "habitat", "habitat_scenes_dir": str(tmp_path)})
    tester = Node("backend_tester")
    executor = SingleThreadedExecutor()
    executor.add_node(bridge)
    executor.add_node(tester)
    images: list[Image] = []
    tester.create_subscription(Image, topics.RGB, images.append, 10)
    reset = tester.create_client(ResetEpisode, topics.RESET_EPISODE)
    render = tester.create_client(RenderView, topics.RENDER_VIEW)
    act = ActionClient(tester, ExecuteAction, topics.EXECUTE_ACTION)

    def call(client: Any, request: Any) -> Any:
        future = client.call_async(request)
        spin_until(executor, future.done, 10.0, f"{type(request).__name__}")
        return future.result()

    def execute(action: DiscreteAction) -> Any:
        sent = act.send_goal_async(ExecuteAction.Goal(action=int(action)))
        spin_until(executor, sent.done, 10.0, "the goal to be accepted")
        result = sent.result().get_result_async()
        spin_until(executor, result.done, 10.0, "the action result")
        return result.result().result

    try:
        spin_until(executor, lambda: reset.service_is_ready() and render.service_is_ready()
                    and act.server_is_ready() and bridge.count_subscribers(topics.RGB) > 0, 10.0, "discovery")
        response = call(reset, ResetEpisode.Request(scene_id="a.glb", start_x_m=1.0, start_y_m=2.0))
        assert response.success, response.message
        (sim_a,) = StandInSim.instances
        assert sim_a.config.scene_id == str(tmp_path / "a.glb")  # joined to habitat_scenes_dir
        spin_until(executor, lambda: len(images) == 1, 5.0, "the reset's observation set")
        assert images[0].header.stamp == response.observation_stamp and (images[0].width, images[0].height) == (W, H)

        results = [execute(a) for a in (DiscreteAction.MOVE_FORWARD, DiscreteAction.TURN_LEFT,
                                        DiscreteAction.MOVE_FORWARD, DiscreteAction.STOP)]
        assert [r.success for r in results] == [True] * 4
        assert [r.step for r in results] == [1, 2, 3, 3]  # STOP observes without stepping
        assert [r.collided for r in results] == [False, False, True, True]
        assert results[0].pose.x == pytest.approx(0.25) and results[1].pose.theta == pytest.approx(math.pi / 6)
        spin_until(executor, lambda: len(images) == 5, 5.0, "one observation set per action")
        assert [i.header.stamp for i in images[1:]] == [r.observation_stamp for r in results]

        view = call(render, RenderView.Request(x_m=1.0, y_m=2.0))  # unsupported: an error answer, no crash
        assert not view.success and "renders no views" in view.message

        missing = call(reset, ResetEpisode.Request(scene_id="nope.glb"))
        assert not missing.success and "does not exist" in missing.message
        assert not sim_a.closed  # a scene that cannot be loaded leaves the loaded one alone
        off = call(reset, ResetEpisode.Request(scene_id="a.glb", start_x_m=500.0))
        assert not off.success and "navmesh" in off.message
        assert call(reset, ResetEpisode.Request(scene_id="b.glb")).success
        assert sim_a.closed and len(StandInSim.instances) == 2  # a new scene replaces the old simulator
        assert execute(DiscreteAction.TURN_LEFT).step == 1
    finally:
        bridge.close()
        executor.shutdown()
        tester.destroy_node()
        bridge.destroy_node()
