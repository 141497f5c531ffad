"""Velocity commands (what Nav2 publishes on ``/cmd_vel``) on the Stretch base, with safety stops. No ROS here.

:class:`VelocityController` applies a forward speed (m/s, REP 103 x forward) and a turn rate (rad/s,
counter-clockwise positive) through stretch_body's ``robot.base.set_velocity(v_m, w_r)`` + ``robot.push_command()``
(see :mod:`goat_stretch.driver` for the calls). Every command and every :meth:`~VelocityController.tick` returns a
:class:`VelocityOutcome` that says what the base got and why; the rules, in the order they are applied:

1. a discrete action is running: the command is ignored (``busy``), the action keeps the base (the
   :class:`~goat_stretch.driver.BaseArbiter` both share; a discrete action is refused the same way while a
   non-zero velocity is in effect);
2. a non-finite command zeroes the base (``invalid``);
3. runstop engaged: zero, and no motion until it is released and a new command arrives (``runstop``);
4. robot not homed: zero (``not_homed``);
5. speeds beyond ``max_linear_mps`` / ``max_angular_radps`` are clamped (``limited``);
6. forward speed while the head camera's depth shows an obstacle in the base's corridor closer than
   ``obstacle_margin_m`` to the base edge, or without a fresh depth frame (when the executor requires one for
   forward steps), is dropped: turning in place and backing up stay allowed (``obstacle``, ``no_depth``);
7. no command for ``timeout_s``: :meth:`~VelocityController.tick` zeroes the base (``stale``), as stretch_ros2's
   driver does when its last twist is older than its timeout. :meth:`~VelocityController.tick` also re-checks the
   runstop and the path ahead of a moving base with the latest depth frame.

A zero (or fully refused) command leaves the base stopped and released; :meth:`~VelocityController.close` zeroes
it for good at shut-down.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Optional

from goat_stretch.body import robot_is_homed, runstop_engaged
from goat_stretch.driver import BaseHolder, DepthSnapshot, DiscreteActionExecutor, forward_clearance_m

DepthSource = Callable[[], Optional[DepthSnapshot]]  # the latest fresh depth frame, None if there is none


def no_depth() -> Optional[DepthSnapshot]:
    return None


@dataclass(frozen=True)
class VelocityConfig:
    """Limits of the velocity path; every value has its one default here (the node's params mirror them)."""

    max_linear_mps: float = 0.3  # |forward speed| is clamped to this (both directions)
    max_angular_radps: float = 0.8  # |turn rate| is clamped to this
    timeout_s: float = 0.5  # no command for this long: the base is zeroed (stretch_ros2's driver uses 0.5 s)
    obstacle_margin_m: float = 0.2  # forward speed is dropped when an obstacle is closer than this to the base edge

    def __post_init__(self) -> None:
        for name in ("max_linear_mps", "max_angular_radps", "timeout_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"VelocityConfig.{name} must be a positive finite number, got {value!r}")
        if not (math.isfinite(self.obstacle_margin_m) and self.obstacle_margin_m >= 0.0):
            raise ValueError(f"VelocityConfig.obstacle_margin_m must be a finite number >= 0, "
                             f"got {self.obstacle_margin_m!r}")


class VelocityReason(str, Enum):
    """What happened to a velocity command (or, from tick, to the velocity in effect)."""

    MOVING = "moving"  # applied as commanded
    LIMITED = "limited"  # applied, clamped to the max speeds
    STOPPED = "stopped"  # a zero command: the base is stopped
    STALE = "stale"  # no command for timeout_s: zeroed
    RUNSTOP = "runstop"  # runstop engaged: zeroed, command refused
    NOT_HOMED = "not_homed"  # zeroed, command refused
    OBSTACLE = "obstacle"  # forward speed dropped: obstacle ahead (turning / reversing still applied)
    NO_DEPTH = "no_depth"  # forward speed dropped: no fresh depth frame to check the path
    BUSY = "busy"  # ignored: a discrete action drives the base
    INVALID = "invalid"  # a non-finite value: zeroed
    CLOSED = "closed"  # the driver is shutting down: zeroed, nothing more is applied
    ERROR = "error"  # stretch_body raised: zero attempted


_APPLIED_AS_ASKED = (VelocityReason.MOVING, VelocityReason.LIMITED, VelocityReason.STOPPED)


@dataclass(frozen=True)
class VelocityOutcome:
    reason: VelocityReason
    linear_mps: float  # forward speed the base now has (after every rule)
    angular_radps: float  # turn rate the base now has, counter-clockwise positive
    message: str  # one line for the log

    @property
    def safety(self) -> bool:
        """A rule changed or refused the command (clamping aside): worth a warning in the log."""
        return self.reason not in _APPLIED_AS_ASKED


class VelocityLog:
    """Which velocity outcomes the driver logs: a change of reason only (commands arrive at 20 Hz)."""

    def __init__(self) -> None:
        self._reason: Optional[VelocityReason] = None  # the last one logged

    def changed(self, outcome: VelocityOutcome) -> bool:
        """True (and remembered) when ``outcome``'s reason differs from the last one logged."""
        if outcome.reason is self._reason:
            return False
        self._reason = outcome.reason
        return True


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))


class VelocityController:
    """Velocity commands for the base of ``executor``'s robot, sharing its arbiter, obstacle check and settings."""

    def __init__(self, executor: DiscreteActionExecutor, config: Optional[VelocityConfig] = None) -> None:
        self.robot = executor.robot
        self.executor_config = executor.config
        self.arbiter = executor.arbiter
        self.config = config if config is not None else VelocityConfig()
        self._lock = threading.Lock()  # commands, ticks and close come from different threads
        self._last_command_s: Optional[float] = None
        self._applied = (0.0, 0.0)
        self._closed = False

    @property
    def active(self) -> bool:
        """A non-zero velocity is in effect (this controller holds the base)."""
        return self.arbiter.holder is BaseHolder.VELOCITY

    @property
    def applied(self) -> tuple[float, float]:
        """(m/s, rad/s) last sent to the base by this controller; (0, 0) when it is stopped or released."""
        return self._applied

    # ------------------------------------------------------------------------------------------- inputs
    def command(self, linear_mps: float, angular_radps: float, now_s: float,
                depth: DepthSource = no_depth) -> VelocityOutcome:
        """Apply one velocity command received at ``now_s`` (s, the clock :meth:`tick` gets); never raises for
        robot trouble. ``depth`` is called only when the command moves the base forward."""
        with self._lock:
            try:
                return self._command(float(linear_mps), float(angular_radps), now_s, depth)
            except (KeyError, TypeError, ValueError, OSError, RuntimeError) as exc:  # stretch_body, a bad frame
                return self._error(exc)

    def tick(self, now_s: float, depth: DepthSource = no_depth) -> Optional[VelocityOutcome]:
        """Periodic check (the node's timer): zero a stale command, stop on runstop, drop forward speed when the
        path ahead is no longer clear. None when nothing changed (also when no velocity is in effect)."""
        with self._lock:
            if not self.active:
                return None
            try:
                return self._tick(now_s, depth)
            except (KeyError, TypeError, ValueError, OSError, RuntimeError) as exc:
                return self._error(exc)

    def close(self) -> VelocityOutcome:
        """Zero the base for good (driver shut-down); later commands are refused."""
        with self._lock:
            self._closed = True
            with self.arbiter.guard():
                self._push(0.0, 0.0)
                self.arbiter.release(BaseHolder.VELOCITY)
            return VelocityOutcome(VelocityReason.CLOSED, 0.0, 0.0, "stopped: the driver is shutting down")

    # ------------------------------------------------------------------------------------------- rules
    def _command(self, linear_mps: float, angular_radps: float, now_s: float,
                 depth: DepthSource) -> VelocityOutcome:
        if self.arbiter.holder is BaseHolder.DISCRETE:
            return self._outcome(VelocityReason.BUSY, "ignored: a discrete action is running")
        if self._closed:
            return self._outcome(VelocityReason.CLOSED, "ignored: the driver is shutting down")
        self._last_command_s = now_s
        if not (math.isfinite(linear_mps) and math.isfinite(angular_radps)):
            return self._zero(VelocityReason.INVALID, f"zeroed: non-finite command ({linear_mps!r} m/s, "
                                                      f"{angular_radps!r} rad/s)")
        if runstop_engaged(self.robot):
            return self._zero(VelocityReason.RUNSTOP, "zeroed: the runstop is engaged")
        if not robot_is_homed(self.robot):
            return self._zero(VelocityReason.NOT_HOMED, "zeroed: the robot is not homed")
        cfg = self.config
        linear, angular = _clamp(linear_mps, cfg.max_linear_mps), _clamp(angular_radps, cfg.max_angular_radps)
        reason, message = VelocityReason.MOVING, "moving"
        if (linear, angular) != (linear_mps, angular_radps):
            reason = VelocityReason.LIMITED
            message = (f"limited to {linear:.2f} m/s, {angular:.2f} rad/s (asked {linear_mps:.2f} m/s, "
                       f"{angular_radps:.2f} rad/s)")
        if linear > 0.0:
            blocked = self._forward_blocked(depth)
            if blocked is not None:
                linear, (reason, message) = 0.0, blocked
        if linear == 0.0 and angular == 0.0:
            if reason in (VelocityReason.MOVING, VelocityReason.LIMITED):
                reason, message = VelocityReason.STOPPED, "stopped"
            return self._zero(reason, message)
        return self._drive(linear, angular, reason, message)

    def _tick(self, now_s: float, depth: DepthSource) -> Optional[VelocityOutcome]:
        last_s = self._last_command_s
        if last_s is not None and now_s - last_s > self.config.timeout_s:
            return self._zero(VelocityReason.STALE, f"zeroed: no command for {now_s - last_s:.2f} s "
                                                    f"(timeout {self.config.timeout_s:.2f} s)")
        if runstop_engaged(self.robot):
            return self._zero(VelocityReason.RUNSTOP, "zeroed: the runstop was engaged while moving")
        linear, angular = self._applied
        if linear > 0.0:
            blocked = self._forward_blocked(depth)
            if blocked is not None:
                reason, message = blocked
                if angular == 0.0:
                    return self._zero(reason, message)
                return self._drive(0.0, angular, reason, message)
        return None

    def _forward_blocked(self, depth: DepthSource) -> Optional[tuple[VelocityReason, str]]:
        """Why forward speed is not allowed now (the forward step's obstacle check), or None when the path is clear."""
        snapshot = depth()
        if snapshot is None:
            if self.executor_config.require_depth_for_forward:
                return VelocityReason.NO_DEPTH, "forward speed dropped: no recent depth frame to check the path"
            return None
        clearance_m = forward_clearance_m(snapshot, self.executor_config) - self.executor_config.base_radius_m
        if clearance_m < self.config.obstacle_margin_m:
            return VelocityReason.OBSTACLE, (f"forward speed dropped: obstacle {clearance_m:.2f} m ahead of the base "
                                             f"(margin {self.config.obstacle_margin_m:.2f} m)")
        return None

    # ------------------------------------------------------------------------------------------- the base
    def _drive(self, linear: float, angular: float, reason: VelocityReason, message: str) -> VelocityOutcome:
        with self.arbiter.guard():
            if not self.arbiter.claim(BaseHolder.VELOCITY):
                return self._outcome(VelocityReason.BUSY, "ignored: a discrete action is running")
            self._push(linear, angular)
        return self._outcome(reason, message)

    def _zero(self, reason: VelocityReason, message: str) -> VelocityOutcome:
        """Stop the base if this controller drives it; never touch a base a discrete action holds."""
        with self.arbiter.guard():
            holder = self.arbiter.holder
            if holder is BaseHolder.DISCRETE:
                return self._outcome(VelocityReason.BUSY, "ignored: a discrete action is running")
            # Idle, a zero command needs no serial write (every path that released the base stopped it); a refusal
            # pushes zero anyway, as the discrete refusals do.
            if holder is BaseHolder.VELOCITY or reason is not VelocityReason.STOPPED:
                self._push(0.0, 0.0)
            self.arbiter.release(BaseHolder.VELOCITY)
        return self._outcome(reason, message)

    def _push(self, linear: float, angular: float) -> None:
        # stretch_body ramps to a new velocity at its default acceleration (0.12 m/s^2 on an SE3); a zero is reached
        # at the executor's stop deceleration, as every stop is.
        accel = self.executor_config.stop_decel_mps2 if linear == 0.0 and angular == 0.0 else None
        self.robot.base.set_velocity(linear, angular, a=accel)
        self.robot.push_command()
        self._applied = (linear, angular)

    def _error(self, exc: Exception) -> VelocityOutcome:
        message = f"stretch_body failed: {exc!r}"
        try:
            with self.arbiter.guard():
                if self.arbiter.holder is not BaseHolder.DISCRETE:
                    self._push(0.0, 0.0)
                    self.arbiter.release(BaseHolder.VELOCITY)
        except Exception as again:  # noqa: BLE001 - already reporting a failure; the runstop is the last resort
            message += f"; zeroing failed too: {again!r}"
        return VelocityOutcome(VelocityReason.ERROR, *self._applied, message)

    def _outcome(self, reason: VelocityReason, message: str) -> VelocityOutcome:
        return VelocityOutcome(reason, self._applied[0], self._applied[1], message)
