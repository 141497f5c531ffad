"""Continuous mode: hand the matched instance's approach pose to Nav2 instead of stepping discrete actions.

The pose computation and the decision to hand over are plain Python (tested without ROS). :class:`Nav2GoalSender`
wraps ``nav2_simple_commander.robot_navigator.BasicNavigator`` (``goToPose(PoseStamped)``, ``isTaskComplete()``,
``getResult()`` -> ``TaskResult``, ``cancelTask()``, ``waitUntilNav2Active()``, ``setInitialPose()``); it is
imported only when the sender builds its own navigator, so this module loads where Nav2 is not installed.

What BasicNavigator does, by release (navigation2 ``nav2_simple_commander/nav2_simple_commander/
robot_navigator.py``, branches humble, jazzy and kilted), and what the sender does about it:

* ``waitUntilNav2Active(localizer='amcl')`` publishes ``initial_pose`` (the map origin unless
  ``setInitialPose`` was called) until ``amcl_pose`` arrives, which resets a localised AMCL to the origin. The
  sender sets the robot's pose first: the operator's (``initial_pose``) or, without one, the one localisation
  reports (``current_pose``, :mod:`goat_ros.nav2_start`), and refuses amcl with neither.
* ``localizer='robot_localization'`` (not a lifecycle node): jazzy and kilted skip waiting for it; humble waits
  for ``robot_localization/get_state`` forever. The sender then waits for the navigator instead, on every release.
* ``goToPose`` returns False when the goal is rejected (humble, jazzy) or None (kilted): both are a rejection.

Approach pose: stand ``standoff_m`` beyond the instance's footprint (half the diagonal of its xy bounding box,
so large furniture is approached from its edge), facing the instance's centroid. Candidates lie on that circle;
the one nearest the robot that the caller's ``is_free`` accepts is chosen (for example
:func:`occupancy_is_free`, a lookup in the agent's inflated occupancy grid), so the goal is reachable rather
than inside a wall.
"""

from __future__ import annotations

import math
import threading
import time
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import numpy as np

from goat_core.control.planner import inflate
from goat_core.errors import GoatError
from goat_core.mapping.occupancy import OccupancyGrid
from goat_core.types import Instance, Pose2D

if TYPE_CHECKING:
    from goat_core.agent import DebugState

IsFree = Callable[[float, float], bool]  # (x_m, y_m) in the map frame -> navigable


class NoApproachPoseError(GoatError, ValueError):
    """Every candidate approach pose around the instance is occupied."""


def approach_pose(target_xy_m: np.ndarray, robot_xy_m: np.ndarray, distance_m: float,
                  is_free: Optional[IsFree] = None, num_candidates: int = 16) -> Pose2D:
    """A pose ``distance_m`` from ``target_xy_m``, nearest the robot among free candidates, facing the target."""
    if not (math.isfinite(distance_m) and distance_m > 0.0):
        raise ValueError(f"distance_m must be a positive finite number, got {distance_m!r}")
    if num_candidates < 1:
        raise ValueError(f"num_candidates must be >= 1, got {num_candidates!r}")
    target = np.asarray(target_xy_m, dtype=np.float64)[:2]
    robot = np.asarray(robot_xy_m, dtype=np.float64)[:2]
    # The first candidate is on the straight line to the robot; the rest go round the circle from there.
    offset = robot - target
    start_rad = math.atan2(offset[1], offset[0]) if np.hypot(*offset) > 1e-9 else 0.0
    candidates = []
    for k in range(num_candidates):
        bearing = start_rad + 2.0 * math.pi * k / num_candidates
        xy = target + distance_m * np.array([math.cos(bearing), math.sin(bearing)])
        if is_free is None or is_free(float(xy[0]), float(xy[1])):
            candidates.append(xy)
    if not candidates:
        raise NoApproachPoseError(f"no free pose {distance_m:.2f} m around ({target[0]:.2f}, {target[1]:.2f}) "
                                  f"among {num_candidates} candidates")
    best = min(candidates, key=lambda xy: float(np.hypot(*(xy - robot))))
    yaw_rad = math.atan2(target[1] - best[1], target[0] - best[0])
    return Pose2D(float(best[0]), float(best[1]), yaw_rad)


def instance_footprint_m(instance: Instance) -> float:
    """Half the diagonal of the instance's xy bounding box: a circle about its centroid that holds it."""
    extent = instance.bbox_max_m[:2] - instance.bbox_min_m[:2]
    return 0.5 * float(np.hypot(*extent))


def instance_goal_pose(instance: Instance, robot: Pose2D, standoff_m: float = 0.6,
                       is_free: Optional[IsFree] = None) -> Pose2D:
    """Approach pose of a matched instance (episode/map frame): ``standoff_m`` beyond its footprint."""
    return approach_pose(instance.centroid_m[:2], robot.xy(), instance_footprint_m(instance) + standoff_m, is_free)


def occupancy_is_free(grid: OccupancyGrid, robot_radius_m: float) -> IsFree:
    """Where the robot's base fits in ``grid``, as seen now: explored cells farther than ``robot_radius_m`` from
    every obstacle and collision mark (the planner's inflation, goat_core.control.planner.inflate).

    The layers are copied, so the lookup stays valid while the grid keeps changing. Unexplored cells and cells
    outside the grid are not free: Nav2 is only sent where the robot has seen floor.
    """
    if not robot_radius_m >= 0.0:
        raise ValueError(f"robot_radius_m must be >= 0, got {robot_radius_m!r}")
    radius_cells = robot_radius_m / grid.resolution_m
    box = grid.known_box(int(math.ceil(radius_cells)) + 1)
    free = grid.explored_crop(box) & ~inflate(grid.blocked(box), radius_cells)
    offset = np.array([box.i0, box.j0])

    def is_free(x_m: float, y_m: float) -> bool:
        i, j = grid.to_cells(np.array([[x_m, y_m]]))[0] - offset
        return bool(0 <= i < free.shape[0] and 0 <= j < free.shape[1] and free[i, j])

    return is_free


def handover_instance(state: DebugState, instances: Mapping[int, Instance], *, nav2_ready: bool,
                      fell_back: bool) -> Optional[Instance]:
    """The instance whose approach goes to Nav2 after this agent step, or None to keep stepping discrete actions.

    Only the final approach is handed over: the agent is following a path (mode ``goto`` with a target) to the
    instance its matcher is confident about. Scanning, exploring, inspecting look-alikes of an image goal, going
    to a non-confident best guess and the last turns that face the target (no path) stay discrete; so does the
    rest of a subtask in which Nav2 already failed (``fell_back``), and everything while Nav2 is not active or
    still busy with an earlier goal (``nav2_ready`` False).
    """
    if not nav2_ready or fell_back or state.mode != "goto" or state.target_xy_m is None:
        return None
    target = state.target_instance_id
    match = state.match
    if target is None or not match.confident or match.instance_id != target:
        return None
    return instances.get(target)


def episode_to_odom(pose: Pose2D, anchor: Pose2D) -> Pose2D:
    """An episode-frame pose in the odom frame, whose episode origin is the odom pose ``anchor`` (the inverse of
    goat_core.frames.relative_pose2d)."""
    c, s = math.cos(anchor.yaw_rad), math.sin(anchor.yaw_rad)
    yaw_rad = math.atan2(math.sin(anchor.yaw_rad + pose.yaw_rad), math.cos(anchor.yaw_rad + pose.yaw_rad))
    return Pose2D(anchor.x_m + c * pose.x_m - s * pose.y_m, anchor.y_m + s * pose.x_m + c * pose.y_m, yaw_rad)


class Nav2Outcome(str, Enum):
    """How a Nav2 goal ended."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"  # Nav2 aborted or cancelled it, or its result is unknown
    REJECTED = "rejected"  # NavigateToPose did not accept the goal
    TIMED_OUT = "timed out"  # not done within the timeout: cancelled
    CANCELLED = "cancelled"  # the caller cancelled it (a new goal, shutdown)
    ERROR = "error"  # the navigator raised


Nav2Done = Callable[[Nav2Outcome, str], None]  # (outcome, detail); called from the worker thread


def _basic_navigator() -> Any:
    try:
        from nav2_simple_commander.robot_navigator import BasicNavigator
    except ImportError as exc:
        raise GoatError("the Nav2 mode needs nav2_simple_commander (apt install "
                        f"ros-$ROS_DISTRO-nav2-simple-commander): {exc}") from None
    return BasicNavigator()


class Nav2GoalSender:
    """Sends approach poses to Nav2's NavigateToPose through nav2_simple_commander (needs a running Nav2).

    ``navigator`` is a BasicNavigator or an object with the same methods (a test stand-in); without one, a
    BasicNavigator node is built, which needs ``rclpy.init()`` first (GoatError if nav2_simple_commander is not
    installed). BasicNavigator's calls block while they spin their own node, so :meth:`start` and
    :meth:`start_waiting_until_active` run them in one worker thread at a time and report through a callback.
    """

    def __init__(self, frame_id: str = "map", navigator: Any = None, localizer: str = "amcl",
                 initial_pose: Optional[Pose2D] = None,
                 current_pose: Optional[Callable[[], tuple[str, Pose2D]]] = None) -> None:
        self._owns_navigator = navigator is None
        self._navigator = _basic_navigator() if navigator is None else navigator
        self._frame_id = frame_id
        self._localizer = localizer
        self._initial_pose = initial_pose  # amcl: the robot's pose in the map frame, set before waiting
        self._current_pose = current_pose  # amcl without initial_pose: (frame, pose) from localisation, or GoatError
        self._ready = threading.Event()
        self._cancel = threading.Event()
        self._worker: Optional[threading.Thread] = None

    @property
    def ready(self) -> bool:
        """Nav2 was reported active (waitUntilNav2Active returned)."""
        return self._ready.is_set()

    @property
    def busy(self) -> bool:
        """The worker still runs (waiting for Nav2, driving, or cancelling)."""
        return self._worker is not None and self._worker.is_alive()

    def pose_stamped(self, pose: Pose2D) -> Any:
        from geometry_msgs.msg import PoseStamped

        msg = PoseStamped()
        msg.header.frame_id = self._frame_id
        msg.pose.position.x, msg.pose.position.y = float(pose.x_m), float(pose.y_m)
        msg.pose.orientation.z = math.sin(0.5 * pose.yaw_rad)
        msg.pose.orientation.w = math.cos(0.5 * pose.yaw_rad)
        return msg

    def wait_until_active(self) -> None:
        """Block until Nav2's navigator and the ``localizer`` lifecycle node are active (amcl: and localised at
        ``initial_pose`` or the ``current_pose``); GoatError for amcl with neither (see the module docstring)."""
        localizer = self._localizer
        if localizer == "amcl":
            if self._initial_pose is not None:
                frame, pose = "map", self._initial_pose  # the operator gives it in the map frame
            elif self._current_pose is not None:
                frame, pose = self._current_pose()  # in AMCL's own global frame
            else:
                raise GoatError("nav2 with amcl needs the robot's initial pose in the map frame "
                                "(nav2_initial_pose): without it BasicNavigator.waitUntilNav2Active publishes the "
                                "map origin as AMCL's initial pose")
            msg = self.pose_stamped(pose)
            msg.header.frame_id = frame
            self._navigator.setInitialPose(msg)
        elif localizer == "robot_localization":
            localizer = "bt_navigator"  # a lifecycle node that exists: humble would wait for get_state forever
        self._navigator.waitUntilNav2Active(localizer=localizer)
        self._ready.set()

    def go_to(self, pose: Pose2D, timeout_s: float = 120.0,
              cancel: Optional[threading.Event] = None) -> Nav2Outcome:
        """Drive to ``pose`` (in ``frame_id``) and block until Nav2 is done, ``timeout_s`` passed or ``cancel``
        was set (both cancel the Nav2 goal)."""
        if not self._navigator.goToPose(self.pose_stamped(pose)):  # False (humble, jazzy) or None (kilted)
            return Nav2Outcome.REJECTED  # its result would otherwise be the previous goal's
        deadline = time.monotonic() + timeout_s
        while not self._navigator.isTaskComplete():
            stop = Nav2Outcome.CANCELLED if cancel is not None and cancel.is_set() else None
            if stop is None and time.monotonic() > deadline:
                stop = Nav2Outcome.TIMED_OUT
            if stop is not None:
                self._navigator.cancelTask()
                return stop
            time.sleep(0.1)
        # By name: TaskResult is nav2_simple_commander's enum, and a stand-in navigator brings its own.
        result = self._navigator.getResult()
        return Nav2Outcome.SUCCEEDED if getattr(result, "name", None) == "SUCCEEDED" else Nav2Outcome.FAILED

    def start(self, pose: Pose2D, timeout_s: float, on_done: Nav2Done) -> None:
        """:meth:`go_to` in the worker thread; ``on_done(outcome, detail)`` is called from that thread."""

        def drive() -> None:
            try:
                outcome, detail = self.go_to(pose, timeout_s, self._cancel), ""
            except Exception as exc:  # the worker's boundary: report it, never die silently
                outcome, detail = Nav2Outcome.ERROR, f"{type(exc).__name__}: {exc}"
            if outcome is Nav2Outcome.TIMED_OUT:
                detail = f"not there within {timeout_s:.0f} s"
            on_done(outcome, detail)

        self._run(drive)

    def start_waiting_until_active(self, on_done: Callable[[str], None]) -> None:
        """:meth:`wait_until_active` in the worker thread; ``on_done(error)`` ("" once active) from that thread."""

        def wait() -> None:
            try:
                self.wait_until_active()
            except Exception as exc:  # shutdown while waiting, or Nav2 services that fail
                on_done(f"{type(exc).__name__}: {exc}")
                return
            on_done("")

        self._run(wait)

    def _run(self, work: Callable[[], None]) -> None:
        if self.busy:
            raise RuntimeError("Nav2GoalSender runs one navigator call at a time; the previous one is still busy")
        self._cancel.clear()
        self._worker = threading.Thread(target=work, name="nav2_goal", daemon=True)
        self._worker.start()

    def cancel(self) -> None:
        """Ask the running goal to stop; its ``on_done`` reports CANCELLED."""
        self._cancel.set()

    def close(self, join_timeout_s: float = 2.0) -> None:
        """Cancel the running goal, wait a moment for the worker, and destroy the navigator node built here."""
        self._cancel.set()
        if self._worker is not None:
            self._worker.join(join_timeout_s)
        if self._owns_navigator:
            self._navigator.destroy_node()


def parse_initial_pose(text: str) -> Optional[Pose2D]:
    """``"x_m y_m yaw_rad"`` (the nav2_initial_pose parameter) as a Pose2D; None for an empty string; GoatError
    naming the value otherwise."""
    if not text.strip():
        return None
    try:
        values = [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        values = []
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise GoatError(f"nav2_initial_pose must be 'x_m y_m yaw_rad' (three finite numbers), got {text!r}")
    return Pose2D(*values)
