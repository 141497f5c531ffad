"""Scoring a subtask from what the robot did (episode-frame poses), with the in-process run's success region.

No rclpy here: the evaluator node converts messages and calls :class:`SubtaskScorer`. Ground truth comes from
the episode file and the embedded simulator's navigable grid (built from the procedural home, no rendering). Which
goal objects score a subtask and the home of a scene id are the suite's (its ``SuiteParts``, as the in-process
runner asks them: goat_suites.registry).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError, GoatError
from goat_core.frames import habitat_quaternion_to_yaw, habitat_to_ros_position
from goat_core.types import DiscreteAction, GoalModality, Pose2D, StopDecision
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.failures import SceneObject, failure_of_subtask
from goat_suites.common.metrics import spl as spl_metric
from goat_suites.common.parts import EPISODE_SCHEMA, SuiteParts
from goat_suites.common.protocols import GOAT_BENCH, SuccessRule
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.success import SUCCESS_METRICS, SuccessRegion, scene_objects
from sim_bridge.embedded.navgrid import NavGrid
from sim_bridge.embedded.sim import SimConfig


def _wrap(angle_rad: float) -> float:
    """[-pi, pi), as the simulator wraps the start yaw."""
    return (angle_rad + math.pi) % (2.0 * math.pi) - math.pi


class SubtaskScorer:
    """Scores subtasks of the episodes of one file; keeps the navigable grid of the latest scene."""

    def __init__(self, episodes: Sequence[GoatEpisode], success_metric: str, success_distance_m: float,
                 sim_config: SimConfig = SimConfig(), parts: SuiteParts = EPISODE_SCHEMA) -> None:
        """``parts``: the suite's (the goal objects that score a subtask, the home of a scene id); default: the
        GOAT-Bench schema's reading."""
        # The checks of goat_suites.common.runner.RunConfig, which the in-process run scores with.
        if success_metric not in SUCCESS_METRICS:
            raise ConfigError(f"success_metric must be one of {SUCCESS_METRICS}, got {success_metric!r}")
        if not success_distance_m > 0.0:
            raise ConfigError(f"success_distance_m must be > 0, got {success_distance_m}")
        self._episodes = {e.episode_id: e for e in episodes}
        self._success_metric = success_metric
        self._success_distance_m = success_distance_m
        # GOAT-Bench's rule (goat_suites.common.protocols.GOAT_BENCH): STOP, and strictly closer than the threshold
        distance_to = {"geodesic_viewpoint": "view_points", "euclidean_object": "object",
                       "visible_object": "visible_object"}[success_metric]
        self._success_rule = SuccessRule(distance_m=success_distance_m, distance_to=distance_to,
                                         comparison=GOAT_BENCH.success.comparison)
        self._sim_config = sim_config
        self._parts = parts
        self._scene_id: Optional[str] = None
        self._navgrid: Optional[NavGrid] = None
        self._objects: list[SceneObject] = []
        self._last_pose: dict[str, Pose2D] = {}  # episode id -> the last pose reported in it (episode frame)

    def episode(self, episode_id: str) -> Optional[GoatEpisode]:
        return self._episodes.get(episode_id)

    def _grid(self, scene_id: str) -> NavGrid:
        if self._navgrid is None or scene_id != self._scene_id:
            home = self._parts.home_for_scene(scene_id)
            self._navgrid = NavGrid.from_home(home, self._sim_config.grid_resolution_m, self._sim_config.robot_radius_m)
            self._objects = scene_objects(home)
            self._scene_id = scene_id
        return self._navgrid

    def score(self, episode: GoatEpisode, index: int, stop_reason: str, actions: Sequence[int],
              poses: Sequence[Pose2D], error: Optional[str], decision: Optional[StopDecision] = None) -> SubtaskRecord:
        """The record the in-process runner would write for the same poses (episode frame), actions and account of
        the agent's STOP (``decision``).

        A ``budget`` outcome with no poses is a subtask the episode's spent budget gave no action (the episode
        player reports it without sending the goal): it is scored where the last subtask of the episode that
        reported poses left the robot, as the in-process runner scores it where the robot stands.
        """
        task = episode.tasks[index]
        if stop_reason == "budget" and not poses and not actions and episode.episode_id in self._last_pose:
            poses = [self._last_pose[episode.episode_id]]
        elif poses:
            self._last_pose[episode.episode_id] = poses[-1]
        base: dict[str, Any] = dict(episode_id=episode.episode_id, scene_id=episode.scene_id, index=index,
                                    modality=task.modality)
        failed: dict[str, Any] = dict(success=False, spl=0.0, path_length_m=0.0, geodesic_m=None, num_actions=0,
                                      stop_reason="error", distance_to_goal_m=None)
        if stop_reason == "error" or not poses:
            return SubtaskRecord(**base, **failed, error=error or "no pose was reported")
        start = habitat_to_ros_position(episode.start_position)
        yaw0 = _wrap(habitat_quaternion_to_yaw(episode.start_rotation))
        c, s = math.cos(yaw0), math.sin(yaw0)
        world = np.array([[start[0] + c * p.x_m - s * p.y_m, start[1] + s * p.x_m + c * p.y_m] for p in poses])
        try:
            region = SuccessRegion(self._grid(episode.scene_id), self._parts.scored_goals(episode, index, task),
                                   self._success_metric)
            geodesic_m = region.geodesic_m(world[0])
            if not math.isfinite(geodesic_m):
                raise GoatError(f"goal of subtask {index} is unreachable from {world[0].round(2).tolist()}")
        except GoatError as exc:
            return SubtaskRecord(**base, **failed, error=str(exc))
        path_length_m = 0.0
        for prev, cur in zip(world[:-1], world[1:], strict=True):
            path_length_m += float(np.linalg.norm(cur - prev))
        distance_m = region.distance_m(world[-1])
        success = self._success_rule.is_success(stop_reason == "stop", distance_m)
        decision = decision if stop_reason == "stop" else None
        failure = failure_of_subtask(success, stop_reason, decision, start[:2], yaw0,
                                     [g.object_id for g in self._parts.scored_goals(episode, index, task)],
                                     self._objects)
        return SubtaskRecord(
            **base, success=success, spl=spl_metric(success, geodesic_m, path_length_m),
            path_length_m=path_length_m, geodesic_m=geodesic_m, num_actions=len(actions), stop_reason=stop_reason,
            distance_to_goal_m=distance_m if math.isfinite(distance_m) else None,
            actions=tuple(DiscreteAction(a) for a in actions), failure=failure,
            stop_detail=decision.reason if decision is not None else None)


def unscored_error(episode_id: str, index: int, modality: str, error: str) -> Optional[SubtaskRecord]:
    """The record of an error outcome for a goal outside the episode file (None if its modality is unknown)."""
    try:
        parsed = GoalModality.parse(modality)
    except GoatError:
        return None
    return SubtaskRecord(episode_id=episode_id or "unknown", index=index, modality=parsed, success=False, spl=0.0,
                         path_length_m=0.0, geodesic_m=None, num_actions=0, stop_reason="error",
                         distance_to_goal_m=None, error=error)
