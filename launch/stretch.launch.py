"""Physical robot bringup: our Stretch driver, the head camera (stretch_core), perception and the controller.

    ros2 launch launch/stretch.launch.py use_rviz:=true [record:=RUN] [motion_mode:=nav2]

goat_stretch's stretch_driver serves /goat/execute_action through stretch_body and publishes /odom,
/joint_states and odom -> base_link; only one process can own stretch_body, so stretch_core's own driver is not
started here. The head camera comes from stretch_core's D435i launch file, remapped under /head_camera_raw: the
head_camera relay (goat_stretch) republishes it upright on the stretch_ros2 names every other node reads.
``motion_mode:=nav2`` hands the final approach of each matched instance to a Nav2 that is already running (its
bringup is not part of this file). See docs/robot.md.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goat_launch_common import (  # noqa: E402
    BOOLS,
    LOG_LEVELS,
    goat_nodes,
    head_camera_remaps,
    recorder_node,
    rviz_node,
)
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription  # noqa: E402
from launch.conditions import IfCondition  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression  # noqa: E402
from launch_ros.substitutions import FindPackageShare  # noqa: E402

from launch import LaunchDescription  # noqa: E402


def generate_launch_description() -> LaunchDescription:
    args = [
        DeclareLaunchArgument("start_camera", default_value="true", choices=BOOLS,
                              description="include stretch_core's D435i launch file for the head camera, remapped "
                                          "under /head_camera_raw (false: start it yourself, publishing there)"),
        DeclareLaunchArgument("agent_config", default_value="",
                              description="YAML file of the agent's settings, like config/agent.yaml "
                                          "(config/agent_no_memory.yaml: the no-memory ablation); empty: defaults"),
        DeclareLaunchArgument("use_rviz", default_value="false", choices=BOOLS, description="start rviz2"),
        DeclareLaunchArgument("log_level", default_value="info", choices=LOG_LEVELS, description="ROS log level"),
        DeclareLaunchArgument("motion_mode", default_value="discrete", choices=["discrete", "nav2"],
                              description="discrete: every step through the stretch_driver; nav2: the final approach "
                                          "to a confident match goes to a running Nav2 (nav2_simple_commander)"),
        DeclareLaunchArgument("record", default_value="",
                              description="record the run: the graph's topics into a new rosbag2 bag, folder RUN/ "
                                          "with metadata.yaml and RUN.mcap (config/recorder.yaml); empty: none"),
    ]
    stretch_core = FindPackageShare("stretch_core")
    camera_launch = PathJoinSubstitution([stretch_core, "launch", "d435i_high_resolution.launch.py"])
    # The camera publishes sideways: its topics are remapped (in this group only) to where head_camera takes them.
    camera = GroupAction([*head_camera_remaps(),
                          IncludeLaunchDescription(PythonLaunchDescriptionSource(camera_launch))],
                         scoped=True, condition=IfCondition(LaunchConfiguration("start_camera")))
    # In nav2 mode Nav2's controller server drives the base through /cmd_vel, which our driver then accepts.
    nav2 = PythonExpression(["'", LaunchConfiguration("motion_mode"), "' == 'nav2'"])
    overrides = {"controller": {"agent_config": LaunchConfiguration("agent_config"),
                                "motion_mode": LaunchConfiguration("motion_mode")},
                 "stretch_driver": {"accept_cmd_vel": nav2}}
    log_level = LaunchConfiguration("log_level")
    return LaunchDescription([
        *args,
        recorder_node(LaunchConfiguration("record"), False, log_level),
        camera,
        *goat_nodes("stretch", overrides, False, log_level),
        rviz_node(IfCondition(LaunchConfiguration("use_rviz"))),
    ])
