"""Discrete actions on a Hello Robot Stretch through stretch_body, with safety stops. No ROS in this module.

:class:`DiscreteActionExecutor` turns one :class:`~goat_core.types.DiscreteAction` into stretch_body set-points,
waits for the motion to finish while watching the runstop, progress and a deadline, and returns an
:class:`ActionOutcome` that says what happened and why. Every way an action can end leaves the base stopped (and
reports the pose where it came to rest: a stop decelerates), except the ``busy`` refusal, which does not touch a
base that the velocity path (:mod:`goat_stretch.velocity`) drives.

One :class:`BaseArbiter` per robot decides who drives the base: a discrete action or the velocity stream, never
both. Whoever holds it keeps it until it is done; the other is refused (``busy``) and the refusal is reported. A
discrete action first waits up to ``ExecutorConfig.base_wait_s`` for a velocity stream to end (a zero command or
its stale timeout), so an action sent just after Nav2 stopped is not refused.

The stretch_body calls are listed, with what the real library does, in :mod:`goat_stretch.body`. Frames: base
odometry is REP 103 (x forward, y left, yaw counter-clockwise in (-pi, pi]), the same as ``goat_core``; the head
tilt is stretch_ros2's calibrated angle (:class:`goat_stretch.body.HeadPose`), positive up.
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterator, Optional, Protocol

import numpy as np

from goat_core.frames import wrap_angle_rad
from goat_core.types import ActionSizes, CameraIntrinsics, DiscreteAction, Pose2D
from goat_stretch.body import (
    HeadCalibration,
    HeadPose,
    RobotLike,
    RobotNotReadyError,
    base_in_safety,
    base_pose,
    base_settled,
    robot_is_homed,
    runstop_engaged,
    status_time_s,
)


class Clock(Protocol):
    def now_s(self) -> float: ...

    def sleep(self, duration_s: float) -> None: ...


class MonotonicClock:
    """Wall time for the real robot."""

    def now_s(self) -> float:
        return time.monotonic()

    def sleep(self, duration_s: float) -> None:
        time.sleep(duration_s)


# ------------------------------------------------------------------------------------ who drives the base


class BaseHolder(str, Enum):
    DISCRETE = "discrete"  # a discrete action runs (DiscreteActionExecutor.execute)
    VELOCITY = "velocity"  # a non-zero velocity command is in effect (goat_stretch.velocity)


class BaseArbiter:
    """Who drives the base, so a discrete action and velocity commands never mix (thread-safe).

    The holder keeps the base until it releases it; a claim by the other is refused. :meth:`guard` serialises
    the short holder checks and serial writes of the velocity path with a discrete action's claim, so a zero
    velocity pushed while nobody holds the base cannot land in the middle of a starting action.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._released = threading.Condition(self._lock)
        self._holder: Optional[BaseHolder] = None

    @property
    def holder(self) -> Optional[BaseHolder]:
        with self._lock:
            return self._holder

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Hold the arbiter's lock: the holder cannot change inside (keep the block short)."""
        with self._lock:
            yield

    def claim(self, holder: BaseHolder, wait_s: float = 0.0) -> bool:
        """Take the base for ``holder``, waiting up to ``wait_s`` (wall time) for another holder to release it; True
        if it is now ``holder``'s (already or newly), False if another still has it."""
        with self._lock:
            if wait_s > 0.0:
                self._released.wait_for(lambda: self._holder is None or self._holder is holder, timeout=wait_s)
            if self._holder is not None and self._holder is not holder:
                return False
            self._holder = holder
            return True

    def release(self, holder: BaseHolder) -> None:
        """Give the base back if ``holder`` has it (a no-op otherwise)."""
        with self._lock:
            if self._holder is holder:
                self._holder = None
                self._released.notify_all()


# --------------------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class ExecutorConfig:
    """Step sizes, safety margins and motion supervision; every value has its one default here."""

    sizes: ActionSizes = field(default_factory=ActionSizes)  # GOAT-Bench: 0.25 m, 30 deg, 30 deg
    motion_timeout_s: float = 10.0  # a move that has not reached its set-point by then is stopped
    stall_time_s: float = 1.5  # no progress for this long before the set-point: blocked (e.g. a bump)
    poll_period_s: float = 0.05  # how often the status is read while a motion runs
    position_tolerance_m: float = 0.02  # a forward step within this of its length has arrived
    yaw_tolerance_rad: float = math.radians(2.0)
    tilt_tolerance_rad: float = math.radians(2.0)
    progress_epsilon: float = 0.003  # m or rad of error reduction that counts as progress
    obstacle_margin_m: float = 0.10  # refuse a forward step when an obstacle is closer than step + margin
    base_radius_m: float = 0.17  # Stretch base radius (GOAT-Bench agent)
    robot_height_m: float = 1.41  # points above this height do not block the base
    min_obstacle_height_m: float = 0.05  # points below this are floor
    lateral_margin_m: float = 0.05  # half-width of the checked corridor beyond the base radius
    max_depth_m: float = 4.0  # farther returns are ignored (RealSense noise grows with range)
    min_obstacle_points: int = 20  # fewer corridor points than this is treated as noise
    require_depth_for_forward: bool = True  # no depth image: refuse forward steps
    base_wait_s: float = 0.0  # wait this long (wall time) for velocity commands to free the base, then refuse (busy)
    # Deceleration of every stop (set_velocity(0, 0, a)): stretch_body clamps it to the base's max acceleration
    # (0.3 m/s^2 on an SE3; its default, 0.12, would carry a 0.3 m/s base 0.375 m further).
    stop_decel_mps2: float = 0.3
    settle_timeout_s: float = 1.5  # after a stop, wait this long at most for the wheels to come to rest

    def __post_init__(self) -> None:
        positive = ("motion_timeout_s", "stall_time_s", "poll_period_s", "position_tolerance_m", "yaw_tolerance_rad",
                    "tilt_tolerance_rad", "progress_epsilon", "base_radius_m", "robot_height_m", "max_depth_m",
                    "stop_decel_mps2", "settle_timeout_s")
        for name in positive:
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ValueError(f"ExecutorConfig.{name} must be a positive finite number, got {value!r}")
        for name in ("obstacle_margin_m", "min_obstacle_height_m", "lateral_margin_m", "base_wait_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"ExecutorConfig.{name} must be a finite number >= 0, got {value!r}")
        if self.min_obstacle_points < 1:
            raise ValueError(f"ExecutorConfig.min_obstacle_points must be >= 1, got {self.min_obstacle_points!r}")


# -------------------------------------------------------------------------------------- obstacle check


@dataclass(frozen=True, eq=False)
class DepthSnapshot:
    """The latest head-camera depth frame and the head pose it was taken with."""

    depth_m: np.ndarray  # (H, W) float metres along the optical axis; 0 or non-finite = no return
    intrinsics: CameraIntrinsics
    camera_tilt_rad: float  # positive looks up
    camera_height_m: float  # optical centre above the floor


def forward_clearance_m(snapshot: DepthSnapshot, config: ExecutorConfig) -> float:
    """Distance ahead of the base centre to the nearest obstacle in the base's forward corridor (inf: none seen).

    Back-projection: a pixel (u, v) with depth d is the camera point x_c = (u - cx) d / fx (right),
    y_c = (v - cy) d / fy (down), z_c = d (forward). Pitching the camera up by t turns (forward, up) =
    (z_c, -y_c) into (z_c cos t + y_c sin t, z_c sin t - y_c cos t), so in the base frame
    x = z_c cos t + y_c sin t, y = -x_c, z = h + z_c sin t - y_c cos t (camera assumed above the base centre).
    The corridor is |y| <= radius + lateral margin, min obstacle height < z < robot height. The clearance is the
    ``min_obstacle_points``-th smallest x, so a few noisy returns do not stop the robot.
    Only what the camera sees is checked: with the head level, low objects close to the base are below the
    field of view (the wheel contact detection of stretch_body is the second line, see ``stall_time_s``).
    """
    depth = np.asarray(snapshot.depth_m, dtype=np.float64)
    intr = snapshot.intrinsics
    if depth.shape != (intr.height, intr.width):
        raise ValueError(f"depth must have shape {(intr.height, intr.width)} to match the intrinsics, "
                         f"got {depth.shape}")
    valid = np.isfinite(depth) & (depth > 0.0) & (depth <= config.max_depth_m)
    vs, us = np.nonzero(valid)
    d = depth[vs, us]
    x_c = (us - intr.cx) * d / intr.fx
    y_c = (vs - intr.cy) * d / intr.fy
    c, s = math.cos(snapshot.camera_tilt_rad), math.sin(snapshot.camera_tilt_rad)
    x_b = d * c + y_c * s
    y_b = -x_c
    z_b = snapshot.camera_height_m + d * s - y_c * c
    in_corridor = ((np.abs(y_b) <= config.base_radius_m + config.lateral_margin_m) & (x_b > 0.0)
                   & (z_b > config.min_obstacle_height_m) & (z_b < config.robot_height_m))
    ahead = np.sort(x_b[in_corridor])
    if ahead.size < config.min_obstacle_points:
        return math.inf
    return float(ahead[config.min_obstacle_points - 1])


# ------------------------------------------------------------------------------------------- outcomes


class StopReason(str, Enum):
    """Why an action ended; ``DONE`` is a completed motion."""

    DONE = "done"
    NOT_HOMED = "not_homed"  # refused: home the robot first (stretch_robot_home.py)
    RUNSTOP = "runstop"  # refused, or stopped mid-motion, because the runstop is engaged
    OBSTACLE = "obstacle"  # forward step refused: depth shows an obstacle closer than step + margin
    NO_DEPTH = "no_depth"  # forward step refused: no depth frame to check it against
    BLOCKED = "blocked"  # stopped: the motion made no progress for stall_time_s (contact)
    TIMEOUT = "timeout"  # stopped: the set-point was not reached within motion_timeout_s
    CANCELLED = "cancelled"  # stopped: the caller cancelled the action (cancel())
    BUSY = "busy"  # refused: velocity commands (cmd_vel) drive the base; the base is left to them
    ERROR = "error"  # stretch_body raised


# Reasons that leave the agent free to carry on (the sim reports a bump the same way); the others abort.
_CONTINUABLE = (StopReason.DONE, StopReason.OBSTACLE, StopReason.BLOCKED)


@dataclass(frozen=True)
class ActionOutcome:
    action: DiscreteAction
    reason: StopReason
    message: str  # one line for the log and the action result
    pose: Pose2D  # base odometry after the action (odom frame)
    camera_tilt_rad: float  # head tilt after the action
    elapsed_s: float = 0.0
    collided: bool = False  # blocked fully (obstacle refusal) or partly (contact)

    @property
    def success(self) -> bool:
        """False for refusals and stops the agent must not ignore (runstop, timeout, not homed, no depth)."""
        return self.reason in _CONTINUABLE


# ------------------------------------------------------------------------------------------- executor


class DiscreteActionExecutor:
    """One discrete action at a time on a started robot; see the module docstring."""

    def __init__(self, robot: RobotLike, config: Optional[ExecutorConfig] = None, clock: Optional[Clock] = None,
                 head_calibration: Optional[HeadCalibration] = None) -> None:
        self.robot = robot
        self.config = config if config is not None else ExecutorConfig()
        self.clock: Clock = clock if clock is not None else MonotonicClock()
        self.head = HeadPose(robot, head_calibration)  # calibrated head angles, as stretch_ros2 reports them
        self.arbiter = BaseArbiter()  # shared with a VelocityController on the same robot
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask the running action to stop (thread-safe); it ends with CANCELLED and the base stopped."""
        self._cancel.set()

    # -------------------------------------------------------------------------------- life cycle
    def check_ready(self) -> None:
        """Raise RobotNotReadyError unless the robot is homed (the runstop is checked per action)."""
        if not robot_is_homed(self.robot):
            raise RobotNotReadyError("the Stretch is not homed: run stretch_robot_home.py (with the runstop "
                                     "released and space around the robot) before starting the driver")

    def stop_base(self) -> None:
        """Command the wheels to a halt: a zero velocity, reached at ``stop_decel_mps2``, replaces any position move
        in progress (stretch_body base.py). The base is still decelerating when this returns."""
        self.robot.base.set_velocity(0.0, 0.0, a=self.config.stop_decel_mps2)
        self.robot.push_command()

    def _halt(self) -> None:
        """:meth:`stop_base`, then wait (at most ``settle_timeout_s``) for the wheels to come to rest, so the pose
        reported is where the base stopped."""
        self.stop_base()
        deadline = self.clock.now_s() + self.config.settle_timeout_s
        while not base_settled(self.robot) and self.clock.now_s() < deadline:
            self.clock.sleep(self.config.poll_period_s)

    # -------------------------------------------------------------------------------- actions
    def execute(self, action: DiscreteAction, depth: Optional[DepthSnapshot] = None) -> ActionOutcome:
        """Run one action; never raises for robot trouble, the outcome says what went wrong."""
        start_s = self.clock.now_s()
        self._cancel.clear()
        if not self.arbiter.claim(BaseHolder.DISCRETE, self.config.base_wait_s):
            return self._outcome(action, StopReason.BUSY, f"refused: velocity commands (cmd_vel) are driving the "
                                 f"base (waited {self.config.base_wait_s:.2f} s); stop them first", start_s)
        try:
            return self._execute(DiscreteAction(action), depth, start_s)
        except (KeyError, TypeError, OSError, RuntimeError) as exc:  # stretch_body status or serial trouble
            self._safe_stop()
            return self._outcome(action, StopReason.ERROR, f"stretch_body failed: {exc!r}", start_s)
        finally:
            self.arbiter.release(BaseHolder.DISCRETE)

    def _execute(self, action: DiscreteAction, depth: Optional[DepthSnapshot], start_s: float) -> ActionOutcome:
        if runstop_engaged(self.robot):
            self._halt()
            return self._outcome(action, StopReason.RUNSTOP, "refused: the runstop is engaged", start_s)
        if not robot_is_homed(self.robot):
            self._halt()
            return self._outcome(action, StopReason.NOT_HOMED, "refused: the robot is not homed", start_s)
        if action is DiscreteAction.STOP:
            self._halt()
            return self._outcome(action, StopReason.DONE, "stopped", start_s)
        if action is DiscreteAction.MOVE_FORWARD:
            return self._forward(depth, start_s)
        if action in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT):
            return self._turn(action, start_s)
        return self._look(action, start_s)

    def _forward(self, depth: Optional[DepthSnapshot], start_s: float) -> ActionOutcome:
        cfg, action = self.config, DiscreteAction.MOVE_FORWARD
        step_m = cfg.sizes.forward_m
        if depth is None:
            if cfg.require_depth_for_forward:
                self._halt()
                return self._outcome(action, StopReason.NO_DEPTH, "refused: no recent depth frame to check the "
                                     "path ahead", start_s)
        else:
            clearance_m = forward_clearance_m(depth, cfg) - cfg.base_radius_m
            needed_m = step_m + cfg.obstacle_margin_m
            if clearance_m < needed_m:
                self._halt()
                return self._outcome(action, StopReason.OBSTACLE, f"refused: obstacle {clearance_m:.2f} m ahead of "
                                     f"the base, a step needs {needed_m:.2f} m", start_s, collided=True)
        start = base_pose(self.robot)
        self.robot.base.translate_by(step_m)
        self.robot.push_command()

        def remaining() -> float:
            p = base_pose(self.robot)
            along = (p.x_m - start.x_m) * math.cos(start.yaw_rad) + (p.y_m - start.y_m) * math.sin(start.yaw_rad)
            return step_m - along

        return self._supervise(action, remaining, cfg.position_tolerance_m, start_s, base=True)

    def _turn(self, action: DiscreteAction, start_s: float) -> ActionOutcome:
        cfg = self.config
        turn_rad = cfg.sizes.turn_rad if action is DiscreteAction.TURN_LEFT else -cfg.sizes.turn_rad
        target = wrap_angle_rad(base_pose(self.robot).yaw_rad + turn_rad)
        self.robot.base.rotate_by(turn_rad)  # counter-clockwise positive, as REP 103 yaw
        self.robot.push_command()
        return self._supervise(action, lambda: abs(wrap_angle_rad(target - base_pose(self.robot).yaw_rad)),
                               cfg.yaw_tolerance_rad, start_s, base=True)

    def _look(self, action: DiscreteAction, start_s: float) -> ActionOutcome:
        cfg = self.config
        delta = cfg.sizes.look_rad if action is DiscreteAction.LOOK_UP else -cfg.sizes.look_rad
        now = self.head.tilt_rad()
        low, high = self.head.tilt_limits_rad()  # stretch_body would clip a target beyond them silently
        target = min(max(now + delta, low), high)
        if abs(target - now) > 1e-6:
            self.head.move_tilt_to(target)
        return self._supervise(action, lambda: abs(target - self.head.tilt_rad()), cfg.tilt_tolerance_rad,
                               start_s, base=False)

    def _supervise(self, action: DiscreteAction, remaining: Callable[[], float], tolerance: float, start_s: float,
                   base: bool) -> ActionOutcome:
        """Poll until the error is within tolerance; stop on runstop, stall or deadline.

        A stall is judged on stretch_body's status time where it has one: a status thread starved for
        ``stall_time_s`` (a loaded machine) reports no new position, which is no evidence of a contact."""
        cfg, clock = self.config, self.clock

        def status_now_s() -> float:
            stamp = status_time_s(self.robot, base)
            return clock.now_s() if stamp is None else stamp

        best = abs(remaining())
        last_progress_s = status_now_s()
        while True:
            if runstop_engaged(self.robot):
                self._halt()
                return self._outcome(action, StopReason.RUNSTOP, "stopped: the runstop was engaged during the "
                                     "motion", start_s)
            if self._cancel.is_set():
                self._halt()
                return self._outcome(action, StopReason.CANCELLED, "stopped: the action was cancelled", start_s)
            error = abs(remaining())
            now_s, seen_s = clock.now_s(), status_now_s()
            if error <= tolerance and not (base and not base_settled(self.robot)):  # the move itself finished
                if base:
                    self._halt()  # no residual set-point survives the action
                return self._outcome(action, StopReason.DONE, "done", start_s)
            if error < best - cfg.progress_epsilon:
                best, last_progress_s = error, seen_s
            if now_s - start_s > cfg.motion_timeout_s:
                self._halt()
                return self._outcome(action, StopReason.TIMEOUT, f"stopped: not at the set-point after "
                                     f"{cfg.motion_timeout_s:.1f} s ({error:.3f} left)", start_s)
            # At the set-point and only settling (stale wheel flags on a loaded machine, an overshoot) is no stall.
            if error > tolerance and seen_s - last_progress_s > cfg.stall_time_s:
                if base and base_in_safety(self.robot):  # the runstop stopped it; the Pimu's status is late
                    self._halt()
                    return self._outcome(action, StopReason.RUNSTOP, "stopped: the runstop was engaged during the "
                                         "motion (the wheels went to safety)", start_s)
                self._halt()
                return self._outcome(action, StopReason.BLOCKED, f"stopped: no progress for {cfg.stall_time_s:.1f} s "
                                     f"({error:.3f} left), contact assumed", start_s, collided=base)
            clock.sleep(cfg.poll_period_s)

    def _safe_stop(self) -> None:
        try:
            self.stop_base()
        except Exception:  # noqa: BLE001 - already reporting a failure; the runstop remains the last resort
            pass

    def _outcome(self, action: DiscreteAction, reason: StopReason, message: str, start_s: float,
                 collided: bool = False) -> ActionOutcome:
        try:
            pose, tilt = base_pose(self.robot), self.head.tilt_rad()
        except (KeyError, TypeError, RuntimeError):
            pose, tilt = Pose2D(math.nan, math.nan, math.nan), math.nan
        return ActionOutcome(action=DiscreteAction(action), reason=reason, message=message, pose=pose,
                             camera_tilt_rad=tilt, elapsed_s=self.clock.now_s() - start_s, collided=collided)
