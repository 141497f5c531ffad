"""Simulation bringup: the simulator bridge (embedded MuJoCo homes), perception and the controller, plus rviz.

    ros2 launch launch/sim.launch.py scene_id:=embedded/home_s1234_r5 use_rviz:=true [record:=RUN] [live_view:=true]

Goals are published on /goat/goal (goat_interfaces/Goal); bench.launch.py replays an episode file instead.
Without ros2 launch: ``goat-nav launch sim``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goat_launch_common import (  # noqa: E402
    BOOLS,
    LOG_LEVELS,
    goat_nodes,
    live_view_node,
    recorder_node,
    rviz_node,
    stretch_description_node,
    stretch_urdf_text,
)
from launch.actions import DeclareLaunchArgument  # noqa: E402
from launch.conditions import IfCondition  # noqa: E402
from launch.substitutions import LaunchConfiguration  # noqa: E402

from goat_ros.graph import SIM_SCENE_ID  # noqa: E402
from launch import LaunchDescription  # noqa: E402


def generate_launch_description() -> LaunchDescription:
    args = [
        DeclareLaunchArgument("backend", default_value="embedded", choices=["embedded", "habitat"],
                              description="simulator backend of sim_bridge"),
        DeclareLaunchArgument("scene_id", default_value=SIM_SCENE_ID,
                              description="scene loaded and streamed at start-up (empty: wait for "
                                          "/sim/reset_episode)"),
        DeclareLaunchArgument("agent_config", default_value="",
                              description="YAML file of the agent's settings, like config/agent.yaml "
                                          "(config/agent_no_memory.yaml: the no-memory ablation); empty: defaults"),
        DeclareLaunchArgument("use_rviz", default_value="true", choices=BOOLS,
                              description="start rviz2 with config/goat.rviz"),
        DeclareLaunchArgument("use_sim_time", default_value="false", choices=BOOLS,
                              description="use /clock instead of the wall clock"),
        DeclareLaunchArgument("log_level", default_value="info", choices=LOG_LEVELS, description="ROS log level"),
        DeclareLaunchArgument("live_view", default_value="false", choices=BOOLS,
                              description="also serve the graph to Foxglove / Lichtblick (Foxglove WebSocket, "
                                          "ws://127.0.0.1:8765; config/live_view.yaml)"),
        DeclareLaunchArgument("record", default_value="",
                              description="record the run: the graph's topics into a new rosbag2 bag, folder RUN/ "
                                          "with metadata.yaml and RUN.mcap (config/recorder.yaml); empty: none"),
    ]
    # With the Stretch URDF, robot_state_publisher publishes the camera frames from the head joint states.
    overrides = {
        "sim_bridge": {"backend": LaunchConfiguration("backend"), "scene_id": LaunchConfiguration("scene_id"),
                       "publish_camera_tf": stretch_urdf_text() is None},
        "controller": {"agent_config": LaunchConfiguration("agent_config")},
    }
    use_rviz = IfCondition(LaunchConfiguration("use_rviz"))
    use_sim_time, log_level = LaunchConfiguration("use_sim_time"), LaunchConfiguration("log_level")
    return LaunchDescription([
        *args,
        recorder_node(LaunchConfiguration("record"), use_sim_time, log_level),
        *goat_nodes("sim", overrides, use_sim_time, log_level),
        live_view_node(IfCondition(LaunchConfiguration("live_view")), use_sim_time, log_level),
        *stretch_description_node(None),
        rviz_node(use_rviz),
    ])
