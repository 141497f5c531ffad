"""STAND-IN FOR TESTS: the smallest faithful imitation of the stretch_body calls goat_stretch uses.

This is not stretch_body and drives no hardware. It imitates, on a simulated clock, exactly the surface of
:class:`goat_stretch.body.RobotLike`. The same driver runs on the real stretch_body classes over fake USB boards in
``tests/real_stretch`` (real parameters, deceleration, odometry); this stand-in keeps the fast, clock-driven unit
tests and the ROS node tests that do not need the real package. Differences from stretch_body, on purpose:
a stop is instant (the real base decelerates at ``a``), and the head's soft tilt range is fixed (SE3 values).

* ``startup()`` -> bool, ``stop()``, ``is_homed()``, ``push_command()``;
* ``base.translate_by(x_m)`` / ``base.rotate_by(x_r)`` queue an incremental set-point that starts moving only at
  the next ``push_command()`` (as stretch_body queues stepper commands); ``base.set_velocity(v_m, w_r, a=None)``
  (stretch_body ``base.py``: forward m/s, counter-clockwise rad/s; the acceleration ``a`` is accepted and not
  imitated) switches the base to velocity mode at the next ``push_command()``, where it keeps moving at
  that velocity until the next pushed command, so ``set_velocity(0, 0)`` stops any move; ``base.status`` holds
  ``x``, ``y``, ``theta`` odometry (theta in [0, 2 pi), as stretch_body's) and the wheels' ``is_moving`` /
  ``is_mg_moving`` flags;
* ``head.move_by('head_tilt', x_r)`` starts at once (the head is a Dynamixel chain, which stretch_body does not
  route through ``push_command()``), clipped to the joint's soft range as stretch_body clips it;
  ``head.status['head_tilt']['pos']``; ``head.get_joint('head_tilt').get_soft_motion_limits()``;
* ``pimu.status['runstop_event']``; while it is set every motion halts and pushed set-points are dropped.

Motion is simulated at constant speed (velocity mode: exactly the commanded velocity, no acceleration limit and no
clamp, so a test sees what the driver sent) on a clock (a :class:`FakeClock` by default; the driver node passes wall
time), so a test that sleeps through the clock sees the base move. Faults to test the driver's safety: a runstop
at a given time, a wall that stops translation after a distance (contact), a slow base (timeout), and a robot that
is not homed.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any, Optional

from goat_stretch.driver import Clock


class FakeClock:
    """Simulated time: ``sleep`` advances it instantly."""

    def __init__(self, start_s: float = 0.0) -> None:
        self._now_s = start_s

    def now_s(self) -> float:
        return self._now_s

    def sleep(self, duration_s: float) -> None:
        self._now_s += max(0.0, duration_s)


@dataclass
class _Axis:
    position: float = 0.0
    target: Optional[float] = None  # absolute set-point being moved to, None = holding
    speed: float = 1.0  # units per second
    limit: Optional[float] = None  # motion stops here (contact), None = free

    def advance(self, dt_s: float) -> None:
        if self.target is None:
            return
        step = self.speed * dt_s
        delta = self.target - self.position
        goal = self.target if abs(delta) <= step else self.position + math.copysign(step, delta)
        if self.limit is not None and goal > self.limit:
            goal = self.limit
        self.position = goal
        if self.position == self.target:
            self.target = None


class StandinBase:
    def __init__(self, robot: StandinRobot, speed_mps: float, turn_speed_rps: float) -> None:
        self._robot = robot
        self._travel = _Axis(speed=speed_mps)  # distance along the heading since start-up
        self._yaw = _Axis(speed=turn_speed_rps)
        self._x_m = 0.0
        self._y_m = 0.0
        self._pending: Optional[tuple[Any, ...]] = None
        self._velocity: Optional[tuple[float, float]] = None  # (m/s, rad/s) in velocity mode, None otherwise
        # Every pushed command, for tests: ("translate", m), ("rotate", rad), ("stop", 0.0) for a zero velocity,
        # ("velocity", m/s, rad/s) for a non-zero one.
        self.commands: list[tuple[Any, ...]] = []

    def translate_by(self, x_m: float) -> None:
        self._pending = ("translate", float(x_m))

    def rotate_by(self, x_r: float) -> None:
        self._pending = ("rotate", float(x_r))

    def set_velocity(self, v_m: float, w_r: float, a: Optional[float] = None) -> None:
        if v_m == 0.0 and w_r == 0.0:
            self._pending = ("stop", 0.0)
        else:
            self._pending = ("velocity", float(v_m), float(w_r))

    @property
    def commanded_velocity(self) -> tuple[float, float]:
        """STAND-IN ONLY (stretch_body has no such attribute): the (m/s, rad/s) the base moves at in velocity mode,
        (0.0, 0.0) when it is stopped, in position mode or runstopped."""
        self._robot._update()
        return self._velocity if self._velocity is not None else (0.0, 0.0)

    def block_after_m(self, distance_m: float) -> None:
        """A wall: translation from now on stops after ``distance_m`` (the wheels stall against it)."""
        self._travel.limit = self._travel.position + distance_m

    def _push(self) -> None:
        if self._pending is None:
            return
        command, self._pending = self._pending, None
        self.commands.append(command)
        if self._robot.runstop:  # sent, but the runstopped firmware does not move
            return
        kind = command[0]
        self._velocity = (command[1], command[2]) if kind == "velocity" else None
        if kind == "translate":
            self._travel.target = self._travel.position + command[1]
        elif kind == "rotate":
            self._yaw.target = self._yaw.position + command[1]
        else:  # velocity mode replaces any position set-point
            self._travel.target = self._yaw.target = None

    def _halt(self) -> None:
        self._travel.target = self._yaw.target = None
        self._velocity = None
        self._pending = None

    def _advance(self, dt_s: float) -> None:
        if self._velocity is not None:
            self._advance_velocity(dt_s)
            return
        before = self._travel.position
        self._travel.advance(dt_s)
        moved = self._travel.position - before
        self._x_m += moved * math.cos(self._yaw.position)
        self._y_m += moved * math.sin(self._yaw.position)
        self._yaw.advance(dt_s)

    def _advance_velocity(self, dt_s: float) -> None:
        """Unicycle motion at the commanded (v, w) for dt_s; a wall (block_after_m) stops forward travel."""
        assert self._velocity is not None
        v_mps, w_radps = self._velocity
        distance_m = v_mps * dt_s
        limit = self._travel.limit
        if limit is not None and self._travel.position + distance_m > limit:
            distance_m = max(0.0, limit - self._travel.position)
        self._travel.position += distance_m
        yaw0, dyaw = self._yaw.position, w_radps * dt_s
        if abs(dyaw) < 1e-12:
            self._x_m += distance_m * math.cos(yaw0)
            self._y_m += distance_m * math.sin(yaw0)
        else:  # an arc of length distance_m turning by dyaw: radius distance_m / dyaw
            radius_m = distance_m / dyaw
            self._x_m += radius_m * (math.sin(yaw0 + dyaw) - math.sin(yaw0))
            self._y_m -= radius_m * (math.cos(yaw0 + dyaw) - math.cos(yaw0))
        self._yaw.position = yaw0 + dyaw

    @property
    def is_moving(self) -> bool:
        self._robot._update()
        return self._travel.target is not None or self._yaw.target is not None or self._velocity is not None

    @property
    def status(self) -> dict[str, Any]:
        self._robot._update()
        theta = self._yaw.position % (2.0 * math.pi)  # stretch_body's odometry theta runs 0..2 pi
        moving = self._travel.target is not None or self._yaw.target is not None or self._velocity is not None
        wheel = {"is_moving": moving, "is_mg_moving": moving}
        return {"x": self._x_m, "y": self._y_m, "theta": theta, "left_wheel": dict(wheel), "right_wheel": dict(wheel)}


# The SE3 head tilt's soft range (rad, positive up) as stretch_body 0.7.31 derives it from robot_params_SE3.
HEAD_TILT_SOFT_LIMITS_RAD = (HEAD_TILT_MIN_RAD, HEAD_TILT_MAX_RAD) = (-1.69, 0.42)


class StandinJoint:
    def __init__(self, limits: tuple[float, float]) -> None:
        self._limits = limits

    def get_soft_motion_limits(self) -> list[float]:
        return list(self._limits)


class StandinHead:
    def __init__(self, robot: StandinRobot, speed_rps: float) -> None:
        self._robot = robot
        self._tilt = _Axis(speed=speed_rps)

    def move_by(self, joint: str, x_r: float) -> None:
        if joint not in ("head_tilt", "head_pan"):
            raise ValueError(f"joint must be 'head_pan' or 'head_tilt', got {joint!r}")
        if joint == "head_tilt" and not self._robot.runstop:
            self._robot._update()
            self._tilt.target = min(max(self._tilt.position + float(x_r), HEAD_TILT_MIN_RAD), HEAD_TILT_MAX_RAD)

    def get_joint(self, joint_name: str) -> StandinJoint:
        if joint_name != "head_tilt":
            raise ValueError(f"the stand-in head has soft limits for 'head_tilt' only, got {joint_name!r}")
        return StandinJoint(HEAD_TILT_SOFT_LIMITS_RAD)

    def _halt(self) -> None:
        self._tilt.target = None

    @property
    def status(self) -> dict[str, Any]:
        self._robot._update()
        return {"head_tilt": {"pos": self._tilt.position}, "head_pan": {"pos": 0.0}}


class StandinPimu:
    def __init__(self, robot: StandinRobot) -> None:
        self._robot = robot

    @property
    def status(self) -> dict[str, Any]:
        self._robot._update()
        return {"runstop_event": self._robot.runstop}


class StandinRobot:
    """Stand-in for ``stretch_body.robot.Robot`` (tests only; see the module docstring)."""

    def __init__(self, clock: Optional[Clock] = None, homed: bool = True, startup_ok: bool = True,
                 base_speed_mps: float = 0.2, base_turn_speed_rps: float = 0.6, head_speed_rps: float = 1.0) -> None:
        self.clock: Clock = clock if clock is not None else FakeClock()
        self._lock = threading.RLock()  # status may be read from a publishing thread while an action runs
        self.homed = homed
        self.runstop = False
        self.started = False
        self.stopped = False
        self._startup_ok = startup_ok
        self._runstop_at_s: Optional[float] = None
        self._last_s = self.clock.now_s()
        self.base = StandinBase(self, base_speed_mps, base_turn_speed_rps)
        self.head = StandinHead(self, head_speed_rps)
        self.pimu = StandinPimu(self)

    # stretch_body.robot.Robot methods
    def startup(self) -> bool:
        self.started = self._startup_ok
        return self._startup_ok

    def stop(self) -> None:
        self._update()
        self.base._halt()
        self.head._halt()
        self.stopped = True

    def is_homed(self) -> bool:
        return self.homed

    def push_command(self) -> None:
        self._update()
        self.base._push()

    # fault injection
    def runstop_at(self, time_s: float) -> None:
        """Engage the runstop when the clock reaches ``time_s``."""
        self._runstop_at_s = time_s

    def set_runstop(self, engaged: bool) -> None:
        self._update()
        self._set_runstop(engaged)

    def _set_runstop(self, engaged: bool) -> None:
        self.runstop = engaged
        if engaged:
            self.base._halt()
            self.head._halt()

    def _update(self) -> None:
        with self._lock:
            self._update_locked()

    def _update_locked(self) -> None:
        now_s = self.clock.now_s()
        if self._runstop_at_s is not None and now_s >= self._runstop_at_s:
            dt_s = self._runstop_at_s - self._last_s
            if dt_s > 0.0:
                self.base._advance(dt_s)
                self.head._tilt.advance(dt_s)
            self._last_s = self._runstop_at_s
            self._runstop_at_s = None
            self._set_runstop(True)
        dt_s = now_s - self._last_s
        self._last_s = now_s
        if dt_s > 0.0 and not self.runstop:
            self.base._advance(dt_s)
            self.head._tilt.advance(dt_s)
