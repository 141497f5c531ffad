"""How long an episode will take, estimated before it runs: the workers of a parallel run take the longest first,
so that no long episode starts last and leaves the other workers idle (issue 31, the 8-episode speed-up)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

from goat_core.types import GoalModality
from goat_suites.common.episode_files import load_goat_dataset, save_goat_dataset
from goat_suites.common.episode_worker import (
    ACTIONS_PER_M,
    ACTIONS_PER_SUBTASK,
    FIRST_SUBTASK_ACTIONS,
    TYPICAL_SUBTASK_M,
    episode_units,
    estimated_actions,
)
from goat_suites.common.episodes import SUBTASK_DISTANCES_FIELD, GoatEpisode, GoatTask
from goat_suites.common.home_stats import subtask_geodesics_m
from goat_suites.common.work_units import longest_first_makespan, rank_correlation
from goat_suites.goat.generator import generate_dataset, parse_scene_id
from sim_bridge.embedded.home import generate_home
from sim_bridge.embedded.navgrid import NavGrid


def _episode(name: str, distances_m: Optional[list[float]], subtasks: int, first_m: float = 3.0) -> GoatEpisode:
    """An episode of ``subtasks`` category tasks; ``distances_m`` None: a file that stores the first one only."""
    info: dict[str, Any] = {"geodesic_distance": first_m}
    if distances_m is not None:
        info[SUBTASK_DISTANCES_FIELD] = distances_m
    tasks = tuple(GoatTask(category=f"thing{i}", modality=GoalModality.CATEGORY) for i in range(subtasks))
    return GoatEpisode(episode_id=name, scene_id="", start_position=(0.0, 0.0, 0.0),
                       start_rotation=(0.0, 0.0, 0.0, 1.0), tasks=tasks, goals={}, info=info)


@pytest.fixture(scope="module")
def dataset():
    return generate_dataset(2, seed=42)


def test_generated_episodes_store_every_subtask_distance(dataset, tmp_path: Path) -> None:
    for episode in dataset.episodes:
        stored = episode.info[SUBTASK_DISTANCES_FIELD]
        assert len(stored) == len(episode.tasks)
        assert stored[0] == pytest.approx(episode.info["geodesic_distance"], abs=0.01)  # the first as before
        seed, home_config = parse_scene_id(episode.scene_id)
        again = subtask_geodesics_m(episode, NavGrid.from_home(generate_home(seed, home_config)))
        assert stored == pytest.approx(again, abs=1e-3)
        assert all(math.isfinite(d) and d >= 0.0 for d in stored)
        assert sum(stored) > stored[0]  # the others are there too
    path = tmp_path / "episodes.json.gz"
    save_goat_dataset(dataset, path)
    loaded = load_goat_dataset(path)
    assert [e.info[SUBTASK_DISTANCES_FIELD] for e in loaded.episodes] == \
        [list(e.info[SUBTASK_DISTANCES_FIELD]) for e in dataset.episodes]
    assert [u.cost for u in episode_units(loaded.episodes)] == [u.cost for u in episode_units(dataset.episodes)]


def test_a_long_episode_with_few_subtasks_goes_before_a_short_one_with_many() -> None:
    # Counting subtasks (the estimate before) put the 9 short hops first and started the 45 m episode second.
    far = _episode("far", [8.0, 7.0, 9.0, 6.0, 8.0, 7.0], subtasks=6)
    near = _episode("near", [1.0] * 9, subtasks=9)
    units = episode_units([near, far])
    assert [u.key for u in sorted(units, key=lambda u: -u.cost)] == ["far", "near"]
    # Metres walked and subtasks both count: one subtask more of the same length costs more.
    assert estimated_actions(_episode("far+1", [8.0, 7.0, 9.0, 6.0, 8.0, 7.0, 7.0], subtasks=7)) == pytest.approx(
        estimated_actions(far) + ACTIONS_PER_M * 7.0 + ACTIONS_PER_SUBTASK)
    assert estimated_actions(_episode("one", [2.0], subtasks=1)) == pytest.approx(
        ACTIONS_PER_M * 2.0 + ACTIONS_PER_SUBTASK + FIRST_SUBTASK_ACTIONS)


def test_episodes_of_older_files_are_estimated_from_their_first_distance_and_subtasks() -> None:
    # GOAT-Bench's files (and ours before) store the first subtask's distance only: the others count as typical.
    five, eight = _episode("five", None, subtasks=5, first_m=2.0), _episode("eight", None, subtasks=8, first_m=2.0)
    assert estimated_actions(eight) > estimated_actions(five)
    assert estimated_actions(_episode("far", None, subtasks=5, first_m=9.0)) > estimated_actions(five)
    assert estimated_actions(five) == pytest.approx(estimated_actions(
        _episode("five", [2.0] + [TYPICAL_SUBTASK_M] * 4, subtasks=5)))
    odd = _episode("odd", [2.0, float("inf"), None], subtasks=3)  # type: ignore[list-item]  # as a file may hold
    assert estimated_actions(odd) == pytest.approx(estimated_actions(
        _episode("odd", [2.0, TYPICAL_SUBTASK_M, TYPICAL_SUBTASK_M], subtasks=3)))
    assert estimated_actions(_episode("none", None, subtasks=0)) == 0.0


def test_rank_correlation() -> None:
    assert rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert rank_correlation([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    x, y = [1.0, 2.0, 2.0, 5.0, 7.0, 3.0], [3.0, 1.0, 4.0, 4.0, 9.0, 2.0]
    # Spearman's rho is Pearson's on the ranks; tied values share their mean rank, worked out by hand here:
    rx, ry = np.array([0, 1.5, 1.5, 4, 5, 3]), np.array([2, 0, 3.5, 3.5, 5, 1])
    assert rank_correlation(x, y) == pytest.approx(float(np.corrcoef(rx, ry)[0, 1]))
    assert math.isnan(rank_correlation([1.0], [2.0]))
    assert math.isnan(rank_correlation([1.0, 1.0], [2.0, 3.0]))
    with pytest.raises(ValueError, match="one length, got 2 and 1"):
        rank_correlation([1.0, 2.0], [1.0])


def test_longest_first_makespan_follows_the_estimates() -> None:
    costs = [5.0, 3.0, 3.0, 2.0, 2.0, 2.0]  # an even split is 8.5
    assert longest_first_makespan(costs, 2) == pytest.approx(9.0)  # 5 2 2 | 3 3 2
    # Estimates that rank the 5 last: it starts when both workers have 5 already.
    assert longest_first_makespan(costs, 2, order=[0.0, 3.0, 3.0, 2.0, 2.0, 2.0]) == pytest.approx(10.0)
    assert longest_first_makespan(costs, 1) == pytest.approx(sum(costs))
    with pytest.raises(ValueError, match="at least one worker, got 0"):
        longest_first_makespan(costs, 0)
    with pytest.raises(ValueError, match="6 costs but 2 estimates"):
        longest_first_makespan(costs, 2, order=[1.0, 2.0])


def test_the_goat_workers_factory_loads_the_lexicon_its_workers_would_each_read() -> None:
    """Before the fork (goat_suites.common.work_units.prepare_workers): the WordNet lexicon, which every worker's
    matcher reads in its first episode (about 0.45 CPU-s) and the driver for the results' meta."""
    from goat_core.agent import AgentConfig
    from goat_core.matching.lexicon import default_lexicon, load_wordnet
    from goat_suites.common.episode_worker import GoatWorkerFactory
    from goat_suites.common.runner import RunConfig

    load_wordnet.cache_clear()
    GoatWorkerFactory(RunConfig(), AgentConfig()).prepare()
    loaded = load_wordnet.cache_info().currsize
    if default_lexicon() is None:
        pytest.skip("WordNet is not installed here (Debian package wordnet-base): nothing to load")
    assert loaded == 1
