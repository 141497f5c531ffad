"""FAKE HARDWARE FOR TESTS: the Stretch 3 micro-controller boards (steppers, Pimu, Wacc) behind their USB ports.

Each board answers stretch_body's RPC transport byte for byte, as the firmware does (hello-robot/stretch_firmware,
``arduino/hello_stepper``, ``hello_pimu``, ``hello_wacc``, commit f2751f1): COBS frames with a Modbus CRC, the V0
block protocol (used until the firmware version is known) and the V1 frame protocol, the packed C structs of
``Common.h`` for board info, status, commands, gains and triggers. stretch_body's own ``Transport``, ``Stepper``,
``Pimu`` and ``Wacc`` classes parse every reply into their ``status`` dicts; nothing of stretch_body is replaced.

The firmware behaviour imitated, from ``HelloController.cpp`` / ``RunstopManager.cpp`` (facts, re-implemented):

* a command waits for a motor sync pulse from the Pimu when the stepper's sync mode is on (``RPC_SET_MOTOR_SYNC``);
  MODE_SAFETY is taken at once;
* MODE_POS_TRAJ_INCR moves the set-point by ``x_des`` from the current position when ``incr_trigger`` changes,
  through a trapezoidal motion generator (``v_des``, ``a_des``); MODE_VEL_PID / MODE_VEL_TRAJ ramp the velocity to
  ``v_des`` at ``a_des``; MODE_SAFETY without ``safety_hold`` freewheels (the wheels coast to a stop on the floor's
  friction, ``COAST_DECEL_RAD_S2``, an assumption of this fake), with ``safety_hold`` it holds;
* the velocity watchdog forces MODE_SAFETY after 1 s without a new velocity command (``enable_vel_watchdog``);
* the runstop (Pimu ``state_runstop_event``, with ``stop_at_runstop``) forces every stepper with ``enable_runstop``
  into MODE_SAFETY and keeps it there until a new command arrives after release; tapping the button engages it,
  holding it 2 s releases it (or ``TRIGGER_RUNSTOP_RESET``);
* ``DIAG_POS_CALIBRATED`` is set once the joint was homed (lift and arm; ``stretch_robot_home.py`` on a robot).

The physics is the fake's own: a wheel follows its controller's set-point exactly unless the base is blocked
(:meth:`Backplane.block_base_after`), where the wheels stall against the obstacle (the set-point runs on, the
controller saturates at its current limit).
"""

from __future__ import annotations

import math
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from fake_usb import PtyDevice

# Firmware versions of hello-robot/stretch_firmware f2751f1 (Common.h FIRMWARE_VERSION*); S3 boards are variant 3.
STEPPER_FIRMWARE = "Stepper.v0.7.5p5"
PIMU_FIRMWARE = "Pimu.v0.7.0p5"
WACC_FIRMWARE = "Wacc.v0.5.1p3"

COAST_DECEL_RAD_S2 = 40.0  # freewheeling wheel (motor rad/s^2): about 0.5 m/s^2 at the floor, assumed
PHYSICS_STEP_S = 0.002

# stretch_body transport.py / firmware Common.h
V0_START_NEW_RPC, V0_ACK_NEW_RPC = 100, 101
V0_SEND_BLOCK_MORE, V0_ACK_SEND_BLOCK_MORE = 102, 103
V0_SEND_BLOCK_LAST, V0_ACK_SEND_BLOCK_LAST = 104, 105
V0_GET_BLOCK, V0_ACK_GET_BLOCK_MORE, V0_ACK_GET_BLOCK_LAST = 106, 107, 108
V0_BLOCK_BYTES = 32
V1_PUSH_FIRST_MORE, V1_PUSH_FIRST_ONLY, V1_PUSH_MORE, V1_PUSH_LAST, V1_PUSH_ACK = 201, 202, 203, 204, 205
V1_PULL_FIRST, V1_PULL_MORE, V1_PULL_ACK_MORE, V1_PULL_ACK_LAST = 206, 207, 208, 209
V1_FRAME_DATA_BYTES = 58


# ------------------------------------------------------------------------------------------- framing


def modbus_crc(data: bytes) -> int:
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent overhead byte stuffing (no zero byte in the output); the 0x00 delimiter is appended."""
    out = bytearray([0])
    code_at, code = 0, 1
    for byte in data:
        if byte == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
        else:
            out.append(byte)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at, code = len(out), 1
                out.append(0)
    out[code_at] = code
    out.append(0)
    return bytes(out)


def cobs_decode(frame: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(frame):
        code = frame[i]
        if code == 0 or i + code > len(frame) + (code == 1):
            raise ValueError(f"bad COBS frame {frame!r}")
        out += frame[i + 1:i + code]
        i += code
        if code != 0xFF and i < len(frame):
            out.append(0)
    return bytes(out)


def frame_out(payload: bytes) -> bytes:
    crc = modbus_crc(payload)
    return cobs_encode(payload + bytes([(crc >> 8) & 0xFF, crc & 0xFF]))


def frame_in(encoded: bytes) -> Optional[bytes]:
    """The payload of one received frame (delimiter stripped), None on a CRC error."""
    data = cobs_decode(encoded)
    payload, crc = data[:-2], data[-2:]
    if len(crc) != 2 or modbus_crc(payload) != (crc[0] << 8 | crc[1]):
        return None
    return payload


def board_info(variant: str, firmware: str) -> bytes:
    return variant.encode().ljust(20, b"\0") + firmware.encode().ljust(20, b"\0")


# ------------------------------------------------------------------------------------------ backplane


class Backplane:
    """What the boards share: power-on time, the runstop line, the sync line, the base on the floor."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.t0 = time.monotonic()
        self.runstop_line = False  # driven by the Pimu: runstop event and stop_at_runstop
        self.sync_count = 0  # motor sync pulses sent by the Pimu
        self.homed = True  # lift and arm report DIAG_POS_CALIBRATED (set before the robot starts)
        self.wheels: dict[str, StepperBoard] = {}
        self.base_travel_m = 0.0  # forward travel of the base centre since power-on (true, not odometry)
        self._wall_at_m: Optional[float] = None
        self.meters_per_motor_rad = 0.1016 / 2.0 / 3.8  # SE3 base: wheel diameter 0.1016 m, gear ratio 3.8

    def now_us(self) -> int:
        return int((time.monotonic() - self.t0) * 1e6)

    def block_base_after(self, distance_m: float) -> None:
        """An obstacle the camera does not see: the base cannot travel more than ``distance_m`` further forward."""
        with self.lock:
            self._wall_at_m = self.base_travel_m + distance_m

    def advance(self) -> None:
        """Bring every wheel up to now (wheels move together: the obstacle couples them)."""
        with self.lock:
            left, right = self.wheels.get("left"), self.wheels.get("right")
            if left is None or right is None:
                return
            now = time.monotonic()
            while left.t < now - 1e-9:
                dt = min(PHYSICS_STEP_S, now - left.t)
                dl, dr = left.control_step(dt), right.control_step(dt)
                travel = 0.5 * (dl + dr) * self.meters_per_motor_rad
                if self._wall_at_m is not None and travel > 0.0 and self.base_travel_m + travel > self._wall_at_m:
                    # Pressed against the obstacle, both wheels stall (friction at the contact holds the base from
                    # turning too): they move only up to the wall. Splitting the blocked part off each wheel's own
                    # delta would turn a position controller's accumulated gap into a spin on the next step.
                    dl = dr = max(0.0, self._wall_at_m - self.base_travel_m) / self.meters_per_motor_rad
                    left.stalled = right.stalled = True
                else:
                    left.stalled = right.stalled = False
                self.base_travel_m += 0.5 * (dl + dr) * self.meters_per_motor_rad
                left.apply(dl, dt)
                right.apply(dr, dt)


# ------------------------------------------------------------------------------------ transport server


class RpcBoard(PtyDevice):
    """The RPC transport of a hello-robot board; subclasses answer ``rpc(request) -> reply``."""

    def __init__(self, link: Path, backplane: Backplane) -> None:
        super().__init__(link)
        self.bp = backplane
        self._rx = bytearray()
        self._push = bytearray()
        self._pull_left = b""
        self._v0_in = bytearray()
        self._v0_out = b""
        self.rpc_log: list[int] = []  # ids of the RPCs received, in order

    def rpc(self, request: bytes) -> bytes:
        raise NotImplementedError

    def on_bytes(self, data: bytes) -> None:
        self._rx += data
        while True:
            end = self._rx.find(0)
            if end < 0:
                return
            encoded, self._rx = bytes(self._rx[:end]), self._rx[end + 1:]
            if not encoded:
                continue
            payload = frame_in(encoded)
            if payload is not None and payload:
                reply = self._transact(payload)
                if reply is not None:
                    self.send(frame_out(reply))

    def _call(self, request: bytes) -> bytes:
        self.rpc_log.append(request[0])
        with self.bp.lock:
            return self.rpc(request)

    def _transact(self, frame: bytes) -> Optional[bytes]:
        kind, body = frame[0], frame[1:]
        if kind == V1_PUSH_FIRST_ONLY:
            return bytes([V1_PUSH_ACK]) + self._call(body)
        if kind in (V1_PUSH_FIRST_MORE, V1_PUSH_MORE):
            self._push = bytearray(body) if kind == V1_PUSH_FIRST_MORE else self._push + body
            return bytes([V1_PUSH_ACK])
        if kind == V1_PUSH_LAST:
            request, self._push = bytes(self._push + body), bytearray()
            return bytes([V1_PUSH_ACK]) + self._call(request)
        if kind in (V1_PULL_FIRST, V1_PULL_MORE):
            # The firmware runs whatever RPC a pull carries (stretch_body's async push uses pull frames).
            if kind == V1_PULL_FIRST:
                self._pull_left = self._call(body)
            chunk, self._pull_left = self._pull_left[:V1_FRAME_DATA_BYTES], self._pull_left[V1_FRAME_DATA_BYTES:]
            return bytes([V1_PULL_ACK_MORE if self._pull_left else V1_PULL_ACK_LAST]) + chunk
        if kind == V0_START_NEW_RPC:
            self._v0_in = bytearray()
            return bytes([V0_ACK_NEW_RPC])
        if kind == V0_SEND_BLOCK_MORE:
            self._v0_in += body
            return bytes([V0_ACK_SEND_BLOCK_MORE])
        if kind == V0_SEND_BLOCK_LAST:
            self._v0_out = self._call(bytes(self._v0_in + body))
            return bytes([V0_ACK_SEND_BLOCK_LAST])
        if kind == V0_GET_BLOCK:
            chunk, self._v0_out = self._v0_out[:V0_BLOCK_BYTES], self._v0_out[V0_BLOCK_BYTES:]
            return bytes([V0_ACK_GET_BLOCK_MORE if self._v0_out else V0_ACK_GET_BLOCK_LAST]) + chunk
        return None  # unknown frame: no answer, the host times out


# ------------------------------------------------------------------------------------------- stepper

MODE_SAFETY, MODE_FREEWHEEL, MODE_HOLD, MODE_POS_PID, MODE_VEL_PID = 0, 1, 2, 3, 4
MODE_POS_TRAJ, MODE_VEL_TRAJ, MODE_CURRENT, MODE_POS_TRAJ_INCR = 5, 6, 7, 8
CONFIG_SAFETY_HOLD, CONFIG_ENABLE_RUNSTOP, CONFIG_ENABLE_SYNC_MODE = 1, 2, 4
CONFIG_ENABLE_VEL_WATCHDOG = 64
DIAG_POS_CALIBRATED, DIAG_RUNSTOP_ON, DIAG_NEAR_POS_SETPOINT, DIAG_NEAR_VEL_SETPOINT = 1, 2, 4, 8
DIAG_IS_MOVING, DIAG_AT_CURRENT_LIMIT, DIAG_IS_MG_ACCELERATING, DIAG_IS_MG_MOVING = 16, 32, 64, 128
DIAG_IN_SAFETY_EVENT, DIAG_WAITING_ON_SYNC, DIAG_IN_SYNC_MODE = 1024, 2048, 16384
STEPPER_TYPES = {"hello-motor-left-wheel": 1, "hello-motor-right-wheel": 2, "hello-motor-arm": 3,
                 "hello-motor-lift": 4}
VEL_WATCHDOG_S = 1.0  # TC4_LOOP_RATE counts: one second


@dataclass
class StepperCommand:
    """Command struct (Common.h): mode u8, x_des, v_des, a_des, stiffness, i_feedforward, i_contact_pos/neg f32,
    incr_trigger u8."""

    mode: int = MODE_SAFETY
    x_des: float = 0.0
    v_des: float = 0.0
    a_des: float = 0.0
    incr_trigger: int = 0

    @classmethod
    def unpack(cls, data: bytes) -> StepperCommand:
        mode, x, v, a, _stiff, _iff, _ipos, _ineg, trigger = struct.unpack_from("<B7fB", data)
        return cls(mode, x, v, a, trigger)


class StepperBoard(RpcBoard):
    """A stepper board and its motor (positions in motor radians, as the firmware reports them)."""

    def __init__(self, link: Path, backplane: Backplane, name: str, pos_calibrated: bool) -> None:
        super().__init__(link, backplane)
        self.name = name
        self.config = 0  # gains.config bits, from RPC_SET_GAINS
        self.pos_calibrated = pos_calibrated
        self.cmd = StepperCommand()  # in effect
        self.pending: Optional[StepperCommand] = None  # received, waiting for a sync pulse
        self._sync_seen = 0
        self.pos = 0.0
        self.vel = 0.0
        self.setpoint = 0.0  # motion generator position
        self.sp_vel = 0.0  # motion generator velocity
        self.target = 0.0  # incremental position target
        self.watchdog_s = VEL_WATCHDOG_S
        self.safety_override = False
        self.stalled = False
        self.t = time.monotonic()
        self.commands: list[StepperCommand] = []  # every command taken into effect (tests read it)

    # --------------------------------------------------------------------------------- RPCs
    def rpc(self, request: bytes) -> bytes:
        rpc_id, body = request[0], request[1:]
        self._advance()
        if rpc_id == 17:  # RPC_GET_STEPPER_BOARD_INFO
            return bytes([18]) + board_info("Stepper.3", STEPPER_FIRMWARE) + bytes([STEPPER_TYPES[self.name]])
        if rpc_id == 1:  # RPC_SET_COMMAND
            self.pending = StepperCommand.unpack(body)
            self._sync_seen = self.bp.sync_count  # in sync mode it waits for the next pulse after its arrival
            self._take_pending()
            return bytes([2]) + struct.pack("<H", 0)  # CommandReply: ctrl_cycle_cnt
        if rpc_id == 3:  # RPC_GET_STATUS
            return bytes([4]) + self._status()
        if rpc_id == 5:  # RPC_SET_GAINS: 20 floats, then the config byte
            self.config = body[80]
            return bytes([6])
        if rpc_id == 9:  # RPC_SET_TRIGGER: u32 bits, f32 data
            bits = struct.unpack_from("<I", body)[0]
            if bits & 32:  # TRIGGER_POS_CALIBRATED
                self.pos_calibrated = True
            if bits & 16:  # TRIGGER_RESET_POS_CALIBRATED
                self.pos_calibrated = False
            return bytes([10])
        if rpc_id == 13:  # RPC_READ_GAINS_FROM_FLASH: the Gains struct
            return bytes([14]) + bytes(85)
        if rpc_id == 29:  # RPC_GET_STATUS_AUX
            return bytes([30]) + bytes(12)
        return bytes([rpc_id + 1])  # motion limits, trajectory reset...: an empty reply with the reply id

    # --------------------------------------------------------------------------------- control
    def _sync_mode(self) -> bool:
        return bool(self.config & CONFIG_ENABLE_SYNC_MODE)

    def _runstop_on(self) -> bool:
        return self.bp.runstop_line and bool(self.config & CONFIG_ENABLE_RUNSTOP)

    def _take_pending(self) -> None:
        cmd = self.pending
        if cmd is None:
            return
        if self._sync_mode() and cmd.mode != MODE_SAFETY and self.bp.sync_count == self._sync_seen:
            return  # waits for the next sync pulse
        self.pending = None
        self._sync_seen = self.bp.sync_count
        if self._runstop_on():
            return  # runstop forces safety: the command is dropped
        previous = self.cmd.mode
        if cmd.mode == MODE_POS_TRAJ_INCR and cmd.incr_trigger != self.cmd.incr_trigger:
            self.target = self.pos + cmd.x_des
        if cmd.mode != previous:  # smooth switch-over: generators start where the motor is
            self.setpoint, self.sp_vel = self.pos, self.vel
            if cmd.mode == MODE_POS_TRAJ_INCR and cmd.incr_trigger == self.cmd.incr_trigger:
                self.target = self.pos
        self.cmd = cmd
        self.safety_override = False
        self.watchdog_s = VEL_WATCHDOG_S
        self.commands.append(cmd)

    def _advance(self) -> None:
        if self.name in ("hello-motor-left-wheel", "hello-motor-right-wheel"):
            self.bp.advance()
        else:
            now = time.monotonic()
            while self.t < now - 1e-9:
                dt = min(PHYSICS_STEP_S, now - self.t)
                self.apply(self.control_step(dt), dt)

    def control_step(self, dt: float) -> float:
        """One control cycle: the motor's position change (rad) if nothing stops it."""
        if self._runstop_on() or (self.config & CONFIG_ENABLE_VEL_WATCHDOG and self.watchdog_s <= 0.0
                                  and self.cmd.mode in (MODE_VEL_PID, MODE_VEL_TRAJ)):
            if self.cmd.mode != MODE_SAFETY:
                self.cmd = StepperCommand(MODE_SAFETY, incr_trigger=self.cmd.incr_trigger)
                self.safety_override = True
        mode = self.cmd.mode
        if mode in (MODE_VEL_PID, MODE_VEL_TRAJ):
            self.watchdog_s -= dt
            self.sp_vel = _toward(self.sp_vel, self.cmd.v_des, abs(self.cmd.a_des) * dt)
            return self.sp_vel * dt
        if mode == MODE_POS_TRAJ_INCR:
            self.setpoint, self.sp_vel = _trapezoid(self.setpoint, self.sp_vel, self.target, abs(self.cmd.v_des),
                                                    abs(self.cmd.a_des), dt)
            return self.setpoint - self.pos
        if mode == MODE_SAFETY and not self.config & CONFIG_SAFETY_HOLD:  # freewheel: coast
            self.sp_vel = _toward(self.vel, 0.0, COAST_DECEL_RAD_S2 * dt)
            return self.sp_vel * dt
        self.sp_vel = 0.0
        return 0.0  # hold

    def apply(self, delta: float, dt: float) -> None:
        self.pos += delta
        self.vel = delta / dt if dt > 0.0 else 0.0
        self.t += dt

    def _status(self) -> bytes:
        cmd = self.cmd
        diag = DIAG_POS_CALIBRATED if self.pos_calibrated else 0
        diag |= DIAG_RUNSTOP_ON if self._runstop_on() else 0
        moving = abs(self.vel) > 0.05
        diag |= DIAG_IS_MOVING if moving else 0
        diag |= DIAG_AT_CURRENT_LIMIT if self.stalled else 0
        if cmd.mode == MODE_POS_TRAJ_INCR:
            diag |= DIAG_NEAR_POS_SETPOINT if abs(self.target - self.pos) < math.radians(1.0) else 0
            diag |= DIAG_IS_MG_MOVING if abs(self.sp_vel) > 1e-6 or abs(self.target - self.setpoint) > 1e-6 else 0
        elif cmd.mode in (MODE_VEL_PID, MODE_VEL_TRAJ):
            diag |= DIAG_NEAR_VEL_SETPOINT if abs(cmd.v_des - self.vel) < math.radians(3.5) else 0
            diag |= DIAG_IS_MG_MOVING if abs(self.sp_vel) > 1e-6 else 0
        diag |= DIAG_IN_SAFETY_EVENT if self.safety_override else 0
        diag |= DIAG_WAITING_ON_SYNC if self.pending is not None else 0
        diag |= DIAG_IN_SYNC_MODE if self._sync_mode() else 0
        # Status struct (Common.h): mode u8, effort f32, pos f64, vel f32, err f32, diag u32, timestamp u64,
        # debug f32, guarded_event u32, traj_setpoint f32, traj_id u16, voltage f32 (ADC counts).
        return struct.pack("<BfdffIQfIfHf", cmd.mode, 0.0, self.pos, self.vel, self.setpoint - self.pos, diag,
                           self.bp.now_us(), 0.0, 0, 0.0, 0, 640.0)


def _toward(value: float, goal: float, step: float) -> float:
    return goal if abs(goal - value) <= step else value + math.copysign(step, goal - value)


def _trapezoid(x: float, v: float, target: float, v_max: float, a_max: float, dt: float) -> tuple[float, float]:
    """One step of a trapezoidal motion generator from (x, v) to rest at ``target``."""
    error = target - x
    if abs(error) < 1e-9 and abs(v) <= a_max * dt:
        return target, 0.0
    v_goal = math.copysign(min(v_max, math.sqrt(2.0 * a_max * abs(error))), error)
    v_new = _toward(v, v_goal, a_max * dt)
    x_new = x + 0.5 * (v + v_new) * dt
    if (target - x_new) * error <= 0.0 and abs(v_new) <= a_max * dt * 2.0:
        return target, 0.0
    return x_new, v_new


# ---------------------------------------------------------------------------------------------- pimu

STATE_RUNSTOP_EVENT = 16
TRIGGER_RUNSTOP_RESET, TRIGGER_RUNSTOP_ON = 2, 256


class PimuBoard(RpcBoard):
    """The power and IMU board: runstop button and event, motor sync line, battery, IMU at rest."""

    def __init__(self, link: Path, backplane: Backplane, sync_listeners: Callable[[], list[StepperBoard]]) -> None:
        super().__init__(link, backplane)
        self.runstop_event = False
        self.stop_at_runstop = True
        self._listeners = sync_listeners

    def press_runstop(self) -> None:
        """Tap the runstop button: the event latches (RunstopManager: MODE_RUNSTOP_ACTIVE)."""
        with self.bp.lock:
            self.runstop_event = True
            self._drive_line()

    def release_runstop(self) -> None:
        """Hold the button for 2 s: the event clears."""
        with self.bp.lock:
            self.runstop_event = False
            self._drive_line()

    def _drive_line(self) -> None:
        for board in self._listeners():
            board._advance()  # motion up to the moment the line changes
        self.bp.runstop_line = self.runstop_event and self.stop_at_runstop

    def rpc(self, request: bytes) -> bytes:
        rpc_id, body = request[0], request[1:]
        if rpc_id == 7:  # RPC_GET_PIMU_BOARD_INFO
            return bytes([8]) + board_info("Pimu.3", PIMU_FIRMWARE)
        if rpc_id == 1:  # RPC_SET_PIMU_CONFIG: 4 cliff zeros + 5 floats, then stop_at_cliff, stop_at_runstop...
            self.stop_at_runstop = bool(body[37])
            self._drive_line()
            return bytes([2])
        if rpc_id == 3:  # RPC_GET_PIMU_STATUS
            return bytes([4]) + self._status()
        if rpc_id == 5:  # RPC_SET_PIMU_TRIGGER
            bits = struct.unpack_from("<I", body)[0]
            if bits & TRIGGER_RUNSTOP_RESET:
                self.runstop_event = False
            if bits & TRIGGER_RUNSTOP_ON:
                self.runstop_event = True
            self._drive_line()
            return bytes([6]) + struct.pack("<I", bits)
        if rpc_id == 9:  # RPC_SET_MOTOR_SYNC: every motor takes its waiting command at the same instant
            self.bp.sync_count += 1
            boards = self._listeners()
            for board in boards:
                board._advance()  # motion up to the pulse, under the old commands
            for board in boards:
                board._take_pending()  # no time passes between the boards (the wheels start together)
            return bytes([10]) + struct.pack("<h", self.bp.sync_count & 0x7FFF)
        if rpc_id == 13:
            return bytes([14]) + struct.pack("<h", 0)
        return bytes([rpc_id + 1])

    def _status(self) -> bytes:
        imu = struct.pack("<17f", 0.0, 0.0, 9.81, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
                          0.0)
        state = STATE_RUNSTOP_EVENT if self.runstop_event else 0
        # Pimu_Status: IMU_Status, voltage, current, temp (ADC counts), cliff_range[4], state u32, timestamp u64,
        # bump_event_cnt u16, debug, current_charge. 640 counts = 12.5 V; 275 counts = 25 C.
        return imu + struct.pack("<3f4fIQHff", 640.0, 40.0, 275.0, 0.0, 0.0, 0.0, 0.0, state, self.bp.now_us(), 0,
                                 0.0, 0.0)


# ---------------------------------------------------------------------------------------------- wacc


class WaccBoard(RpcBoard):
    """The wrist accelerometer board, at rest."""

    def rpc(self, request: bytes) -> bytes:
        rpc_id = request[0]
        if rpc_id == 7:  # RPC_GET_WACC_BOARD_INFO
            return bytes([8]) + board_info("Wacc.3", WACC_FIRMWARE)
        if rpc_id == 3:  # RPC_GET_WACC_STATUS: ax ay az, a0 i16, d0-d3 u8, tap count u32, state u32, ts u64, debug
            return bytes([4]) + struct.pack("<3fh4BIIQI", 0.0, 0.0, 9.81, 0, 0, 0, 0, 0, 0, 0, self.bp.now_us(), 0)
        return bytes([rpc_id + 1])
