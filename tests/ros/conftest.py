"""ROS 2 graph tests: a random ROS_DOMAIN_ID per session, so concurrent runs on one machine do not cross-talk.

The tests skip (with the reason) where rclpy or the built goat_interfaces are missing: run
``bash scripts/setup_ros.sh`` first. Child processes inherit this environment; the venv's .pth hooks (written
by setup_ros.sh) put the workspace libraries on LD_LIBRARY_PATH for them.
"""

from __future__ import annotations

import os
import random
from typing import Iterator

import pytest

# Before any test module imports rclpy. GOAT_TEST_ROS_DOMAIN_ID pins it for debugging.
os.environ["ROS_DOMAIN_ID"] = os.environ.get("GOAT_TEST_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 200)))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # Jazzy+: keep discovery on this host


@pytest.fixture()
def ros() -> Iterator[None]:
    """rclpy initialised for the test (and shut down after it, unless it already was)."""
    import rclpy

    owns = not rclpy.ok()
    if owns:
        rclpy.init()
    yield
    if owns:
        rclpy.shutdown()
