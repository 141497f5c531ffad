"""Procedural PASTURE episodes (goat_suites.pasture.generator), the home additions behind them, and
`goat-nav bench --suite pasture`."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from goat_core.errors import SceneGenerationError
from goat_core.types import GoalModality
from goat_nav.cli import main
from goat_suites.common.results import SubtaskRecord, read_results_json
from goat_suites.common.suite_gen import home_seeds
from goat_suites.common.suite_metrics import PASTURE_CATEGORIES
from goat_suites.goat.generator import scene_id_for
from goat_suites.pasture.generator import (
    EPISODE_STREAM,
    PastureGenConfig,
    PastureTarget,
    home_for_scene,
    parse_pasture_scene_id,
    pasture_scene_id,
    pasture_targets,
)
from goat_suites.pasture.run import pasture_records, pasture_tables
from sim_bridge.embedded.catalogue import (
    CATEGORIES,
    HIDING_PLACES,
    UNCOMMON_CATEGORIES,
    validate_pasture_catalogue,
)
from sim_bridge.embedded.home import Home, HomeConfig, ObjectSpec, generate_home
from sim_bridge.embedded.sim import EmbeddedSim

SEED = 7  # the first home of this dataset seed offers all seven splits with 3 rooms
# Primitive homes: these tests check what one home of this seed offers (furnished: tests/test_furniture.py).
PRIMITIVE = HomeConfig(furniture="primitive")
PASTURE_HOME = PastureGenConfig().home_config(3, PRIMITIVE)


@pytest.fixture(scope="module")
def home_seed() -> int:
    return next(home_seeds(SEED))


@pytest.fixture(scope="module")
def sim(home_seed: int):
    with EmbeddedSim(generate_home(home_seed, PASTURE_HOME)) as sim:
        yield sim


@pytest.fixture(scope="module")
def targets(sim: EmbeddedSim, home_seed: int) -> list[PastureTarget]:
    return pasture_targets(sim, np.random.default_rng([home_seed, EPISODE_STREAM]))


def test_default_homes_are_unchanged_by_the_pasture_additions() -> None:
    # Digest of the default homes of three seeds, taken before the PASTURE fields existed: the GOAT benchmark's
    # numbers depend on these homes, so any change here must be deliberate.
    digest = hashlib.sha256()
    for seed in (0, 7, 1000):
        for o in generate_home(seed, HomeConfig(furniture="primitive")).objects:
            digest.update(repr((o.object_id, o.category, o.colour, o.material, o.size_label, o.room_type,
                                o.receptacle_id, tuple(round(v, 9) for v in o.position_m + o.bbox_min_m + o.bbox_max_m),
                                round(o.yaw_rad, 9))).encode())
    assert digest.hexdigest() == "67cc80c8008e4bb6a433c52a6d1b733a0907113e2864ea31e4bb4ae4a48212a4"


def test_a_pasture_home_is_the_default_home_plus_hidden_and_uncommon_objects(home_seed: int) -> None:
    base = generate_home(home_seed, HomeConfig(num_rooms=3, furniture="primitive"))
    home = generate_home(home_seed, PASTURE_HOME)
    assert home.rooms == base.rooms and home.walls == base.walls
    assert home.objects[: len(base.objects)] == base.objects
    added = home.objects[len(base.objects):]
    hidden = [o for o in added if home.hidden_relation(o) is not None]
    uncommon = [o for o in added if o.category in UNCOMMON_CATEGORIES]
    assert len(hidden) + len(uncommon) == len(added) and hidden and len(uncommon) == 3
    assert len({o.category for o in uncommon}) == 3 and len({o.category for o in hidden}) == len(hidden)
    for obj in hidden:
        holder = home.object(str(obj.receptacle_id))
        assert holder.category in HIDING_PLACES
        assert all(holder.bbox_min_m[i] <= obj.bbox_min_m[i] and obj.bbox_max_m[i] <= holder.bbox_max_m[i]
                   for i in range(3)), f"{obj.category} sticks out of the {holder.category}"
    assert all(base.hidden_relation(o) is None for o in base.objects)


def _aimed_pixels(sim: EmbeddedSim, obj: ObjectSpec, points: np.ndarray) -> list[int]:
    """Pixels of ``obj`` in the ground-truth segmentation from each point, camera aimed at its centre."""
    centre = np.asarray(obj.position_m)
    counts = []
    for xy in points:
        dx, dy = centre[:2] - xy
        tilt = math.atan2(centre[2] - sim.config.camera_height_m, math.hypot(dx, dy))
        view = sim.render_view(xy, math.atan2(dy, dx), max(tilt, sim.config.min_tilt_rad))
        counts.append(int(np.count_nonzero(view.segmentation == obj.instance_id)))
    return counts


@pytest.mark.slow
def test_a_hidden_object_is_out_of_sight_from_most_view_points_but_in_the_metadata(
        sim: EmbeddedSim, targets: list[PastureTarget]) -> None:
    home: Home = sim.home
    target = next(t for t in targets if t.category == "hidden")
    obj = home.object(target.object_id)
    assert obj in home.objects and obj.instance_id in {o.instance_id for o in home.objects}
    assert home.hidden_relation(obj) in ("inside", "under")
    holder = home.object(str(obj.receptacle_id))
    ring = sim.navgrid.view_points(holder)
    seen = np.asarray(_aimed_pixels(sim, obj, ring)) >= 50
    assert 0 < seen.sum() <= len(ring) / 2, f"seen from {seen.sum()} of {len(ring)} view points"
    # ...whereas an object standing on top of a receptacle is in sight from most of that receptacle's.
    shown = next(o for o in home.objects if o.receptacle_id is not None and home.hidden_relation(o) is None
                 and o.category not in UNCOMMON_CATEGORIES)
    shown_ring = sim.navgrid.view_points(home.object(str(shown.receptacle_id)))
    assert np.mean(np.asarray(_aimed_pixels(sim, shown, shown_ring)) >= 50) > 0.5
    # Success for the hidden target: the view points of its hiding furniture from which it is visible.
    assert len(target.view_points_xy_m) == seen.sum()


@pytest.mark.slow
def test_each_split_gets_a_target_that_fits_its_definition(sim: EmbeddedSim, targets: list[PastureTarget]) -> None:
    home = sim.home
    assert [t.category for t in targets] == list(PASTURE_CATEGORIES)
    assert len({t.object_id for t in targets}) == len(targets)
    for t in targets:
        obj = home.object(t.object_id)
        kin = [o for o in home.objects if o.category == obj.category and o.object_id != obj.object_id]
        hidden = home.hidden_relation(obj)
        if t.category == "uncommon":
            assert obj.category in UNCOMMON_CATEGORIES and obj.category not in CATEGORIES and t.text == obj.category
            continue
        assert obj.category in t.text and bool(kin) == t.category.endswith("distractors"), t
        if t.category.startswith("hidden"):
            assert hidden is not None and f"{hidden} the {home.object(str(obj.receptacle_id)).category}" in t.text
            assert all(home.hidden_relation(o) is None for o in kin), "distractors of a hidden object are in sight"
        elif t.category.startswith("appearance"):
            assert hidden is None and t.text.endswith(f"{obj.colour} {obj.material} {obj.category}")
            assert all((o.size_label, o.colour, o.material) != (obj.size_label, obj.colour, obj.material)
                       for o in kin)
        else:
            assert hidden is None and obj.colour not in t.text.split() and t.text.endswith(obj.room_type)


def test_scene_ids_round_trip(home_seed: int) -> None:
    scene = pasture_scene_id(home_seed, PASTURE_HOME)
    assert parse_pasture_scene_id(scene) == (home_seed, PASTURE_HOME)
    assert home_for_scene(scene).objects == generate_home(home_seed, PASTURE_HOME).objects
    plain = HomeConfig(num_rooms=3, furniture="primitive")
    assert home_for_scene(scene_id_for(home_seed, plain)).objects == generate_home(home_seed, plain).objects
    with pytest.raises(SceneGenerationError, match="not a PASTURE home"):
        parse_pasture_scene_id("embedded/pasture_s1_r3")


@pytest.mark.parametrize("make, name", [
    (lambda: HomeConfig(hidden_objects=-1), "hidden_objects"),
    (lambda: HomeConfig(uncommon_objects=99), "uncommon_objects"),
    (lambda: PastureGenConfig(max_hidden_visible_fraction=1.5), "max_hidden_visible_fraction"),
    (lambda: PastureGenConfig(min_visible_px=0), "min_visible_px"),
])
def test_bad_settings_are_named(make, name: str) -> None:
    with pytest.raises(SceneGenerationError, match=name):
        make()


def test_the_uncommon_categories_and_hiding_places_are_valid() -> None:
    validate_pasture_catalogue()
    assert not set(UNCOMMON_CATEGORIES) & set(CATEGORIES)


def _record(episode: str, success: bool, spl: float) -> SubtaskRecord:
    return SubtaskRecord(episode_id=episode, scene_id="s", index=0, modality=GoalModality.DESCRIPTION,
                         success=success, spl=spl, path_length_m=1.0, geodesic_m=1.0, num_actions=3,
                         stop_reason="stop" if success else "budget", distance_to_goal_m=0.0)


def test_per_split_table_of_a_small_run() -> None:
    runs = [("uncommon", True, 0.5), ("uncommon", False, 0.0), ("hidden", True, 1.0), ("spatial", True, 0.2),
            ("hidden", False, 0.0), ("hidden", True, 0.5)]
    records = [_record(f"e{i}", ok, spl) for i, (_, ok, spl) in enumerate(runs)]
    by_split, overall = pasture_tables(pasture_records(records, [split for split, _, _ in runs]))
    assert list(by_split) == ["uncommon", "spatial", "hidden"]  # PASTURE order, absent splits left out
    assert by_split["uncommon"].success_rate == pytest.approx(0.5) and by_split["uncommon"].spl == pytest.approx(0.25)
    assert by_split["hidden"].success_rate == pytest.approx(2 / 3) and by_split["hidden"].spl == pytest.approx(0.5)
    assert by_split["hidden"].count == 3
    assert overall.success_rate == pytest.approx(4 / 6) and overall.spl == pytest.approx(2.2 / 6)


@pytest.mark.slow
def test_cli_runs_a_tiny_pasture_suite_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pasture.json"
    code = main(["bench", "--suite", "pasture", "--episodes", "1", "--seed", str(SEED), "--num-rooms", "3",
                 "--homes", "primitive", "--max-actions", "8", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert all(split in printed for split in PASTURE_CATEGORIES)
    results = read_results_json(out)
    episodes = results.meta["pasture"]["episodes"]
    assert [e["category"] for e in episodes] == list(PASTURE_CATEGORIES)
    assert [(r.episode_id, r.scene_id) for r in results.records] == [(e["episode_id"], e["scene_id"]) for e in episodes]
    assert results.records[0].modality is GoalModality.CATEGORY
    assert all(r.modality is GoalModality.DESCRIPTION for r in results.records[1:])
    assert set(results.meta["pasture"]["by_category"]) == set(PASTURE_CATEGORIES)
