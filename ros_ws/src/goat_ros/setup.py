"""ament_python build of goat_ros (colcon); in the venv it is on sys.path through scripts/setup_ros.sh."""

from setuptools import setup

setup(
    name="goat_ros",
    version="0.1.0",
    packages=["goat_ros"],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/goat_ros"]),
        ("share/goat_ros", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    entry_points={
        "console_scripts": [
            "sim_bridge = sim_bridge.ros.bridge_node:main",
            "perception = goat_ros.perception_node:main",
            "instance_mapping = goat_ros.instance_mapping_node:main",
            "goal_matching = goat_ros.goal_matching_node:main",
            "controller = goat_ros.controller_node:main",
            "episode_player = goat_suites.ros.episode_player_node:main",
            "evaluator = goat_suites.ros.evaluator_node:main",
            "recorder = goat_ros.recorder_node:main",
            "live_view = goat_ros.live_view_node:main",
            "lifecycle_manager = goat_ros.lifecycle_manager_node:main",
            "localiser = goat_ros.localiser_node:main",
        ],
    },
)
