"""The head tilt goat_stretch reports and commands is stretch_ros2's calibrated angle, on the real stretch_body head
(fake servos below, conftest.py)."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from goat_core.errors import GoatError
from goat_core.types import DiscreteAction
from goat_stretch.body import HeadCalibration
from goat_stretch.driver import DiscreteActionExecutor, ExecutorConfig, MonotonicClock, StopReason

pytestmark = [pytest.mark.real_stretch_body, pytest.mark.slow]  # real timing: seconds per test

CALIBRATION = """tilt_angle_offset: 0.05
tilt_looking_up_offset: 0.02
tilt_angle_backlash_transition: -0.4
pan_angle_offset: -0.03
pan_looked_left_offset: 0.0
"""


def test_a_calibrated_look_down_reports_and_reaches_the_calibrated_angle(stretch: Callable[..., Any],
                                                                           tmp_path: Path) -> None:
    path = tmp_path / "controller_calibration_head.yaml"
    path.write_text(CALIBRATION)
    calibration = HeadCalibration.from_yaml(path)
    robot, _ = stretch()
    executor = DiscreteActionExecutor(robot, ExecutorConfig(), MonotonicClock(), calibration)
    level = executor.head.tilt_rad()
    assert level == pytest.approx(0.05, abs=0.01)  # the servo at 0 plus the offset (not yet commanded up)
    out = executor.execute(DiscreteAction.LOOK_DOWN)
    assert out.reason is StopReason.DONE, out.message
    # DONE once within the executor's tilt tolerance of the calibrated target (the servo may still be settling).
    tolerance = ExecutorConfig().tilt_tolerance_rad
    assert out.camera_tilt_rad == pytest.approx(level - math.radians(30.0), abs=tolerance)
    threading.Event().wait(0.5)
    raw = robot.head.status["head_tilt"]["pos"]  # stretch_body's own reading: the servo, without the offsets
    assert raw == pytest.approx(level - math.radians(30.0) - 0.05, abs=0.01)  # where the calibrated target puts it
    assert executor.head.pan_rad() == pytest.approx(robot.head.status["head_pan"]["pos"] - 0.03)


def test_a_calibration_file_without_a_key_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "controller_calibration_head.yaml"
    path.write_text(CALIBRATION.replace("pan_angle_offset: -0.03\n", ""))
    with pytest.raises(GoatError, match="pan_angle_offset"):
        HeadCalibration.from_yaml(path)
