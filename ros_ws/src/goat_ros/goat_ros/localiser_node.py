"""The localiser node: wheel odometry corrected by scan-to-map registration, published as ``map -> odom``.

A thin adapter over :class:`goat_core.localisation.localiser.Localiser` (docs/realism.md): it assembles each
observation set from the robot topics (depth, camera info, joint states, ``/odom``), localises it, and publishes
the ``map -> odom`` transform on ``/tf`` with the set's stamp, as AMCL or slam_toolbox do. The same node runs
beside the simulator bridge (``realism:=stretch``) and on the Stretch. A ``Trigger`` on ``/goat/localiser/reset``
starts a new map (a new episode). Not in any bringup: the controller runs the same core localiser on the
observation sets it acts on (its ``localise`` parameter) and publishes ``map -> odom`` itself, which keeps its
actions those of the in-process run; this node serves a graph whose controller does not (start one of the two).
"""

from __future__ import annotations

import functools
from typing import Any, Optional

from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from goat_core.localisation.localiser import Localiser
from goat_ros import conversions as cv
from goat_ros import topics
from goat_ros.node_errors import SetFailures
from goat_ros.observation_sync import ObservationSync
from goat_ros.params import LocaliserParams, declare
from goat_ros.spin import run_nodes

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
LOCALISER_RESET = "/goat/localiser/reset"  # std_srvs/srv/Trigger


class LocaliserNode(Node):
    def __init__(self, name: str = "localiser", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, LocaliserParams)
        self.localiser = Localiser(register=self.params.register)
        self._sync = ObservationSync(with_segmentation=False, camera_height_m=self.params.camera_height_m,
                                     max_skew_s=self.params.sync_tolerance_s)
        self._failures = SetFailures(self.get_logger(), "observation set not localised")
        self._pub_tf = self.create_publisher(TFMessage, topics.TF, RELIABLE)
        for part, msg_type, topic in (("rgb", Image, topics.RGB), ("depth", Image, topics.DEPTH),
                                      ("info", CameraInfo, topics.CAMERA_INFO),
                                      ("joints", JointState, topics.JOINT_STATES), ("odom", Odometry, topics.ODOM)):
            self.create_subscription(msg_type, topic, functools.partial(self._on_part, part), RELIABLE)
        self.create_service(Trigger, LOCALISER_RESET, self._on_reset)
        self.get_logger().info("localiser ready")

    def _on_part(self, part: str, msg: Any) -> None:
        stamp_ns = cv.ns_from_time(msg.header.stamp)
        if not self._sync.add(part, stamp_ns, msg):
            return
        try:
            self.localiser.localise(self._sync.observation(None, None))  # the odom frame's pose, as received
        except Exception as exc:  # the node boundary: skip this set, keep localising the next ones
            self._failures.failed(exc)
            return
        self._failures.succeeded()
        t = self.localiser.map_to_odom
        hdr = cv.header(self._sync.latest_stamp_ns, topics.MAP_FRAME)
        self._pub_tf.publish(TFMessage(transforms=[cv.transform(hdr, topics.ODOM_FRAME, (t.x_m, t.y_m, 0.0),
                                                                cv.yaw_to_quaternion(t.yaw_rad))]))

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.localiser.reset()
        response.success, response.message = True, "map cleared; map = odom"
        return response


def main(args: Optional[list[str]] = None) -> None:
    run_nodes([LocaliserNode], args)


if __name__ == "__main__":
    main()
