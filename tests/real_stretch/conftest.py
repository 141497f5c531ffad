"""goat_stretch on the real stretch_body (hello-robot-stretch-body, ``scripts/setup.sh --test``), fake hardware below.

stretch_body reads its parameters once, when ``stretch_body.robot_params`` is first imported, from
``$HELLO_FLEET_PATH/$HELLO_FLEET_ID``: this conftest writes a Stretch 3 fleet directory (fake_stretch.write_fleet)
into a temporary folder and points those variables at it before any test imports stretch_body. Every test gets a
fresh set of fake boards and servos (fake_stretch.FakeStretch) on pseudo-terminals named as the fleet's USB
devices, and starts the real ``stretch_body.robot.Robot`` against them.

Two process-wide side effects of stretch_body are undone around the tests, because the rest of the suite shares
the process: its import configures logging for the whole process (``disable_existing_loggers`` and root handlers,
robot_params.py ``nominal_system_params``), and ``Robot.startup()`` installs SIGINT/SIGTERM handlers that raise
``hello_utils.ThreadServiceExit``. Its single-robot lock file (``hello_utils.BODY_FILELOCK``, one path for the
machine) is moved into the temporary fleet so concurrent test runs on one machine do not refuse each other.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import random
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_stretch import FLEET_ID, FakeStretchProcess, servo_specs, write_fleet  # noqa: E402
from teardown import end_event_loop  # noqa: E402

SETUP_HINT = "install it with 'bash scripts/setup.sh --test' (hello-robot-stretch-body --no-deps + its imports)"

# The ROS graph tests here get their own domain, as tests/ros does.
os.environ["ROS_DOMAIN_ID"] = os.environ.get("GOAT_TEST_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 200)))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def _prepare_fleet() -> Path | None:
    """The device folder of a fresh fleet (None when stretch_body is not installed)."""
    try:
        fleet = Path(tempfile.mkdtemp(prefix="goat_stretch_fleet_"))
        dev = write_fleet(fleet)
    except ImportError:
        return None
    os.environ["HELLO_FLEET_PATH"] = str(fleet)
    os.environ["HELLO_FLEET_ID"] = FLEET_ID
    return dev


def _import_stretch_body() -> None:
    """Import stretch_body once, keeping the logging configuration the rest of the suite had."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    existing = {name: logger.disabled for name, logger in logging.Logger.manager.loggerDict.items()
                if isinstance(logger, logging.Logger)}
    import stretch_body.hello_utils as hello_utils
    import stretch_body.robot  # noqa: F401

    root.handlers[:] = handlers
    root.setLevel(level)
    for name, disabled in existing.items():
        logging.getLogger(name).disabled = disabled
    lock_dir = Path(os.environ["HELLO_FLEET_PATH"]) / "stretch_pid_dir"
    hello_utils.BODY_FILE = str(lock_dir / "stretch_body_robot_pid.txt")
    hello_utils.BODY_FILELOCK = hello_utils.BODY_FILE + ".lock"


DEV = _prepare_fleet()
if DEV is not None:
    _import_stretch_body()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if DEV is not None:
        shutil.rmtree(DEV.parent, ignore_errors=True)


def require_stretch_body() -> None:
    if DEV is None:
        pytest.skip(f"hello-robot-stretch-body is not installed: {SETUP_HINT}")


def robot_params() -> dict[str, Any]:
    from stretch_body.robot_params import RobotParams

    return RobotParams.get_params()[1]


HANG_LIMIT_S = 180.0  # a test on the real stretch_body taking longer than this ends the run (see fake_hardware)


@pytest.fixture()
def fake_hardware() -> Iterator[Callable[..., FakeStretchProcess]]:
    """``make(homed=True)``: a fresh fake Stretch 3 on the fleet's USB paths (closed after the test).

    stretch_body's asyncio ``push_command`` waits for its future without a timeout; on a heavily loaded machine it
    was seen to wait for ever (twice, load average above 20). So that a CI run fails instead of hanging, a test
    here that lasts HANG_LIMIT_S dumps every thread's stack and exits the process (faulthandler, exit=True).
    """
    require_stretch_body()
    assert DEV is not None
    faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True)
    made: list[FakeStretchProcess] = []

    def make(homed: bool = True) -> FakeStretchProcess:
        fake = FakeStretchProcess(DEV, servo_specs(robot_params(), homed), homed=homed)
        made.append(fake)
        return fake

    yield make
    for fake in made:
        fake.close()
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture()
def restore_signals() -> Iterator[None]:
    """Put back the SIGINT/SIGTERM handlers that Robot.startup() replaced."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.fixture()
def stretch(fake_hardware: Callable[..., FakeStretchProcess],
            restore_signals: None) -> Iterator[Callable[..., Any]]:
    """``start(homed=True) -> (robot, fake)``: the real stretch_body Robot, started on fake hardware; stopped after
    the test (the robot before its hardware)."""
    robots: list[Any] = []

    def start(homed: bool = True) -> tuple[Any, FakeStretchProcess]:
        import stretch_body.robot

        fake = fake_hardware(homed)
        robot = stretch_body.robot.Robot()
        assert robot.startup(), "stretch_body could not start on the fake hardware"
        robots.append(robot)
        return robot, fake

    yield start
    for robot in robots:
        robot.stop()
        end_event_loop(robot)
