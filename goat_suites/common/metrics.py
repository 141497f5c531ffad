"""Navigation metrics: success, SPL, path length and the averages reported per modality and subtask index.

References:
    Anderson et al. 2018, "On Evaluation of Embodied Navigation Agents", arXiv:1807.06757 (SPL).
    Khanna et al. 2024, "GOAT-Bench: A Benchmark for Multi-Modal Lifelong Navigation" (per-subtask SR and SPL,
    the shortest path of a subtask measured from where the previous subtask ended).
"""

from __future__ import annotations

import math
from typing import Callable, Hashable, Iterable, Sequence, TypeVar

import numpy as np

from goat_core.errors import GoatError

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class InvalidMetricInputError(GoatError, ValueError):
    """A metric was given a negative, non-finite or otherwise impossible value."""


def _length(value_m: float, name: str) -> float:
    if not (math.isfinite(value_m) and value_m >= 0.0):
        raise InvalidMetricInputError(f"{name} must be a finite length >= 0 m, got {value_m!r}")
    return float(value_m)


def is_success(called_stop: bool, distance_to_goal_m: float, success_distance_m: float) -> bool:
    """Success of one (sub)task: the agent called STOP within ``success_distance_m`` of the goal.

    Anderson et al. 2018: an episode succeeds when the agent signals it is done within a threshold
    distance of the goal. Which distance and threshold is the caller's choice (GOAT-Bench's config: geodesic to
    the nearest view point, 0.25 m; the GOAT paper's text: 1 m). LangMap scores the geodesic distance to a view
    point (0.25 m) at the end of each subgoal without asking for STOP: use
    ``goat_suites.common.protocols.SuccessRule`` for that and for the strict ``<`` that habitat-lab's ``Success``
    and GOAT-Bench's ``GoatSuccess`` (``goat_bench/measurements/nav.py`` l.289-292) apply; this function
    accepts a distance equal to the threshold. An infinite distance (goal unreachable from where the agent
    stopped) is a failure.
    """
    threshold_m = _length(success_distance_m, "success_distance_m")
    if math.isnan(distance_to_goal_m) or distance_to_goal_m < 0.0:
        raise InvalidMetricInputError(f"distance_to_goal_m must be >= 0 m, got {distance_to_goal_m!r}")
    return bool(called_stop) and distance_to_goal_m <= threshold_m


def spl(success: bool, shortest_path_m: float, path_length_m: float) -> float:
    """Success weighted by (normalised inverse) Path Length of one (sub)task.

    Anderson et al. 2018: SPL_i = S_i * l_i / max(p_i, l_i), with S_i the success indicator, l_i the
    shortest-path (geodesic) distance from the start to the goal and p_i the length of the path the agent
    took; the benchmark SPL is the mean over episodes. For GOAT subtasks the start is where the previous
    subtask ended.

    The paper leaves l_i = p_i = 0 open (the agent already stood at the goal and stopped without moving);
    that path was optimal, so it scores S_i. habitat-lab's ``SPL`` (``habitat/tasks/nav/nav.py``) and
    GOAT-Bench's ``GoatSPL`` (``goat_bench/measurements/nav.py`` l.386-392) divide by max(l_i, p_i) with no
    epsilon, so there the case raises ZeroDivisionError (their episodes never start on a view point); for
    l_i = 0 < p_i both give 0, as this does.
    """
    shortest_m = _length(shortest_path_m, "shortest_path_m")
    taken_m = _length(path_length_m, "path_length_m")
    if not success:
        return 0.0
    longest_m = max(taken_m, shortest_m)
    return 1.0 if longest_m == 0.0 else shortest_m / longest_m


def path_length_m(positions_m: Sequence[Sequence[float]] | np.ndarray) -> float:
    """Length of a polyline (the agent's trajectory, one position per step): sum of its segment lengths."""
    points = np.asarray(positions_m, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise InvalidMetricInputError(f"positions_m must have shape (N, 2) or (N, 3), got {points.shape}")
    if not np.all(np.isfinite(points)):
        raise InvalidMetricInputError("positions_m must be finite")
    if len(points) < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; an empty set has no mean, so it raises."""
    items = [float(v) for v in values]
    if not items:
        raise InvalidMetricInputError("cannot average an empty set of values")
    return math.fsum(items) / len(items)


def mean_over(records: Iterable[T], value: Callable[[T], float]) -> float:
    """Mean of ``value(record)`` over records, e.g. ``mean_over(records, lambda r: r.spl)``."""
    return mean(value(r) for r in records)


def group_by(records: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """Records grouped by ``key(record)``, groups in order of first appearance, records in input order."""
    groups: dict[K, list[T]] = {}
    for record in records:
        groups.setdefault(key(record), []).append(record)
    return groups


def grouped_mean(records: Iterable[T], key: Callable[[T], K], value: Callable[[T], float]) -> dict[K, float]:
    """Mean of ``value`` within each ``key`` group, e.g. SPL per modality."""
    return {k: mean_over(group, value) for k, group in group_by(records, key).items()}
