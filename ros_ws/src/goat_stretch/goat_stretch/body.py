"""The stretch_body surface goat_stretch uses, read at the robot boundary. No ROS in this module.

Checked against the real hello-robot-stretch-body 0.7.31 (tests/real_stretch runs every caller on its classes over
fake USB hardware); the calls, as ``body/stretch_body/`` defines them:

* ``robot.Robot()`` reads its parameters when ``stretch_body.robot_params`` is first imported, from
  ``$HELLO_FLEET_PATH/$HELLO_FLEET_ID/`` (a missing variable raises KeyError, a missing folder calls
  ``sys.exit(1)``). ``startup()`` returns False when another process holds the robot (a file lock) or a device
  does not answer; it installs SIGINT/SIGTERM handlers that raise ``hello_utils.ThreadServiceExit``.
  ``push_command()`` sends the queued stepper commands and triggers the Pimu's motor sync; ``stop()`` ends the
  status threads and puts every motor in safety mode. ``is_homed()`` is True once the lift, the arm and the wrist
  joints that need homing were homed (the base and the head never need it).
* ``robot.base``: ``translate_by(x_m)`` / ``rotate_by(x_r)`` queue incremental position moves (trapezoidal, at the
  default 0.12 m/s and 0.12 m/s^2 of an SE3); ``set_velocity(v_m, w_r, a=None)`` queues wheel velocities, reached
  at acceleration ``a`` (m/s^2, default 0.12, clamped to the base's max 0.3): a zero velocity is a deceleration,
  not an instant stop. The wheel firmware drops to safety (the wheels coast) 1 s after the last velocity command.
  ``status['x']``, ``['y']`` (m) and ``['theta']`` (rad, **0..2 pi**) are wheel odometry since start-up;
  ``status['left_wheel']`` / ``['right_wheel']`` hold the boards' ``is_moving`` / ``is_mg_moving`` flags.
* ``robot.head``: ``move_by('head_tilt', x_r)`` moves the Dynamixel at once (no ``push_command()``), clipped
  silently to the joint's soft limits (``get_joint('head_tilt').get_soft_motion_limits()``; an SE3's tilt runs
  from about -1.69 to 0.42 rad); it is ignored while the runstop is engaged. ``status['head_tilt']['pos']`` is
  the servo reading in rad, positive up, *without* the camera calibration stretch_ros2 adds
  (:class:`HeadCalibration`).
* ``robot.pimu.status['runstop_event']``: True while the runstop is engaged (the wheel boards then hold safety
  mode until a new command arrives after release).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Protocol

import yaml

from goat_core.errors import GoatError
from goat_core.frames import wrap_angle_rad
from goat_core.types import Pose2D


class RobotNotReadyError(GoatError, RuntimeError):
    """The robot cannot be driven: start-up failed, it is not homed, or the runstop is engaged."""


class BaseLike(Protocol):
    @property
    def status(self) -> Mapping[str, Any]: ...

    def translate_by(self, x_m: float) -> None: ...

    def rotate_by(self, x_r: float) -> None: ...

    def set_velocity(self, v_m: float, w_r: float, a: float | None = None) -> None: ...


class HeadLike(Protocol):
    @property
    def status(self) -> Mapping[str, Any]: ...

    def move_by(self, joint: str, x_r: float) -> None: ...

    def get_joint(self, joint_name: str) -> Any: ...


class PimuLike(Protocol):
    @property
    def status(self) -> Mapping[str, Any]: ...


class RobotLike(Protocol):
    """The part of ``stretch_body.robot.Robot`` goat_stretch uses."""

    @property
    def base(self) -> BaseLike: ...

    @property
    def head(self) -> HeadLike: ...

    @property
    def pimu(self) -> PimuLike: ...

    def startup(self) -> bool: ...

    def push_command(self) -> None: ...

    def stop(self) -> None: ...


def robot_is_homed(robot: Any) -> bool:
    """``robot.is_homed()``, or ``robot.is_calibrated()`` on stretch_body releases before 0.4."""
    check = getattr(robot, "is_homed", None) or getattr(robot, "is_calibrated", None)
    if check is None:
        raise RobotNotReadyError(f"{type(robot).__name__} has neither is_homed() nor is_calibrated()")
    return bool(check())


def base_pose(robot: RobotLike) -> Pose2D:
    """Wheel odometry of the base (odom frame, REP 103); stretch_body's theta (0..2 pi) is wrapped to (-pi, pi]."""
    s = robot.base.status
    return Pose2D(float(s["x"]), float(s["y"]), wrap_angle_rad(float(s["theta"])))


def base_settled(robot: RobotLike) -> bool:
    """Both wheels at rest: no motion generator running and no measured motion (a stop decelerates)."""
    s = robot.base.status
    return not any(s[wheel]["is_mg_moving"] or s[wheel]["is_moving"] for wheel in ("left_wheel", "right_wheel"))


def status_time_s(robot: RobotLike, base: bool) -> Optional[float]:
    """When stretch_body last refreshed the base's (``base``) or the head tilt's status: its ``timestamp_pc``
    (``time.time()`` of the status thread's update, base.py / dynamixel_hello_XL430.py). None where the status has
    none (the stand-in)."""
    status = robot.base.status if base else robot.head.status["head_tilt"]
    stamp = status.get("timestamp_pc")
    return float(stamp) if stamp else None


def runstop_engaged(robot: RobotLike) -> bool:
    return bool(robot.pimu.status["runstop_event"])


STEPPER_MODE_SAFETY = 0  # stretch_body's stepper MODE_SAFETY


def base_in_safety(robot: RobotLike) -> bool:
    """Both wheels report safety mode in the base's status: the firmware's answer to the runstop, which the
    base's status may show before the Pimu's (separate status reads; a loaded machine delays either)."""
    s = robot.base.status
    return all(isinstance(s.get(w), dict) and s[w].get("mode") == STEPPER_MODE_SAFETY
               for w in ("left_wheel", "right_wheel"))


def head_tilt_limits_rad(robot: RobotLike) -> tuple[float, float]:
    """The head tilt's soft range in stretch_body's frame (rad, positive up); commands beyond it are clipped."""
    low, high = robot.head.get_joint("head_tilt").get_soft_motion_limits()
    return float(min(low, high)), float(max(low, high))


# ------------------------------------------------------------------------------------- head calibration


@dataclass(frozen=True)
class HeadCalibration:
    """The head's camera calibration, as stretch_ros2 applies it to the reported joint angles.

    stretch_ros2's ``stretch_driver`` (``stretch_core/stretch_driver.py`` and ``command_groups.py``, humble
    branch) reads ``controller_calibration_head.yaml`` (written by ``stretch_calibration``) and publishes
    tilt = servo reading + ``tilt_angle_offset`` (+ ``tilt_looking_up_offset`` once the head was last commanded
    above ``tilt_angle_backlash_transition`` + ``tilt_angle_offset``: gear backlash), and
    pan = reading + ``pan_angle_offset`` (+ ``pan_looked_left_offset`` after a move to the left). The defaults are
    the factory file's (all offsets 0, transition -0.4 rad): an uncalibrated robot.
    """

    tilt_offset_rad: float = 0.0
    tilt_looking_up_offset_rad: float = 0.0
    tilt_backlash_transition_rad: float = -0.4
    pan_offset_rad: float = 0.0
    pan_looked_left_offset_rad: float = 0.0

    @classmethod
    def from_yaml(cls, path: str | Path) -> HeadCalibration:
        """Read stretch_ros2's ``controller_calibration_head.yaml``; GoatError naming the file and the key."""
        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise GoatError(f"cannot read the head calibration {path}: {exc}") from None
        keys = {"tilt_offset_rad": "tilt_angle_offset", "tilt_looking_up_offset_rad": "tilt_looking_up_offset",
                "tilt_backlash_transition_rad": "tilt_angle_backlash_transition",
                "pan_offset_rad": "pan_angle_offset", "pan_looked_left_offset_rad": "pan_looked_left_offset"}
        if not isinstance(data, dict) or any(key not in data for key in keys.values()):
            missing = [k for k in keys.values() if not isinstance(data, dict) or k not in data]
            raise GoatError(f"head calibration {path} lacks {', '.join(missing)}")
        values = {field: float(data[key]) for field, key in keys.items()}
        for field, value in values.items():
            if not math.isfinite(value):
                raise GoatError(f"head calibration {path}: {keys[field]} must be finite, got {value!r}")
        return cls(**values)


class HeadPose:
    """The head's calibrated pan and tilt (stretch_ros2's convention), tracking the backlash side of each joint."""

    def __init__(self, robot: RobotLike, calibration: HeadCalibration | None = None) -> None:
        self.robot = robot
        self.calibration = calibration if calibration is not None else HeadCalibration()
        self._looking_up = False
        self._looked_left = False

    def tilt_rad(self) -> float:
        cal = self.calibration
        raw = float(self.robot.head.status["head_tilt"]["pos"])
        return raw + cal.tilt_offset_rad + (cal.tilt_looking_up_offset_rad if self._looking_up else 0.0)

    def pan_rad(self) -> float:
        cal = self.calibration
        raw = float(self.robot.head.status["head_pan"]["pos"])
        return raw + cal.pan_offset_rad + (cal.pan_looked_left_offset_rad if self._looked_left else 0.0)

    def tilt_limits_rad(self) -> tuple[float, float]:
        """The soft range of the calibrated tilt (the raw range plus the offset; backlash ignored)."""
        low, high = head_tilt_limits_rad(self.robot)
        return low + self.calibration.tilt_offset_rad, high + self.calibration.tilt_offset_rad

    def move_tilt_to(self, target_rad: float) -> None:
        """Command the calibrated tilt ``target_rad`` (a ``move_by`` of the difference, as stretch_ros2 does)."""
        error = target_rad - self.tilt_rad()
        cal = self.calibration
        self.robot.head.move_by("head_tilt", error)
        self._looking_up = target_rad > cal.tilt_backlash_transition_rad + cal.tilt_offset_rad


# ----------------------------------------------------------------------------------------------- start-up


def start_robot() -> RobotLike:
    """``stretch_body.robot.Robot()``, started; RobotNotReadyError naming what failed.

    stretch_body reads the fleet directory at import: an unset ``HELLO_FLEET_PATH`` / ``HELLO_FLEET_ID`` raises
    KeyError there and a missing directory exits the process (``sys.exit(1)``); both become RobotNotReadyError.
    """
    try:
        import stretch_body.robot
    except ImportError as exc:
        raise RobotNotReadyError(f"the Stretch driver needs hello-robot-stretch-body ({exc})") from None
    except KeyError as exc:
        raise RobotNotReadyError(f"stretch_body needs the environment variable {exc.args[0]} (the robot's fleet "
                                 "directory, $HELLO_FLEET_PATH/$HELLO_FLEET_ID, set up by Hello Robot)") from None
    except SystemExit:
        raise RobotNotReadyError("stretch_body found no robot parameters in $HELLO_FLEET_PATH/$HELLO_FLEET_ID "
                                 "(stretch_configuration_params.yaml and stretch_user_params.yaml)") from None
    robot: RobotLike = stretch_body.robot.Robot()
    if robot.startup() is False:  # releases before 0.4 return None
        robot.stop()
        raise RobotNotReadyError("stretch_body could not start the robot (is another process, e.g. stretch_core's "
                                 "stretch_driver, holding it? stretch_free_robot_process.py ends it; is the robot "
                                 "powered and every USB device present?)")
    return robot
