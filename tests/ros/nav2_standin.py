"""TEST STAND-IN for nav2_simple_commander's BasicNavigator: Nav2 is not on PyPI, so it cannot be installed here.

It has the methods goat_stretch.nav2_mode.Nav2GoalSender calls, records every goal, and answers after a few
``isTaskComplete`` polls with a chosen result. It does not move any robot.
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


class StandinNavigator:
    """goToPose / isTaskComplete / getResult / cancelTask / waitUntilNav2Active, as BasicNavigator names them."""

    def __init__(self, result: StandinTaskResult = StandinTaskResult.SUCCEEDED, polls: int = 2,
                 accept: bool = True) -> None:
        self.result, self.polls, self.accept = result, polls, accept
        self.goals: list[Any] = []  # geometry_msgs/PoseStamped, as sent
        self.cancelled = 0
        self.localizer: Optional[str] = None
        self._left = 0
        self._lock = threading.Lock()  # called from the sender's worker thread, read by the test's

    def waitUntilNav2Active(self, navigator: str = "bt_navigator", localizer: str = "amcl") -> None:  # noqa: N802
        self.localizer = localizer

    def goToPose(self, pose: Any, behavior_tree: str = "") -> bool:  # noqa: N802
        with self._lock:
            self.goals.append(pose)
        self._left = self.polls
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
