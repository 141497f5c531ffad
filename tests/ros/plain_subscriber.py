"""A plain rclpy subscriber, deliberately written without any goat_nav code: what an outside tool would see.

Waits for one well-formed message on each robot-side topic and the map (a malformed one is reported unless a good
one follows), prints one JSON line with what it found, and exits 0 when everything arrived and was valid (1
otherwise).
Usage: python plain_subscriber.py TIMEOUT_S [MAP_TOPIC]     (MAP_TOPIC default /goat/map)
"""

import json
import math
import sys
import time

import rclpy
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from tf2_msgs.msg import TFMessage


def check_rgb(m):
    assert m.encoding == "rgb8", m.encoding
    assert m.step == 3 * m.width and len(m.data) == m.step * m.height, (m.step, len(m.data))
    assert len(set(bytes(m.data))) > 5, "the image looks blank"
    return {"width": m.width, "height": m.height, "frame": m.header.frame_id}


def check_depth(m):
    assert m.encoding == "32FC1", m.encoding
    assert len(m.data) == 4 * m.width * m.height
    return {"width": m.width, "height": m.height}


def check_info(m):
    assert m.k[0] > 0 and m.k[4] > 0 and m.width > 0 and m.height > 0, list(m.k)
    return {"fx": m.k[0], "width": m.width, "height": m.height}


def check_odom(m):
    q = m.pose.pose.orientation
    assert abs(math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w) - 1.0) < 1e-6
    return {"frame": m.header.frame_id, "child": m.child_frame_id}


def check_tf(m):
    pairs = [[t.header.frame_id, t.child_frame_id] for t in m.transforms]
    assert pairs, "empty TFMessage"
    return {"pairs": pairs}


def check_map(m):
    assert m.info.resolution > 0 and len(m.data) == m.info.width * m.info.height
    values = set(m.data)
    assert values <= {-1, 0, 100} and values & {0, 100}, sorted(values)[:10]
    return {"frame": m.header.frame_id, "width": m.info.width, "height": m.info.height}


TOPICS = {
    "/camera/color/image_raw": (Image, check_rgb),
    "/camera/aligned_depth_to_color/image_raw": (Image, check_depth),
    "/camera/color/camera_info": (CameraInfo, check_info),
    "/odom": (Odometry, check_odom),
    "/tf": (TFMessage, check_tf),
    "/goat/map": (OccupancyGrid, check_map),
}


def main():
    timeout_s = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    if len(sys.argv) > 2:
        TOPICS[sys.argv[2]] = TOPICS.pop("/goat/map")
    rclpy.init()
    node = rclpy.create_node("plain_subscriber")
    found, errors = {}, {}

    def callback(topic, check):
        def on_msg(msg):
            if topic in found:
                return
            try:
                found[topic] = check(msg)
                errors.pop(topic, None)
            except AssertionError as exc:
                errors[topic] = repr(exc)
        return on_msg

    for topic, (msg_type, check) in TOPICS.items():
        latched = msg_type is OccupancyGrid
        durability = DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=durability)
        node.create_subscription(msg_type, topic, callback(topic, check), qos)
    print("ready", file=sys.stderr, flush=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(found) < len(TOPICS):
        rclpy.spin_once(node, timeout_sec=0.1)
    print(json.dumps({"found": found, "errors": errors, "missing": sorted(set(TOPICS) - set(found)),
                      "elapsed_s": round(timeout_s - (deadline - time.monotonic()), 1)}))
    sys.stdout.flush()
    node.destroy_node()
    rclpy.shutdown()
    sys.exit(0 if len(found) == len(TOPICS) and not errors else 1)


if __name__ == "__main__":
    main()
