"""The skip every ROS test module starts with, and the spinning and teardown helpers the graph tests share."""

from __future__ import annotations

import signal
import subprocess
import time
from typing import Any, Callable, Sequence

import pytest

SETUP_HINT = "run 'bash scripts/setup_ros.sh' (installs ROS 2 Jazzy wheels, builds goat_interfaces)"


def require_ros() -> None:
    pytest.importorskip("rclpy", reason=f"rclpy is not installed: {SETUP_HINT}")
    pytest.importorskip("goat_interfaces.msg", reason=f"goat_interfaces is not built: {SETUP_HINT}")
    pytest.importorskip("tf2_msgs.msg", reason=f"tf2_msgs is not available: {SETUP_HINT}")
    pytest.importorskip("goat_ros.graph", reason=f"goat_ros is not on the path: {SETUP_HINT}")


def spin_until(executor: Any, done: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Spin ``executor`` (an rclpy executor) until ``done()``; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
        executor.spin_once(timeout_sec=0.05)


def close_nodes(nodes: Sequence[Any], executor: Any) -> None:
    """Close (where a node has ``close``) and destroy ``nodes`` in order, then shut ``executor`` down."""
    for node in nodes:
        close = getattr(node, "close", None)
        if callable(close):
            close()
        node.destroy_node()
    executor.shutdown()


def stop_process(proc: subprocess.Popen[Any], timeout_s: float = 30.0) -> None:
    """Ctrl-C a child process (a graph, goat-nav view) as a user would; kill it if it does not stop in time."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
