"""Furnished homes: the installed Sweet Home 3D libraries, category rules, conversion, cache and rendering.

These read the real files of Debian's sweethome3d-furniture (scripts/setup.sh installs it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_nav.cli import main as cli_main
from sim_bridge.embedded.catalogue import CATEGORIES
from sim_bridge.embedded.furnishing import dominant_colour, furnisher
from sim_bridge.embedded.furniture_categories import UNMODELLED_DEFAULT, category_of, models_by_category
from sim_bridge.embedded.furniture_library import (
    DEFAULT_LIBRARIES,
    LIBRARY_DIR,
    FurnitureLibraryError,
    ModelStore,
    convert_model,
    load_libraries,
    parse_properties,
)
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim


@pytest.fixture(scope="module")
def libraries():
    return load_libraries()


def _entry(libraries, folder: str):
    return next(e for lib in libraries for e in lib.entries if e.folder == folder)


def test_parse_properties_handles_comments_escapes_and_continuations():
    text = "# comment\n! other\nname#1=Caf\\u00e9 table\nwidth#1 = 80.5\ntags#1=a, \\\n  b\nkey\\=x:y\n"
    props = parse_properties(text)
    assert props == {"name#1": "Café table", "width#1": "80.5", "tags#1": "a, b", "key=x": "y"}


def test_default_libraries_are_read_with_their_licences(libraries):
    by_name = {lib.name: lib for lib in libraries}
    assert tuple(by_name) == DEFAULT_LIBRARIES
    assert by_name["BlendSwap-CC-0"].licence == "CC0-1.0" and len(by_name["BlendSwap-CC-0"].entries) == 175
    assert by_name["BlendSwap-CC-BY"].licence.startswith("CC-BY") and len(by_name["BlendSwap-CC-BY"].entries) == 135
    bed = _entry(libraries, "bed1")
    assert bed.name == "Bed" and bed.sh3d_category == "Bedroom" and bed.creator == "Blend Swap"
    assert bed.size_m == pytest.approx((1.407, 2.08, 0.955))  # width#2=140.7, depth#2=208, height#2=95.5 (cm)
    assert bed.drop_on_top_m == pytest.approx(0.652)
    assert all(len(lib.sha256) == 64 for lib in libraries)


def test_category_rules_cover_the_catalogue_except_the_listed_categories(libraries):
    found = models_by_category(e for lib in libraries for e in lib.entries)
    assert set(found) | set(UNMODELLED_DEFAULT) == set(CATEGORIES)
    assert not set(found) & set(UNMODELLED_DEFAULT)
    assert category_of(_entry(libraries, "teddyBear")) == "teddy bear"
    assert category_of(_entry(libraries, "led_tv")) == "television"
    assert category_of(_entry(libraries, "ceilingFan")) is None  # hangs from the ceiling
    assert category_of(_entry(libraries, "fordFocus")) is None


@pytest.mark.parametrize("folder", ["oakTable", "headphones", "teddyBear"])
def test_a_converted_model_has_its_catalogue_size_and_faces_forward(libraries, folder):
    entry = _entry(libraries, folder)
    library = next(lib for lib in libraries if lib.name == entry.library)
    mesh = convert_model(library, entry, max_triangles=800)
    vertices = np.concatenate([p.vertices_m for p in mesh.parts])
    size = vertices.max(axis=0) - vertices.min(axis=0)
    # The simplifier keeps a subset of the vertices: the extremes may move in by a little.
    assert size == pytest.approx(entry.size_m, rel=0.03, abs=0.005)
    assert vertices[:, 2].min() == pytest.approx(0.0, abs=0.005)
    assert vertices[:, 0].mean() == pytest.approx(0.0, abs=0.15 * entry.size_m[0])
    assert mesh.triangles <= 800 * 1.25 < mesh.source_triangles


def test_the_cache_returns_the_converted_model_without_converting_again(libraries, tmp_path):
    entry = _entry(libraries, "bedsideTable2")
    first = ModelStore(libraries, tmp_path)
    mesh = first.mesh(entry, 300)
    assert first.converted == 1 and len(list(tmp_path.rglob("*.npz"))) == 1
    second = ModelStore(libraries, tmp_path)
    again = second.mesh(entry, 300)
    assert second.converted == 0
    assert len(again.parts) == len(mesh.parts)
    for a, b in zip(mesh.parts, again.parts, strict=True):
        np.testing.assert_array_equal(a.vertices_m, b.vertices_m)
        np.testing.assert_array_equal(a.faces, b.faces)
        assert a.rgb == b.rgb and a.texture_png == b.texture_png
    assert dominant_colour(again) == dominant_colour(mesh)


def test_missing_libraries_raise_a_clear_error(tmp_path):
    with pytest.raises(FurnitureLibraryError, match=r"sweethome3d-furniture.*apt-get install.*--homes primitive"):
        generate_home(1, HomeConfig(furniture="furnished", furniture_dir=str(tmp_path)))
    with pytest.raises(FurnitureLibraryError, match="Nope"):
        load_libraries(("Nope",), LIBRARY_DIR)
    assert generate_home(1, HomeConfig(furniture="primitive", furniture_dir=str(tmp_path))).objects


def test_the_cli_names_the_package_when_a_library_is_missing(tmp_path, capsys):
    code = cli_main(["render", "--seed", "1", "--out", str(tmp_path), "--homes", "furnished",
                     "--furniture-libraries", "NoSuchLibrary"])
    assert code == 2
    err = capsys.readouterr().err
    assert "NoSuchLibrary" in err and "sweethome3d-furniture" in err
    # Libraries without furnished homes would be ignored: refused instead.
    assert cli_main(["render", "--seed", "1", "--out", str(tmp_path), "--furniture-libraries", "Scopia"]) == 2
    assert "needs --homes furnished" in capsys.readouterr().err


@pytest.fixture(scope="module")
def furnished_sim():
    home = generate_home(3, HomeConfig(num_rooms=4, furniture="furnished"))
    with EmbeddedSim(home) as sim:
        yield sim


def test_furnished_home_objects_are_models_with_credits(furnished_sim):
    home = furnished_sim.home
    assert home.objects and all(o.model is not None and not o.parts for o in home.objects)
    fur = furnisher(DEFAULT_LIBRARIES, LIBRARY_DIR)
    for obj in home.objects:
        entry = fur._by_key[obj.model.key]
        size = np.asarray(obj.bbox_max_m) - np.asarray(obj.bbox_min_m)
        turned = obj.yaw_rad % math.pi > 1.0  # a quarter turn swaps width and depth
        want = (entry.size_m[1], entry.size_m[0], entry.size_m[2]) if turned else entry.size_m
        assert size == pytest.approx(want, abs=1e-6)
        assert obj.model.licence in ("CC0-1.0", "CC-BY-3.0") and obj.model.credit()


def test_small_objects_rest_on_the_surface_of_their_model(furnished_sim):
    import mujoco  # here, not at the top: sim_bridge.embedded chooses MuJoCo's headless OpenGL before it loads

    home = furnished_sim.home
    small = [o for o in home.objects if o.receptacle_id is not None]
    assert small
    for obj in small:
        holder = home.object(obj.receptacle_id)
        assert holder.bbox_min_m[2] < obj.bbox_min_m[2] <= holder.bbox_max_m[2] + 1e-6
        # A ray down through the object (its own body left out) from 2 cm above its base meets the holder's mesh
        # just under it (from above: a model's top may be a single-sided face, which a ray from below misses).
        renderer = furnished_sim.renderer
        body = int(renderer.model.geom_bodyid[np.flatnonzero(renderer.geom_instance == obj.instance_id)[0]])
        hit = np.full(1, -1, dtype=np.int32)
        origin = np.array([obj.position_m[0], obj.position_m[1], obj.bbox_min_m[2] + 0.02])
        distance = mujoco.mj_ray(renderer.model, renderer.data, origin, np.array([0.0, 0.0, -1.0]), None, True,
                                 body, hit)
        assert renderer.geom_instance[hit[0]] == holder.instance_id and 0.0 <= distance < 0.02 + 0.075, obj


def test_segmentation_gives_one_instance_id_over_every_geom_of_a_model(furnished_sim):
    renderer = furnished_sim.renderer
    obj = max((o for o in furnished_sim.home.objects if o.receptacle_id is None),
              key=lambda o: len(furnished_sim.objects_of_category(o.category)) == 1)
    body = renderer._instance_body[obj.instance_id]
    geoms = np.flatnonzero(renderer.model.geom_bodyid == body)
    assert len(geoms) >= 1 and set(renderer.geom_instance[geoms].tolist()) == {obj.instance_id}
    point = furnished_sim.navgrid.view_points(obj)[0]
    yaw = math.atan2(obj.position_m[1] - point[1], obj.position_m[0] - point[0])
    tilt = math.atan2(obj.position_m[2] - furnished_sim.config.camera_height_m,
                      float(np.hypot(*(np.asarray(obj.position_m[:2]) - point))))
    view = furnished_sim.render_view(point, yaw, tilt)
    mask = view.segmentation == obj.instance_id
    assert mask.sum() > 500
    # The model's pixels are where its depth is: nearer than the walls behind it and within its reach.
    distance = np.hypot(*(np.asarray(obj.position_m[:2]) - point))
    assert np.median(view.depth_m[mask]) < distance + max(obj.bbox_max_m[0] - obj.bbox_min_m[0],
                                                          obj.bbox_max_m[1] - obj.bbox_min_m[1])


def test_a_small_model_can_be_picked_up_and_placed_elsewhere(furnished_sim):
    home = furnished_sim.home
    small = next(o for o in home.objects if o.receptacle_id is not None)
    target = next(o for o in home.objects if o.is_receptacle and o.object_id != small.receptacle_id
                  and o.receptacle_id is None)
    before = furnished_sim.renderer.cast_ray((small.position_m[0], small.position_m[1], 2.4), (0.0, 0.0, -1.0))
    assert before[1] == small.instance_id
    furnished_sim.pick_up(small.instance_id)
    gone = furnished_sim.renderer.cast_ray((small.position_m[0], small.position_m[1], 2.4), (0.0, 0.0, -1.0))
    assert gone[1] != small.instance_id
    centre = (target.position_m[0], target.position_m[1],
              target.bbox_max_m[2] + (small.bbox_max_m[2] - small.bbox_min_m[2]) / 2.0)
    moved = furnished_sim.place_on(small.instance_id, target.object_id, centre)
    assert moved.receptacle_id == target.object_id
    hit = furnished_sim.renderer.cast_ray((centre[0], centre[1], 2.4), (0.0, 0.0, -1.0))
    assert hit[1] == small.instance_id  # every geom of the model moved with its body


def test_scene_ids_name_the_furniture_and_rebuild_the_same_home():
    from goat_suites.goat.generator import parse_scene_id, scene_id_for
    from goat_suites.pasture.generator import PastureGenConfig, parse_pasture_scene_id, pasture_scene_id

    furnished, primitive = HomeConfig(num_rooms=3, furniture="furnished"), HomeConfig(num_rooms=3)
    extra = HomeConfig(num_rooms=3, furniture="furnished", furniture_libraries=("BlendSwap-CC-0", "Scopia"))
    assert scene_id_for(5, furnished) == "embedded/home_s5_r3_furnished"
    assert scene_id_for(5, primitive) == "embedded/home_s5_r3"
    assert scene_id_for(5, extra) == "embedded/home_s5_r3_fBlendSwap-CC-0+Scopia"
    for config in (furnished, primitive, extra):
        assert parse_scene_id(scene_id_for(5, config)) == (5, config)
    pasture = PastureGenConfig().home_config(3, primitive)
    assert parse_pasture_scene_id(pasture_scene_id(5, pasture)) == (5, pasture)


def test_furnished_pasture_homes_hide_objects_in_models_and_add_uncommon_models():
    from goat_suites.pasture.generator import PastureGenConfig
    from sim_bridge.embedded.furniture_categories import UNCOMMON_MODEL_CATEGORIES

    home = generate_home(5, PastureGenConfig().home_config(5, HomeConfig(furniture="furnished")))
    hidden = [o for o in home.objects if home.hidden_relation(o) is not None]
    uncommon = [o for o in home.objects if o.category in UNCOMMON_MODEL_CATEGORIES]
    assert hidden and len(uncommon) == 3
    for obj in hidden:
        holder = home.object(obj.receptacle_id)
        assert holder.category in ("desk", "bookshelf", "bathtub") and obj.hidden_in in ("inside", "under")
        assert obj.bbox_max_m[2] < holder.bbox_max_m[2]  # below the top: in or under the piece
    # Objects on the support surface of a model that is taller than it (a shelf) are on it, not hidden in it.
    on_shelves = [o for o in home.objects if o.receptacle_id and o.hidden_in is None]
    assert all(home.hidden_relation(o) is None for o in on_shelves)


def test_a_moved_object_rests_on_a_model_receptacles_surface_not_its_bounding_box():
    """FindingDory's oracle puts objects on a spot of a receptacle's top: on a model that is the mesh surface
    (ray cast), which may lie far below the bounding box (the object used to float there, 12-31 cm up)."""
    from goat_suites.findingdory.generator_config import FindingDoryGenConfig
    from goat_suites.findingdory.oracle import _free_spot
    from goat_suites.findingdory.run import episode_units
    from sim_bridge.embedded.sim import SURFACE_STEP_M

    # The home of FindingDory 3000-3 (furnished): its kitchen counter's top lies 14-29 cm under its bounding box,
    # its washing machine's 4-12 cm.
    home_seed = episode_units(3000, 4)[3].payload[0]
    with EmbeddedSim(generate_home(home_seed, HomeConfig(num_rooms=5, furniture="furnished"))) as sim:
        obj = next(o for o in sim.current_objects() if not o.is_receptacle and o.receptacle_id is not None)
        half_z = (obj.bbox_max_m[2] - obj.bbox_min_m[2]) / 2.0
        sim.pick_up(obj.instance_id)
        placed = below_box = 0
        for receptacle in [r for r in sim.current_objects() if r.is_receptacle and r.object_id != obj.receptacle_id]:
            spot = _free_spot(sim, obj, receptacle, np.random.default_rng(0), FindingDoryGenConfig())
            if spot is None:
                continue
            base_m = float(spot[2]) - half_z
            # Nothing between the base and the receptacle under it (the probes may differ by one step).
            gap_m, hit = sim.renderer.cast_ray((float(spot[0]), float(spot[1]), base_m + 0.01), (0.0, 0.0, -1.0))
            assert hit == receptacle.instance_id and gap_m <= 0.01 + SURFACE_STEP_M + 1e-3, receptacle.object_id
            moved = sim.place_on(obj.instance_id, receptacle.object_id, spot)
            assert moved.bbox_min_m[2] == pytest.approx(base_m) and moved.receptacle_id == receptacle.object_id
            sim.pick_up(obj.instance_id)
            placed += 1
            below_box += receptacle.bbox_max_m[2] - base_m > 0.05
        assert placed >= 3 and below_box >= 1  # some model's surface lies well below its bounding box's top
