"""The recorder node: what flows on the graph's topics, written into a rosbag2 bag with MCAP storage.

rosbag2 is not installable from PyPI, so this node does for a fixed topic list what ``ros2 bag record -s mcap``
does: it subscribes with ``raw=True`` (rclpy hands over each message's CDR bytes as they came off the wire, with
no deserialisation) and stores them through :class:`goat_ros.record.CdrBagWriter`, which shares the bag layout
(``RUN/metadata.yaml`` + ``RUN/RUN.mcap``), zstd chunks, ``goat_nav.*`` custom data and typestore with
``goat-nav bench --record``. ``ros2 bag info``/``play``, Foxglove and rosbags' AnyReader read the result.

Log time: the message's own stamp (its header's; for /tf and marker arrays the first element's) where it has a
non-zero one, else the receive time on this node's clock (ROS time under ``use_sim_time``). Stamps rather than
receive times keep a bag of the bench graph reproducible: an observation set's messages and the goal that refers
to it share one stamp, and the bag's order follows the step protocol rather than DDS delivery and executor order.

QoS: reliable subscriptions; the graph's latched topics (``LATCHED_TOPICS``: /tf_static, /goat/map, ...) are
subscribed transient_local, so their last message before the recorder started is recorded too, and they are
marked transient_local in metadata.yaml so that ``ros2 bag play`` latches them again. A topic added by
``TOPIC:TYPE`` is subscribed reliable and volatile (a best-effort publisher is then not matched).

The bag is finished (MCAP footer and metadata.yaml) in :meth:`RecorderNode.close`, which ``run_nodes`` calls on
Ctrl-C, SIGTERM and executor shutdown and ``goat-nav bench --ros`` calls when the run ends; ``destroy_node``
closes it as well.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from typing import Any, Optional

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from goat_core.errors import GoatError
from goat_ros import topics
from goat_ros.params import RecorderParams, declare
from goat_ros.record import RUN_INFO_KEY, CdrBagWriter

# Deep enough that a burst of observation sets waits in the reader's history while a large frame is written.
RECORD_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)

# Every topic of the goat graph with its type: these need no TYPE in the ``topics`` parameter.
TOPIC_TYPES: dict[str, str] = {
    topics.RGB: "sensor_msgs/msg/Image",
    topics.DEPTH: "sensor_msgs/msg/Image",
    topics.CAMERA_INFO: "sensor_msgs/msg/CameraInfo",
    topics.ODOM: "nav_msgs/msg/Odometry",
    topics.JOINT_STATES: "sensor_msgs/msg/JointState",
    topics.TF: "tf2_msgs/msg/TFMessage",
    topics.TF_STATIC: "tf2_msgs/msg/TFMessage",
    topics.SEGMENTATION: "sensor_msgs/msg/Image",
    topics.INSTANCE_LABELS: "goat_interfaces/msg/InstanceLabels",
    topics.GOAL: "goat_interfaces/msg/Goal",
    topics.OUTCOME: "goat_interfaces/msg/SubtaskOutcome",
    topics.RESULT: "goat_interfaces/msg/SubtaskResult",
    topics.EPISODES_DONE: "std_msgs/msg/String",
    topics.MAP: "nav_msgs/msg/OccupancyGrid",
    topics.INSTANCE_MARKERS: "visualization_msgs/msg/MarkerArray",
    topics.INSTANCES: "goat_interfaces/msg/Instances",
    topics.DETECTIONS: "goat_interfaces/msg/Detections",
    topics.DETECTION_IMAGE: "sensor_msgs/msg/Image",
    topics.PATH: "nav_msgs/msg/Path",
    topics.CURRENT_GOAL: "visualization_msgs/msg/Marker",
    topics.MAPPING_MAP: "nav_msgs/msg/OccupancyGrid",
    topics.MAPPING_INSTANCES: "goat_interfaces/msg/Instances",
    topics.MAPPING_INSTANCE_MARKERS: "visualization_msgs/msg/MarkerArray",
    topics.MAPPING_MEMORY: "goat_interfaces/msg/InstanceMemory",
    topics.GOAL_MATCHES: "goat_interfaces/msg/GoalMatches",
}
# Topics whose every publisher in the graph is transient_local (a transient_local subscription would not match a
# volatile publisher, so only these).
LATCHED_TOPICS = frozenset({topics.TF_STATIC, topics.MAP, topics.CURRENT_GOAL, topics.EPISODES_DONE,
                            topics.MAPPING_MAP, topics.MAPPING_MEMORY})


def parse_topics(spec: str) -> dict[str, str]:
    """The ``topics`` parameter -> {topic: type}: space-separated names, ``TOPIC:TYPE`` for one outside the graph."""
    recorded: dict[str, str] = {}
    for item in spec.split():
        name, sep, msgtype = item.partition(":")
        if not name.startswith("/") or len(name) < 2:
            raise GoatError(f"recorder topic {item!r}: name an absolute topic such as /odom")
        if not sep:
            if name not in TOPIC_TYPES:
                raise GoatError(f"recorder topic {name!r} is not a goat graph topic: give its type as "
                                f"{name}:pkg/msg/Type")
            msgtype = TOPIC_TYPES[name]
        parts = msgtype.split("/")
        if len(parts) != 3 or parts[1] != "msg" or not all(parts):
            raise GoatError(f"recorder topic {item!r}: the type must look like pkg/msg/Type, got {msgtype!r}")
        if name in recorded:
            raise GoatError(f"recorder topic {name!r} is named twice in the topics parameter")
        recorded[name] = msgtype
    if not recorded:
        raise GoatError("the recorder's topics parameter names no topic")
    return recorded


def message_class(msgtype: str) -> Any:
    """The rclpy message class of ``pkg/msg/Type`` (it carries the type support the subscription needs)."""
    package, kind, name = msgtype.split("/")
    try:
        return getattr(importlib.import_module(f"{package}.{kind}"), name)
    except (ImportError, AttributeError):
        raise GoatError(f"recorder: message type {msgtype!r} is not importable (is {package} built and on the "
                        "path?)") from None


class RecorderNode(Node):
    def __init__(self, name: str = "recorder", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, RecorderParams)
        if not self.params.bag_path:
            raise GoatError("the recorder needs the bag_path parameter (goat-nav launch/bench --record PATH, or "
                            "record:=PATH with ros2 launch)")
        recorded = parse_topics(self.params.topics)
        classes = {topic: message_class(msgtype) for topic, msgtype in recorded.items()}
        custom = {"goat_nav.recorder": json.dumps({"node": self.get_fully_qualified_name(),
                                                   "log_time": "message stamp, else receive time"})}
        if self.params.run_info:
            try:
                json.loads(self.params.run_info)
            except ValueError:
                raise GoatError(f"recorder: run_info must be JSON text, got {self.params.run_info[:80]!r}") from None
            custom[RUN_INFO_KEY] = self.params.run_info
        self.bag = CdrBagWriter(self.params.bag_path, recorded, latched=LATCHED_TOPICS & set(recorded),
                                custom_data=custom)
        self.bag.open()
        try:
            for topic, msg_class in classes.items():
                qos = LATCHED_QOS if topic in self.bag.latched else RECORD_QOS
                self.create_subscription(msg_class, topic, functools.partial(self._on_message, topic), qos, raw=True)
        except Exception:
            self.bag.close()  # nobody else holds this half-built node: leave a readable (empty) bag
            raise
        self.get_logger().info(f"recording {len(recorded)} topics to {self.bag.folder}")

    def _on_message(self, topic: str, data: bytes) -> None:
        if self.bag.is_open:  # a message taken during shutdown, after close(), is dropped
            self.bag.write(topic, data, self.get_clock().now().nanoseconds)

    def received(self, topic: str) -> int:
        """Messages of ``topic`` written so far (0 for a topic that is not recorded)."""
        return self.bag.message_counts.get(topic, 0)

    def close(self) -> None:
        """Finish the bag; it is readable from then on. Closing twice does nothing."""
        if self.bag.is_open:
            self.bag.close()
            text = f"bag {self.bag.folder} closed: {sum(self.bag.message_counts.values())} messages"
            if self.context.ok():
                self.get_logger().info(text)
            else:  # after Ctrl-C the logger's /rosout publisher is gone with the context
                print(f"[recorder] {text}", file=sys.stderr)

    def destroy_node(self) -> None:
        if hasattr(self, "bag"):  # a constructor that failed early has no bag
            self.close()
        super().destroy_node()


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([RecorderNode], args)


if __name__ == "__main__":
    main()
