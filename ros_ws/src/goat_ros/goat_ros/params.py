"""Parameters: one frozen dataclass per node; its defaults are the only defaults.

Every field carries its description in ``metadata["description"]``; :func:`declare` declares each field once on
a node (with that description) and returns the dataclass filled from the parameter values, which come from the
YAML file under ``config/`` given to ``ros2 launch`` or ``goat-nav launch``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

from goat_core.errors import ConfigError
from goat_ros import topics

P = TypeVar("P")


def _p(default: Any, description: str) -> Any:
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class SimBridgeParams:
    backend: str = _p("embedded", "simulator backend: embedded (MuJoCo, default) or habitat (needs habitat_sim)")
    scene_id: str = _p("", "scene loaded at start-up (embedded scene id, e.g. 'embedded/home_s1234_r5'; habitat: "
                           "a scene path as episode files store it); empty: wait for a reset_episode call")
    habitat_scenes_dir: str = _p("data/scene_datasets", "habitat: folder that relative scene paths of episodes are "
                                                        "joined to (GOAT-Bench's data/scene_datasets)")
    habitat_scene_dataset_config: str = _p("default", "habitat: habitat_sim's scene_dataset_config_file (e.g. an "
                                                      "hm3d_annotated_basis.scene_dataset_config.json); default: none")
    habitat_gpu_device_id: int = _p(0, "habitat: the CUDA device habitat_sim renders on")
    startup_publish_delay_s: float = _p(1.0, "with scene_id set: publish the first observation set this long "
                                              "after start-up, once subscribers are discovered")
    republish_rate_hz: float = _p(2.0, "while no action moves the robot, publish the latest observation set again, "
                                        "unchanged (same stamp), at this rate so late subscribers see it; 0: off")
    publish_segmentation: bool = _p(True, "publish ground-truth instance segmentation and its labels")
    frame_prefix: str = _p("", "prefix of the published TF frame names (multi-robot setups)")
    publish_camera_tf: bool = _p(True, "publish base_link -> camera_link -> camera_color_optical_frame; false when "
                                       "robot_state_publisher publishes the Stretch URDF's camera frames")
    realism: str = _p("ideal", "embedded: ideal (GOAT-Bench: perfect depth, exact actions, true pose) or stretch "
                               "(D435 depth noise, motion noise, drifting /odom; docs/realism.md)")
    realism_seed: int = _p(0, "seed of the realism models' noise (same seed, same run)")
    publish_ground_truth: bool = _p(True, "publish the true base pose on /sim/ground_truth/odom (evaluation only)")


@dataclass(frozen=True)
class ControllerParams:
    perception_backend: str = _p("ground_truth", "perception backend: ground_truth (simulator segmentation), owlvit "
                                                 "or owlv2 (open-vocabulary detector from model_dir)")
    model_dir: str = _p("", "local folder of the OWL-ViT / OWLv2 model (docs/perception.md); empty for ground_truth")
    matcher: str = _p("structured", "goal matcher: structured, modular_goat (needs clip_model_dir) or cow")
    image_matcher: str = _p("sift", "keypoints of image goals: sift (OpenCV) or xfeat (XFeat + LighterGlue)")
    clip_model_dir: str = _p("", "local folder of a CLIP model (modular_goat; cow with clip_patches relevance)")
    device: str = _p("cpu", "where the models run: cpu, cuda or cuda:N")
    perception_errors: str = _p("off", "ground truth through a detector error model: off, mild, detic-like or "
                                       "harsh (docs/perception_errors.md)")
    perception_errors_seed: int = _p(0, "seed of the detector error model's draws")
    evidence: str = _p("auto", "evidence over views before an instance is trusted (docs/perception_errors.md): "
                               "auto (on exactly when perception_errors is not off), on or off; overrides the "
                               "agent_config file's memory.evidence.enabled")
    agent_config: str = _p("", "YAML file of the agent's settings, like config/agent.yaml "
                               "(config/agent_no_memory.yaml: the no-memory ablation); empty: the defaults")
    camera_height_m: float = _p(1.31, "height of the head camera's optical centre above the floor (Stretch: 1.31)")
    action_timeout_s: float = _p(30.0, "no action result or no fresh observation set for this long ends the "
                                       "subtask as an error")
    publish_debug: bool = _p(True, "publish /goat/map, instance markers, the path and the goal for rviz")
    sync_tolerance_s: float = _p(0.0, "0: one observation set shares one stamp (simulator bridge); > 0: parts "
                                      "within this of each colour image form a set (real sensors, e.g. 0.05)")
    localise: bool = _p(False, "correct the drifting /odom by registering each depth frame against the agent's own "
                               "map (goat_core.localisation, docs/realism.md) and publish map -> odom on /tf; for "
                               "the robot and the simulator's stretch realism")
    filter_depth: bool = _p(False, "drop far returns, flying pixels and speckles of noisy depth before the agent maps "
                                   "it (D435 depth: the robot and the simulator's stretch realism)")
    motion_mode: str = _p("discrete", "discrete (every step through /goat/execute_action) or nav2 (the final "
                                      "approach to a confident match goes to Nav2 through nav2_simple_commander; "
                                      "needs goat_stretch and a running Nav2, docs/robot.md)")
    nav2_standoff_m: float = _p(0.6, "nav2: the approach pose stands this far beyond the instance's footprint")
    nav2_timeout_s: float = _p(120.0, "nav2: a goal not reached by then is cancelled; the subtask goes on with "
                                      "discrete actions")
    nav2_frame_id: str = _p("odom", "nav2: frame of the goal poses: odom (the episode pose through the odom "
                                    "pose at the episode start) or map (the controller's episode frame as is)")
    nav2_localizer: str = _p("amcl", "nav2: the localization node waitUntilNav2Active waits for: amcl (also its "
                                     "initial pose), robot_localization (not waited for) or another lifecycle "
                                     "node, e.g. slam_toolbox")
    nav2_initial_pose: str = _p("", "nav2 with amcl: the robot's pose in the map frame at start-up, 'x_m y_m "
                                    "yaw_rad'; AMCL is set to it (empty: the pose localisation reports, "
                                    "/amcl_pose or TF; none within 10 s: nav2 mode is refused, as "
                                    "nav2_simple_commander would reset AMCL to the map origin)")
    autostart: bool = _p(True, "configure and activate this lifecycle node at start-up; false: wait for the lifecycle "
                               "manager (goat-nav launch and the launch files set false and start it)")


@dataclass(frozen=True)
class EpisodePlayerParams:
    episodes_file: str = _p("", "GOAT-Bench style .json/.json.gz episode file to replay (required)")
    max_episodes: int = _p(0, "replay only the first N episodes; 0 = all")
    max_actions_per_episode: int = _p(5000, "action budget per episode, STOP included, shared by its subtasks: a "
                                            "long subtask eats the later ones' actions (GOAT-Bench: 5000); 0 = none")
    max_actions_per_subtask: int = _p(0, "action cap per subtask on top of the episode's, STOP included; 0 = none "
                                         "(GOAT-Bench). 500 with max_actions_per_episode 0: the GOAT-Bench README's "
                                         "variant, a named deviation")
    image_hfov_deg: float = _p(42.0, "field of view the image goals were rendered with (GOAT-Bench Stretch: 42)")
    image_goal_category: bool = _p(True, "image goals also name their object category, as GOAT-Bench tasks do; "
                                   "false sends the picture alone")
    start_delay_s: float = _p(1.0, "wait this long after all peers are discovered before the first episode")
    reset_mode: str = _p("sim", "how an episode starts: sim (the simulator's /sim/reset_episode) or operator (on "
                                "the robot: the operator node asks a person to place the robot at the start)")
    peers_timeout_s: float = _p(60.0, "start anyway this long after start-up if a peer (reset or render service, "
                                      "goal subscriber, result publisher) is still missing; its subtasks then end "
                                      "as errors naming it")
    reset_timeout_s: float = _p(120.0, "an episode whose reset is not answered within this ends all its subtasks as "
                                       "errors (the operator reset on the robot waits for a person: longer)")
    render_timeout_s: float = _p(30.0, "an image goal whose rendering is not answered within this is an error")
    result_timeout_s: float = _p(1800.0, "a subtask with no SubtaskResult this long after its goal is an error, "
                                         "and the next one starts (500 actions on the robot take ~15 min)")


@dataclass(frozen=True)
class EvaluatorParams:
    episodes_file: str = _p("", "the episode file the player replays (goals, view points and start poses)")
    success_distance_m: float = _p(0.25, "success radius in metres (GOAT-Bench config: 0.25 geodesic)")
    success_metric: str = _p("geodesic_viewpoint", "geodesic_viewpoint (GOAT-Bench) or euclidean_object (paper)")
    results_file: str = _p("", "write the results JSON here after every subtask; empty: do not write")
    score_from_ground_truth: bool = _p(False, "score paths and final positions by the simulator's true pose on "
                                              "/sim/ground_truth/odom, not the poses the controller reports (the "
                                              "simulator's stretch realism: those are its drifting belief)")
    suite: str = _p("goat", "the suite of the episode file, whose reading scores its goals: goat, langmap (a room "
                            "or region goal is reached at any of its targets) or pasture")


@dataclass(frozen=True)
class PerceptionParams:
    publish_overlay: bool = _p(True, "publish /goat/detection_image, the frame with detection boxes drawn on it")
    perception_errors: str = _p("off", "ground truth through a detector error model: off, mild, detic-like or "
                                       "harsh (docs/perception_errors.md)")
    perception_errors_seed: int = _p(0, "seed of the detector error model's draws")


@dataclass(frozen=True)
class InstanceMappingParams:
    perception_backend: str = _p("ground_truth", "perception backend: ground_truth (simulator segmentation), owlvit "
                                                 "or owlv2 (open-vocabulary detector from model_dir)")
    model_dir: str = _p("", "local folder of the OWL-ViT / OWLv2 model (docs/perception.md); empty for ground_truth")
    device: str = _p("cpu", "where the detector runs: cpu, cuda or cuda:N")
    perception_errors: str = _p("off", "ground truth through a detector error model: off, mild, detic-like or "
                                       "harsh (docs/perception_errors.md)")
    perception_errors_seed: int = _p(0, "seed of the detector error model's draws")
    evidence: str = _p("auto", "evidence over views before an instance is trusted: auto (on exactly when "
                               "perception_errors is not off), on or off")
    camera_height_m: float = _p(1.31, "height of the head camera's optical centre above the floor (Stretch: 1.31)")
    sync_tolerance_s: float = _p(0.0, "0: one observation set shares one stamp (simulator bridge); > 0: parts "
                                      "within this of each colour image form a set (real sensors, e.g. 0.05)")
    publish_period_s: float = _p(1.0, "publish the map, instances, markers and the instance memory at most this "
                                      "often (the last update always follows); 0: after every observation set")
    reset_on_new_episode: bool = _p(True, "forget the map and instances when a goal of a new episode arrives on "
                                          "/goat/goal (as the controller does); false: only the reset service")


@dataclass(frozen=True)
class GoalMatchingParams:
    matcher: str = _p("structured", "goal matcher: structured (category synonyms, descriptions, image keypoints) or "
                                    "modular_goat (needs clip_model_dir)")
    image_matcher: str = _p("sift", "keypoints of image goals: sift (OpenCV) or xfeat (XFeat + LighterGlue)")
    clip_model_dir: str = _p("", "local folder of a CLIP model (modular_goat)")
    device: str = _p("cpu", "where the models run: cpu, cuda or cuda:N")
    rematch_on_update: bool = _p(True, "answer the current goal again whenever a new instance memory arrives")


@dataclass(frozen=True)
class StretchDriverParams:
    robot_backend: str = _p("stretch_body", "stretch_body (the robot) or standin (the test stand-in, no hardware)")
    publish_state: bool = _p(True, "publish /odom, /joint_states and odom -> base_link TF from stretch_body")
    state_rate_hz: float = _p(30.0, "rate of the published state")
    forward_m: float = _p(0.25, "MOVE_FORWARD step (GOAT-Bench 0.25 m)")
    turn_deg: float = _p(30.0, "TURN_LEFT/RIGHT angle (GOAT-Bench 30; FindingDory 10)")
    look_deg: float = _p(30.0, "LOOK_UP/DOWN head tilt step (GOAT-Bench 30)")
    motion_timeout_s: float = _p(10.0, "a motion not at its set-point by then is stopped and reported")
    stall_time_s: float = _p(1.5, "no progress for this long is a contact: the base stops, collided is reported")
    obstacle_margin_m: float = _p(0.10, "refuse a forward step when depth shows an obstacle closer than step + this")
    camera_height_m: float = _p(1.31, "head camera optical centre above the floor, for the obstacle check")
    head_calibration_file: str = _p("", "stretch_ros2's controller_calibration_head.yaml (head angle offsets, as "
                                        "stretch_driver applies them); empty: uncalibrated, offsets 0")
    max_depth_age_s: float = _p(0.5, "a depth frame older than this does not count (forward steps are refused)")
    observation_wait_s: float = _p(1.0, "after an action, wait this long for a depth frame of the new pose")
    accept_cmd_vel: bool = _p(False, "subscribe to /cmd_vel (geometry_msgs/Twist, e.g. from Nav2's controller "
                                     "server) and drive the base with it, under the velocity safety rules")
    cmd_vel_max_linear_mps: float = _p(0.3, "cmd_vel forward/backward speed is clamped to this (m/s)")
    cmd_vel_max_angular_radps: float = _p(0.8, "cmd_vel turn rate is clamped to this (rad/s)")
    cmd_vel_timeout_s: float = _p(0.5, "no cmd_vel for this long: the base is zeroed")
    cmd_vel_obstacle_margin_m: float = _p(0.2, "cmd_vel forward speed is dropped while depth shows an obstacle "
                                               "closer than this to the base edge (turning and reversing stay)")
    cmd_vel_check_rate_hz: float = _p(20.0, "rate of the cmd_vel staleness, runstop and obstacle check")
    autostart: bool = _p(True, "configure and activate this lifecycle node at start-up; false: wait for the lifecycle "
                               "manager (goat-nav launch and the launch files set false and start it)")


@dataclass(frozen=True)
class HeadCameraParams:
    sideways: bool = _p(False, "the camera is mounted on its side (the Stretch's D435i; true in the stretch bringup): "
                               "colour, depth and camera_info are turned 90 deg clockwise to upright, as stretch_ros2 "
                               "does; false: republished as they come")


@dataclass(frozen=True)
class OperatorParams:
    results_file: str = _p("", "write the results JSON here after every subtask; empty: do not write")
    path_log_file: str = _p("", "append one JSON line per subtask (verdict and map-frame path); empty: no log")
    prompt_on_stdin: bool = _p(True, "ask on this node's terminal as well as through the service")
    scene_id: str = _p("", "name of the real place (kept in every record; compare pairs goals by it)")


@dataclass(frozen=True)
class LiveViewParams:
    host: str = _p("127.0.0.1", "address the Foxglove WebSocket server binds to (0.0.0.0: reachable from other "
                                "machines, e.g. a laptop watching the robot)")
    port: int = _p(8765, "port of the Foxglove WebSocket server (Foxglove / Lichtblick: ws://HOST:PORT)")
    jpeg_quality: int = _p(85, "JPEG quality of the served colour image (1-100)")
    camera_height_m: float = _p(1.31, "head camera height above the floor, for the base_link -> camera_link frame")


# What a recorded run holds by default: the robot's sensors and TF, goals, outcomes (the executed actions) and
# scores, and the controller's map, instances and path. The action goals of /goat/execute_action are service
# requests, not topics, so the outcome's action list is their record.
DEFAULT_RECORDED_TOPICS = " ".join((
    topics.RGB, topics.DEPTH, topics.CAMERA_INFO, topics.ODOM, topics.TF, topics.TF_STATIC, topics.JOINT_STATES,
    topics.GOAL, topics.OUTCOME, topics.RESULT, topics.MAP, topics.INSTANCES, topics.INSTANCE_MARKERS, topics.PATH,
))


@dataclass(frozen=True)
class RecorderParams:
    bag_path: str = _p("", "new rosbag2 bag to write: folder PATH (or PATH.mcap) holding metadata.yaml and the MCAP "
                           "file; required (bringups add the recorder only when a run is recorded)")
    topics: str = _p(DEFAULT_RECORDED_TOPICS, "space-separated topics to record; a topic that is not one of the "
                                              "goat graph's (goat_ros.topics) is written TOPIC:TYPE, e.g. "
                                              "/scan:sensor_msgs/msg/LaserScan")
    run_info: str = _p("", "JSON text kept in the bag's metadata.yaml (custom_data goat_nav.run); goat-nav bench "
                           "--ros --record puts the run's settings here")


@dataclass(frozen=True)
class LifecycleManagerParams:
    node_names: str = _p("", "space-separated lifecycle nodes to manage, in start-up order (goat_ros.graph sets "
                             "them per bringup); they are configured, then activated, in this order, and paused "
                             "in the reverse order")
    autostart: bool = _p(True, "configure and activate the nodes at start-up; false: wait for ~/resume")
    service_timeout_s: float = _p(60.0, "a node's lifecycle services not discovered within this fail the start-up")
    transition_timeout_s: float = _p(300.0, "a transition not answered within this fails (configure builds the "
                                            "controller's models)")


PARAMS_BY_NODE: dict[str, type] = {
    "sim_bridge": SimBridgeParams,
    "controller": ControllerParams,
    "episode_player": EpisodePlayerParams,
    "evaluator": EvaluatorParams,
    "perception": PerceptionParams,
    "instance_mapping": InstanceMappingParams,
    "goal_matching": GoalMatchingParams,
    "stretch_driver": StretchDriverParams,
    "head_camera": HeadCameraParams,
    "operator": OperatorParams,
    "recorder": RecorderParams,
    "live_view": LiveViewParams,
    "lifecycle_manager": LifecycleManagerParams,
}


def describe(params_type: type) -> dict[str, tuple[Any, str]]:
    """name -> (default, description) of every field of a params dataclass."""
    return {f.name: (f.default, f.metadata.get("description", "")) for f in dataclasses.fields(params_type)}


MOTION_MODES = ("discrete", "nav2")  # controller motion_mode
NAV2_FRAMES = (topics.ODOM_FRAME, topics.MAP_FRAME)  # controller nav2_frame_id


def check_controller_params(p: ControllerParams) -> None:
    """ConfigError naming the first controller motion setting out of its range (checked before anything is built)."""
    if p.motion_mode not in MOTION_MODES:
        raise ConfigError(f"controller motion_mode must be one of {', '.join(MOTION_MODES)}, got {p.motion_mode!r}")
    if p.motion_mode == "nav2" and p.nav2_frame_id not in NAV2_FRAMES:
        raise ConfigError(f"controller nav2_frame_id must be one of {', '.join(NAV2_FRAMES)}, got "
                          f"{p.nav2_frame_id!r}")
    if p.motion_mode == "nav2" and not (p.nav2_standoff_m > 0.0 and p.nav2_timeout_s > 0.0):
        raise ConfigError(f"controller nav2_standoff_m and nav2_timeout_s must be positive, got "
                          f"{p.nav2_standoff_m!r} and {p.nav2_timeout_s!r}")


def declare(node: Any, params_type: type[P]) -> P:
    """Declare every field of ``params_type`` on ``node`` (rclpy Node) and return the values it got."""
    from rcl_interfaces.msg import ParameterDescriptor

    values: dict[str, Any] = {}
    for f in dataclasses.fields(params_type):  # type: ignore[arg-type]
        desc = ParameterDescriptor(description=f.metadata.get("description", ""))
        param = node.declare_parameter(f.name, f.default, desc)
        value = param.value
        if isinstance(f.default, float) and isinstance(value, int):
            value = float(value)
        values[f.name] = value
    return params_type(**values)


@dataclass(frozen=True)
class LocaliserParams:
    camera_height_m: float = _p(1.31, "height of the head camera's optical centre above the floor (Stretch: 1.31)")
    sync_tolerance_s: float = _p(0.0, "0: the parts of an observation set share one stamp (simulator); > 0: group "
                                      "them around each colour image within this many seconds (robot)")
    register: bool = _p(True, "register each depth frame against the map (false: only filter depth, map = odom)")
