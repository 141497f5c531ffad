"""Procedural GOAT episodes: the GOAT-Bench schema, the checks every goal passes, determinism."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from goat_core.errors import SceneGenerationError
from goat_core.frames import habitat_quaternion_to_tilt, habitat_quaternion_to_yaw, habitat_to_ros_position
from goat_core.types import GoalModality
from goat_suites.common.episode_files import load_goat_dataset, save_goat_dataset
from goat_suites.common.episodes import goals_for_task, image_goal_for_task
from goat_suites.common.goal_images import ImageGoalRenderer
from goat_suites.goat.generator import (
    EpisodeGenConfig,
    camera_quaternion_habitat,
    describe_object,
    generate_dataset,
    parse_scene_id,
    scene_id_for,
    task_goal_text,
    usable_synonyms,
)
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim


@pytest.fixture(scope="module")
def dataset():
    return generate_dataset(3, seed=42)


def test_generation_is_deterministic(dataset) -> None:
    again = generate_dataset(3, seed=42)
    assert [e.tasks for e in again.episodes] == [e.tasks for e in dataset.episodes]
    assert [e.start_position for e in again.episodes] == [e.start_position for e in dataset.episodes]
    other = generate_dataset(3, seed=43)
    assert [e.scene_id for e in other.episodes] != [e.scene_id for e in dataset.episodes]


def test_episode_shape_follows_goat_bench(dataset) -> None:
    cfg = EpisodeGenConfig()
    for episode in dataset.episodes:
        assert cfg.min_subtasks <= len(episode.tasks) <= cfg.max_subtasks
        assert {t.modality for t in episode.tasks} <= set(GoalModality)
        for task in episode.tasks:
            goals = goals_for_task(episode, task)
            assert goals and all(g.view_points for g in goals)
            if task.modality is not GoalModality.CATEGORY:
                assert len(goals) == 1 and goals[0].object_id == task.object_id


def test_modalities_are_all_used() -> None:
    episodes = generate_dataset(6, seed=7).episodes
    used = {t.modality for e in episodes for t in e.tasks}
    assert used == set(GoalModality)


def test_saved_file_round_trips_through_the_goat_bench_loader(dataset, tmp_path: Path) -> None:
    path = tmp_path / "episodes.json.gz"
    save_goat_dataset(dataset, path)
    loaded = load_goat_dataset(path)
    assert [e.tasks for e in loaded.episodes] == [e.tasks for e in dataset.episodes]
    for a, b in zip(loaded.episodes, dataset.episodes, strict=True):
        for i, task in enumerate(a.tasks):
            if task.modality is not GoalModality.IMAGE:
                assert task_goal_text(a, i, task) == task_goal_text(b, i, task)


def test_start_is_within_goat_bench_distance_of_the_first_goal(dataset) -> None:
    cfg = EpisodeGenConfig()
    for episode in dataset.episodes:
        assert cfg.min_start_geodesic_m <= episode.info["geodesic_distance"] <= cfg.max_start_geodesic_m
        seed, home_config = parse_scene_id(episode.scene_id)
        with EmbeddedSim(generate_home(seed, home_config)) as sim:
            start = habitat_to_ros_position(episode.start_position)
            assert sim.navgrid.is_navigable(start[:2])
            goals = goals_for_task(episode, episode.tasks[0])
            targets = np.array([habitat_to_ros_position(v.position)[:2] for g in goals for v in g.view_points])
            field = sim.navgrid.distance_field(targets)
            row, col = sim.navgrid.world_to_cell(start[:2])
            assert field[row, col] == pytest.approx(episode.info["geodesic_distance"], abs=0.01)


def test_descriptions_single_out_one_instance() -> None:
    home = generate_home(5)
    described = 0
    for obj in home.objects:
        text = describe_object(obj, home)
        if text is None:
            continue
        described += 1
        assert obj.category in text and obj.colour in text
        twins = [o for o in home.objects if o.category == obj.category and o.object_id != obj.object_id
                 and describe_object(o, home) == text]
        assert not twins, f"{text!r} fits {obj.object_id} and {[t.object_id for t in twins]}"
    assert described >= len(home.objects) // 2


def test_image_goals_show_their_object(dataset) -> None:
    checked = 0
    for episode in dataset.episodes:
        seed, home_config = parse_scene_id(episode.scene_id)
        with EmbeddedSim(generate_home(seed, home_config)) as sim:
            renderer = ImageGoalRenderer(sim)
            for task in episode.tasks:
                if task.modality is not GoalModality.IMAGE:
                    continue
                spec = image_goal_for_task(episode, task)
                image = renderer.render(episode, task)
                assert image.shape == (sim.config.height_px, sim.config.width_px, 3)
                goal = goals_for_task(episode, task)[0]
                view = sim.render_view(habitat_to_ros_position(spec.position)[:2], habitat_quaternion_to_yaw(
                    spec.rotation), habitat_quaternion_to_tilt(spec.rotation))
                coverage = float(np.mean(view.segmentation == goal.attributes["instance_id"]))
                assert coverage >= EpisodeGenConfig().image_min_coverage
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("yaw", [0.0, 1.0, -2.5, math.pi / 2])
@pytest.mark.parametrize("tilt", [0.0, 0.4, -0.5])
def test_camera_quaternion_round_trips_yaw_and_tilt(yaw: float, tilt: float) -> None:
    q = camera_quaternion_habitat(yaw, tilt)
    assert habitat_quaternion_to_yaw(q) == pytest.approx(yaw, abs=1e-9)
    assert habitat_quaternion_to_tilt(q) == pytest.approx(tilt, abs=1e-9)


def test_scene_ids_round_trip_and_reject_foreign_scenes() -> None:
    config = HomeConfig(num_rooms=4)
    assert parse_scene_id(scene_id_for(123, config)) == (123, config)
    with pytest.raises(SceneGenerationError, match="not an embedded-simulator scene"):
        parse_scene_id("hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb")


def test_usable_synonyms_exclude_words_of_other_categories() -> None:
    assert "table" not in usable_synonyms("dining table")
    assert "sofa" in usable_synonyms("couch")


@pytest.mark.parametrize("kwargs", [dict(min_subtasks=6, max_subtasks=5), dict(image_min_coverage=0.0),
                                    dict(min_start_geodesic_m=5.0, max_start_geodesic_m=2.0)])
def test_bad_generator_settings_are_named(kwargs) -> None:
    with pytest.raises(SceneGenerationError, match=next(iter(kwargs))):
        EpisodeGenConfig(**kwargs)


def test_zero_episodes_is_an_error() -> None:
    with pytest.raises(SceneGenerationError, match="num_episodes"):
        generate_dataset(0, seed=1)
