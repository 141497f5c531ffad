"""Large homes (--homes large): real-scale floor plans, dense furniture, every object reachable; small homes
unchanged."""

from __future__ import annotations

import argparse
import hashlib

import numpy as np
import pytest

from goat_core.errors import ConfigError, SceneGenerationError
from goat_suites.common.run_args import home_config_from_args
from goat_suites.goat.generator import parse_scene_id, scene_id_for
from sim_bridge.embedded import floorplan
from sim_bridge.embedded.home import (
    HOME_KINDS,
    Home,
    HomeConfig,
    generate_home,
    home_config_for,
    large_home_config,
)
from sim_bridge.embedded.navgrid import NavGrid

PLAN_SEEDS = range(60)
HOME_SEEDS = (3, 8)


@pytest.fixture(scope="module")
def plans() -> list[floorplan.FloorPlan]:
    return [floorplan.generate_floor_plan(np.random.default_rng(s)) for s in PLAN_SEEDS]


@pytest.fixture(scope="module")
def homes() -> list[tuple[Home, NavGrid]]:
    built = [generate_home(s, large_home_config()) for s in HOME_SEEDS]
    return [(h, NavGrid.from_home(h)) for h in built]


def _room_area(plan: floorplan.FloorPlan, room: int) -> float:
    return sum(floorplan.cell_area_m2(c) for c in plan.cells_of(room))


def _is_rectangle(cells: list[floorplan.Cell]) -> bool:
    x0, y0 = min(c.x0 for c in cells), min(c.y0 for c in cells)
    x1, y1 = max(c.x1 for c in cells), max(c.y1 for c in cells)
    return abs((x1 - x0) * (y1 - y0) - sum(floorplan.cell_area_m2(c) for c in cells)) < 1e-6


def test_floor_plans_have_as_many_rooms_as_real_homes(plans: list[floorplan.FloorPlan]) -> None:
    counts = [len(p.rooms) for p in plans]
    assert min(counts) >= 8 and max(counts) <= 16
    assert np.mean(counts) >= 10.0


def test_room_sizes_follow_their_type(plans: list[floorplan.FloorPlan]) -> None:
    by_type: dict[str, list[float]] = {}
    for plan in plans:
        for i, room in enumerate(plan.rooms):
            by_type.setdefault(room.room_type, []).append(_room_area(plan, i))
    assert {"living room", "kitchen", "dining room", "hallway", "bedroom", "bathroom"} <= set(by_type)
    assert 20.0 <= np.median(by_type["living room"]) <= 45.0
    assert 9.0 <= np.median(by_type["bedroom"]) <= 16.0
    assert 4.0 <= np.median(by_type["bathroom"]) <= 9.0  # a full-depth bathroom 1.75 m wide is 7-9 m²
    assert max(by_type["closet"]) <= 3.0
    assert min(by_type["bathroom"]) < min(by_type["bedroom"]) < np.median(by_type["living room"])


def test_open_plan_l_shapes_dead_ends_and_off_centre_doors(plans: list[floorplan.FloorPlan]) -> None:
    l_shaped = off_centre = doors = 0
    for plan in plans:
        types = [r.room_type for r in plan.rooms]
        kitchen, living = types.index("kitchen"), types.index("living room")
        assert plan.is_open(kitchen, living) and plan.is_open(kitchen, types.index("dining room"))
        assert not plan.is_open(kitchen, types.index("bedroom"))
        l_shaped += any(not _is_rectangle(plan.cells_of(i)) for i in range(len(plan.rooms)))
        # Rooms with one door are dead ends: every private room, so a home has several.
        degree = np.bincount(np.asarray(plan.door_pairs).ravel(), minlength=len(plan.rooms))
        assert sum(degree[i] == 1 and not plan.rooms[i].open_group for i in range(len(plan.rooms))) >= 5
        rng = np.random.default_rng(0)
        for a, b in plan.door_pairs:
            seg, pos = floorplan.door_position(rng, plan, a, b, 1.0, 0.35)
            doors += 1
            off_centre += abs(pos - (seg.lo + seg.hi) / 2.0) > 0.25
    assert l_shaped >= 0.8 * len(plans)
    assert off_centre >= 0.3 * doors  # narrow rooms (bathrooms) leave little room to move a door


def test_walls_stand_between_groups_not_inside_the_open_plan(plans: list[floorplan.FloorPlan]) -> None:
    plan = plans[0]
    walls = floorplan.wall_segments(plan)
    types = [r.room_type for r in plan.rooms]
    kitchen, living = types.index("kitchen"), types.index("living room")
    for seg in floorplan.shared_segments(plan, kitchen, types.index("dining room")) + \
            floorplan.shared_segments(plan, living, types.index("hallway")):
        mid = (seg.lo + seg.hi) / 2.0
        assert not any(w.axis == seg.axis and abs(w.at - seg.at) < 1e-9 and w.lo < mid < w.hi for w in walls)
    bedroom = types.index("bedroom")
    hall_side = floorplan.shared_segments(plan, bedroom, types.index("hallway"))
    assert hall_side and all(any(w.axis == s.axis and abs(w.at - s.at) < 1e-9 and w.lo <= s.lo + 1e-9
                                 and s.hi <= w.hi + 1e-9 for w in walls) for s in hall_side)


def test_large_homes_are_big_dense_and_every_object_reachable(homes: list[tuple[Home, NavGrid]]) -> None:
    for home, grid in homes:
        area_m2 = float(grid.navigable.sum()) * grid.resolution_m ** 2
        assert 60.0 <= area_m2 <= 250.0, home.seed
        assert len(home.objects) / len(home.rooms) >= 10.0, home.seed
        categories = [o.category for o in home.objects]
        repeated = {c for c in set(categories) if categories.count(c) >= 2}
        assert len(repeated) >= 0.5 * len(set(categories)), home.seed
        assert sum(o.receptacle_id is None and o.category in ("storage box", "basket", "plant", "book")
                   for o in home.objects) >= 10, "floor clutter"
        for obj in home.objects:
            assert len(grid.view_points(obj)) > 0, (home.seed, obj.object_id, obj.category)


def test_large_home_rooms_hold_their_objects(homes: list[tuple[Home, NavGrid]]) -> None:
    for home, _ in homes:
        assert any(room.extra_rects for room in home.rooms)  # L-shaped rooms reach the MuJoCo model as rects
        for obj in home.objects:
            room = home.rooms[obj.room_id]
            assert room.contains(obj.position_m[:2]), (obj.object_id, room.room_type)


def test_large_homes_by_name_and_scene_id() -> None:
    assert {"small", "large", "large-furnished"} <= set(HOME_KINDS)
    assert home_config_for("small") == HomeConfig()
    large = home_config_for("large")
    assert large.layout == "large" and large.furniture == "primitive"
    assert home_config_for("large-furnished").furniture == "furnished"
    for kind in ("small", "large", "large-furnished"):
        config = home_config_for(kind)
        scene = scene_id_for(11, config)
        assert parse_scene_id(scene) == (11, config)
    assert scene_id_for(11, large) == "embedded/home_s11_large"
    with pytest.raises(SceneGenerationError, match="tiny"):
        home_config_for("tiny")
    args = argparse.Namespace(homes="large", num_rooms=7, furniture_libraries=None)
    with pytest.raises(ConfigError, match="--num-rooms 7"):
        home_config_from_args(args)
    assert home_config_from_args(argparse.Namespace(homes="large", num_rooms=None, furniture_libraries=None)) \
        == large


def test_bad_layout_is_named() -> None:
    with pytest.raises(SceneGenerationError, match="'mansion'"):
        HomeConfig(layout="mansion")  # type: ignore[arg-type]


def test_small_homes_are_unchanged() -> None:
    """The default homes of seeds 1 and 7 are those of the generator before large homes existed."""
    expected = {1: "e62cf1f45ba7bf7756f0b85419ffe71823c44e492b684a60f0df92b0855c706a",
                7: "0cae4ffc5910627ffbd5c284772173a7baad815ea979580f68cb8ff1baafcc01"}
    for seed, digest in expected.items():
        h = generate_home(seed, HomeConfig())
        key = repr(([(r.room_id, r.room_type, r.min_xy_m, r.max_xy_m) for r in h.rooms], h.doors, h.walls,
                    h.objects))
        assert hashlib.sha256(key.encode()).hexdigest() == digest, seed


def test_large_homes_are_deterministic() -> None:
    assert generate_home(5, large_home_config()) == generate_home(5, large_home_config())


def test_scene_statistics_and_meta_scenes() -> None:
    from goat_suites.common.home_stats import home_stats, scenes_meta, summarise

    small, large = scene_id_for(4, HomeConfig()), scene_id_for(4, large_home_config())
    entries = scenes_meta([small, large, small, "habitat/hm3d/abc.basis.glb"])
    assert [e["scene_id"] for e in entries] == [small, large]  # each home once, other simulators left out
    assert set(entries[0]) == {"scene_id", "num_rooms", "navigable_area_m2", "num_objects"}
    assert entries[0]["num_rooms"] == 5 and entries[1]["num_rooms"] >= 8
    assert entries[1]["navigable_area_m2"] > entries[0]["navigable_area_m2"]
    assert entries[1]["num_objects"] > 3 * entries[0]["num_objects"]
    table = summarise([home_stats(generate_home(4, large_home_config()))])
    assert table["num_rooms"]["mean"] == entries[1]["num_rooms"]


@pytest.mark.slow
def test_bench_results_carry_meta_scenes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import subprocess
    import sys

    out = tmp_path / "r.json"
    subprocess.run([sys.executable, "-m", "goat_nav.cli", "bench", "--homes", "small", "--episodes", "1", "--seed",
                    "1000", "--max-actions", "3", "--quiet", "--out", str(out)], check=True, timeout=600)
    scenes = json.loads(out.read_text())["meta"]["scenes"]
    assert len(scenes) == 1 and scenes[0]["num_rooms"] == 5 and scenes[0]["num_objects"] > 0


def test_episode_settings_by_kind_of_home() -> None:
    from goat_suites.goat.generator import LARGE_HOME_EPISODES, EpisodeGenConfig, episode_config_for

    assert episode_config_for(HomeConfig()) == EpisodeGenConfig()  # the small homes' episodes are unchanged
    large = episode_config_for(large_home_config("furnished"))
    assert large == LARGE_HOME_EPISODES
    assert large.goal_sampling == "category" and large.min_goal_coverage == large.image_min_coverage == 0.05
    assert (large.min_subtasks, large.max_subtasks) == (5, 10)
    with pytest.raises(SceneGenerationError, match="'instance'"):
        EpisodeGenConfig(goal_sampling="instance")
    with pytest.raises(SceneGenerationError, match="1.5"):
        EpisodeGenConfig(min_goal_coverage=1.5)


@pytest.mark.slow
def test_large_home_episodes_follow_goat_bench_rules() -> None:
    """Episodes of a large home: 5-10 subtasks, every goal reachable from the start and seen at >= 5 % of a frame
    from one of its view points, image goals at >= 5 % coverage; goals drawn by category."""
    from goat_suites.common.home_stats import subtask_geodesics_m
    from goat_suites.goat.generator import LARGE_HOME_EPISODES, generate_episode
    from sim_bridge.embedded.sim import EmbeddedSim

    home = generate_home(HOME_SEEDS[0], large_home_config())
    scene = scene_id_for(HOME_SEEDS[0], large_home_config())
    with EmbeddedSim(home) as sim:
        episodes = [generate_episode(sim, scene, f"e{k}", np.random.default_rng(k), LARGE_HOME_EPISODES)
                    for k in range(2)]
        for episode in episodes:
            assert 5 <= len(episode.tasks) <= 10
            distances = subtask_geodesics_m(episode, sim.navgrid)
            assert all(np.isfinite(d) for d in distances), distances
            for goals in episode.goals.values():
                for goal in goals:
                    obj = home.object(goal.object_id)
                    assert len(goal.view_points) > 0
                    for image in goal.image_goals:
                        assert image.frame_coverage >= 0.05, (obj.category, image.frame_coverage)
    # Goal categories: drawn uniformly over categories, so rare categories appear as often as common ones would.
    categories = {t.category for e in episodes for t in e.tasks}
    assert len(categories) >= 8


def test_object_textures_are_cached_with_the_same_pixels(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import cv2

    from sim_bridge.embedded import world

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = world._object_texture_png(9, 4, (200, 40, 40))
    files = list((tmp_path / "goat_nav" / "textures").glob("*.png"))
    assert len(files) == 1
    assert world._object_texture_png(9, 4, (200, 40, 40)) == first == files[0].read_bytes()
    drawn = world.object_texture(np.random.default_rng([9, 4]), (200, 40, 40))
    decoded = cv2.cvtColor(cv2.imdecode(np.frombuffer(first, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    assert np.array_equal(decoded, drawn)
    assert world._object_texture_png(9, 5, (200, 40, 40)) != first  # another instance, another texture


def test_room_culling_draws_the_same_pixels_with_fewer_geoms(homes: list[tuple[Home, NavGrid]]) -> None:
    """Large homes hide the rooms no chain of door gaps in view reaches; the frames are those of drawing all."""
    from sim_bridge.embedded.world import Renderer

    home, grid = homes[0]
    rng = np.random.default_rng(0)
    poses = [(grid.sample_navigable(rng), float(rng.uniform(-np.pi, np.pi))) for _ in range(12)]
    with Renderer(home, 160, 90, 1.0) as renderer:
        zones = renderer._zones
        assert zones is not None
        culled, drawn_culled, drawn_all = [], 0, 0
        for xy, yaw in poses:
            culled.append(renderer.render((xy[0], xy[1], 1.3), yaw, -0.2))
            drawn_culled += int(renderer._visible.sum())
        renderer._zones = None
        for (xy, yaw), view in zip(poses, culled, strict=True):
            full = renderer.render((xy[0], xy[1], 1.3), yaw, -0.2)
            drawn_all += int(renderer._visible.sum())
            assert np.array_equal(full.rgb, view.rgb) and np.array_equal(full.segmentation, view.segmentation)
            assert np.allclose(full.depth_m, view.depth_m)
        assert drawn_culled < drawn_all


@pytest.mark.parametrize("which", [0, 1])
def test_from_a_door_gap_room_culling_starts_in_both_rooms_and_draws_the_same_pixels(
        homes: list[tuple[Home, NavGrid]], which: int) -> None:
    """A camera in a door gap is in no room (it stands in the wall's thickness): the chains of door gaps start from
    the two rooms the door joins, rather than drawing the whole home, and the frames are those of drawing all, to
    the last bit of depth."""
    from sim_bridge.embedded.world import Renderer

    home, _ = homes[which]
    views = []
    for door in home.doors:
        normal = 0.5 * np.pi if door.axis == "x" else 0.0  # looking across the wall, into one room and the other
        for yaw in (normal, normal + np.pi, normal + 0.5 * np.pi):
            views.append(((door.centre_xy_m[0], door.centre_xy_m[1], 1.3), yaw))
    assert all(home.room_at(eye[:2]) is None for eye, _ in views)
    with Renderer(home, 160, 90, 1.0) as renderer:
        culled, drawn_culled, drawn_all = [], 0, 0
        for eye, yaw in views:
            culled.append(renderer.render(eye, yaw, -0.2))
            drawn_culled += int(renderer._visible.sum())
        renderer._zones = None
        for (eye, yaw), view in zip(views, culled, strict=True):
            full = renderer.render(eye, yaw, -0.2)
            drawn_all += int(renderer._visible.sum())
            assert np.array_equal(full.rgb, view.rgb) and np.array_equal(full.segmentation, view.segmentation)
            assert np.array_equal(full.depth_m, view.depth_m)
        assert drawn_culled < drawn_all  # drawing everything from a door gap: equal counts
