"""Benchmark bringup: the simulation graph plus the episode player and the evaluator.

    ros2 launch launch/bench.launch.py episodes_file:=episodes.json.gz results_file:=results.json [record:=RUN]

The episode player replays the file subtask by subtask; the evaluator writes the results JSON after every
subtask. Without ros2 launch: ``goat-nav launch bench --episodes-file F`` or ``goat-nav bench --ros``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goat_launch_common import BOOLS, LOG_LEVELS, goat_nodes, recorder_node, rviz_node  # noqa: E402
from launch.actions import DeclareLaunchArgument  # noqa: E402
from launch.conditions import IfCondition  # noqa: E402
from launch.substitutions import LaunchConfiguration  # noqa: E402

from launch import LaunchDescription  # noqa: E402


def generate_launch_description() -> LaunchDescription:
    args = [
        DeclareLaunchArgument("episodes_file", description="GOAT-Bench style .json/.json.gz episodes to replay"),
        DeclareLaunchArgument("results_file", default_value="results.json",
                              description="results JSON written by the evaluator after every subtask"),
        DeclareLaunchArgument("max_actions_per_subtask", default_value="500",
                              description="action budget per subtask, STOP included (GOAT-Bench: 500)"),
        DeclareLaunchArgument("success_metric", default_value="geodesic_viewpoint",
                              choices=["geodesic_viewpoint", "euclidean_object"],
                              description="GOAT-Bench geodesic to a view point, or the paper's euclidean distance"),
        DeclareLaunchArgument("success_distance_m", default_value="0.25",
                              description="success radius in metres (use 1.0 with euclidean_object)"),
        DeclareLaunchArgument("agent_config", default_value="",
                              description="YAML file of the agent's settings, like config/agent.yaml "
                                          "(config/agent_no_memory.yaml: the no-memory ablation); empty: defaults"),
        DeclareLaunchArgument("use_rviz", default_value="false", choices=BOOLS, description="start rviz2"),
        DeclareLaunchArgument("use_sim_time", default_value="false", choices=BOOLS,
                              description="use /clock instead of the wall clock"),
        DeclareLaunchArgument("log_level", default_value="info", choices=LOG_LEVELS, description="ROS log level"),
        DeclareLaunchArgument("record", default_value="",
                              description="record the run: the graph's topics into a new rosbag2 bag, folder RUN/ "
                                          "with metadata.yaml and RUN.mcap (config/recorder.yaml); empty: none"),
    ]
    episodes = LaunchConfiguration("episodes_file")
    overrides = {
        "episode_player": {"episodes_file": episodes,
                           "max_actions_per_subtask": LaunchConfiguration("max_actions_per_subtask")},
        "evaluator": {"episodes_file": episodes, "results_file": LaunchConfiguration("results_file"),
                      "success_metric": LaunchConfiguration("success_metric"),
                      "success_distance_m": LaunchConfiguration("success_distance_m")},
        "controller": {"agent_config": LaunchConfiguration("agent_config")},
    }
    use_sim_time, log_level = LaunchConfiguration("use_sim_time"), LaunchConfiguration("log_level")
    return LaunchDescription([
        *args,
        recorder_node(LaunchConfiguration("record"), use_sim_time, log_level),
        *goat_nodes("bench", overrides, use_sim_time, log_level),
        rviz_node(IfCondition(LaunchConfiguration("use_rviz"))),
    ])
