"""Success, SPL (Anderson et al. 2018) and aggregation, against hand-computed values."""

import math
from typing import Callable

import pytest

from goat_suites.common.metrics import (
    InvalidMetricInputError,
    group_by,
    grouped_mean,
    is_success,
    mean,
    mean_over,
    path_length_m,
    spl,
)


@pytest.mark.parametrize(
    ("success", "shortest_m", "taken_m", "expected"),
    [
        (True, 5.0, 5.0, 1.0),  # optimal path
        (True, 5.0, 10.0, 0.5),  # twice as long
        (True, 3.0, 12.0, 0.25),
        (True, 4.0, 3.5, 1.0),  # shorter than the geodesic (success radius cut the corner): capped by max()
        (False, 5.0, 5.0, 0.0),  # failure scores nothing however short the path
        (True, 0.0, 0.0, 1.0),  # already at the goal and stopped without moving
        (True, 0.0, 2.0, 0.0),  # already at the goal but wandered off and back
    ],
)
def test_spl_hand_computed(success: bool, shortest_m: float, taken_m: float, expected: float) -> None:
    assert spl(success, shortest_m, taken_m) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("called_stop", "distance_m", "threshold_m", "expected"),
    [
        (True, 0.2, 0.25, True),
        (True, 0.25, 0.25, True),  # on the boundary counts
        (True, 0.26, 0.25, False),
        (False, 0.0, 0.25, False),  # never called STOP (budget ran out) at the goal
        (True, 0.9, 1.0, True),  # the paper's 1 m Euclidean setting
        (True, math.inf, 1.0, False),  # stopped where the goal is unreachable
    ],
)
def test_is_success(called_stop: bool, distance_m: float, threshold_m: float, expected: bool) -> None:
    assert is_success(called_stop, distance_m, threshold_m) is expected


@pytest.mark.parametrize(
    ("call", "args", "bad"),
    [
        (spl, (True, -1.0, 2.0), "shortest_path_m"),
        (spl, (True, 1.0, math.nan), "path_length_m"),
        (spl, (True, math.inf, 1.0), "shortest_path_m"),
        (is_success, (True, -0.1, 1.0), "distance_to_goal_m"),
        (is_success, (True, 0.1, -1.0), "success_distance_m"),
    ],
)
def test_bad_inputs_are_named(call: Callable[..., object], args: tuple, bad: str) -> None:
    with pytest.raises(InvalidMetricInputError, match=bad):
        call(*args)


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        ([[0.0, 0.0]], 0.0),
        ([[0.0, 0.0], [3.0, 4.0]], 5.0),
        ([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 0.0]], 2.0),  # standing still adds 0
    ],
)
def test_path_length(points: list, expected: float) -> None:
    assert path_length_m(points) == pytest.approx(expected)


@pytest.mark.parametrize("points", [[1.0, 2.0], [[0.0, 0.0, 0.0, 0.0]], [[0.0, math.nan]]])
def test_path_length_rejects_bad_shapes(points: list) -> None:
    with pytest.raises(InvalidMetricInputError, match="positions_m"):
        path_length_m(points)


RECORDS = [("object", 1.0, 0.5), ("image", 0.0, 0.0), ("object", 1.0, 1.0), ("description", 0.0, 0.0)]


def test_means_and_groups() -> None:
    assert mean([1.0, 0.0, 1.0, 0.0]) == 0.5
    assert mean_over(RECORDS, lambda r: r[2]) == pytest.approx(0.375)
    assert list(group_by(RECORDS, lambda r: r[0])) == ["object", "image", "description"]
    assert grouped_mean(RECORDS, lambda r: r[0], lambda r: r[2]) == {
        "object": pytest.approx(0.75), "image": 0.0, "description": 0.0}


def test_mean_of_nothing_raises() -> None:
    with pytest.raises(InvalidMetricInputError, match="empty"):
        mean([])
