"""Shared by launch/*.launch.py: turn goat_ros.graph's node set into launch_ros Node actions.

The node list, executables and params YAMLs come from ``goat_ros.graph`` (the same source ``goat-nav launch``
reads), so the launch files never list nodes or parameters themselves.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

CONFIG_DIR = Path(__file__).resolve().parent.parent / "config"  # <repo or share/goat_bringup>/config
RVIZ_CONFIG = CONFIG_DIR / "goat.rviz"
LOG_LEVELS = ["debug", "info", "warn", "error"]
BOOLS = ["true", "false"]


def _node(name: str, overrides: dict[str, Any], use_sim_time: Any, log_level: Any, condition: Any = None) -> Any:
    """The launch_ros Node of one goat_ros.graph node: params YAML first, then the overrides."""
    from launch_ros.actions import Node

    from goat_ros.graph import NODES, dds_environment

    spec = NODES[name]
    params: list[Any] = [str(CONFIG_DIR / spec.params_file), {"use_sim_time": use_sim_time}]
    if overrides:
        params.append(overrides)
    return Node(package=spec.package, executable=spec.executable, name=spec.name, output="screen",
                parameters=params, arguments=["--ros-args", "--log-level", log_level], condition=condition,
                additional_env=dds_environment(CONFIG_DIR, os.environ))


def goat_nodes(bringup: str, overrides: dict[str, dict[str, Any]], use_sim_time: Any, log_level: Any) -> list[Any]:
    """One launch_ros Node per node of the bringup: params YAML first, then the launch-argument overrides."""
    from launch.actions import LogInfo

    from goat_ros.graph import bringup_nodes, bringup_overrides, dds_environment, managed_overrides, shm_shortfall

    # The lifecycle nodes wait (autostart false) for the lifecycle manager, which joins last and activates them.
    merged = managed_overrides(bringup, bringup_overrides(bringup, overrides))
    names = bringup_nodes(bringup, managed=True)
    actions: list[Any] = [_node(name, merged.get(name, {}), use_sim_time, log_level) for name in names]
    shortfall = shm_shortfall({**os.environ, **dds_environment(CONFIG_DIR, os.environ)}, len(names))
    if shortfall is not None:
        actions.insert(0, LogInfo(msg=f"warning: {shortfall}"))
    return actions


def recorder_node(record: Any, use_sim_time: Any, log_level: Any) -> Any:
    """The recorder, when the ``record`` argument names a bag. Place it before the bringup's nodes: a bad path then
    stops the launch before any node starts, and the recorder subscribes before the others publish."""
    from launch.actions import OpaqueFunction

    from goat_ros.graph import RECORDER

    def make(context: Any) -> list[Any]:
        path = record.perform(context)
        if not path:
            return []
        from goat_ros.record import check_bag_path

        check_bag_path(path)  # RecordError naming the problem
        return [_node(RECORDER, {"bag_path": str(Path(path).absolute())}, use_sim_time, log_level)]

    return OpaqueFunction(function=make)


def head_camera_remaps() -> list[Any]:
    """SetRemap actions moving stretch_core's head camera from the graph's camera topics to
    ``topics.HEAD_CAMERA_RAW``, where the head_camera relay takes it (group them with the camera's include)."""
    from launch_ros.actions import SetRemap

    from goat_ros.topics import HEAD_CAMERA_RAW

    return [SetRemap(src=graph_topic, dst=raw) for graph_topic, raw in HEAD_CAMERA_RAW.items()]


def live_view_node(condition: Any, use_sim_time: Any, log_level: Any) -> Any:
    """The live_view node (Foxglove WebSocket server, goat_ros.live_view) when ``condition`` holds."""
    return _node("live_view", {}, use_sim_time, log_level, condition)


def rviz_node(condition: Any) -> Any:
    from launch_ros.actions import Node

    from goat_ros.graph import dds_environment

    # rviz subscribes to the camera images: with the nodes' transports it takes them through shared memory too.
    return Node(package="rviz2", executable="rviz2", name="rviz2", arguments=["-d", str(RVIZ_CONFIG)],
                condition=condition, output="log", additional_env=dds_environment(CONFIG_DIR, os.environ))


def stretch_urdf_text() -> str | None:
    """The Stretch 3 (SE3) URDF of hello-robot-stretch-urdf with mesh paths made absolute, or None if absent.

    The package names its files ``stretch_description_<model>_<tool>.urdf`` and refers to meshes by relative
    paths, which rviz cannot resolve: they become ``file://`` URIs.
    """
    try:
        import stretch_urdf
    except ImportError:
        return None
    root = Path(stretch_urdf.__file__).resolve().parent
    candidates = sorted(root.rglob("stretch_description*.urdf"), key=lambda p: ("SE3" not in p.name, p.name))
    if not candidates:
        return None
    urdf = candidates[0]
    return re.sub(r'filename="(?!package://|file://)(?:\./)?([^"]+)"',
                  lambda m: f'filename="file://{(urdf.parent / m.group(1)).resolve()}"', urdf.read_text())


def stretch_description_node(condition: Any) -> list[Any]:
    """robot_state_publisher with the Stretch URDF (hello-robot-stretch-urdf), when that package is installed."""
    text = stretch_urdf_text()
    if text is None:
        return []
    from launch_ros.actions import Node

    return [Node(package="robot_state_publisher", executable="robot_state_publisher", output="log",
                 parameters=[{"robot_description": text}], condition=condition)]
