"""LangMap, FindingDory and PASTURE paper metrics and the GOAT image-noise helper, against hand-computed cases."""

from typing import Any, Optional

import numpy as np
import pytest

from goat_core.errors import GoatError
from goat_suites.common.levels import parse_level
from goat_suites.common.metrics import InvalidMetricInputError
from goat_suites.common.suite_metrics import (
    FindingDoryRecord,
    LevelRecord,
    PastureRecord,
    findingdory_by_task_type,
    findingdory_stats,
    langmap_by_level,
    langmap_overall,
    pasture_by_category,
    seq_sr,
    seq_sr_table,
)
from sim_bridge.embedded.goal_image import NOISE_SIGMA_RANGE, noisy_goal_image

# ----------------------------------------------------------------------------------------------- LangMap


@pytest.mark.parametrize(("raw", "level"), [("object", "scene"), ("Scene", "scene"), (" room ", "room"),
                                            ("REGION", "region"), ("instance", "instance")])
def test_parse_level(raw: str, level: str) -> None:
    assert parse_level(raw) == level


@pytest.mark.parametrize(
    ("kwargs", "bad"),
    [
        (dict(level="floor", success=True, spl=1.0), "unknown LangMap level 'floor'"),
        (dict(level="room", success=False, spl=0.5), "spl must be 0 when the task failed"),
        (dict(level="room", success=True, spl=1.5), "spl must be a number in [0, 1]"),
        (dict(level="room", success=1, spl=1.0), "success must be a bool"),
        (dict(level="room", success=True, spl=1.0, sequence_id="s"), "needs both sequence_id and index"),
        (dict(level="room", success=True, spl=1.0, sequence_id="s", index=-1), "index must be an integer >= 0"),
    ],
)
def test_level_record_rejects(kwargs: dict[str, Any], bad: str) -> None:
    with pytest.raises(InvalidMetricInputError, match=bad.replace("[", r"\[").replace("]", r"\]")):
        LevelRecord(**kwargs)


def test_langmap_by_level_hand_computed() -> None:
    records = [
        LevelRecord("instance", True, 0.8),
        LevelRecord("object", True, 0.5),  # scene level, as LangMap files spell it
        LevelRecord("scene", False, 0.0),
        LevelRecord("room", True, 1.0),
        LevelRecord("instance", False, 0.0),
        LevelRecord("instance", True, 0.4),
    ]
    table = langmap_by_level(records)
    assert list(table) == ["scene", "room", "instance"]  # LangMap order; region absent
    assert (table["scene"].success_rate, table["scene"].spl, table["scene"].count) == (0.5, 0.25, 2)
    assert (table["room"].success_rate, table["room"].spl, table["room"].count) == (1.0, 1.0, 1)
    assert table["instance"].success_rate == pytest.approx(2 / 3)
    assert table["instance"].spl == pytest.approx((0.8 + 0.0 + 0.4) / 3)
    overall = langmap_overall(records)
    assert (overall.success_rate, overall.spl, overall.count) == (pytest.approx(4 / 6), pytest.approx(2.7 / 6), 6)
    with pytest.raises(InvalidMetricInputError, match="no goals"):
        langmap_overall([])


def _sequences() -> list[LevelRecord]:
    outcomes = {
        "A": [True, True, False, True, True],
        "B": [True, True, True, True, True],
        "C": [False, True, True, True, True],
        "D": [True, True],  # the run stopped after two subgoals
    }
    return [LevelRecord("room", ok, 0.5 if ok else 0.0, sequence_id=sid, index=i)
            for sid, seq in outcomes.items() for i, ok in enumerate(seq)]


@pytest.mark.parametrize(("n", "expected"), [(1, 2 / 4), (2, 2 / 4), (3, 1 / 4), (4, 1 / 4), (5, 1 / 4)])
def test_seq_sr_hand_computed(n: int, expected: float) -> None:
    # @1, @2: A and B pass; C fails its first subgoal; D is incomplete, which LangMap's analyze_sequences scores
    # 0 at every K (it counts only complete 5-goal sequences, over all sequences). @3..@5: only B.
    assert seq_sr(_sequences(), n) == pytest.approx(expected)


def test_seq_sr_table_and_order_independence() -> None:
    records = list(reversed(_sequences()))
    assert seq_sr_table(records) == {1: 0.5, 2: 0.5, 3: 0.25, 4: 0.25, 5: 0.25}


@pytest.mark.parametrize(
    ("records", "n", "bad"),
    [
        (_sequences(), 0, "n must be an integer >= 1"),
        (_sequences(), 6, "sequence_length must be an integer >= n"),
        ([], 1, "SeqSR of no sequences"),
        ([LevelRecord("room", True, 1.0)], 1, "needs sequence subgoals"),
        ([LevelRecord("room", True, 1.0, "s", 0), LevelRecord("room", True, 1.0, "s", 0)], 1, "recorded twice"),
    ],
)
def test_seq_sr_rejects(records: list[LevelRecord], n: int, bad: str) -> None:
    with pytest.raises(InvalidMetricInputError, match=bad):
        seq_sr(records, n)


# ----------------------------------------------------------------------------------------------- FindingDory


def _fd(task: str, hl: bool, dtg: bool, sc: bool, ll: bool, hl_spl: Optional[float], ll_spl: float,
        task_type: str = "object_recall") -> FindingDoryRecord:
    return FindingDoryRecord("1", task, task_type, hl, dtg, sc, ll, hl_spl, ll_spl)


@pytest.mark.parametrize(
    ("hl", "ll", "shortest", "hl_path", "path", "hl_spl", "ll_spl"),
    [
        (True, True, 4.0, 5.0, 8.0, 0.8, 0.5),  # HL goal 1 m further than the nearest target; agent wandered
        (True, False, 4.0, 4.0, 3.0, 1.0, 0.0),  # HL picked the nearest target, LL stopped wrongly
        (False, False, 4.0, 9.0, 2.0, 0.0, 0.0),
        (True, True, 0.0, 0.0, 0.0, 1.0, 1.0),  # already at the goal: FindingDory scores 1
        (True, True, 6.0, None, 6.0, None, 1.0),  # multi-goal: HL-SPL undefined upstream
    ],
)
def test_findingdory_spl_from_distances(hl: bool, ll: bool, shortest: float, hl_path: Optional[float],
                                        path: float, hl_spl: Optional[float], ll_spl: float) -> None:
    r = FindingDoryRecord.from_distances("1", "task_3", "t", hl_success=hl, hl_dtg_success=hl, hl_sc_success=hl,
                                         ll_success=ll, shortest_path_m=shortest, hl_goal_path_m=hl_path,
                                         path_length_m=path)
    assert r.hl_spl == (None if hl_spl is None else pytest.approx(hl_spl))
    assert r.ll_spl == pytest.approx(ll_spl)


def test_findingdory_stats_hand_computed() -> None:
    records = [
        _fd("task_1", True, True, True, True, 0.8, 0.5),
        _fd("task_2", True, True, True, False, 1.0, 0.0),
        _fd("task_3", False, True, False, False, 0.0, 0.0, task_type="room_visitation"),
        _fd("task_4", False, False, True, False, None, 0.0, task_type="room_visitation"),
    ]
    s = findingdory_stats(records)
    assert (s.hl_sr, s.ll_sr, s.dtg_sr, s.sc_sr, s.count) == (0.5, 0.25, 0.75, 0.75, 4)
    assert s.hl_spl == pytest.approx((0.8 + 1.0 + 0.0) / 3)  # task_4 has none
    assert s.ll_spl == pytest.approx(0.125)
    by_type = findingdory_by_task_type(records)
    assert list(by_type) == ["object_recall", "room_visitation"]
    assert by_type["room_visitation"].hl_sr == 0.0 and by_type["room_visitation"].dtg_sr == 0.5
    assert by_type["object_recall"].to_json()["ll_sr"] == 0.5


@pytest.mark.parametrize(
    ("args", "bad"),
    [
        ((False, False, False, True, 0.0, 0.0), "low-level success without high-level success"),
        ((True, False, True, False, 1.0, 0.0), "implies the distance-only and coverage-only"),
        ((True, True, True, False, 0.5, 0.3), "spl must be 0 when the task failed"),
        ((False, False, False, False, 0.2, 0.0), "spl must be 0 when the task failed"),
        ((True, True, True, "yes", 1.0, 0.0), "ll_success must be a bool"),
    ],
)
def test_findingdory_record_rejects(args: tuple[Any, ...], bad: str) -> None:
    with pytest.raises(InvalidMetricInputError, match=bad):
        FindingDoryRecord("1", "task_1", "t", *args)


def test_findingdory_stats_of_nothing() -> None:
    with pytest.raises(InvalidMetricInputError, match="no tasks"):
        findingdory_stats([])


# ----------------------------------------------------------------------------------------------- PASTURE


def test_pasture_by_category_hand_computed() -> None:
    records = [
        PastureRecord("FloorPlan_Val1_1_Apple_0", "hidden", True, 0.6),
        PastureRecord("FloorPlan_Val1_1_Mug_0", "spatial", False, 0.0),
        PastureRecord("FloorPlan_Val1_1_Vase_0", "hidden", False, 0.0),
        PastureRecord("FloorPlan_Val3_5_GingerbreadHouse_1", "uncommon", True, 0.84),
        PastureRecord("FloorPlan_Val1_1_Bowl_0", "hidden", True, 0.3),
    ]
    table = pasture_by_category(records)
    assert list(table) == ["uncommon", "spatial", "hidden"]  # paper order
    assert table["hidden"].success_rate == pytest.approx(2 / 3)
    assert table["hidden"].spl == pytest.approx(0.3)
    assert (table["spatial"].success_rate, table["spatial"].spl) == (0.0, 0.0)
    assert table["uncommon"].count == 1


@pytest.mark.parametrize(("category", "success", "spl", "bad"),
                         [("distractors", True, 1.0, "unknown category"), ("hidden", False, 0.4, "must be 0")])
def test_pasture_record_rejects(category: str, success: bool, spl: float, bad: str) -> None:
    with pytest.raises(InvalidMetricInputError, match=bad):
        PastureRecord("FloorPlan_Val1_1_Apple_0", category, success, spl)


# ----------------------------------------------------------------------------------------------- GOAT noise


def _grey(side: int = 64) -> np.ndarray:
    return np.full((side, side, 3), 128, dtype=np.uint8)


@pytest.mark.parametrize("seed", [0, 7, 12345])
def test_noise_is_deterministic_under_a_seed(seed: int) -> None:
    image = np.random.default_rng(1).integers(0, 256, size=(48, 64, 3), dtype=np.uint8)
    a, sigma_a = noisy_goal_image(image, seed)
    b, sigma_b = noisy_goal_image(image, np.random.default_rng(seed))
    assert sigma_a == sigma_b and NOISE_SIGMA_RANGE[0] <= sigma_a <= NOISE_SIGMA_RANGE[1]
    assert np.array_equal(a, b) and a.dtype == np.uint8 and a.shape == image.shape
    assert not np.array_equal(a, image)
    c, _ = noisy_goal_image(image, seed + 1)
    assert not np.array_equal(a, c)


def test_noise_of_zero_sigma_is_identity() -> None:
    image = _grey()
    out, sigma = noisy_goal_image(image, 3, sigma_range=(0.0, 0.0))
    assert sigma == 0.0 and np.array_equal(out, image)


def test_noise_scale_in_8bit_levels() -> None:
    # sigma fixed at 4 levels of 255: on mid-grey (no clipping) the pixel differences have std ~4.
    out, sigma = noisy_goal_image(_grey(200), 5, sigma_range=(4.0, 4.0), full_scale=1 / 255)
    diff = out.astype(float) - 128.0
    assert sigma == 4.0
    assert abs(diff.mean()) < 0.2 and diff.std() == pytest.approx(4.0, rel=0.05)


@pytest.mark.parametrize(
    ("image", "kwargs", "bad"),
    [
        (np.zeros((8, 8), dtype=np.uint8), {}, r"\(H, W, 3\) uint8"),
        (np.zeros((8, 8, 3), dtype=np.float32), {}, r"\(H, W, 3\) uint8"),
        (_grey(), {"sigma_range": (2.0, 0.1)}, "sigma_range"),
        (_grey(), {"full_scale": 0.0}, "full_scale"),
    ],
)
def test_noise_rejects(image: np.ndarray, kwargs: dict[str, Any], bad: str) -> None:
    with pytest.raises(GoatError, match=bad):
        noisy_goal_image(image, 0, **kwargs)
