"""The worker side of the suites that replay GoatEpisodes (GOAT, LangMap, PASTURE): one episode at a time.

:class:`GoatWorkerFactory` is the picklable recipe of a worker (``goat_suites.common.parallel``): it builds one
:class:`~goat_suites.common.runner.EpisodeRunner` (the agent with its perception and matchers, the simulator of the
current
scene), and :class:`GoatWorker` runs episodes through it, feeding the recorder and the ``--verbose`` lines through a
:class:`SubtaskTap`. The same worker runs in the ``goat-nav bench`` process (one worker) and in Ray actors.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Callable, Mapping, Optional, Sequence

from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.errors import GoatError
from goat_core.matching.lexicon import default_lexicon
from goat_core.matching.matcher import MatcherConfig
from goat_core.matching.selection import StackConfig
from goat_core.types import DiscreteAction, Goal, GoalModality, Observation
from goat_ros.record import RecordedGoal, RunRecorder
from goat_suites.common.episodes import SUBTASK_DISTANCES_FIELD, GoatEpisode, goals_for_task, task_goal_text
from goat_suites.common.parallel import WorkUnit
from goat_suites.common.parts import EPISODE_SCHEMA, SuiteParts
from goat_suites.common.results import SubtaskRecord
from goat_suites.common.runner import EpisodeRunner, RunConfig, SubtaskTrace, Trajectory
from sim_bridge.embedded.sim import SimConfig

if TYPE_CHECKING:
    from goat_ros.live_view import BenchLiveTap, LiveView


def _write_line(line: str) -> None:
    tqdm.write(line, file=sys.stderr)


class SubtaskTap:
    """The runner's callbacks for one episode: the recorder's goal, step and result calls, and --verbose lines.

    Shared by every suite that runs GoatEpisodes through the runner (GOAT, LangMap, PASTURE: goat_suites).

    The runner reports each subtask's goal as the agent got it (image goals with their picture); a subtask that
    failed before it had a goal (an unreachable target) gets one rebuilt from the episode with its result.
    """

    def __init__(self, episode: GoatEpisode, run_config: RunConfig, hfov_rad: float,
                 recorder: Optional[RunRecorder], verbose: bool,
                 emit: Optional[Callable[[str], None]] = None, live: Optional[BenchLiveTap] = None,
                 parts: SuiteParts = EPISODE_SCHEMA) -> None:
        """``emit`` prints a --verbose line (default: above the progress bar, on stderr); ``live``: --live;
        ``parts``: the suite's (the level of a subtask)."""
        self.parts = parts
        self.live = live
        self.episode = episode
        self.run_config = run_config
        self.hfov_rad = hfov_rad
        self.recorder = recorder
        self.verbose = verbose
        self.emit = emit if emit is not None else _write_line
        self.index = 0  # the subtask under way
        self._goal_recorded = False

    def _record_goal(self) -> None:
        if self.recorder is not None and not self._goal_recorded:
            self.recorder.on_goal(_recorded_goal(self.episode, self.index, self.run_config, self.hfov_rad,
                                                 self.parts.subtask_level(self.episode, self.index)))
            self._goal_recorded = True

    def on_goal(self, index: int, goal: Goal) -> None:
        if self.live is not None:
            self.live.on_goal(self.episode.episode_id, index, goal)
        if self.recorder is not None:
            max_actions = self.run_config.subtask_cap()
            recorded = RecordedGoal.from_goal(goal, self.episode.episode_id, index, max_actions)
            if not recorded.level:  # the runner's goals carry no level; the suite may name one (LangMap's)
                level = self.parts.subtask_level(self.episode, index)
                recorded = dataclasses.replace(recorded, level=str(level or ""))
            self.recorder.on_goal(recorded)
            self._goal_recorded = True

    def on_step(self, obs: Observation, action: DiscreteAction) -> None:
        self._record_goal()
        if self.live is not None:
            self.live.on_step(obs, action)
        if self.recorder is not None:
            self.recorder.on_step(obs, action)

    def on_subtask(self, trace: SubtaskTrace) -> None:
        self._record_goal()
        if self.live is not None:
            self.live.on_subtask(trace.record)
        if self.recorder is not None:
            self.recorder.on_result(trace.record)
        if self.verbose:
            self.emit(trace.line())
        self.index += 1
        self._goal_recorded = False


def _recorded_goal(episode: GoatEpisode, index: int, run_config: RunConfig, hfov_rad: float,
                   level: Optional[str]) -> RecordedGoal:
    """The goal of subtask ``index`` rebuilt from the episode (for subtasks that ended before they had one)."""
    task = episode.tasks[index]
    try:
        goals = goals_for_task(episode, task)
        words = "" if task.modality is GoalModality.IMAGE else task_goal_text(episode, index, task)
    except (GoatError, StopIteration, KeyError):  # the runner records such a subtask as an error
        goals, words = (), task.category
    return RecordedGoal(
        episode_id=episode.episode_id, subtask_index=index, modality=task.modality,
        category=(words if task.modality is GoalModality.CATEGORY
                  else task.category if task.modality is GoalModality.IMAGE and run_config.image_goal_category
                  else ""),
        text=words if task.modality is GoalModality.DESCRIPTION else "",
        image_hfov_rad=hfov_rad if task.modality is GoalModality.IMAGE else 0.0,
        level=str(level or ""), target_id=task.object_id or (goals[0].object_id if goals else ""),
        max_actions=run_config.subtask_cap())


@dataclass(frozen=True)
class EpisodeOutput:
    """What a worker sends back for one episode: its subtask records and its trajectory."""

    records: tuple[SubtaskRecord, ...]
    trajectory: Trajectory


@dataclass(frozen=True)
class GoatWorkerFactory:
    """Everything a worker needs to build its runner; picklable (module-level functions only)."""

    run_config: RunConfig
    agent_config: AgentConfig
    matcher_config: MatcherConfig = MatcherConfig()
    sim_config: SimConfig = SimConfig()
    stack: Optional[StackConfig] = None  # perception backend and matchers (default: ground truth, structured)
    labels: Optional[tuple[str, ...]] = None  # what ground-truth perception may name (default: the catalogue)
    parts: SuiteParts = EPISODE_SCHEMA  # the suite's scored goals, levels and homes (goat_suites.registry)
    verbose: bool = False
    live: Optional[str] = None  # --live HOST:PORT: the worker serves its run (in process only: parallel_config)
    agent: str = "goat"  # the method run (goat_suites.common.agents.AGENTS)

    def prepare(self) -> None:
        """Load the WordNet lexicon in this process (``goat_suites.common.work_units.prepare_workers``): every
        worker's matcher reads it in its first episode (about 0.45 CPU-s) and the results' meta names it; loaded
        once before the pool forks its workers, it is read once per run, as in a serial run."""
        default_lexicon()

    def __call__(self) -> GoatWorker:
        runner = EpisodeRunner(self.run_config, self.agent_config, self.matcher_config, self.sim_config,
                               stack=self.stack, labels=self.labels, parts=self.parts,
                               agent=self.agent)
        view = None
        if self.live is not None:
            from goat_ros.live_view import open_live_view  # foxglove-sdk: the live extra, only with --live

            view = open_live_view(self.live)
        return GoatWorker(runner, self.verbose, view)


class GoatWorker:
    """Runs GoatEpisodes with one runner (``goat_suites.common.parallel.EpisodeWorker``)."""

    def __init__(self, runner: EpisodeRunner, verbose: bool, view: Optional[LiveView] = None) -> None:
        self.runner = runner
        self.verbose = verbose
        self.hfov_rad = math.radians(runner.sim_config.hfov_deg)
        self.view = view
        self.live: Optional[BenchLiveTap] = None
        if view is not None:
            from goat_ros.live_view import BenchLiveTap

            self.live = BenchLiveTap(view, runner.agent)

    def run_unit(self, unit: WorkUnit, recorder: Optional[RunRecorder], emit: Callable[[str], None]) -> EpisodeOutput:
        episode: GoatEpisode = unit.payload
        tap = SubtaskTap(episode, self.runner.run_config, self.hfov_rad, recorder, self.verbose, emit, self.live,
                         self.runner.parts)
        taps = recorder is not None or self.live is not None
        records, trajectory = self.runner.run_episode(
            episode, on_step=tap.on_step if taps else None,
            on_subtask=tap.on_subtask if taps or self.verbose else None,
            on_goal=tap.on_goal if taps else None)
        return EpisodeOutput(tuple(records), trajectory)

    def close(self) -> None:
        self.runner.close()
        if self.view is not None:
            self.view.close()


def lost_episode_records(episode: GoatEpisode, error: str) -> list[SubtaskRecord]:
    """The records of an episode that no worker finished: every subtask ended by ``error``, nothing scored."""
    return [SubtaskRecord(episode_id=episode.episode_id, scene_id=episode.scene_id, index=i, modality=task.modality,
                          success=False, spl=0.0, path_length_m=0.0, geodesic_m=None, num_actions=0,
                          stop_reason="error", distance_to_goal_m=None, error=error)
            for i, task in enumerate(episode.tasks)]


def episode_key(scene_id: Optional[str], episode_id: str) -> str:
    """An episode's name in a run's plan: GOAT-Bench episode ids repeat across scenes."""
    return f"{scene_id}/{episode_id}" if scene_id else episode_id


# An episode's expected actions (its worker's CPU time goes with them: 25-30 ms an action on the 2-core machine),
# fitted by least squares on the subtasks of 14 procedural episodes of the default agent (`python
# benchmarks/bench_episode_cost.py --seed 5000 1000 --episodes 8 6`; docs/results.md): 6.6 actions per metre of a
# subtask's geodesic distance, 14.8 per subtask (turns, looks, STOP), 39 more for the first (the agent explores a
# home it has not seen).
ACTIONS_PER_M = 6.6
ACTIONS_PER_SUBTASK = 14.8
FIRST_SUBTASK_ACTIONS = 39.0
TYPICAL_SUBTASK_M = 4.0  # a subtask's distance where the episode does not give it (mean of the same episodes: 3.9 m)


def estimated_actions(episode: GoatEpisode) -> float:
    """How many actions the agent will likely take in ``episode``, from the geodesic distance of each subtask
    (``info.subtask_geodesic_distances_m`` of procedural episodes; ``info.geodesic_distance``, the first one's, of
    GOAT-Bench's and older files, with :data:`TYPICAL_SUBTASK_M` for the others)."""
    stored = episode.info.get(SUBTASK_DISTANCES_FIELD)
    distances: list[Optional[float]]
    if isinstance(stored, (list, tuple)) and len(stored) == len(episode.tasks):
        distances = list(stored)
    else:
        distances = [episode.info.get("geodesic_distance")] + [None] * (len(episode.tasks) - 1)
    metres = sum(float(d) if isinstance(d, (int, float)) and math.isfinite(d) else TYPICAL_SUBTASK_M
                 for d in distances[: len(episode.tasks)])
    return ACTIONS_PER_M * metres + ACTIONS_PER_SUBTASK * len(episode.tasks) + (
        FIRST_SUBTASK_ACTIONS if episode.tasks else 0.0)


def episode_unit(index: int, episode: GoatEpisode) -> WorkUnit:
    """The unit of the episode at ``index`` of a run's plan; its cost (workers take the costliest first) is its
    :func:`estimated_actions`."""
    return WorkUnit(index, episode_key(episode.scene_id, episode.episode_id), episode,
                    cost=estimated_actions(episode))


def episode_units(episodes: Sequence[GoatEpisode]) -> list[WorkUnit]:
    """The plan of a run: one unit per episode, in order (:func:`episode_unit`)."""
    return [episode_unit(i, e) for i, e in enumerate(episodes)]


def longest_generated(generated: Mapping[int, GoatEpisode], started: AbstractSet[str]) -> Optional[WorkUnit]:
    """While the workers of a run generate its last episodes (``WorkerPool.map``'s ``early``): the unit of the
    episode generated so far that will likely take longest and that no worker has started, for a worker that
    would otherwise wait for the others; None when there is none."""
    units = [episode_unit(i, e) for i, e in generated.items()]
    free = [u for u in units if u.key not in started]
    return max(free, key=lambda u: (u.cost, -u.index)) if free else None
