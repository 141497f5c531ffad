"""The mapping stage on its own: observations in, occupancy grid and lifelong instance memory out.

:class:`goat_core.agent.Agent` integrates its observations itself, because it also marks the collisions of its
own blocked moves; this class is for consumers that only build the map from a stream of observations (the
``instance_mapping`` ROS node while the robot is teleoperated or driven by another node, offline map building).
Per observation it does what the agent does before deciding: the depth image into the grid, the robot's
footprint marked explored, the perception backend's detections into the instance memory.
"""

from __future__ import annotations

from dataclasses import replace

from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig
from goat_core.mapping.occupancy import OccupancyConfig, OccupancyGrid
from goat_core.perception.base import PerceptionBackend
from goat_core.types import Observation


class LifelongMapper:
    """One occupancy grid and one instance memory, fed by one perception backend.

    Observations are numbered in the order they are integrated (0, 1, 2, ... since the last reset) and that
    number is the step the memory records (first and last seen, view steps): the goal matchers key their caches
    on it, so it must grow with every frame even where no action counter comes with the observations.
    """

    def __init__(self, perception: PerceptionBackend, occupancy: OccupancyConfig, memory: InstanceMemoryConfig,
                 robot_radius_m: float) -> None:
        if not robot_radius_m > 0.0:
            raise ValueError(f"robot_radius_m must be positive, got {robot_radius_m!r}")
        self.perception = perception
        self.grid = OccupancyGrid(occupancy)
        self.memory = InstanceMemory(memory)
        self.robot_radius_m = robot_radius_m
        self.frames = 0  # observations integrated since the last reset
        self.generation = 0  # resets so far: memory ids restart at each, so caches keyed on ids must be dropped

    def reset(self) -> None:
        """Forget the map and every instance (a new episode, or on request)."""
        self.grid.reset()
        self.memory.clear()
        self.frames = 0
        self.generation += 1

    def integrate(self, obs: Observation) -> list[int]:
        """Fold one observation into grid and memory; returns the memory ids of the instances it showed.

        ``obs.step`` is replaced by the frame number (see the class docstring).
        """
        obs.validate()
        obs = replace(obs, step=self.frames)
        self.grid.update(obs)
        self.grid.mark_disk_explored(obs.pose.x_m, obs.pose.y_m, self.robot_radius_m)
        touched = self.memory.update(self.perception.detect(obs), obs, self.perception.persistent_keys)
        self.frames += 1
        return touched
