"""FAKE HARDWARE FOR TESTS: a USB serial device of the Stretch, as a pseudo-terminal.

stretch_body opens its devices by path (``/dev/hello-motor-left-wheel``...; the paths come from the robot
parameters). Each fake device here is a real pseudo-terminal: stretch_body's own ``Transport`` (aioserial / pyserial)
and dynamixel_sdk's ``PortHandler`` open the slave side through a symlink with the device's name, set it up as
they would a USB serial port (termios, ``flock``) and exchange bytes with it; the fake board or servo bus reads
and answers on the master side in a thread. Nothing above the byte stream is replaced, and because the device is
a file, a stretch_body running in another process (the driver node started by ``ros2 run``) can use it too.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from pathlib import Path
from typing import Optional


class PtyDevice:
    """One fake device: its slave end is reachable at ``link``; :meth:`on_bytes` handles what the host wrote."""

    def __init__(self, link: Path) -> None:
        self.link = Path(link)
        self._master, self._slave = os.openpty()
        # Raw from the start (no echo, no line editing), as a USB CDC port is; pyserial sets raw mode again on open.
        tty.setraw(self._slave)
        # Keep our own handle on the slave: without one, reading the master fails (EIO) while the host has the port
        # closed, e.g. between two Robot() instances.
        self.link.parent.mkdir(parents=True, exist_ok=True)
        if self.link.is_symlink() or self.link.exists():
            self.link.unlink()
        self.link.symlink_to(os.ttyname(self._slave))
        self._stop = threading.Event()
        self.reply_delay_s = 0.0  # each request is answered this late (a board stalled, or starved of CPU here)
        self._write_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name=f"fake:{self.link.name}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.link.is_symlink():
            self.link.unlink()

    def send(self, data: bytes) -> None:
        with self._write_lock:
            view = memoryview(data)
            while view:
                written = os.write(self._master, view)
                view = view[written:]

    def on_bytes(self, data: bytes) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self._master, 4096)
            except OSError:  # closed under us at shut-down
                return
            if data:
                if self.reply_delay_s > 0.0:
                    time.sleep(self.reply_delay_s)
                self.on_bytes(data)
