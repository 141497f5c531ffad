"""Topic, service, action and frame names of the graph: one place, so nodes, tests and launch files agree.

Robot-side names follow stretch_ros2 so that the physical Stretch needs no remapping.
"""

from __future__ import annotations

# Robot side (stretch_ros2 names)
RGB = "/camera/color/image_raw"  # sensor_msgs/Image rgb8
DEPTH = "/camera/aligned_depth_to_color/image_raw"  # sensor_msgs/Image 32FC1, metres along the optical axis
CAMERA_INFO = "/camera/color/camera_info"
# The Stretch's head camera as stretch_core publishes it (sideways), remapped here by launch/stretch.launch.py; the
# head_camera relay (goat_stretch.camera_node) republishes it upright on RGB, DEPTH and CAMERA_INFO.
HEAD_CAMERA_RAW = {RGB: "/head_camera_raw/color/image_raw",
                   DEPTH: "/head_camera_raw/aligned_depth_to_color/image_raw",
                   CAMERA_INFO: "/head_camera_raw/color/camera_info"}
ODOM = "/odom"  # nav_msgs/Odometry, odom -> base_link
# nav_msgs/Odometry: the simulator's true base pose in the episode frame. Evaluation only: no agent node subscribes
# (tests/ros/test_ros_ground_truth.py); under the stretch realism profile /odom drifts and this does not.
GROUND_TRUTH_ODOM = "/sim/ground_truth/odom"
JOINT_STATES = "/joint_states"  # head pan/tilt
TF = "/tf"
TF_STATIC = "/tf_static"
EXECUTE_ACTION = "/goat/execute_action"  # goat_interfaces/action/ExecuteAction

# Simulator only
SEGMENTATION = "/camera/segmentation/image_raw"  # sensor_msgs/Image 32SC1, ground-truth instance id, -1 = none
INSTANCE_LABELS = "/camera/segmentation/labels"  # goat_interfaces/InstanceLabels
RESET_EPISODE = "/sim/reset_episode"  # goat_interfaces/srv/ResetEpisode
RENDER_VIEW = "/sim/render_view"  # goat_interfaces/srv/RenderView

# Goals, outcomes and scores
GOAL = "/goat/goal"  # goat_interfaces/Goal
OUTCOME = "/goat/subtask_outcome"  # goat_interfaces/SubtaskOutcome (controller, unscored)
RESULT = "/goat/subtask_result"  # goat_interfaces/SubtaskResult (evaluator, scored)
CANCEL_GOAL = "/goat/cancel_goal"  # std_msgs/String: end the running subtask (data: its episode id, or empty)
EPISODES_DONE = "/goat/episodes_done"  # std_msgs/String: the episode player finished its file

# Monitoring (rviz)
MAP = "/goat/map"  # nav_msgs/OccupancyGrid, map frame
INSTANCE_MARKERS = "/goat/instance_markers"  # visualization_msgs/MarkerArray
INSTANCES = "/goat/instances"  # goat_interfaces/Instances
DETECTIONS = "/goat/detections"  # goat_interfaces/Detections
DETECTION_IMAGE = "/goat/detection_image"  # sensor_msgs/Image rgb8 overlay
PATH = "/goat/path"  # nav_msgs/Path, map frame
CURRENT_GOAL = "/goat/current_goal"  # visualization_msgs/Marker: the goal text and the target in the map

# The standalone instance_mapping and goal_matching nodes (their own names: the controller keeps /goat/map etc.)
MAPPING_MAP = "/goat/mapping/map"  # nav_msgs/OccupancyGrid, map frame
MAPPING_INSTANCES = "/goat/mapping/instances"  # goat_interfaces/Instances (summary, for monitoring)
MAPPING_INSTANCE_MARKERS = "/goat/mapping/instance_markers"  # visualization_msgs/MarkerArray
MAPPING_MEMORY = "/goat/mapping/instance_memory"  # goat_interfaces/InstanceMemory (full snapshot, for matching)
MAPPING_RESET = "/goat/mapping/reset"  # std_srvs/srv/Trigger: forget the map and every instance
GOAL_MATCHES = "/goat/goal_matches"  # goat_interfaces/GoalMatches

# Frames (REP 105)
MAP_FRAME = "map"  # the episode frame: origin at the episode start pose
ODOM_FRAME = "odom"
BASE_FRAME = "base_link"
CAMERA_FRAME = "camera_link"  # at the head camera, x forward, tilted with the head
OPTICAL_FRAME = "camera_color_optical_frame"  # z forward, x right, y down (REP 103 optical convention)
