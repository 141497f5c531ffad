"""FAKE HARDWARE FOR TESTS: a Dynamixel X-series (XL430-W250) daisy chain behind its USB serial adapter.

stretch_body drives the head and the wrist through dynamixel_sdk (``PortHandler`` + ``PacketHandler(2.0)``,
``GroupSyncRead``). This bus answers the Dynamixel Protocol 2.0 byte stream as the servos do (ROBOTIS e-Manual,
"Protocol 2.0" and "XL430-W250" control table): header ``FF FF FD 00``, id, length, instruction, byte stuffing,
CRC-16 (polynomial 0x8005); PING, READ, WRITE, REBOOT, SYNC_READ, SYNC_WRITE, BULK_READ; one status packet per
servo. Each servo keeps a control table (model 1060, EEPROM and RAM areas and the indirect data byte stretch_body
uses as its "calibrated" flag, address 661) and moves towards its goal position with the velocity-based profile
(profile velocity in 0.229 rev/min, profile acceleration in 214.577 rev/min^2) while torque is enabled.
"""

from __future__ import annotations

import math
import struct
import threading
import time
from pathlib import Path

from fake_usb import PtyDevice

HEADER = b"\xff\xff\xfd\x00"
PING, READ, WRITE, REG_WRITE, ACTION, REBOOT = 0x01, 0x02, 0x03, 0x04, 0x05, 0x08
SYNC_READ, SYNC_WRITE, BULK_READ, BULK_WRITE, STATUS = 0x82, 0x83, 0x92, 0x93, 0x55
BROADCAST = 0xFE

MODEL_XL430, MODEL_XM430 = 1060, 1020  # XL430-W250, XM430-W350 (the DW3 wrist pitch)
ADDR_MODEL, ADDR_FIRMWARE, ADDR_ID, ADDR_BAUD, ADDR_RETURN_DELAY, ADDR_OPERATING_MODE = 0, 6, 7, 8, 9, 11
ADDR_MOVING_THRESHOLD, ADDR_TEMPERATURE_LIMIT, ADDR_MAX_VOLTAGE, ADDR_MIN_VOLTAGE = 24, 31, 32, 34
ADDR_PWM_LIMIT, ADDR_VELOCITY_LIMIT, ADDR_MAX_POSITION, ADDR_MIN_POSITION = 36, 44, 48, 52
ADDR_TORQUE_ENABLE, ADDR_STATUS_RETURN_LEVEL, ADDR_HARDWARE_ERROR = 64, 68, 70
ADDR_GOAL_VELOCITY, ADDR_PROFILE_ACCELERATION, ADDR_PROFILE_VELOCITY, ADDR_GOAL_POSITION = 104, 108, 112, 116
ADDR_MOVING, ADDR_PRESENT_LOAD, ADDR_PRESENT_VELOCITY, ADDR_PRESENT_POSITION = 122, 126, 128, 132
ADDR_PRESENT_VOLTAGE, ADDR_PRESENT_TEMPERATURE = 144, 146
ADDR_HELLO_CALIBRATED = 661  # indirect data 56: stretch_body's "homed" flag of a servo that needs homing
TABLE_BYTES = 700
MODE_VELOCITY, MODE_POSITION, MODE_EXTENDED_POSITION, MODE_CURRENT_POSITION = 1, 3, 4, 5
ERR_ACCESS = 0x07

RPM_PER_LSB = 0.229  # profile / goal / present velocity unit
RPM2_PER_LSB = 214.577  # profile acceleration unit (rev/min^2)
TICKS_PER_REV = 4096


def dxl_crc(data: bytes) -> int:
    """CRC-16 of Protocol 2.0: polynomial 0x8005, initial value 0, most significant bit first."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def stuff(body: bytes) -> bytes:
    """Insert 0xFD after every FF FF FD in the instruction / parameter bytes."""
    return body.replace(b"\xff\xff\xfd", b"\xff\xff\xfd\xfd")


def unstuff(body: bytes) -> bytes:
    return body.replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")


def status_packet(dxl_id: int, error: int, params: bytes = b"") -> bytes:
    body = stuff(bytes([STATUS, error]) + params)
    packet = HEADER + bytes([dxl_id]) + struct.pack("<H", len(body) + 2) + body
    return packet + struct.pack("<H", dxl_crc(packet))


class Servo:
    """One X-series servo (XL430-W250 unless ``model`` says otherwise): its control table and its horn."""

    def __init__(self, dxl_id: int, position_ticks: int, calibrated: bool, model: int = MODEL_XL430) -> None:
        self.table = bytearray(TABLE_BYTES)
        self.model = model
        self._put(ADDR_MODEL, 2, model)
        self._put(ADDR_FIRMWARE, 1, 46)
        self._put(ADDR_ID, 1, dxl_id)
        self._put(ADDR_BAUD, 1, 2)  # 115200
        self._put(ADDR_RETURN_DELAY, 1, 250)
        self._put(ADDR_OPERATING_MODE, 1, MODE_POSITION)
        self._put(ADDR_MOVING_THRESHOLD, 4, 10)
        self._put(ADDR_TEMPERATURE_LIMIT, 1, 72)
        self._put(ADDR_MAX_VOLTAGE, 2, 140)
        self._put(ADDR_MIN_VOLTAGE, 2, 60)
        self._put(ADDR_PWM_LIMIT, 2, 885)
        self._put(ADDR_VELOCITY_LIMIT, 4, 265)
        self._put(ADDR_MAX_POSITION, 4, TICKS_PER_REV - 1)
        self._put(ADDR_STATUS_RETURN_LEVEL, 1, 2)
        self._put(ADDR_PRESENT_VOLTAGE, 2, 121)
        self._put(ADDR_PRESENT_TEMPERATURE, 1, 32)
        self._put(ADDR_HELLO_CALIBRATED, 1, int(calibrated))
        self.dxl_id = dxl_id
        self.pos = float(position_ticks)
        self.vel = 0.0  # ticks/s
        self._put(ADDR_GOAL_POSITION, 4, position_ticks)
        self.t = time.monotonic()
        self._publish()

    def _get(self, addr: int, size: int, signed: bool = False) -> int:
        return int.from_bytes(self.table[addr:addr + size], "little", signed=signed)

    def _put(self, addr: int, size: int, value: int) -> None:
        self.table[addr:addr + size] = int(value).to_bytes(size, "little", signed=value < 0)

    @property
    def torque(self) -> bool:
        return bool(self.table[ADDR_TORQUE_ENABLE])

    def read(self, addr: int, size: int) -> bytes:
        self.advance()
        return bytes(self.table[addr:addr + size])

    def write(self, addr: int, data: bytes) -> int:
        """Apply a WRITE; the status packet's error byte (an access error for EEPROM writes under torque)."""
        self.advance()
        if addr < ADDR_TORQUE_ENABLE and self.torque:
            return ERR_ACCESS  # the EEPROM area is locked while torque is on
        self.table[addr:addr + len(data)] = data  # a goal written with torque off is kept; the horn stays
        return 0

    def reboot(self) -> None:
        self.advance()
        self.table[ADDR_TORQUE_ENABLE] = 0
        self.table[ADDR_HARDWARE_ERROR] = 0

    def advance(self) -> None:
        now = time.monotonic()
        while self.t < now - 1e-9:
            dt = min(0.002, now - self.t)
            self._step(dt)
            self.t += dt
        self._publish()

    def _step(self, dt: float) -> None:
        if not self.torque:
            self.vel = 0.0  # no gravity on the head in this fake: it stays where it is
            return
        accel_lsb = self._get(ADDR_PROFILE_ACCELERATION, 4)
        a_max = accel_lsb * RPM2_PER_LSB * TICKS_PER_REV / 3600.0 if accel_lsb else 1e9  # ticks/s^2
        mode = self.table[ADDR_OPERATING_MODE]
        if mode == MODE_VELOCITY:
            goal_v = self._get(ADDR_GOAL_VELOCITY, 4, signed=True) * RPM_PER_LSB * TICKS_PER_REV / 60.0
            self.vel += max(-a_max * dt, min(a_max * dt, goal_v - self.vel))
            self.pos += self.vel * dt
            return
        goal = float(self._get(ADDR_GOAL_POSITION, 4, signed=True))
        if mode == MODE_POSITION:
            goal = min(max(goal, self._get(ADDR_MIN_POSITION, 4)), self._get(ADDR_MAX_POSITION, 4))
        vel_lsb = self._get(ADDR_PROFILE_VELOCITY, 4)
        v_max = vel_lsb * RPM_PER_LSB * TICKS_PER_REV / 60.0 if vel_lsb else 1e6  # ticks/s
        error = goal - self.pos
        if abs(error) < 0.5 and abs(self.vel) <= a_max * dt:
            self.pos, self.vel = goal, 0.0
            return
        v_goal = math.copysign(min(v_max, math.sqrt(2.0 * a_max * abs(error))), error)
        v_new = self.vel + max(-a_max * dt, min(a_max * dt, v_goal - self.vel))
        self.pos += 0.5 * (self.vel + v_new) * dt
        self.vel = v_new

    def _publish(self) -> None:
        self._put(ADDR_PRESENT_POSITION, 4, int(round(self.pos)))
        self._put(ADDR_PRESENT_VELOCITY, 4, int(round(self.vel * 60.0 / (RPM_PER_LSB * TICKS_PER_REV))))
        moving = abs(self.vel) * 60.0 / (RPM_PER_LSB * TICKS_PER_REV) > self._get(ADDR_MOVING_THRESHOLD, 4)
        self.table[ADDR_MOVING] = int(moving)
        self._put(ADDR_PRESENT_LOAD, 2, 0)


class DynamixelBus(PtyDevice):
    """A chain of servos on one USB adapter."""

    def __init__(self, link: Path, servos: dict[int, Servo]) -> None:
        super().__init__(link)
        self.servos = servos
        self.lock = threading.Lock()
        self._rx = bytearray()

    def on_bytes(self, data: bytes) -> None:
        self._rx += data
        while True:
            start = self._rx.find(HEADER)
            if start < 0:
                del self._rx[:-3]
                return
            del self._rx[:start]
            if len(self._rx) < 7:
                return
            length = struct.unpack_from("<H", self._rx, 5)[0]
            if len(self._rx) < 7 + length:
                return
            packet, self._rx = bytes(self._rx[:7 + length]), self._rx[7 + length:]
            if dxl_crc(packet[:-2]) != struct.unpack_from("<H", packet, len(packet) - 2)[0]:
                continue  # a corrupt packet gets no answer
            body = unstuff(packet[7:-2])
            with self.lock:
                reply = self._execute(packet[4], body[0], body[1:])
            if reply:
                self.send(reply)

    def _execute(self, dxl_id: int, instruction: int, params: bytes) -> bytes:
        if instruction == SYNC_READ:
            addr, size = struct.unpack_from("<HH", params)
            return b"".join(status_packet(i, 0, self.servos[i].read(addr, size)) for i in params[4:]
                            if i in self.servos)
        if instruction == BULK_READ:
            out = b""
            for k in range(0, len(params), 5):
                i, addr, size = params[k], *struct.unpack_from("<HH", params, k + 1)
                if i in self.servos:
                    out += status_packet(i, 0, self.servos[i].read(addr, size))
            return out
        if instruction in (SYNC_WRITE, BULK_WRITE):
            self._multi_write(instruction, params)
            return b""
        servo = self.servos.get(dxl_id)
        if servo is None:
            return b""  # nobody answers
        if instruction == PING:
            return status_packet(dxl_id, 0, struct.pack("<HB", servo.model, 46))
        if instruction == READ:
            addr, size = struct.unpack_from("<HH", params)
            return status_packet(dxl_id, 0, servo.read(addr, size))
        if instruction in (WRITE, REG_WRITE):
            addr = struct.unpack_from("<H", params)[0]
            return status_packet(dxl_id, servo.write(addr, params[2:]))
        if instruction == REBOOT:
            servo.reboot()
            return status_packet(dxl_id, 0)
        return status_packet(dxl_id, 0x02)  # instruction error

    def _multi_write(self, instruction: int, params: bytes) -> None:
        if instruction == SYNC_WRITE:
            addr, size = struct.unpack_from("<HH", params)
            for k in range(4, len(params), size + 1):
                if params[k] in self.servos:
                    self.servos[params[k]].write(addr, params[k + 1:k + 1 + size])
            return
        k = 0
        while k < len(params):
            i, addr, size = params[k], *struct.unpack_from("<HH", params, k + 1)
            if i in self.servos:
                self.servos[i].write(addr, params[k + 5:k + 5 + size])
            k += 5 + size
