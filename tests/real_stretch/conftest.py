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
import multiprocessing
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
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


# How long stretch_body's Transport waits for a board's reply. Its own 1 s (transport.py, SyncTransactionHandler:
# ``self.timeout = 1``) is for USB boards answering in milliseconds; here the boards are a child process that a
# loaded 2-core machine can starve for longer. A late reply must not count as lost: in 0.7.31 a timed-out
# *async* pull raises IndexError (``decoded_data[0]`` of the empty reply, do_pull_transaction_v1) past
# ``Transport.do_pull_rpc_async``'s ``self.lock.release()``, so the NonDXLStatusThread dies holding the device's
# lock and every later RPC to that device (``Robot.push_command``'s ``future.result()``, ``robot.stop()``) waits
# for ever. That was the hang these tests showed under load (stack: NonDXLStatusThread, pimu pull, IndexError after
# "Async-Transaction Timeout."). The same bug can hang a real robot whose board stalls over 1 s (stretch_body's).
TRANSPORT_TIMEOUT_S = 30.0


def _give_replies_time(timeout_s: float) -> None:
    """Make every stretch_body transaction handler (sync and async; both run SyncTransactionHandler.__init__) wait
    ``timeout_s`` for a reply instead of 1 s. The only change to stretch_body in these tests."""
    from stretch_body import transport

    init = transport.SyncTransactionHandler.__init__

    def patient_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.timeout = timeout_s

    transport.SyncTransactionHandler.__init__ = patient_init  # type: ignore[method-assign]


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
    _give_replies_time(TRANSPORT_TIMEOUT_S)
    lock_dir = Path(os.environ["HELLO_FLEET_PATH"]) / "stretch_pid_dir"
    hello_utils.BODY_FILE = str(lock_dir / "stretch_body_robot_pid.txt")
    hello_utils.BODY_FILELOCK = hello_utils.BODY_FILE + ".lock"


DEV = _prepare_fleet()
# Why stretch_body cannot run here, when it is installed but one of its native imports cannot load (pyrealsense2
# without the system's libusb-1.0): the tests skip naming the library instead of failing the whole collection.
UNLOADABLE: str | None = None
if DEV is not None:
    try:
        _import_stretch_body()
    except ImportError as exc:
        if "cannot open shared object file" not in str(exc):
            raise
        shutil.rmtree(DEV.parent, ignore_errors=True)
        DEV, UNLOADABLE = None, str(exc)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if DEV is not None:
        shutil.rmtree(DEV.parent, ignore_errors=True)


def require_stretch_body() -> None:
    if UNLOADABLE is not None:
        pytest.skip(f"stretch_body is installed but cannot load here ({UNLOADABLE}); scripts/setup.sh --test "
                    "installs libusb-1.0-0 when run as root")
    if DEV is None:
        pytest.skip(f"hello-robot-stretch-body is not installed: {SETUP_HINT}")


def robot_params() -> dict[str, Any]:
    from stretch_body.robot_params import RobotParams

    return RobotParams.get_params()[1]


HANG_LIMIT_S = 180.0  # a test on the real stretch_body taking longer than this ends the run (see fake_hardware)


def _start_hang_guard(config: Any) -> threading.Timer:
    """After HANG_LIMIT_S: pytest's output capture suspended (else the dump would vanish with the process), every
    thread's stack on the real stderr, stretch_body's forked children killed, exit 1."""

    def on_hang() -> None:
        capture = config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=True)
        sys.stderr.write(f"\nreal_stretch_body: one test ran {HANG_LIMIT_S:.0f} s; every thread's stack, then exit\n")
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        # Robot.startup() forks stretch_body's collision process (multiprocessing); left behind it would run on
        # with this run's output pipes open, and a CI step waiting for them would hang after all.
        for child in multiprocessing.active_children():
            child.kill()
        os._exit(1)

    timer = threading.Timer(HANG_LIMIT_S, on_hang)
    timer.daemon = True
    timer.start()
    return timer


@pytest.fixture()
def stretch_body_loads() -> None:
    """Skip, saying why, where stretch_body is not installed or cannot load."""
    require_stretch_body()


@pytest.fixture()
def fake_hardware(pytestconfig: Any) -> Iterator[Callable[..., FakeStretchProcess]]:
    """``make(homed=True)``: a fresh fake Stretch 3 on the fleet's USB paths (closed after the test).

    A guard, not the fix (that is TRANSPORT_TIMEOUT_S): so that a CI run fails instead of hanging, a test here that
    lasts HANG_LIMIT_S prints every thread's stack and exits the process; faulthandler's own watchdog exits 30 s
    later if the first one cannot run (a thread holding the GIL).
    """
    require_stretch_body()
    assert DEV is not None
    guard = _start_hang_guard(pytestconfig)
    faulthandler.dump_traceback_later(HANG_LIMIT_S + 30.0, exit=True)
    made: list[FakeStretchProcess] = []

    def make(homed: bool = True) -> FakeStretchProcess:
        fake = FakeStretchProcess(DEV, servo_specs(robot_params(), homed), homed=homed)
        made.append(fake)
        return fake

    yield make
    for fake in made:
        fake.close()
    guard.cancel()
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
