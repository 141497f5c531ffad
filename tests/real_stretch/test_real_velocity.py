"""goat_stretch's velocity path (what Nav2's /cmd_vel drives) and shut-down on the real stretch_body classes, fake
boards below (see conftest.py). What the wheels were told is read back from the fake boards, in motor units."""

from __future__ import annotations

import math
import signal
import threading
from typing import Any, Callable

import pytest
from fake_stretch import odometry_at_rest, status_after

from goat_stretch.bringup import shutdown_exceptions
from goat_stretch.driver import DiscreteActionExecutor, ExecutorConfig, MonotonicClock
from goat_stretch.velocity import VelocityConfig, VelocityController, VelocityReason

pytestmark = [pytest.mark.real_stretch_body, pytest.mark.slow]  # real timing: seconds per test

MODE_SAFETY, MODE_VEL_PID = 0, 4
SE3_WHEEL_SEPARATION_M = 0.3153  # robot_params_SE3 base.wheel_separation_m


def _velocity(robot: Any, **config: Any) -> tuple[VelocityController, MonotonicClock]:
    clock = MonotonicClock()
    executor = DiscreteActionExecutor(robot, ExecutorConfig(), clock)
    return VelocityController(executor, VelocityConfig(**config)), clock


def _turning(robot: Any) -> bool:
    return bool(robot.base.status["left_wheel"]["is_mg_moving"] or robot.base.status["right_wheel"]["is_mg_moving"])


def test_speeds_beyond_the_limits_are_clamped_before_stretch_body(stretch: Callable[..., Any]) -> None:
    robot, fake = stretch()
    vel, clock = _velocity(robot, max_linear_mps=0.3, max_angular_radps=0.5)
    out = vel.command(0.0, 2.0, clock.now_s())  # turning in place needs no depth frame
    assert out.reason is VelocityReason.LIMITED and out.angular_radps == 0.5
    mode, _, v_des = fake.wheel_commands()[-1]
    # stretch_body turns a body rate into wheel speeds: w * separation / 2 at each wheel (m/s), in motor rad/s.
    wheel_mps = 0.5 * SE3_WHEEL_SEPARATION_M / 2.0
    assert mode == MODE_VEL_PID and v_des == pytest.approx(wheel_mps / fake.meters_per_motor_rad(), rel=1e-3)
    vel.close()


def test_a_stale_velocity_is_zeroed_and_the_base_comes_to_rest(stretch: Callable[..., Any]) -> None:
    robot, fake = stretch()
    vel, clock = _velocity(robot, timeout_s=0.3)
    assert vel.command(0.0, 0.4, clock.now_s()).reason is VelocityReason.MOVING
    threading.Event().wait(0.6)
    assert _turning(robot)  # stretch_body's own status: the wheels run
    out = vel.tick(clock.now_s())
    assert out is not None and out.reason is VelocityReason.STALE and out.safety
    mode, _, v_des = fake.wheel_commands()[-1]
    assert mode == MODE_VEL_PID and v_des == 0.0
    # A decelerating stop, then at rest: judged on statuses stretch_body took after the wheels stopped (its own
    # timestamp_pc), not after a fixed wait that a loaded machine may outlast.
    odometry_at_rest(robot, fake)
    yaw = robot.base.status["theta"]
    status_after(robot, robot.base.status["timestamp_pc"])
    assert not _turning(robot) and robot.base.status["theta"] == pytest.approx(yaw, abs=1e-3)
    assert 0.05 < yaw < 1.0  # it turned (counter-clockwise), then stopped


def test_runstop_zeroes_the_velocity_path(stretch: Callable[..., Any]) -> None:
    robot, fake = stretch()
    # A command stays fresh for longer than the runstop can take to reach stretch_body's status on a loaded
    # machine: this test is about the runstop, not about a stale command.
    vel, clock = _velocity(robot, timeout_s=10.0)
    vel.command(0.0, 0.4, clock.now_s())
    fake.press_runstop()
    deadline = threading.Event()
    while not robot.pimu.status["runstop_event"] and not deadline.wait(0.05):
        pass  # stretch_body's status thread reads the Pimu at 25 Hz
    out = vel.tick(clock.now_s())
    assert out is not None and out.reason is VelocityReason.RUNSTOP
    assert vel.command(0.0, 0.4, clock.now_s()).reason is VelocityReason.RUNSTOP
    # The firmware's runstop puts the wheels in safety; stretch_body's status reports the mode the board is in.
    while robot.base.status["right_wheel"]["mode"] != MODE_SAFETY and not deadline.wait(0.05):
        pass
    assert robot.base.status["left_wheel"]["mode"] == robot.base.status["right_wheel"]["mode"] == MODE_SAFETY


def test_shutdown_stops_the_base_and_stretch_bodys_signal_exit_is_caught(stretch: Callable[..., Any]) -> None:
    import stretch_body.hello_utils as hello_utils

    robot, fake = stretch()
    # Robot.startup() replaced the SIGINT handler with one that raises ThreadServiceExit (not KeyboardInterrupt);
    # the driver node's main() catches what shutdown_exceptions() names.
    handler = signal.getsignal(signal.SIGINT)
    assert callable(handler)
    with pytest.raises(hello_utils.ThreadServiceExit):
        handler(signal.SIGINT, None)
    assert hello_utils.ThreadServiceExit in shutdown_exceptions()
    vel, clock = _velocity(robot)
    vel.command(0.0, 0.4, clock.now_s())
    assert vel.close().reason is VelocityReason.CLOSED
    assert vel.command(0.0, 0.4, clock.now_s()).reason is VelocityReason.CLOSED  # later commands do not drive
    mode, _, v_des = fake.wheel_commands()[-1]
    assert mode == MODE_VEL_PID and v_des == 0.0
    robot.stop()  # what the node's close() does last: stretch_body puts every motor in safety
    assert fake.wheel_commands()[-1][0] == MODE_SAFETY
    assert math.isfinite(robot.base.status["theta"])
