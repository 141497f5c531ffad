"""Procedural LangMap sequences (goat_suites.langmap.generator) and `goat-nav bench --suite langmap`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from goat_core.errors import EpisodeFormatError, SceneGenerationError
from goat_core.matching.lexicon import lexicon_in_use
from goat_core.types import GoalModality
from goat_nav.cli import main
from goat_suites.common.episode_files import load_goat_dataset, save_goat_dataset
from goat_suites.common.episodes import GoatDataset, goals_for_task
from goat_suites.common.results import SubtaskRecord, read_results_json
from goat_suites.common.suite_gen import placement
from goat_suites.common.suite_metrics import LANGMAP_LEVELS
from goat_suites.goat.generator import parse_scene_id
from goat_suites.langmap.generator import (
    EXTRA_REGIONS,
    EXTRA_STYLE,
    LangMapGenConfig,
    LangMapGoal,
    generate_langmap_dataset,
    home_regions,
    instance_description,
    sample_sequence,
)
from goat_suites.langmap.loader import EXTRA_LEVELS, EXTRA_TARGET_IDS, EXTRA_TEXTS
from goat_suites.langmap.run import langmap_tables, task_info
from sim_bridge.embedded.home import Home, HomeConfig, ObjectSpec, generate_home

SEED = 3000
SMALL = HomeConfig(num_rooms=3)


@pytest.fixture(scope="module")
def dataset() -> GoatDataset:
    return generate_langmap_dataset(2, SEED, SMALL)


@pytest.mark.parametrize("seed", [1, 7, 1000, 2024])
def test_region_descriptions_are_unique_within_a_home(seed: int) -> None:
    home = generate_home(seed)
    regions = home_regions(home)
    for style in ("concise", "detailed"):
        texts = [r.description(style) for r in regions if r.description(style) is not None]
        assert texts, f"home {seed} has no {style} region description"
        assert len(texts) == len(set(texts)), f"home {seed}: repeated {style} region descriptions {texts}"
    by_id = {o.object_id: o for o in home.objects}
    rooms = {room.room_id: room.room_type for room in home.rooms}
    for region in regions:
        assert {by_id[i].room_id for i in region.object_ids} == {region.room_id}
        assert region.category == rooms[region.room_id]


def test_a_shared_plain_region_text_is_made_unique_with_colours() -> None:
    # Two bedrooms with a lone bed each would both read "a bed"; the concise style must tell them apart.
    for seed in range(40):
        regions = home_regions(generate_home(seed, HomeConfig(num_rooms=8)))
        coloured = [r for r in regions if r.concise_description and re.match(r"an? (red|orange|yellow|green|blue|"
                                                                          r"purple|pink|brown|white|gray|black) ",
                                                                          r.concise_description)]
        if coloured:
            return
    pytest.fail("no home of 40 needed a coloured concise region description; the uniqueness rule is untested")


def _claims(text: str, obj: ObjectSpec, home: Home) -> dict[str, object]:
    """What a description says that a robot could check, read back from its words."""
    claims: dict[str, object] = {}
    if obj.colour in text.split():
        claims["colour"] = obj.colour
    said = re.search(r" (on|inside|under|beside) the ", text)
    if said is not None:
        where = placement(obj, home, 1.5)
        assert where is not None and where.anchor.category in text[said.end():], text
        claims["placement"] = where.key
    if text.endswith(f" in the {obj.room_type}"):
        claims["room"] = obj.room_type
    return claims


def _fits(claims: dict[str, object], obj: ObjectSpec, home: Home) -> bool:
    where = placement(obj, home, 1.5)
    actual = {"colour": obj.colour, "placement": None if where is None else where.key, "room": obj.room_type}
    return all(actual[k] == v for k, v in claims.items())


@pytest.mark.parametrize("style", ["concise", "detailed"])
def test_instance_descriptions_single_out_their_object(style: str) -> None:
    home = generate_home(7)
    described = 0
    for obj in home.objects:
        text = instance_description(obj, home, style)
        if text is None:
            continue
        described += 1
        claims = _claims(text, obj, home)
        assert claims, f"{text!r} says nothing that singles out a {obj.category}"
        if style == "detailed":
            assert set(claims) >= {"colour", "room"}, text
        kin = [o for o in home.objects if o.category == obj.category and o.object_id != obj.object_id]
        assert not any(_fits(claims, o, home) for o in kin), f"{text!r} also fits another {obj.category}"
    assert described >= len(home.objects) // 2


def test_sequences_have_five_goals_over_several_levels(dataset: GoatDataset) -> None:
    for episode in dataset.episodes:
        levels = [episode.extra[EXTRA_LEVELS][str(i)] for i in range(len(episode.tasks))]
        assert len(episode.tasks) == 5
        assert len(set(levels)) >= 3 and set(levels) <= set(LANGMAP_LEVELS)
        targets = [tuple(episode.extra[EXTRA_TARGET_IDS][str(i)]) for i in range(5)]
        assert len({t for ids in targets for t in ids}) == sum(len(ids) for ids in targets), "targets overlap"
    assert {e.extra[EXTRA_STYLE] for e in dataset.episodes} == {"concise", "detailed"}


def test_each_level_asks_for_what_its_template_says(dataset: GoatDataset) -> None:
    for episode in dataset.episodes:
        home = generate_home(*parse_scene_id(episode.scene_id))
        regions = episode.extra[EXTRA_REGIONS]
        for i, task in enumerate(episode.tasks):
            level, text = episode.extra[EXTRA_LEVELS][str(i)], episode.extra[EXTRA_TEXTS][str(i)]
            goals = goals_for_task(episode, task)
            assert sorted(g.object_id for g in goals) == sorted(episode.extra[EXTRA_TARGET_IDS][str(i)])
            if level == "scene":
                assert task.modality is GoalModality.CATEGORY and text == task.category
                continue
            assert task.modality is GoalModality.DESCRIPTION and len(goals) == 1 and goals[0].lang_desc == text
            target = home.object(goals[0].object_id)
            kin = [o for o in home.objects if o.category == target.category]
            if level == "room":
                assert text == f"{target.category} in the {target.room_type}"
                assert [o.object_id for o in kin if o.room_type == target.room_type] == [target.object_id]
            elif level == "region":
                region = next(r for r in regions.values() if target.object_id in r["object_ids"])
                description = region[f"{episode.extra[EXTRA_STYLE]}_description"]
                assert text == f"{target.category} in the {region['region_category']} that has {description}"
                assert [o.object_id for o in kin if o.object_id in region["object_ids"]] == [target.object_id]
            else:
                assert text == instance_description(target, home, episode.extra[EXTRA_STYLE])


def test_generation_is_deterministic(dataset: GoatDataset) -> None:
    again = generate_langmap_dataset(2, SEED, SMALL)
    assert again == dataset


def test_saved_sequences_keep_their_langmap_fields(dataset: GoatDataset, tmp_path: Path) -> None:
    path = tmp_path / "langmap.json.gz"
    save_goat_dataset(dataset, path)
    loaded = load_goat_dataset(path).episodes[0]
    assert [task_info(loaded, i)["level"] for i in range(5)] == \
        [dataset.episodes[0].extra[EXTRA_LEVELS][str(i)] for i in range(5)]


def test_a_goat_episode_is_not_taken_for_a_langmap_one() -> None:
    from goat_suites.goat.generator import generate_dataset

    goat = generate_dataset(1, 3, SMALL).episodes[0]
    with pytest.raises(EpisodeFormatError, match="no LangMap level"):
        task_info(goat, 0)


def test_too_few_levels_for_a_sequence_is_an_error() -> None:
    goals = {"scene": [LangMapGoal("scene", f"c{i}", (f"o{i}",), f"c{i}") for i in range(6)],
             "room": [LangMapGoal("room", "c9", ("o9",), "c9 in the kitchen")]}
    with pytest.raises(SceneGenerationError, match="levels"):
        sample_sequence(np.random.default_rng(0), goals, 5, 3)
    picked = sample_sequence(np.random.default_rng(0), goals, 5, 2)
    assert {g.level for g in picked} == {"scene", "room"}


@pytest.mark.parametrize("kwargs, name", [({"styles": ("verbose",)}, "styles"),
                                          ({"min_levels_per_sequence": 5}, "min_levels_per_sequence"),
                                          ({"region_link_m": 0.0}, "region_link_m")])
def test_bad_settings_are_named(kwargs: dict, name: str) -> None:
    with pytest.raises(SceneGenerationError, match=name):
        LangMapGenConfig(**kwargs)


def _record(episode: str, index: int, success: bool, spl: float, level: str) -> SubtaskRecord:
    return SubtaskRecord(episode_id=episode, scene_id="s", index=index, modality=GoalModality.DESCRIPTION,
                         success=success, spl=spl, path_length_m=1.0, geodesic_m=1.0, num_actions=3,
                         stop_reason="stop", distance_to_goal_m=0.0, level=level)


def test_level_tables_of_a_small_run() -> None:
    outcomes = {"a": [(True, 0.5, "scene"), (True, 1.0, "room"), (False, 0.0, "region"), (True, 0.5, "instance"),
                      (True, 1.0, "scene")],
                "b": [(True, 0.25, "room"), (False, 0.0, "scene"), (True, 1.0, "instance"), (True, 1.0, "region"),
                      (True, 1.0, "room")]}
    records = [_record(ep, i, *o) for ep, items in outcomes.items() for i, o in enumerate(items)]
    tables = langmap_tables(records, ["concise"] * 5 + ["detailed"] * 5)
    assert tables.by_level["scene"].success_rate == pytest.approx(2 / 3)
    assert tables.by_level["scene"].spl == pytest.approx(0.5)
    assert tables.by_level["room"].spl == pytest.approx((1.0 + 0.25 + 1.0) / 3)
    assert tables.overall.success_rate == pytest.approx(0.8)
    assert tables.by_style["concise"].success_rate == pytest.approx(0.8)
    assert tables.seq_sr == {1: 1.0, 2: 0.5, 3: 0.0, 4: 0.0, 5: 0.0}


@pytest.mark.slow
def test_cli_runs_a_tiny_langmap_suite_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "langmap.json"
    code = main(["bench", "--suite", "langmap", "--episodes", "1", "--seed", str(SEED), "--num-rooms", "3",
                 "--max-actions", "12", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    for word in (*LANGMAP_LEVELS, "overall", "SeqSR", "@5"):
        assert word in printed
    results = read_results_json(out)
    assert len(results.records) == 5 and all(r.level in LANGMAP_LEVELS for r in results.records)
    rows = results.meta["langmap"]["subtasks"]
    assert [(row["index"], row["level"]) for row in rows] == [(r.index, r.level) for r in results.records]
    assert set(results.meta["langmap"]["tables"]["seq_sr"]) == {"1", "2", "3", "4", "5"}
    assert results.meta["lexicon"] == lexicon_in_use()  # what goal words were resolved with: a WordNet folder or None
