"""TEST STAND-IN for nav2_simple_commander's BasicNavigator: Nav2 is not on PyPI, so it cannot be installed here.

It has the methods goat_ros.nav2_mode.Nav2GoalSender calls, records every goal, and answers after a few
``isTaskComplete`` polls with a chosen result. It does not move any robot.

``release`` pins what BasicNavigator does differently per ROS release (navigation2,
``nav2_simple_commander/nav2_simple_commander/robot_navigator.py`` on the humble, jazzy and kilted branches):

* ``waitUntilNav2Active(localizer='amcl')`` publishes ``initial_pose`` (a PoseStamped at the map origin unless
  ``setInitialPose`` replaced it) until AMCL answers on ``amcl_pose``: recorded in ``published_initial_poses``;
* ``waitUntilNav2Active(localizer='robot_localization')``: jazzy and kilted skip the lifecycle wait for it, humble
  waits for the service ``robot_localization/get_state``, which never appears (raised here as NeverReturns);
* a rejected ``goToPose`` returns False (humble, jazzy) or None (kilted).
"""

from __future__ import annotations

import threading
from enum import Enum
from typing import Any, Optional


class StandinTaskResult(Enum):
    """Stand-in for nav2_simple_commander.robot_navigator.TaskResult (the same member names)."""

    UNKNOWN = 0
    SUCCEEDED = 1
    CANCELED = 2
    FAILED = 3


RELEASES = ("humble", "jazzy", "kilted")


class NeverReturns(RuntimeError):
    """The real call would block forever here."""


class StandinNavigator:
    """goToPose / isTaskComplete / getResult / cancelTask / waitUntilNav2Active / setInitialPose, as BasicNavigator
    names them, behaving as ``release``'s BasicNavigator does (see the module docstring)."""

    def __init__(self, result: StandinTaskResult = StandinTaskResult.SUCCEEDED, polls: int = 2,
                 accept: bool = True, release: str = "jazzy") -> None:
        if release not in RELEASES:
            raise ValueError(f"release must be one of {RELEASES}, got {release!r}")
        self.result, self.polls, self.accept, self.release = result, polls, accept, release
        self.initial_pose: Optional[Any] = None  # None: BasicNavigator's default, the map origin
        self.published_initial_poses: list[Optional[Any]] = []
        self.lifecycle_waits: list[str] = []  # nodes whose get_state service was waited for
        self.goals: list[Any] = []  # geometry_msgs/PoseStamped, as sent
        self.cancelled = 0
        self.localizer: Optional[str] = None
        self._left = 0
        self._lock = threading.Lock()  # called from the sender's worker thread, read by the test's

    def setInitialPose(self, initial_pose: Any) -> None:  # noqa: N802
        self.initial_pose = initial_pose
        self.published_initial_poses.append(initial_pose)

    def waitUntilNav2Active(self, navigator: str = "bt_navigator", localizer: str = "amcl") -> None:  # noqa: N802
        self.localizer = localizer
        if localizer != "robot_localization" or self.release == "humble":
            if localizer == "robot_localization":
                raise NeverReturns("humble's BasicNavigator waits for robot_localization/get_state forever")
            self.lifecycle_waits.append(localizer)
        if localizer == "amcl":
            self.published_initial_poses.append(self.initial_pose)
        self.lifecycle_waits.append(navigator)

    def goToPose(self, pose: Any, behavior_tree: str = "") -> Optional[bool]:  # noqa: N802
        with self._lock:
            self.goals.append(pose)
        self._left = self.polls
        if not self.accept and self.release == "kilted":
            return None
        return self.accept

    def isTaskComplete(self) -> bool:  # noqa: N802
        self._left -= 1
        return self._left < 0

    def getResult(self) -> StandinTaskResult:  # noqa: N802
        return self.result

    def cancelTask(self) -> None:  # noqa: N802
        self.cancelled += 1

    def sent(self) -> list[Any]:
        with self._lock:
            return list(self.goals)
