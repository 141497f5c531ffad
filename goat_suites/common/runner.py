"""The in-process benchmark loop: replay GOAT episodes in the embedded simulator and score every subtask.

The same objects (Agent, EmbeddedSim, the episode dataclasses) are used by the ROS graph; this loop is the
reference the graph run is compared against action for action.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from goat_core.agent import Agent, AgentConfig
from goat_core.errors import ConfigError
from goat_core.frames import habitat_quaternion_to_yaw, habitat_to_ros_position
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_core.matching.selection import StackConfig, build_stack
from goat_core.types import DiscreteAction, Goal, Observation
from goat_suites.common.agents import BenchAgent, build_baseline_agent, check_agent
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.failures import SceneObject, failure_of_subtask
from goat_suites.common.metrics import spl as spl_metric
from goat_suites.common.parts import EPISODE_SCHEMA, SuiteParts
from goat_suites.common.protocols import GOAT_BENCH, Budget, Embodiment, SuccessRule
from goat_suites.common.realism import AgentSenses
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.subtask_plan import GoalWording, SubtaskPlan, plan_subtask
from goat_suites.common.success import DISTANCE_TO, SUCCESS_METRICS, scene_objects
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig
from sim_bridge.embedded.subtask_env import SubtaskOutcome, run_subtask


@dataclass(frozen=True)
class RunConfig:
    """How subtasks are run and scored (defaults: GOAT-Bench's official protocol, goat_suites.common.protocols).

    Budget: GOAT-Bench's task config gives 5000 actions per *episode* and no per-subtask cap (a stuck subtask
    eats the budget of the ones after it); ``max_actions_per_subtask`` alone is the README's variant (500 per
    subtask, each starting afresh), a named deviation. None = no cap at that level; at least one is set.
    """

    max_actions_per_episode: Optional[int] = 5000
    max_actions_per_subtask: Optional[int] = None
    success_distance_m: float = 0.25  # GOAT-Bench config: geodesic distance to the nearest view point
    # "<" as GOAT-Bench's GoatSuccess and habitat-lab's Success compare (goat_bench/measurements/nav.py l.292)
    success_comparison: str = "<"
    # GOAT-Bench needs STOP; LangMap scores where the subgoal ended, STOP or not (its protocol sets this False)
    success_requires_stop: bool = True
    # "geodesic_viewpoint" (GOAT-Bench) or "euclidean_object" (the GOAT paper's text: 1 m to the object centre;
    # use it with success_distance_m=1.0)
    success_metric: str = "geodesic_viewpoint"
    record_actions: bool = True
    # GOAT-Bench's noise-robustness study: image goals get Gaussian pixel noise, sigma ~ U(0.1, 2.0) (see
    # sim_bridge.embedded.goal_image.noisy_goal_image), drawn per subtask from the episode id and index.
    goal_image_noise: bool = False
    # ... and description goals are restated in other words (goat_suites.common.paraphrase), per subtask
    goal_paraphrase: bool = False
    # Image goals carry their object category, as GOAT-Bench tasks do ([category, modality, object_id, image_idx]);
    # False gives the picture alone (Instance ImageNav's harder setting).
    image_goal_category: bool = True

    def __post_init__(self) -> None:
        if self.success_metric not in SUCCESS_METRICS:
            raise ConfigError(f"success_metric must be one of {SUCCESS_METRICS}, got {self.success_metric!r}")
        self.budget()  # raises ConfigError naming a bad budget
        if not self.success_distance_m > 0.0:
            raise ConfigError(f"success_distance_m must be > 0, got {self.success_distance_m}")
        self.success_rule()  # raises ConfigError naming a bad comparison

    def budget(self) -> Budget:
        """The action budget as the protocol vocabulary states it."""
        return Budget(self.max_actions_per_episode, self.max_actions_per_subtask)

    def subtask_cap(self) -> int:
        """The most actions one subtask can get (for a player that hands out per-goal budgets)."""
        return self.budget().subtask_budget(0)

    def success_rule(self) -> SuccessRule:
        return SuccessRule(distance_m=self.success_distance_m, distance_to=DISTANCE_TO[self.success_metric],
                           comparison=self.success_comparison, requires_stop=self.success_requires_stop)

    def protocol_deviations(self, sim_config: SimConfig) -> tuple[str, ...]:
        """How this run differs from GOAT-Bench's official protocol, in words (empty: official)."""
        official, out = GOAT_BENCH, []
        if self.budget() != official.budget:
            out.append(f"budget {self.budget().describe()} (official {official.budget.describe()})")
        out.extend(success_deviations(official.success, self.success_rule()))
        out.extend(embodiment_deviations(official.embodiment, sim_config))
        if self.goal_image_noise:
            out.append("image-goal noise")
        if self.goal_paraphrase:
            out.append("paraphrased descriptions")
        if not self.image_goal_category:
            out.append("image goals without category")
        return tuple(out)


def success_deviations(official: SuccessRule, rule: SuccessRule) -> list[str]:
    """How a run's success rule differs from a protocol's, in words."""
    out = []
    if (rule.distance_m, rule.distance_to, rule.comparison) != (
            official.distance_m, official.distance_to, official.comparison):
        out.append(f"success {rule.distance_to} {rule.comparison} {rule.distance_m:g} m (official "
                   f"{official.distance_to} {official.comparison} {official.distance_m:g} m)")
    if rule.requires_stop != official.requires_stop:
        out.append("STOP required (official: the subgoal's end is scored)" if rule.requires_stop
                   else "STOP not required (official: STOP required)")
    return out


def embodiment_deviations(official: Embodiment, sim_config: SimConfig) -> list[str]:
    """How ``sim_config``'s camera and motion differ from a protocol's embodiment, in words."""
    out = []
    if (sim_config.width_px, sim_config.height_px, sim_config.hfov_deg) != (
            official.width_px, official.height_px, official.hfov_deg):
        out.append(f"camera {sim_config.width_px}x{sim_config.height_px} HFOV {sim_config.hfov_deg:g} deg "
                   f"(official {official.width_px}x{official.height_px} HFOV {official.hfov_deg:g} deg)")
    if official.camera_height_m is not None and not math.isclose(sim_config.camera_height_m,
                                                                 official.camera_height_m):
        out.append(f"camera height {sim_config.camera_height_m:g} m (official {official.camera_height_m:g} m)")
    if sim_config.allow_sliding != official.allow_sliding:
        out.append(f"sliding {'on' if sim_config.allow_sliding else 'off'} "
                   f"(official {'on' if official.allow_sliding else 'off'})")
    return out


@dataclass
class Trajectory:
    """What a report needs to draw one episode: world-frame positions and the goals."""

    episode_id: str
    scene_id: str
    positions_xy_m: list[tuple[float, float]] = field(default_factory=list)
    subtask_starts: list[int] = field(default_factory=list)  # index into positions_xy_m
    goal_positions_xy_m: list[list[tuple[float, float]]] = field(default_factory=list)
    navigable: Optional[np.ndarray] = None  # (H, W) bool ground-truth navigable grid, rows along +y
    grid_origin_xy_m: tuple[float, float] = (0.0, 0.0)  # world position of cell (0, 0)'s corner
    grid_resolution_m: float = 0.05


@dataclass(frozen=True)
class SubtaskTrace:
    """What the agent was asked and what it settled on, for logs (``goat-nav bench --verbose``)."""

    record: SubtaskRecord
    goal: str  # Goal.describe()
    target_ids: tuple[str, ...]  # the goal objects that count as success
    matched_category: Optional[str]  # category of the memory instance the agent chose last, if any
    match_score: float
    match_confident: bool
    agent_mode: str

    def line(self) -> str:
        r = self.record
        outcome = "OK  " if r.success else "MISS"
        dist = "?" if r.distance_to_goal_m is None else f"{r.distance_to_goal_m:.2f}"
        chosen = (f"{self.matched_category} (score {self.match_score:.2f}, "
                  f"{'confident' if self.match_confident else 'unsure'})") if self.matched_category else "nothing"
        ended = r.stop_reason if r.failure is None else f"{r.stop_reason} ({r.failure})"
        text = (f"{outcome} {r.episode_id} #{r.index} {self.goal!r} -> {chosen}; {ended} after "
                f"{r.num_actions} actions, {dist} m from goal, SPL {r.spl:.2f}")
        return text + (f"; error: {r.error}" if r.error else "")


def build_agent(agent_config: AgentConfig, matcher_config: MatcherConfig, labels: Sequence[str],
                embedder: Optional[SentenceEmbedder] = None, stack: Optional[StackConfig] = None) -> Agent:
    """The GOAT agent; by default with ground-truth perception (the GOAT-GTSem setting) and the modality matcher,
    else with the perception backend and goal matcher that ``stack`` selects (models from local folders)."""
    perception, matcher = build_stack(stack if stack is not None else StackConfig(), labels, matcher_config, embedder)
    return Agent(agent_config, perception, matcher)


class EpisodeRunner:
    """Runs episodes one after another, reusing the simulator while the scene stays the same."""

    def __init__(self, run_config: RunConfig, agent_config: AgentConfig, matcher_config: MatcherConfig,
                 sim_config: SimConfig = SimConfig(), embedder: Optional[SentenceEmbedder] = None,
                 stack: Optional[StackConfig] = None, labels: Optional[Sequence[str]] = None,
                 parts: SuiteParts = EPISODE_SCHEMA, agent: str = "goat") -> None:
        """``labels``: what the perception backend may name (default: the simulator catalogue's categories);
        ``parts``: the suite's (the goals that score a subtask, the home of a scene id; goat_suites.registry);
        ``agent``: the method run (goat_suites.common.agents.AGENTS)."""
        check_agent(agent, stack)
        self.run_config = run_config
        self.agent_config = agent_config
        self.matcher_config = matcher_config
        self.sim_config = sim_config
        # The ground-truth perception backend can name every category of the simulator's catalogue, as
        # Habitat's semantic sensor names every category of a scene dataset.
        if labels is None:
            labels = [spec.name for spec in CATALOGUE]
        self.agent: BenchAgent = (build_agent(agent_config, matcher_config, labels, embedder, stack) if agent == "goat"
                                  else build_baseline_agent(agent, labels, embedder, stack))
        self.parts = parts
        self._sim: Optional[EmbeddedSim] = None
        self._scene_id: Optional[str] = None
        self._last_goal_text = ""
        # The realism profile's localiser and the believed-vs-true pose log (goat_suites.common.realism); ideal: no
        # change.
        self.senses = AgentSenses(sim_config.realism)

    def close(self) -> None:
        if self._sim is not None:
            self._sim.close()
            self._sim = None
            self._scene_id = None

    def __enter__(self) -> EpisodeRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sim_for(self, scene_id: str) -> EmbeddedSim:
        if self._sim is None or self._scene_id != scene_id:
            self.close()
            self._sim = EmbeddedSim(self.parts.home_for_scene(scene_id), self.sim_config)
            self._scene_id = scene_id
        return self._sim

    def run_episode(self, episode: GoatEpisode,
                    on_step: Optional[Callable[[Observation, DiscreteAction], None]] = None,
                    on_subtask: Optional[Callable[[SubtaskTrace], None]] = None,
                    on_goal: Optional[Callable[[int, Goal], None]] = None,
                    ) -> tuple[list[SubtaskRecord], Trajectory]:
        """Run every subtask of ``episode``; a subtask whose goal is invalid is recorded as an error.

        The episode is read once, into one plan per subtask (goat_suites.common.subtask_plan); the simulator then
        runs each subtask (sim_bridge.embedded.subtask_env.run_subtask) and the runner scores what it measured.
        """
        cfg = self.run_config
        wording = GoalWording(cfg.goal_paraphrase, cfg.goal_image_noise, cfg.image_goal_category)
        plans = [plan_subtask(episode, index, task, self.parts, wording) for index, task in enumerate(episode.tasks)]
        start = habitat_to_ros_position(episode.start_position)[:2]
        start_yaw = habitat_quaternion_to_yaw(episode.start_rotation)
        sim = self._sim_for(episode.scene_id)
        obs = sim.reset(np.asarray(start), start_yaw)
        agent = self.agent
        agent.reset_episode()
        self.senses.reset()
        grid = sim.navgrid
        trajectory = Trajectory(episode.episode_id, episode.scene_id, navigable=grid.navigable,
                                grid_origin_xy_m=(float(grid.origin_xy_m[0]), float(grid.origin_xy_m[1])),
                                grid_resolution_m=grid.resolution_m)
        pose = sim.base_pose_world
        trajectory.positions_xy_m.append((pose.x_m, pose.y_m))
        records: list[SubtaskRecord] = []
        budget = cfg.budget()
        actions_used = 0  # in this episode, STOP included: the episode budget is shared by its subtasks
        distance_to = cfg.success_rule().distance_to
        for plan in plans:
            trajectory.subtask_starts.append(len(trajectory.positions_xy_m) - 1)
            trajectory.goal_positions_xy_m.append(plan.goal_positions_xy_m)
            self._last_goal_text = plan.described()
            outcome = run_subtask(sim, plan.place, distance_to, obs, budget.subtask_budget(actions_used),
                                  functools.partial(self._begin, episode.episode_id, plan, on_goal), agent,
                                  self.senses.see, on_step)
            obs = outcome.obs if outcome.obs is not None else obs
            trajectory.positions_xy_m.extend(outcome.forward_xy_m)
            record = self._score(episode, plan, outcome, (start, start_yaw), scene_objects(sim.home))
            actions_used += record.num_actions
            records.append(record)
            if on_subtask is not None:
                on_subtask(self._trace(agent, record, plan))
        return records, trajectory

    def _begin(self, episode_id: str, plan: SubtaskPlan, on_goal: Optional[Callable[[int, Goal], None]],
               picture: Optional[np.ndarray]) -> None:
        """Hand the agent the goal of ``plan`` (an image goal with its ``picture``)."""
        goal = plan.goal if picture is None else plan.image_goal(picture, math.radians(self.sim_config.hfov_deg))
        assert goal is not None, "a planned goal without words has a picture"
        self._last_goal_text = goal.describe()
        self.agent.start_subtask(goal)
        if self.agent.goal_note is not None:
            print(f"warning: {episode_id}/{plan.index}: {self.agent.goal_note}", file=sys.stderr)
        if on_goal is not None:
            on_goal(plan.index, goal)

    def _score(self, episode: GoatEpisode, plan: SubtaskPlan, outcome: SubtaskOutcome,
               start: tuple[np.ndarray, float], objects: Sequence[SceneObject]) -> SubtaskRecord:
        """The record of a subtask the simulator ran (or could not start: an error record)."""
        base: dict[str, Any] = dict(episode_id=episode.episode_id, scene_id=episode.scene_id, index=plan.index,
                                    modality=plan.task.modality)
        if outcome.error is not None:
            return SubtaskRecord(**base, success=False, spl=0.0, path_length_m=0.0, geodesic_m=None,
                                 num_actions=0, stop_reason="error", distance_to_goal_m=None, error=outcome.error)
        self.senses.log.subtask_end.append(len(self.senses.log.truth) - 1)
        stop_reason = "stop" if outcome.stopped else "budget"
        success = self.run_config.success_rule().is_success(outcome.stopped, outcome.distance_m)
        decision = self.agent.last_stop if outcome.stopped else None
        failure = failure_of_subtask(success, stop_reason, decision, start[0], start[1],
                                     list(plan.place.object_ids), objects)
        distance_m = outcome.distance_m
        return SubtaskRecord(
            **base, success=success, spl=spl_metric(success, outcome.geodesic_m, outcome.path_length_m),
            path_length_m=outcome.path_length_m, geodesic_m=outcome.geodesic_m, num_actions=len(outcome.actions),
            stop_reason=stop_reason, distance_to_goal_m=distance_m if math.isfinite(distance_m) else None,
            actions=tuple(outcome.actions) if self.run_config.record_actions else None, failure=failure,
            stop_detail=decision.reason if decision is not None else None)

    def _trace(self, agent: BenchAgent, record: SubtaskRecord, plan: SubtaskPlan) -> SubtaskTrace:
        state = agent.debug_state()
        match = state.match
        matched = agent.memory.instances.get(match.instance_id) if match.instance_id is not None else None
        return SubtaskTrace(
            record=record, goal=self._last_goal_text, target_ids=plan.place.object_ids,
            matched_category=matched.category if matched is not None else None, match_score=match.score,
            match_confident=match.confident, agent_mode=state.mode)
