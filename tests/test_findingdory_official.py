"""FindingDory under its official protocol (issue 28): the oracle walks without sliding, places from a receptacle's
view point so its place frames pass the 0.1 m check, and a default run says ``protocol: findingdory v1``."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

from goat_core.errors import ConfigError
from goat_nav.cli import build_parser
from goat_suites.common.protocol_meta import NOT_YET_OFFICIAL
from goat_suites.common.protocols import FINDINGDORY, FINDINGDORY_RECEPTACLE
from goat_suites.findingdory import run as suite
from goat_suites.findingdory.generator import (
    Experience,
    FindingDoryGenConfig,
    JudgeConfig,
    TaskJudge,
    collect_experience,
    findingdory_sim_config,
)
from goat_suites.findingdory.oracle import _Oracle, _Recorder
from goat_suites.findingdory.protocol import findingdory_protocol_meta
from goat_suites.findingdory.tasks import Subgoal
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim

HOME_SEED = int(np.random.default_rng(1000).integers(0, 2**31 - 1))  # the home of FindingDory episode 1000-0


def _args(*flags: str) -> suite.FindingDoryRunConfig:
    return suite._run_config(build_parser().parse_args(["bench", "--suite", "findingdory", *flags]))


def test_a_default_findingdory_run_follows_the_official_protocol() -> None:
    assert NOT_YET_OFFICIAL["findingdory"] == ()
    config = _args()
    assert (config.judge.success_distance_m, config.judge.receptacle_distance_m) == (
        FINDINGDORY.success.distance_m, FINDINGDORY_RECEPTACLE.distance_m)
    assert config.budget() == FINDINGDORY.budget
    meta = findingdory_protocol_meta(config, findingdory_sim_config())
    assert meta["protocol"] == "findingdory v1" and meta["protocol_deviations"] == []
    assert meta["sliding"] is False and meta["budget"] == {"max_actions_per_episode": 5000,
                                                            "max_actions_per_goal": None}


@pytest.mark.parametrize(("flags", "words"), [
    (("--max-actions", "500"), "budget 500 actions/subtask (official 5000 actions/episode"),
    (("--success-distance-m", "1.0"), "success distance 1 m for objects (official 2 m)"),
    (("--success-metric", "euclidean_object"), "success metric euclidean_object"),
])
def test_a_findingdory_run_that_deviates_says_how(flags: tuple[str, ...], words: str) -> None:
    meta = findingdory_protocol_meta(_args(*flags), findingdory_sim_config())
    assert meta["protocol"].startswith("custom (findingdory v1; ") and words in meta["protocol"]


def test_the_stretch_embodiment_is_refused_rather_than_ignored() -> None:
    args = build_parser().parse_args(["bench", "--suite", "findingdory", "--embodiment", "stretch"])
    with pytest.raises(ConfigError, match="--embodiment stretch: the FindingDory suite runs FindingDory's own"):
        suite._check_args(args)


def test_the_old_protocol_is_named_in_full() -> None:
    """The settings FindingDory ran under before (1.0 m for both, GOAT's Stretch camera, sliding): custom."""
    from sim_bridge.embedded.sim import SimConfig

    old = suite.FindingDoryRunConfig(max_actions_per_episode=None, max_actions_per_goal=500,
                                     judge=JudgeConfig(success_distance_m=1.0, receptacle_distance_m=1.0))
    sim_config = SimConfig(action_sizes=findingdory_sim_config().action_sizes, allow_sliding=True)
    deviations = findingdory_protocol_meta(old, sim_config)["protocol_deviations"]
    assert deviations == ["budget 500 actions/subtask (official 5000 actions/episode, the experience's actions "
                          "included)",
                          "success distance 1 m for objects (official 2 m)",
                          "success distance 1 m for receptacles (official 0.1 m)",
                          "camera 360x640 HFOV 42 deg (official 480x640 HFOV 43 deg)",
                          "sliding on (official off)"]


def test_the_episode_budget_counts_the_experience() -> None:
    config = suite.FindingDoryRunConfig()
    assert config.task_actions(1200) == 3800 and config.task_actions(6000) == 0
    assert suite.FindingDoryRunConfig(max_actions_per_episode=None, max_actions_per_goal=50).task_actions(10) is None
    with pytest.raises(ConfigError, match="max_actions_per_goal must be >= 1 or None, got 0"):
        suite.FindingDoryRunConfig(max_actions_per_goal=0)


@pytest.mark.slow
def test_the_oracle_walks_through_the_home_without_sliding_and_without_hitting_anything() -> None:
    """Without sliding, a forward step into a wall stops there; the walker used to keep facing the same waypoint
    and hit the same corner until its walk ran out, and the experience outgrew its day (issue 28)."""
    config = FindingDoryGenConfig()
    with EmbeddedSim(generate_home(HOME_SEED, HomeConfig()), findingdory_sim_config()) as sim:
        assert sim.config.allow_sliding is False
        grid = sim.navgrid
        rng = np.random.default_rng(7)
        start = grid.sample_navigable(rng)
        sim.reset(start, 0.0)
        bumps: list[bool] = []
        rec = _Recorder(sim, 8 * 3600.0, config, on_frame=lambda obs: bumps.append(obs.collided))
        oracle = _Oracle(sim, rec, config)
        walks = 0
        for _ in range(3):  # three far goals, each a geodesic walk through doorways
            here = sim.base_pose_world.xy()
            field_m = grid.distance_field(here[None])
            far = np.argwhere(np.isfinite(field_m) & (field_m > 0.6 * np.nanmax(np.where(np.isfinite(field_m),
                                                                                         field_m, np.nan))))
            row, col = far[int(rng.integers(len(far)))]
            goal = grid.cell_to_world(int(row), int(col))
            geodesic_m = float(field_m[row, col])
            before = rec.actions
            assert oracle.walk(goal), f"walk {walks} to {goal} ({geodesic_m:.1f} m) did not arrive"
            walks += 1
            # 0.25 m a step, with turns of 10 deg: well under three actions per step of path
            assert rec.actions - before < 3 * geodesic_m / 0.25 + 40
        assert not any(bumps)


@pytest.fixture(scope="module")
def experience() -> Iterator[tuple[EmbeddedSim, Experience]]:
    with EmbeddedSim(generate_home(HOME_SEED, HomeConfig()), findingdory_sim_config()) as sim:
        yield sim, collect_experience(sim, np.random.default_rng(HOME_SEED))


@pytest.mark.slow
def test_the_oracle_places_from_a_view_point_of_the_receptacle(experience: tuple[EmbeddedSim, Experience]) -> None:
    """FindingDory's oracle stands on a receptacle view point to place; its place frames pass the 0.1 m check."""
    sim, exp = experience
    judge = TaskJudge(sim, exp.start_world)
    assert judge.config.receptacle_distance_m == 0.1
    assert exp.moves and 0 < exp.num_actions <= FindingDoryGenConfig().max_experience_actions
    for move in exp.moves:
        frame = exp.log.frames[move.place_frame]
        where = judge.world_pose(frame.pose)
        assert judge.distance_m(move.dest_id, where.xy()) == pytest.approx(0.0, abs=1e-9)
        verdict = judge.check_frame(Subgoal("object", frozenset({move.dest_id})), frame)
        assert verdict.success and verdict.target_id == move.dest_id
