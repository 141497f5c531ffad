"""ROS 2 graph tests: a random ROS_DOMAIN_ID per session, so concurrent runs on one machine do not cross-talk, and
the next domain for each test, so a graph an earlier test left behind (child processes still shutting down on a
loaded machine, a bridge's republish timer) cannot publish into the next test's graph.

The tests skip (with the reason) where rclpy or the built goat_interfaces are missing: run
``bash scripts/setup_ros.sh`` first. Child processes inherit this environment; the venv's .pth hooks (written
by setup_ros.sh) put the workspace libraries on LD_LIBRARY_PATH for them.
"""

from __future__ import annotations

import itertools
import os
import random
from typing import Iterator

import pytest

# Before any test module imports rclpy. GOAT_TEST_ROS_DOMAIN_ID pins it for debugging.
os.environ["ROS_DOMAIN_ID"] = os.environ.get("GOAT_TEST_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 200)))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # Jazzy+: keep discovery on this host
_SESSION_DOMAIN = int(os.environ["ROS_DOMAIN_ID"])
_TEST_NUMBER = itertools.count()


@pytest.fixture(autouse=True)
def _a_ros_domain_per_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next domain (1-200) for this test and its child processes; rclpy reads it at init.

    Kept as is when the domain is pinned (GOAT_TEST_ROS_DOMAIN_ID) or when an rclpy context is still up from an
    earlier test: its nodes stay in the old domain, and children must meet them there.
    """
    if "GOAT_TEST_ROS_DOMAIN_ID" in os.environ:
        return
    try:
        import rclpy
    except ImportError:
        return
    if rclpy.ok():
        return
    domain = (_SESSION_DOMAIN - 1 + next(_TEST_NUMBER)) % 200 + 1
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))


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
