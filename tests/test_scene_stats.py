"""meta.scenes from the statistics a procedural episode carries: the same entries, no home built by the driver."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from goat_suites.common.episode_files import load_goat_dataset, save_goat_dataset
from goat_suites.common.episodes import SCENE_STATS_FIELD, GoatDataset
from goat_suites.common.home_stats import home_stats, scene_meta, scene_stats_info, scenes_meta
from goat_suites.common.parts import procedural_home
from goat_suites.goat.generator import episode_config_for, generate_dataset, generate_numbered_episode, home_seeds
from sim_bridge.embedded.home import Home, HomeConfig, generate_home, home_config_for
from sim_bridge.embedded.navgrid import NavGrid


def _no_build(scene_id: str) -> object:
    raise AssertionError(f"the driver built the home of {scene_id}")


@pytest.fixture(scope="module")
def small_dataset() -> GoatDataset:
    return generate_dataset(2, 1000, HomeConfig(), episode_config_for(HomeConfig()))


def test_a_two_episode_runs_meta_scenes_is_the_same_and_builds_no_home(small_dataset: GoatDataset) -> None:
    ids = [e.scene_id for e in small_dataset.episodes]
    built = scenes_meta(ids)  # every home built again, as the driver did
    assert len(built) == 2 and all(e["num_objects"] > 0 for e in built)
    assert scenes_meta(ids, _no_build, small_dataset.episodes) == built


def test_a_large_furnished_episode_carries_its_homes_entry() -> None:
    config = home_config_for("large-furnished")
    episode = generate_numbered_episode(1000, 0, home_seeds(1, 1000)[0], config, episode_config_for(config))
    assert scenes_meta([episode.scene_id], _no_build, [episode]) == scenes_meta([episode.scene_id])


def test_episodes_without_the_field_build_their_homes(small_dataset: GoatDataset, tmp_path: Path) -> None:
    first, second = small_dataset.episodes
    bare = dataclasses.replace(second, info={k: v for k, v in second.info.items() if k != SCENE_STATS_FIELD})
    built: list[str] = []

    def counted(scene_id: str) -> Home:
        built.append(scene_id)
        return procedural_home(scene_id)

    ids = [first.scene_id, second.scene_id]
    assert scenes_meta(ids, counted, [first, bare]) == scenes_meta(ids)
    assert built == [second.scene_id]
    # An episodes file keeps the field: a run of the saved episodes builds no home for meta.scenes either.
    path = tmp_path / "episodes.json.gz"
    save_goat_dataset(small_dataset, path)
    assert scenes_meta(ids, _no_build, load_goat_dataset(path).episodes) == scenes_meta(ids)


def test_a_simulator_grid_of_other_settings_is_not_taken_for_the_homes() -> None:
    home = generate_home(4, HomeConfig())
    expected = scene_meta(home_stats(home))
    del expected["scene_id"]
    assert scene_stats_info(home, NavGrid.from_home(home)) == expected
    coarse = NavGrid.from_home(home, 0.2)
    assert home_stats(home, coarse).navigable_area_m2 != expected["navigable_area_m2"]  # would differ if taken
    assert scene_stats_info(home, coarse) == expected
