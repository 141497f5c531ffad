"""The node set of every bringup, in one place: launch/*.launch.py and ``goat-nav launch`` both read it.

Each node has one params YAML under ``config/`` (``<node name>: ros__parameters: ...``); its parameters and
defaults are the fields of the node's frozen dataclass in :mod:`goat_ros.params`.
"""

from __future__ import annotations

import importlib
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

PACKAGE = "goat_ros"  # the ROS package that installs the executables below, unless a node names another


@dataclass(frozen=True)
class NodeSpec:
    name: str  # node name, the key of its block in the params YAML
    executable: str  # console script of the goat_ros package (ros2 run goat_ros <executable>)
    node_class: str  # "module:Class" of the rclpy Node, for running nodes in one process
    description: str
    package: str = PACKAGE  # the ROS package whose console script ``executable`` is

    @property
    def params_file(self) -> str:
        return f"{self.name}.yaml"

    def load_class(self) -> Any:
        module, cls = self.node_class.split(":")
        return getattr(importlib.import_module(module), cls)


NODES: dict[str, NodeSpec] = {spec.name: spec for spec in (
    NodeSpec("sim_bridge", "sim_bridge", "sim_bridge.ros.bridge_node:SimBridgeNode",
             "simulator behind the Stretch topics; steps once per ExecuteAction; reset and render services"),
    NodeSpec("perception", "perception", "goat_ros.perception_node:PerceptionNode",
             "detections and the detection overlay image for rviz (ground-truth backend)"),
    NodeSpec("instance_mapping", "instance_mapping", "goat_ros.instance_mapping_node:InstanceMappingNode",
             "the lifelong map on its own: occupancy grid and instance memory from the robot topics, published "
             "under /goat/mapping/ for monitoring and goal_matching; reset service"),
    NodeSpec("goal_matching", "goal_matching", "goat_ros.goal_matching_node:GoalMatchingNode",
             "ranks the instance memory of instance_mapping against each /goat/goal; /goat/goal_matches"),
    NodeSpec("controller", "controller", "goat_ros.controller_node:ControllerNode",
             "the GOAT agent: instance mapping, goal matching and the discrete-action policy; map/markers/path"),
    NodeSpec("episode_player", "episode_player", "goat_suites.ros.episode_player_node:EpisodePlayerNode",
             "replays an episode file as goal messages, one subtask after another"),
    NodeSpec("evaluator", "evaluator", "goat_suites.ros.evaluator_node:EvaluatorNode",
             "scores subtask outcomes (SR, SPL) and writes the results JSON"),
    NodeSpec("stretch_driver", "stretch_driver", "goat_stretch.driver_node:StretchDriverNode",
             "the physical Stretch: serves ExecuteAction through stretch_body with safety stops",
             package="goat_stretch"),
    NodeSpec("head_camera", "head_camera", "goat_stretch.camera_node:HeadCameraNode",
             "the Stretch's head camera (stretch_core's, remapped under /head_camera_raw) republished upright on "
             "the graph's camera topics", package="goat_stretch"),
    NodeSpec("operator", "operator", "goat_suites.ros.operator_node:OperatorNode",
             "on the robot: the operator confirms each STOP; writes results and the path log",
             package="goat_stretch"),
    NodeSpec("live_view", "live_view", "goat_ros.live_view_node:LiveViewNode",
             "serves the graph's topics to Foxglove / Lichtblick over a Foxglove WebSocket (goat-nav view, "
             "live_view:=true)"),
    NodeSpec("recorder", "recorder", "goat_ros.recorder_node:RecorderNode",
             "writes the graph's topics into a rosbag2 bag with MCAP storage (only when a run is recorded)"),
    NodeSpec("lifecycle_manager", "lifecycle_manager", "goat_ros.lifecycle_manager_node:LifecycleManagerNode",
             "configures and activates the lifecycle nodes (stretch_driver, controller) and pauses/resumes them "
             "(~/pause, ~/resume; goat-nav launch and the launch files start it)"),
)}

# Which nodes each bringup runs. "stretch" adds our stretch_driver (the ExecuteAction server over stretch_body) and
# head_camera, which turns stretch_core's sideways D435i frames upright for every consumer.
BRINGUPS: dict[str, tuple[str, ...]] = {
    "sim": ("sim_bridge", "perception", "instance_mapping", "goal_matching", "controller"),
    "bench": ("sim_bridge", "controller", "episode_player", "evaluator"),
    "stretch": ("head_camera", "stretch_driver", "perception", "controller"),
}
RECORDER = "recorder"  # joins any bringup when its run is recorded (--record PATH, record:=PATH)

SIM_SCENE_ID = "embedded/home_s1234_r5"  # the home `goat-nav launch sim` / sim.launch.py open by default

# What a bringup sets differently from the node defaults (before any user override). The sim bringup opens a home
# at start-up, so the simulator streams like the robot before any goal; the bench bringup resets per episode and
# repeats no set (a recorded benchmark holds one set per reset and per action). On the robot the camera,
# joint states and odometry do not share stamps: the controller groups them around each colour image; and there
# is no simulator reset: an episode player replaying goals asks the operator to place the robot at each start.
BRINGUP_PARAMS: dict[str, dict[str, dict[str, Any]]] = {
    "sim": {"sim_bridge": {"scene_id": SIM_SCENE_ID}},
    "bench": {"sim_bridge": {"republish_rate_hz": 0.0}},
    "stretch": {"head_camera": {"sideways": True}, "controller": {"sync_tolerance_s": 0.05},
                "episode_player": {"reset_mode": "operator", "reset_timeout_s": 900.0}},
}


def bringup_overrides(bringup: str, overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The bringup's own settings (BRINGUP_PARAMS) with the user's overrides on top, per node."""
    merged = {node: dict(values) for node, values in BRINGUP_PARAMS.get(bringup, {}).items()}
    for node, values in overrides.items():
        merged.setdefault(node, {}).update(values)
    return merged


def bringup_nodes(bringup: str, record: bool = False, managed: bool = False) -> tuple[str, ...]:
    """The nodes ``bringup`` runs; a recorded run starts the recorder first, so it subscribes before the rest
    publish. ``managed``: the lifecycle manager joins last (see :func:`managed_overrides`)."""
    if bringup not in BRINGUPS:
        raise ValueError(f"unknown bringup {bringup!r}; expected one of {sorted(BRINGUPS)}")
    names = (RECORDER, *BRINGUPS[bringup]) if record else BRINGUPS[bringup]
    return (*names, LIFECYCLE_MANAGER) if managed and lifecycle_nodes(bringup) else names


LIFECYCLE_NODES = ("stretch_driver", "controller")  # rclpy.lifecycle nodes (goat_ros.lifecycle), start-up order
LIFECYCLE_MANAGER = "lifecycle_manager"


def lifecycle_nodes(bringup: str) -> tuple[str, ...]:
    """The lifecycle nodes of ``bringup``, in the order the manager configures and activates them."""
    return tuple(n for n in LIFECYCLE_NODES if n in BRINGUPS[bringup])


def managed_overrides(bringup: str, overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``overrides`` for a managed bringup: its lifecycle nodes wait (``autostart`` false) for the lifecycle
    manager, which is told their names. What the user set explicitly wins."""
    names = lifecycle_nodes(bringup)
    merged = {node: dict(values) for node, values in overrides.items()}
    for name in names:
        merged[name] = {"autostart": False, **merged.get(name, {})}
    if names:
        merged[LIFECYCLE_MANAGER] = {"node_names": " ".join(names), **merged.get(LIFECYCLE_MANAGER, {})}
    return merged


def repo_config_dir() -> Path:
    """config/ of the source checkout (this file is ros_ws/src/goat_ros/goat_ros/graph.py)."""
    return Path(__file__).resolve().parents[4] / "config"


FASTDDS_PROFILE = "fastdds.xml"  # in config/: the transports every node process uses (why: in the file)
FASTDDS_PROFILE_VARS = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")


def dds_environment(config_dir: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """Environment variables to add for node processes: config/fastdds.xml as Fast DDS's profile.

    Nothing when another rmw is chosen or the user already names a Fast DDS profile (theirs wins).
    """
    if environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") != "rmw_fastrtps_cpp":
        return {}
    if any(environ.get(var) for var in FASTDDS_PROFILE_VARS):
        return {}
    return {FASTDDS_PROFILE_VARS[0]: str(config_dir / FASTDDS_PROFILE)}


def shm_segment_bytes(profile: Path) -> int:
    """The shared-memory segment each process of ``profile`` (a Fast DDS XML profile) reserves; 0 without SHM."""
    sizes = [int(e.text or 0) for e in ET.parse(profile).getroot().iter() if e.tag.endswith("segment_size")]
    return max(sizes, default=0)


def shm_shortfall(environ: Mapping[str, str], processes: int, shm_dir: Path = Path("/dev/shm"),
                  free_bytes: int | None = None) -> str | None:
    """A warning when ``shm_dir`` cannot hold the shared-memory segments of ``processes`` node processes, else None.

    Each Fast DDS participant reserves its profile's segment when it starts (config/fastdds.xml: 8 MB); one that
    finds no room logs "Failed to create segment" and sends everything, camera images included, over UDP: the graph
    still runs, slower. Docker's default /dev/shm is 64 MB, and segments of killed processes stay there.
    Only checked for our own profile (a user's profile is theirs to size); ``free_bytes`` stands in for the
    free space of ``shm_dir`` (tests).
    """
    profile_path = environ.get(FASTDDS_PROFILE_VARS[0]) or environ.get(FASTDDS_PROFILE_VARS[1])
    if not profile_path or Path(profile_path).name != FASTDDS_PROFILE or not Path(profile_path).is_file():
        return None
    segment = shm_segment_bytes(Path(profile_path))
    if segment == 0 or processes <= 0:
        return None
    if free_bytes is None:
        try:
            free_bytes = shutil.disk_usage(shm_dir).free
        except OSError:
            return f"{shm_dir} is missing: Fast DDS has no shared memory and sends camera images over UDP (slower)"
    need = processes * segment
    if free_bytes >= need:
        return None
    mb = 1024 * 1024
    return (f"{shm_dir} has {free_bytes / mb:.0f} MB free, but the {processes} node processes reserve "
            f"{segment / mb:.0f} MB of shared memory each ({profile_path}): those that find no room send camera "
            f"images over UDP, which is slower. Free {shm_dir} (fastrtps_* files of ROS processes that were killed "
            "stay there) or give the container more (docker run --shm-size=256m).")


def params_args(spec: NodeSpec, config_dir: Path, overrides: dict[str, Any]) -> list[str]:
    """``--ros-args`` for one node: its YAML, then ``-p name:=value`` overrides (later wins, as in ros2 launch)."""
    args = ["--ros-args", "-r", f"__node:={spec.name}", "--params-file", str(config_dir / spec.params_file)]
    for key, value in overrides.items():
        args += ["-p", f"{key}:={_param_text(value)}"]
    return args


def _param_text(value: Any) -> str:
    """A ``-p name:=value`` value: rcl reads it as YAML, so strings are single-quoted to stay strings ('true',
    '42', JSON text and paths with ': ' would otherwise become other types or fail to parse)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def node_factories(bringup: str, overrides: dict[str, dict[str, Any]],
                   config_dir: Path | None = None, record: bool = False, managed: bool = False) -> list[Any]:
    """Callables that build the nodes of ``bringup`` with their YAML and overrides (call after rclpy.init).

    ``record`` adds the recorder (see :func:`bringup_nodes`); its ``bag_path`` comes in ``overrides``.
    ``managed``: the lifecycle nodes wait for the lifecycle manager, which joins (``goat-nav launch``); else they
    configure and activate themselves (``goat-nav bench --ros``).
    """
    names = bringup_nodes(bringup, record, managed)
    unknown = set(overrides) - set(NODES)
    if unknown:
        raise ValueError(f"overrides name unknown nodes {sorted(unknown)}; nodes are {sorted(NODES)}")
    folder = config_dir or repo_config_dir()
    overrides = bringup_overrides(bringup, overrides)
    if managed:
        overrides = managed_overrides(bringup, overrides)
    factories = []
    for name in names:
        spec = NODES[name]
        args = params_args(spec, folder, overrides.get(name, {}))
        factories.append(lambda spec=spec, args=args: spec.load_class()(cli_args=args))
    return factories
