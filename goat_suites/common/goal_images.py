"""The picture of an image goal, rendered from its stored camera pose (as GOAT-Bench's image goal sensor)."""

from __future__ import annotations

import numpy as np

from goat_core.frames import habitat_quaternion_to_tilt, habitat_quaternion_to_yaw, habitat_to_ros_position
from goat_suites.common.episodes import GoatEpisode, GoatTask, image_goal_for_task
from sim_bridge.embedded.sim import EmbeddedSim


class ImageGoalRenderer:
    """Renders the picture of an image task from its stored camera pose in the simulator of its scene."""

    def __init__(self, sim: EmbeddedSim) -> None:
        self._sim = sim

    def render(self, episode: GoatEpisode, task: GoatTask) -> np.ndarray:
        spec = image_goal_for_task(episode, task)
        position = habitat_to_ros_position(spec.position)
        yaw = habitat_quaternion_to_yaw(spec.rotation)
        tilt = habitat_quaternion_to_tilt(spec.rotation)
        return self._sim.render_view(position[:2], yaw, tilt).rgb
