"""The live view: a Foxglove WebSocket server (the ``foxglove-sdk`` package) with the channels of a run.

Open Foxglove or Lichtblick at ``ws://<host>:8765`` (with ``config/foxglove_layout.json`` for camera, map, markers
and path). ROS-free: ``goat-nav view`` (``goat_ros.live_view_node``) feeds it from the graph's topics and
``goat-nav bench --live`` (:class:`BenchLiveTap`) from the in-process benchmark, so both serve the same channels:

=================================  ==================  ============================================
channel                            schema              from
=================================  ==================  ============================================
/camera/color/image_raw/compressed foxglove.CompressedImage (JPEG)  the colour image
/camera/aligned_depth_to_color/image_raw  foxglove.RawImage (32FC1)  depth, metres
/goat/map, /goat/mapping/map       foxglove.Grid (int8 occupancy: -1 unknown, 0 free, 100 obstacle)
/goat/instance_markers             foxglove.SceneUpdate  a box and a label per remembered instance
/goat/path                         foxglove.PosesInFrame  the planned path
/tf                                foxglove.FrameTransforms  map -> odom -> base_link -> camera frames
/goat/current_goal                 JSON                the goal being pursued
/goat/subtask_outcome              JSON                how each subtask ended
=================================  ==================  ============================================
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from goat_core.errors import GoatError
from goat_core.types import DiscreteAction, Instance, Observation, Pose2D

DEFAULT_PORT = 8765
RGB_TOPIC = "/camera/color/image_raw/compressed"
DEPTH_TOPIC = "/camera/aligned_depth_to_color/image_raw"
MAP_TOPIC = "/goat/map"
MAPPING_MAP_TOPIC = "/goat/mapping/map"  # instance_mapping's map (graph only): built before any goal
MARKERS_TOPIC = "/goat/instance_markers"
PATH_TOPIC = "/goat/path"
TF_TOPIC = "/tf"
GOAL_TOPIC = "/goat/current_goal"
OUTCOME_TOPIC = "/goat/subtask_outcome"
OPTICAL_FRAME, CAMERA_FRAME, BASE_FRAME, ODOM_FRAME, MAP_FRAME = (
    "camera_color_optical_frame", "camera_link", "base_link", "odom", "map")
JSON_OBJECT = {"type": "object"}
IDENTITY = Pose2D(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class InstanceBox:
    """One remembered instance as the view draws it (episode/map frame, metres)."""

    instance_id: int
    category: str
    centroid_m: tuple[float, float, float]
    extent_m: tuple[float, float, float]


def _foxglove() -> Any:
    try:
        import foxglove
    except ImportError:
        raise GoatError("the live view needs the foxglove-sdk package: pip install -e '.[live]' (or "
                        "'pip install foxglove-sdk==0.30.3')") from None
    return foxglove


def _timestamp(m: Any, stamp_ns: int) -> Any:
    return m.Timestamp(int(stamp_ns // 1_000_000_000), int(stamp_ns % 1_000_000_000))


def _quat_yaw(m: Any, yaw_rad: float) -> Any:
    return m.Quaternion(x=0.0, y=0.0, z=math.sin(yaw_rad / 2.0), w=math.cos(yaw_rad / 2.0))


class LiveView:
    """A running Foxglove WebSocket server and its channels; ``close`` stops it. One per process and port."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, name: str = "goat_nav",
                 jpeg_quality: int = 85) -> None:
        if not 0 <= port <= 65535:
            raise GoatError(f"live view port must be 0-65535, got {port}")
        if not 1 <= jpeg_quality <= 100:
            raise GoatError(f"live view jpeg_quality must be 1-100, got {jpeg_quality}")
        fg = _foxglove()
        from foxglove import channels as ch
        from foxglove import messages

        self._m: Any = messages
        self._jpeg_quality = jpeg_quality
        self._context = fg.Context()
        ctx = self._context
        self._rgb = ch.CompressedImageChannel(RGB_TOPIC, context=ctx)
        self._depth = ch.RawImageChannel(DEPTH_TOPIC, context=ctx)
        self._maps = {topic: ch.GridChannel(topic, context=ctx) for topic in (MAP_TOPIC, MAPPING_MAP_TOPIC)}
        self._markers = ch.SceneUpdateChannel(MARKERS_TOPIC, context=ctx)
        self._path = ch.PosesInFrameChannel(PATH_TOPIC, context=ctx)
        self._tf = ch.FrameTransformsChannel(TF_TOPIC, context=ctx)
        self._goal = fg.Channel(GOAL_TOPIC, schema=JSON_OBJECT, message_encoding="json", context=ctx)
        self._outcome = fg.Channel(OUTCOME_TOPIC, schema=JSON_OBJECT, message_encoding="json", context=ctx)
        try:
            self._server = fg.start_server(name=name, host=host, port=port, context=ctx)
        except Exception as exc:  # the SDK raises its own error type for a port in use or a bad host
            raise GoatError(f"live view: cannot serve on {host}:{port}: {exc}") from None

    @property
    def port(self) -> int:
        return int(self._server.port)

    def close(self) -> None:
        self._server.stop()

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ camera
    def log_rgb(self, stamp_ns: int, rgb: np.ndarray, frame_id: str = OPTICAL_FRAME) -> None:
        import cv2

        ok, jpeg = cv2.imencode(".jpg", np.ascontiguousarray(rgb[:, :, ::-1]),
                                [int(cv2.IMWRITE_JPEG_QUALITY), self._jpeg_quality])
        if not ok:
            raise GoatError(f"live view: could not JPEG-encode a {rgb.shape} image")
        m = self._m
        self._rgb.log(m.CompressedImage(timestamp=_timestamp(m, stamp_ns), frame_id=frame_id,
                                        data=jpeg.tobytes(), format="jpeg"), log_time=stamp_ns)

    def log_depth(self, stamp_ns: int, depth_m: np.ndarray, frame_id: str = OPTICAL_FRAME) -> None:
        depth = np.ascontiguousarray(depth_m, dtype=np.float32)
        m = self._m
        self._depth.log(m.RawImage(timestamp=_timestamp(m, stamp_ns), frame_id=frame_id, width=depth.shape[1],
                                   height=depth.shape[0], encoding="32FC1", step=4 * depth.shape[1],
                                   data=depth.tobytes()), log_time=stamp_ns)

    # --------------------------------------------------------------------------------------- robot pose
    def log_tf(self, stamp_ns: int, odom_pose: Pose2D, tilt_rad: float, camera_height_m: float,
               map_to_odom: Pose2D = IDENTITY) -> None:
        """map -> odom (the episode frame's offset), odom -> base_link, base_link -> camera_link (head tilt) and
        camera_link -> the optical frame."""
        m = self._m
        ts = _timestamp(m, stamp_ns)

        def tf(parent: str, child: str, xyz: Sequence[float], q: Any) -> Any:
            return m.FrameTransform(timestamp=ts, parent_frame_id=parent, child_frame_id=child,
                                    translation=m.Vector3(x=xyz[0], y=xyz[1], z=xyz[2]), rotation=q)

        s, c = math.sin(-tilt_rad / 2.0), math.cos(-tilt_rad / 2.0)
        self._tf.log(m.FrameTransforms(transforms=[
            tf(MAP_FRAME, ODOM_FRAME, (map_to_odom.x_m, map_to_odom.y_m, 0.0), _quat_yaw(m, map_to_odom.yaw_rad)),
            tf(ODOM_FRAME, BASE_FRAME, (odom_pose.x_m, odom_pose.y_m, 0.0), _quat_yaw(m, odom_pose.yaw_rad)),
            tf(BASE_FRAME, CAMERA_FRAME, (0.0, 0.0, camera_height_m), m.Quaternion(x=0.0, y=s, z=0.0, w=c)),
            tf(CAMERA_FRAME, OPTICAL_FRAME, (0.0, 0.0, 0.0), m.Quaternion(x=-0.5, y=0.5, z=-0.5, w=0.5)),
        ]), log_time=stamp_ns)

    # ------------------------------------------------------------------------------------ map and agent
    def log_map(self, stamp_ns: int, rows: np.ndarray, resolution_m: float, origin_xy_m: Sequence[float],
                topic: str = MAP_TOPIC) -> None:
        """``rows``: int8 occupancy (-1 unknown, 0 free, 100 obstacle), row-major with rows along +y (as
        nav_msgs/OccupancyGrid data); its cell (0, 0) lies at ``origin_xy_m`` in the map frame."""
        values = np.ascontiguousarray(rows, dtype=np.int8)
        if values.ndim != 2 or not resolution_m > 0.0:
            raise GoatError(f"live view map: need a 2-D grid and a positive resolution, got shape {values.shape} "
                            f"and {resolution_m!r}")
        if topic not in self._maps:
            raise GoatError(f"live view map topic must be one of {sorted(self._maps)}, got {topic!r}")
        m = self._m
        self._maps[topic].log(m.Grid(
            timestamp=_timestamp(m, stamp_ns), frame_id=MAP_FRAME,
            pose=m.Pose(position=m.Vector3(x=float(origin_xy_m[0]), y=float(origin_xy_m[1]), z=0.0),
                        orientation=m.Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)),
            column_count=int(values.shape[1]), cell_size=m.Vector2(x=resolution_m, y=resolution_m),
            row_stride=int(values.shape[1]), cell_stride=1,
            fields=[m.PackedElementField(name="occupancy", offset=0, type=m.PackedElementFieldNumericType.Int8)],
            data=values.tobytes()), log_time=stamp_ns)

    def log_instances(self, stamp_ns: int, boxes: Iterable[InstanceBox], target_id: Optional[int] = None) -> None:
        m = self._m
        ts = _timestamp(m, stamp_ns)
        entities = []
        for b in boxes:
            hue = (b.instance_id * 0.618034) % 1.0
            r, g, bl = (0.5 + 0.5 * math.cos(2.0 * math.pi * (hue + k / 3.0)) for k in range(3))
            centre = m.Vector3(x=b.centroid_m[0], y=b.centroid_m[1], z=b.centroid_m[2])
            top = m.Vector3(x=b.centroid_m[0], y=b.centroid_m[1], z=b.centroid_m[2] + 0.5 * b.extent_m[2] + 0.15)
            level = m.Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)
            entities.append(m.SceneEntity(
                timestamp=ts, frame_id=MAP_FRAME, id=f"instance_{b.instance_id}",
                cubes=[m.CubePrimitive(pose=m.Pose(position=centre, orientation=level),
                                       size=m.Vector3(x=max(b.extent_m[0], 0.02), y=max(b.extent_m[1], 0.02),
                                                      z=max(b.extent_m[2], 0.02)),
                                       color=m.Color(r=r, g=g, b=bl, a=0.9 if b.instance_id == target_id else 0.35))],
                texts=[m.TextPrimitive(pose=m.Pose(position=top, orientation=level), billboard=True, font_size=14.0,
                                       scale_invariant=True, color=m.Color(r=1.0, g=1.0, b=1.0, a=1.0),
                                       text=f"{b.category} #{b.instance_id}")]))
        self._markers.log(m.SceneUpdate(entities=entities), log_time=stamp_ns)

    def log_path(self, stamp_ns: int, path_xy_m: np.ndarray) -> None:
        m = self._m
        level = m.Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)
        poses = [m.Pose(position=m.Vector3(x=float(x), y=float(y), z=0.05), orientation=level)
                 for x, y in np.asarray(path_xy_m, dtype=np.float64).reshape(-1, 2)]
        self._path.log(m.PosesInFrame(timestamp=_timestamp(m, stamp_ns), frame_id=MAP_FRAME, poses=poses),
                       log_time=stamp_ns)

    def log_goal(self, stamp_ns: int, goal: dict[str, Any]) -> None:
        self._goal.log(json.dumps(goal), log_time=stamp_ns)

    def log_outcome(self, stamp_ns: int, outcome: dict[str, Any]) -> None:
        self._outcome.log(json.dumps(outcome), log_time=stamp_ns)



def boxes_of(instances: Iterable[Instance]) -> list[InstanceBox]:
    """The view's boxes of the memory's instances (centroid and bounding-box extent of their points)."""
    out = []
    for inst in instances:
        c, extent = inst.centroid_m, inst.bbox_max_m - inst.bbox_min_m
        out.append(InstanceBox(int(inst.instance_id), inst.category, (float(c[0]), float(c[1]), float(c[2])),
                               (float(extent[0]), float(extent[1]), float(extent[2]))))
    return out


class BenchLiveTap:
    """``goat-nav bench --live``: the in-process runner's callbacks, logged to a :class:`LiveView` as they happen.

    The in-process episode frame is the simulator's odometry frame (map -> odom is the identity); stamps are the
    wall clock, so a viewer shows the run as it goes.
    """

    def __init__(self, view: LiveView, agent: Any) -> None:
        self.view = view
        self.agent = agent

    def on_goal(self, episode_id: str, index: int, goal: Any) -> None:
        self.view.log_goal(time.time_ns(), {"episode_id": episode_id, "subtask_index": index,
                                            "modality": goal.modality.value, "text": goal.describe()})

    def on_step(self, obs: Observation, action: DiscreteAction) -> None:
        now = time.time_ns()
        v, agent = self.view, self.agent
        v.log_tf(now, obs.pose, obs.camera_tilt_rad, obs.camera_height_m)
        v.log_rgb(now, obs.rgb)
        v.log_depth(now, obs.depth_m)
        values, origin = agent.occupancy.known_values(10)
        v.log_map(now, values.T, agent.occupancy.resolution_m, origin)
        state = agent.debug_state()
        v.log_instances(now, boxes_of(agent.memory.instances.values()), state.target_instance_id)
        v.log_path(now, state.path_xy_m)

    def on_subtask(self, record: Any) -> None:
        self.view.log_outcome(time.time_ns(), {
            "episode_id": record.episode_id, "subtask_index": record.index, "success": bool(record.success),
            "spl": float(record.spl), "actions": int(record.num_actions), "stop_reason": record.stop_reason,
            "path_length_m": float(record.path_length_m), "error": record.error or "",
            "stop_detail": record.stop_detail or ""})


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``PORT``) -> (host, port); GoatError naming the text otherwise."""
    host, sep, port = text.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise GoatError(f"live view address must be HOST:PORT, e.g. 127.0.0.1:8765, got {text!r}") from None
    return (host if sep and host else "127.0.0.1"), number


def open_live_view(address: str) -> LiveView:
    """Start the server of ``goat-nav bench --live HOST:PORT`` and say where it listens (stderr)."""
    host, port = parse_address(address)
    view = LiveView(host, port, name="goat_nav bench")
    print(f"live view: open Foxglove or Lichtblick at ws://{host}:{view.port}", file=sys.stderr, flush=True)
    return view
