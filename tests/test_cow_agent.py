"""The CoW agent (goat_core.baselines.cow_agent) and ``goat-nav bench --agent cow``.

The box world of tests/test_agent.py: two rooms joined by a door, a table in the first, a chair in the second.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from goat_core.agent import Agent, AgentConfig
from goat_core.baselines.cow_agent import CowAgent, CowAgentConfig, GroundTruthLocalizer, RelevanceLocalizer
from goat_core.errors import ConfigError, InvalidGoalError
from goat_core.matching.cow import CowConfig, CowPerception, CowQuery
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_core.matching.selection import StackConfig
from goat_core.perception.factory import PerceptionConfig
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import DiscreteAction, Goal, GoalModality, Pose2D
from goat_nav.cli import main
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import generate_dataset
from tests.test_agent import BoxWorld, CategoryMatcher, distance_to_box, room, run, two_rooms

LABELS = ["chair", "table", "sofa"]
TABLE, CHAIR = two_rooms()[7], two_rooms()[6]
SPIN_TURNS = 11  # a full circle of 30 degree turns less the start view


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return SentenceEmbedder()


def cow(embedder: SentenceEmbedder) -> CowAgent:
    return CowAgent(CowAgentConfig(), GroundTruthLocalizer(GroundTruthPerception(LABELS, min_pixels=5), embedder))


def test_stops_facing_a_visible_goal_within_the_found_radius(embedder: SentenceEmbedder) -> None:
    agent = cow(embedder)
    # In the first room, 2.4 m from the table and facing it: no exploring needed.
    result = run(BoxWorld(two_rooms()), agent, "table", start=Pose2D(-0.5, -0.6, 0.0))
    world = result.world
    assert result.actions[-1] is DiscreteAction.STOP
    assert result.actions[:1 + SPIN_TURNS] == [DiscreteAction.LOOK_DOWN] + [DiscreteAction.TURN_LEFT] * SPIN_TURNS
    assert "explore" not in result.modes  # localized during the spin: straight there
    assert distance_to_box(world.pose, TABLE) <= CowAgentConfig().found_radius_m
    assert world.path_m < 2.4
    centre = np.array([(TABLE.lo[0] + TABLE.hi[0]) / 2, (TABLE.lo[1] + TABLE.hi[1]) / 2])
    bearing = math.atan2(centre[1] - world.pose.y_m, centre[0] - world.pose.x_m)
    assert abs(math.remainder(bearing - world.pose.yaw_rad, 2 * math.pi)) < math.radians(45)  # faces it
    stop = agent.last_stop
    assert stop is not None and not stop.gave_up and stop.category == "table"


class RedRelevance:
    """A relevance source that finds the box world's objects by their colour (objects are red, the rest grey)."""

    threshold = 0.5

    def set_query(self, query: CowQuery) -> None:
        self.query = query

    def relevance(self, rgb: np.ndarray) -> np.ndarray:
        return (rgb[..., 0] > 150).astype(np.float32)


def test_cows_own_localizer_finds_the_goal_from_the_relevance_map() -> None:
    """With CoW's open-vocabulary localizer (a relevance map reduced to its centre pixel) instead of ground truth."""
    world = BoxWorld(room(-1, 4, -2, 2) + [TABLE])  # one red object
    agent = CowAgent(CowAgentConfig(), RelevanceLocalizer(CowPerception(RedRelevance(), CowConfig())))
    result = run(world, agent, "table", start=Pose2D(-0.5, -0.6, 0.0))
    assert result.actions[-1] is DiscreteAction.STOP
    assert distance_to_box(world.pose, TABLE) <= CowAgentConfig().found_radius_m
    assert agent.looking_for == "table"
    assert {i.category for i in agent.memory.instances.values()} == {"table"}


def test_explores_to_a_goal_in_the_next_room(embedder: SentenceEmbedder) -> None:
    result = run(BoxWorld(two_rooms()), cow(embedder), "chair")
    assert result.actions[-1] is DiscreteAction.STOP
    assert distance_to_box(result.world.pose, CHAIR) <= CowAgentConfig().found_radius_m
    assert {"scan", "explore", "goto", "stop"} <= set(result.modes)


def test_keeps_no_memory_across_subtasks(embedder: SentenceEmbedder) -> None:
    """A second subtask for an object seen in the first explores again; the GOAT agent goes straight there."""
    world = BoxWorld(two_rooms())
    agents = {"cow": cow(embedder),
              "goat": Agent(AgentConfig(rescan_when_sure=False), GroundTruthPerception(LABELS, min_pixels=5),
                            CategoryMatcher())}
    for name, agent in agents.items():
        first = run(world, agent, "chair")  # the table is in view during the first subtask's spin
        assert first.actions[-1] is DiscreteAction.STOP
        # GOAT remembers every category it saw; CoW localizes the goal's only, and only for its subtask
        categories = {i.category for i in agent.memory.instances.values()}
        assert categories == ({"chair"} if name == "cow" else {"chair", "table"})
        obs = world.render(False)
        agent.start_subtask(Goal(GoalModality.CATEGORY, category="table"))
        if name == "cow":
            assert not agent.memory.instances and not agent.occupancy.explored.any()
        second = run(world, agent, "table", obs=obs)
        assert second.actions[-1] is DiscreteAction.STOP
        assert distance_to_box(world.pose, TABLE) <= 1.0
        spins = second.actions[:SPIN_TURNS] == [DiscreteAction.TURN_LEFT] * SPIN_TURNS
        assert spins is (name == "cow")


@pytest.mark.parametrize(("goal", "looks_for"), [
    (Goal(GoalModality.CATEGORY, category="chairs"), "chair"),
    (Goal(GoalModality.DESCRIPTION, text="the chair next to the table in the living room"), "chair"),
    (Goal(GoalModality.DESCRIPTION, text="a big wooden table near the chair"), "table"),
    (Goal(GoalModality.IMAGE, image=np.zeros((64, 64, 3), np.uint8), category="sofa"), "sofa"),
])
def test_each_modality_names_the_category_the_localizer_looks_for(embedder: SentenceEmbedder, goal: Goal,
                                                                  looks_for: str) -> None:
    agent = cow(embedder)
    agent.start_subtask(goal)
    assert agent.looking_for == looks_for


def test_an_image_goal_without_its_category_is_refused(embedder: SentenceEmbedder) -> None:
    with pytest.raises(InvalidGoalError, match="carries none"):
        cow(embedder).start_subtask(Goal(GoalModality.IMAGE, image=np.zeros((64, 64, 3), np.uint8)))


def test_gives_up_after_the_confused_restarts_when_the_goal_is_absent(embedder: SentenceEmbedder) -> None:
    result = run(BoxWorld(two_rooms()), cow(embedder), "sofa", max_steps=1500)
    assert result.actions[-1] is DiscreteAction.STOP
    assert "recover" in result.modes  # the map was forgotten and the spin made again once
    stop = result.agent.last_stop
    assert stop is not None and stop.gave_up


def test_same_observations_give_the_same_actions(embedder: SentenceEmbedder) -> None:
    first = run(BoxWorld(two_rooms()), cow(embedder), "chair")
    second = run(BoxWorld(two_rooms()), cow(embedder), "chair")
    assert first.actions == second.actions


def test_act_needs_a_goal(embedder: SentenceEmbedder) -> None:
    with pytest.raises(InvalidGoalError, match="before start_subtask"):
        cow(embedder).act(BoxWorld(two_rooms()).reset(Pose2D(0.0, 0.0, 0.0)))


@pytest.mark.parametrize("kwargs", [{"found_radius_m": 0.0}, {"goal_margin_m": 1.0}, {"confused_restarts": -1},
                                    {"stuck_collisions": 0}, {"heading_tolerance_turns": 1.0}])
def test_bad_config_names_the_value(kwargs: dict[str, float]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(ConfigError, match=name):
        CowAgentConfig(**kwargs)  # type: ignore[arg-type]


def test_the_runner_refuses_an_unknown_agent_or_a_stack_cow_cannot_run() -> None:
    with pytest.raises(ConfigError, match="agent must be one of .* got 'cew'"):
        EpisodeRunner(RunConfig(), AgentConfig(), MatcherConfig(), agent="cew")
    owl = StackConfig(perception=PerceptionConfig(backend="owlvit", model_dir="/nonexistent"))
    with pytest.raises(ConfigError, match="ground-truth perception"):
        EpisodeRunner(RunConfig(), AgentConfig(), MatcherConfig(), stack=owl, agent="cow")


@pytest.mark.parametrize(("argv", "message"), [
    (["--agent", "cew"], "invalid choice: 'cew'"),
    (["--agent", "cow", "--suite", "langmap"], "--agent cow runs the in-process GOAT suite"),
    (["--agent", "cow", "--ros"], "--agent cow runs the in-process GOAT suite"),
    (["--agent", "cow", "--image-without-category"], "needs the image goal's category"),
])
def test_bad_agent_flags_give_a_clear_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                            tmp_path) -> None:
    try:
        code = main(["bench", "--episodes", "1", "--out", str(tmp_path / "r.json"), *argv])
    except SystemExit as exc:  # argparse's own refusal
        code = int(exc.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.slow
def test_cow_runs_a_goat_episode_deterministically_and_records_its_name(embedder: SentenceEmbedder,
                                                                        tmp_path) -> None:
    full = generate_dataset(1, seed=3).episodes[0]
    episode = dataclasses.replace(full, tasks=full.tasks[:3])  # every modality is in the first three
    assert {t.modality for t in episode.tasks} == set(GoalModality)

    def actions() -> list[tuple[DiscreteAction, ...]]:
        with EpisodeRunner(RunConfig(max_actions_per_subtask=60), AgentConfig(), MatcherConfig(), embedder=embedder,
                           agent="cow") as runner:
            assert isinstance(runner.agent, CowAgent)
            records, _ = runner.run_episode(episode)
        assert all(r.error is None for r in records)
        return [r.actions or () for r in records]

    assert actions() == actions()
    out = tmp_path / "cow.json"
    assert main(["bench", "--agent", "cow", "--homes", "small", "--episodes", "1", "--seed", "3", "--max-actions",
                 "15", "--quiet", "--out", str(out)]) == 0
    meta = json.loads(out.read_text())["meta"]
    assert meta["agent"] == "cow"
    assert "found_radius_m" in meta["agent_config"]
