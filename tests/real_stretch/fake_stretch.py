"""FAKE HARDWARE FOR TESTS: a whole Stretch 3 for the real stretch_body, and the fleet directory it reads.

:func:`write_fleet` creates what stretch_body reads at import (``$HELLO_FLEET_PATH/$HELLO_FLEET_ID/``): the
configuration and user parameter files of a Stretch 3 as stretch_body's own ``robot_params_SE3`` templates
define them (model SE3, tool ``eoa_wrist_dw3_tool_sg3``, every nominal parameter stretch_body ships), with one
change: each device's ``usb_name`` points into ``<fleet>/dev/`` instead of ``/dev/``, where :class:`FakeStretch`
puts its pseudo-terminals. That is the only seam: stretch_body's classes, threads, transport and Dynamixel code
run unchanged above the byte streams of fake_boards.py and fake_dynamixel.py.

The boards run in a process of their own (:class:`FakeStretchProcess`, this file run as a script): in the test's
process they would share one interpreter lock with stretch_body's busy-waiting status threads, and a board that
answers later than stretch_body's 1 s transport timeout kills its status thread (see test_real_executor.py). The
test talks to them through one JSON line per call on the child's stdin / stdout.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from fake_boards import Backplane, PimuBoard, StepperBoard, WaccBoard
from fake_dynamixel import MODEL_XL430, MODEL_XM430, DynamixelBus, Servo

MODE_POS_TRAJ_INCR = 8  # stepper mode of an incremental position trajectory (a base step)

FLEET_ID = "stretch-se3-3001"
DXL_LATENCY_TIMER_MS = 500
STEPPERS = ("hello-motor-left-wheel", "hello-motor-right-wheel", "hello-motor-lift", "hello-motor-arm")


def _se3_module() -> Any:
    """stretch_body.robot_params_SE3 loaded on its own (importing it through the package would read the fleet)."""
    spec = importlib.util.find_spec("stretch_body")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("stretch_body is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "robot_params_SE3.py"
    module_spec = importlib.util.spec_from_file_location("_fleet_robot_params_SE3", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def write_fleet(fleet_path: Path) -> Path:
    """Write the SE3 fleet directory under ``fleet_path``; returns the device folder the USB names point to."""
    se3 = _se3_module()
    robot_dir = fleet_path / FLEET_ID
    robot_dir.mkdir(parents=True, exist_ok=True)
    dev = fleet_path / "dev"
    dev.mkdir(exist_ok=True)
    config = dict(se3.configuration_params_template)
    config["robot"] = {**config["robot"], "serial_no": FLEET_ID, "batch_name": "fake"}
    user: dict[str, Any] = {key: dict(value) for key, value in se3.user_params_template.items()}
    nominal = se3.nominal_params
    devices = {key: value for key, value in nominal.items() if isinstance(value, dict)}
    tool = nominal["robot"]["tool"]
    for name, spec in nominal[tool]["devices"].items():
        devices[name] = getattr(se3, spec["device_params"])
    for name, params in devices.items():
        for key in ("usb_name", "usb_name_left_wheel", "usb_name_right_wheel"):
            if key in params:
                user.setdefault(name, {})[key] = str(dev / Path(params[key]).name)
    # dynamixel_sdk gives up on a status packet after 2 x dxl_latency_timer + 2 ms (64 ms on a Stretch: a USB
    # adapter answers in a millisecond). A fake servo thread on a loaded CI machine can be descheduled longer than
    # that, and a late answer then shifts every later read by one packet; 500 ms keeps the fake's replies in time.
    for chain in ("head", "end_of_arm", tool):  # the wrist chain reads the parameters named after the tool
        user.setdefault(chain, {})["dxl_latency_timer"] = DXL_LATENCY_TIMER_MS
    (robot_dir / "stretch_configuration_params.yaml").write_text(yaml.safe_dump(config))
    (robot_dir / "stretch_user_params.yaml").write_text(yaml.safe_dump(user))
    return dev


ServoSpec = tuple[int, int, bool, int]  # Dynamixel id, position at start-up (ticks), calibrated flag, model number


def servo_specs(robot_params: dict[str, Any], homed: bool) -> dict[str, list[ServoSpec]]:
    """The servos of the head and wrist chains, from stretch_body's parameters (ids, zero positions)."""
    tool = robot_params["robot"]["tool"]
    chains = {"hello-dynamixel-head": ("head_pan", "head_tilt"),
              "hello-dynamixel-wrist": tuple(robot_params[tool]["devices"])}
    specs: dict[str, list[ServoSpec]] = {}
    for bus, joints in chains.items():
        specs[bus] = []
        for joint in joints:
            p = robot_params[joint]
            calibrated = homed or not p.get("req_calibration", 0)
            # stretch_body turns on current-based position control only on XM servos: on the SE3 DW3 wrist that is
            # the pitch joint, an XM430-W350; the others are XL430-W250.
            model = MODEL_XM430 if p.get("use_pos_current_ctrl") else MODEL_XL430
            specs[bus].append((int(p["id"]), int(p.get("zero_t", 2048)), calibrated, model))
    return specs


class FakeStretch:
    """Every USB device of a Stretch 3, in this process (the server side of :class:`FakeStretchProcess`)."""

    def __init__(self, dev: Path, servos: dict[str, list[ServoSpec]], homed: bool = True) -> None:
        self.backplane = bp = Backplane()
        bp.homed = homed
        self.steppers = {name: StepperBoard(dev / name, bp, name, pos_calibrated=homed and "wheel" not in name)
                         for name in STEPPERS}
        bp.wheels = {"left": self.steppers["hello-motor-left-wheel"],
                     "right": self.steppers["hello-motor-right-wheel"]}
        self.pimu = PimuBoard(dev / "hello-pimu", bp, lambda: list(self.steppers.values()))
        self.wacc = WaccBoard(dev / "hello-wacc", bp)
        self.buses = {name: DynamixelBus(dev / name, {i: Servo(i, ticks, calibrated, model)
                                                      for i, ticks, calibrated, model in specs})
                      for name, specs in servos.items()}
        self._devices = [*self.steppers.values(), self.pimu, self.wacc, *self.buses.values()]
        for device in self._devices:
            device.start()

    # ------------------------------------------------------------------------------------- the world
    def press_runstop(self) -> None:
        self.pimu.press_runstop()

    def release_runstop(self) -> None:
        self.pimu.release_runstop()

    def block_base_after(self, distance_m: float) -> None:
        self.backplane.block_base_after(distance_m)

    def delay_replies(self, device: str, delay_s: float) -> None:
        """The board answers every request ``delay_s`` late from now on (0: at once again)."""
        next(d for d in self._devices if d.link.name == device).reply_delay_s = delay_s

    def base_travel_m(self) -> float:
        """The base's true forward travel since power-on (the fake's physics, not odometry)."""
        with self.backplane.lock:
            self.backplane.advance()
            return self.backplane.base_travel_m

    def wait_for_rest(self, timeout_s: float = 15.0) -> float:
        """Until both wheels are still (no velocity, nothing left for their motion generators); returns the wall
        time (``time.time()``, the clock of stretch_body's ``timestamp_pc``) from which they are."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self.backplane.lock:
                self.backplane.advance()
                wheels = list(self.backplane.wheels.values())
                if all(abs(w.vel) < 1e-6 and abs(w.sp_vel) < 1e-6
                       and (w.cmd.mode != MODE_POS_TRAJ_INCR or abs(w.target - w.setpoint) < 1e-6) for w in wheels):
                    return time.time()
            if time.monotonic() > deadline:
                raise AssertionError(f"the fake base did not come to rest within {timeout_s} s")
            time.sleep(0.01)

    def meters_per_motor_rad(self) -> float:
        return self.backplane.meters_per_motor_rad

    def wheel_commands(self) -> list[tuple[int, float, float]]:
        """(mode, x_des, v_des) of every command the right wheel took into effect."""
        return [(c.mode, c.x_des, c.v_des) for c in self.steppers["hello-motor-right-wheel"].commands]

    def servo_goal_ticks(self, dxl_id: int) -> int:
        servo = next(bus.servos[dxl_id] for bus in self.buses.values() if dxl_id in bus.servos)
        return servo._get(116, 4, signed=True)

    def close(self) -> None:
        for device in self._devices:
            device.close()


CALLS = ("press_runstop", "release_runstop", "block_base_after", "delay_replies", "base_travel_m",
         "meters_per_motor_rad", "wheel_commands", "servo_goal_ticks", "wait_for_rest")


class FakeStretchProcess:
    """A :class:`FakeStretch` in a child process; every call is forwarded and answered as JSON (tests only)."""

    def __init__(self, dev: Path, servos: dict[str, list[ServoSpec]], homed: bool = True) -> None:
        self._proc = subprocess.Popen([sys.executable, __file__, str(dev), json.dumps(servos), json.dumps(homed)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        if self._read() != "ready":
            raise RuntimeError("the fake Stretch hardware did not start")

    def _read(self) -> Any:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the fake Stretch hardware process ended (exit code {self._proc.poll()})")
        return json.loads(line)

    def _call(self, name: str, *args: Any) -> Any:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps([name, *args]) + "\n")
        self._proc.stdin.flush()
        result = self._read()
        if isinstance(result, list) and all(isinstance(item, list) for item in result):
            return [tuple(item) for item in result]  # JSON made the tuples lists
        return result

    def __getattr__(self, name: str) -> Any:
        if name not in CALLS:
            raise AttributeError(name)
        return lambda *args: self._call(name, *args)

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()  # end of input: the server closes its devices and exits
            try:
                self._proc.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def serve(dev: Path, servos: dict[str, list[ServoSpec]], homed: bool) -> None:
    fake = FakeStretch(dev, servos, homed)
    print(json.dumps("ready"), flush=True)
    try:
        for line in sys.stdin:
            name, *args = json.loads(line)
            if name not in CALLS:
                raise ValueError(f"unknown call {name!r}")
            print(json.dumps(getattr(fake, name)(*args)), flush=True)
    finally:
        fake.close()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), {k: [tuple(s) for s in v] for k, v in json.loads(sys.argv[2]).items()},
          bool(json.loads(sys.argv[3])))


def status_after(robot: Any, wall_s: float, timeout_s: float = 15.0) -> float:
    """Until stretch_body's base status was refreshed after ``wall_s`` (its own ``timestamp_pc``); returns that."""
    deadline = time.monotonic() + timeout_s
    while robot.base.status["timestamp_pc"] <= wall_s:
        assert time.monotonic() < deadline, f"stretch_body's base status not refreshed within {timeout_s} s"
        time.sleep(0.01)
    return float(robot.base.status["timestamp_pc"])


def odometry_at_rest(robot: Any, fake: Any) -> tuple[float, float, float]:
    """(x, y, true travel): stretch_body's odometry from a status whose wheel readings were all taken after the
    fake base came to rest, and the base's true travel. Judged by the status's own time, not by when the test
    looks: on a loaded machine the status thread may be late by tenths of a second, which at 0.1 m/s is
    centimetres (the assertions that compared odometry with the truth at the moment of reading failed so)."""
    rest_s = fake.wait_for_rest()
    # The refresh stamped after rest_s may have read the wheels before it (the stamp comes after both reads):
    # the next one read them after.
    status_after(robot, status_after(robot, rest_s))
    status = robot.base.status
    return float(status["x"]), float(status["y"]), fake.base_travel_m()
