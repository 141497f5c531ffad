"""`goat-nav launch --isolated` watches its node processes: one that dies brings the launch down, named, rc 1.

The real CLI in a child process starts the real node processes; the test kills one of them with SIGKILL (as the
OOM killer would) and reads what the launcher says and returns.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()


def _child_running(parent_pid: int, module: str) -> int | None:
    """The pid of a child of ``parent_pid`` running ``python -m module``, if there is one yet."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent_pid and module.encode() in cmdline:
            return int(entry.name)
    return None


@pytest.mark.slow
def test_a_killed_node_stops_the_launch_with_its_name_and_rc_1() -> None:
    launch = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "launch", "sim", "--isolated"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        pid = None
        while pid is None:
            assert launch.poll() is None, f"the launch ended early: {launch.communicate()}"
            assert time.monotonic() < deadline, "the perception node process never started"
            pid = _child_running(launch.pid, "goat_ros.perception_node")
            time.sleep(0.2)
        time.sleep(1.0)  # let it get going: the fault is a node that dies while the graph runs
        os.kill(pid, signal.SIGKILL)
        _, err = launch.communicate(timeout=30)
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait()
    assert launch.returncode == 1
    assert f"node 'perception' (pid {pid}) was killed by SIGKILL" in err
