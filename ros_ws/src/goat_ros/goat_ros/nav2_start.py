"""Starting the controller's Nav2 mode: the goal sender, and AMCL's initial pose when the operator gives none.

``BasicNavigator.waitUntilNav2Active(localizer='amcl')`` publishes an initial pose before it returns (the map
origin unless ``setInitialPose`` was called; see :mod:`goat_ros.nav2_mode`). With ``nav2_initial_pose`` the
operator's pose is set. Without it the robot's current pose from localisation is set, so the publish leaves a
localised AMCL where it is: the newest ``/amcl_pose`` (AMCL publishes it transient-local, so a late subscriber
still gets the last one), else the chain ``<global> -> odom -> base_link`` (or ``<global> -> base_link``) on
``/tf``, where ``<global>`` is the frame the localiser publishes (AMCL's ``global_frame_id``; the controller's own
``map -> odom`` is on ``/tf_static`` and is not taken). Neither within :data:`LOCALISATION_WAIT_S`: the Nav2 mode
is refused with a message naming ``nav2_initial_pose``.

:class:`MapPoseTracker` is plain Python (tested without ROS); :func:`watch_map_pose` feeds it from a node.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import Any, Callable, Optional

from goat_core.errors import GoatError
from goat_core.types import Pose2D
from goat_ros.nav2_mode import Nav2GoalSender, episode_to_odom, parse_initial_pose

AMCL_POSE = "/amcl_pose"  # geometry_msgs/PoseWithCovarianceStamped, AMCL's pose estimate
LOCALISATION_WAIT_S = 10.0  # how long the Nav2 start waits for a localised pose when nav2_initial_pose is empty
MapPose = tuple[str, Pose2D]  # (global frame, the robot's pose in it)


class MapPoseTracker:
    """The robot's newest pose in the localiser's global frame, from AMCL's pose or from TF (thread-safe)."""

    def __init__(self, odom_frame: str = "odom", base_frame: str = "base_link") -> None:
        self._odom, self._base = odom_frame, base_frame
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._amcl: Optional[MapPose] = None
        self._to_odom: Optional[MapPose] = None  # <global> -> odom
        self._odom_to_base: Optional[Pose2D] = None
        self._to_base: Optional[MapPose] = None  # <global> -> base_link, published directly

    def on_amcl_pose(self, frame_id: str, pose: Pose2D) -> None:
        with self._changed:
            self._amcl = (frame_id, pose)
            self._changed.notify_all()

    def on_transform(self, parent: str, child: str, pose: Pose2D) -> None:
        """One transform of ``/tf`` (parent -> child, as a planar pose of child in parent); others are ignored."""
        with self._changed:
            if child == self._odom and parent != self._base:
                self._to_odom = (parent, pose)
            elif child == self._base and parent == self._odom:
                self._odom_to_base = pose
            elif child == self._base:
                self._to_base = (parent, pose)
            else:
                return
            self._changed.notify_all()

    def latest(self) -> Optional[MapPose]:
        with self._lock:
            return self._latest()

    def _latest(self) -> Optional[MapPose]:
        if self._amcl is not None:
            return self._amcl
        if self._to_odom is not None and self._odom_to_base is not None:
            frame, odom = self._to_odom
            return frame, episode_to_odom(self._odom_to_base, odom)  # global <- odom <- base_link
        return self._to_base

    def wait(self, timeout_s: float = LOCALISATION_WAIT_S) -> MapPose:
        """The newest pose, waiting up to ``timeout_s`` for one; GoatError naming ``nav2_initial_pose`` if none."""
        with self._changed:
            if self._changed.wait_for(lambda: self._latest() is not None, timeout_s):
                found = self._latest()
                assert found is not None
                return found
        raise GoatError(f"nav2 with amcl: no robot pose from localisation within {timeout_s:.0f} s (nothing on "
                        f"{AMCL_POSE}, no <map frame> -> {self._odom} -> {self._base} on /tf): localise AMCL first "
                        "(e.g. its initial pose in rviz) or give controller.nav2_initial_pose 'x_m y_m yaw_rad'")


def watch_map_pose(node: Any, tracker: MapPoseTracker) -> None:
    """Subscribe ``node`` (rclpy) to ``/amcl_pose`` and ``/tf`` and feed ``tracker``."""
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    from goat_ros import conversions as cv
    from goat_ros import topics

    def on_amcl(msg: PoseWithCovarianceStamped) -> None:
        p = msg.pose.pose
        yaw_rad = cv.quaternion_to_yaw(p.orientation)
        tracker.on_amcl_pose(msg.header.frame_id, Pose2D(p.position.x, p.position.y, yaw_rad))

    def on_tf(msg: TFMessage) -> None:
        for t in msg.transforms:
            tr = t.transform
            tracker.on_transform(t.header.frame_id, t.child_frame_id, Pose2D(
                tr.translation.x, tr.translation.y, cv.quaternion_to_yaw(tr.rotation)))

    amcl_qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(PoseWithCovarianceStamped, AMCL_POSE, on_amcl, amcl_qos)
    node.create_subscription(TFMessage, topics.TF, on_tf, QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))


def build_sender(node: Any, params: Any, navigator: Any = None,
                 localisation_wait_s: float = LOCALISATION_WAIT_S) -> Nav2GoalSender:
    """The controller's Nav2 sender from its ControllerParams: the operator's initial pose if given, else (amcl)
    the robot's pose from localisation, watched by ``node`` from now on and awaited up to ``localisation_wait_s``
    when the sender starts waiting for Nav2."""
    initial = parse_initial_pose(params.nav2_initial_pose)  # GoatError naming a bad value, before anything starts
    current: Optional[Callable[[], MapPose]] = None
    if initial is None and params.nav2_localizer == "amcl":
        tracker = MapPoseTracker()
        watch_map_pose(node, tracker)
        current = partial(tracker.wait, localisation_wait_s)
    return Nav2GoalSender(params.nav2_frame_id, navigator, params.nav2_localizer, initial, current)
