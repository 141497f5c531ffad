"""Paper metrics of the LangMap, FindingDory and PASTURE suites (goal-image noise: sim_bridge.embedded.goal_image).

Each metric is defined once here, reads a list of small frozen records, and cites where its definition comes
from. Success and SPL of a single (sub)task are :func:`goat_suites.common.metrics.is_success` and
:func:`goat_suites.common.metrics.spl`; this module only aggregates.

References:
    LangMap / HieraNav: Miao et al., bo-miao/LangMap ``analyze_langmap_results.py`` (SR and SPL per goal level,
    SeqSR@K) and ``langmap_multi_goal.py`` (5-goal sequences, SPL per subgoal from where the last one ended).
    FindingDory: Yadav et al. 2025, arXiv:2506.15635; findingdory-benchmark/findingdory-habitat
    ``findingdory/task/findingdory_task.py`` (``assign_and_validate_high_level_goal``) and
    ``findingdory/task/measures.py`` (``FindingDorySPL``, ``FindingDoryHighLevelSPL``).
    PASTURE: Gadre et al., CVPR 2023, "CoWs on Pasture"; real-stanford/cow ``pasture_runner.py`` (the splits)
    and ``success_agg.py`` (SR and SPL per split, AI2-THOR ``compute_spl``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Union

from goat_suites.common.levels import LANGMAP_LEVELS, parse_level
from goat_suites.common.metrics import InvalidMetricInputError, group_by, mean_over, spl
from goat_suites.common.results import GroupStats

# ----------------------------------------------------------------------------------------------- shared checks


def _check_success_spl(success: bool, spl_value: float, name: str) -> None:
    if not isinstance(success, bool):
        raise InvalidMetricInputError(f"{name}: success must be a bool, got {success!r}")
    if isinstance(spl_value, bool) or not isinstance(spl_value, (int, float)) or not 0.0 <= spl_value <= 1.0:
        raise InvalidMetricInputError(f"{name}: spl must be a number in [0, 1], got {spl_value!r}")
    if spl_value > 0.0 and not success:
        raise InvalidMetricInputError(f"{name}: spl must be 0 when the task failed, got {spl_value!r}")


def _stats(records: Sequence[Union[LevelRecord, PastureRecord]]) -> GroupStats:
    return GroupStats(
        success_rate=mean_over(records, lambda r: float(r.success)),
        spl=mean_over(records, lambda r: r.spl),
        count=len(records),
    )


# ----------------------------------------------------------------------------------------------- LangMap

@dataclass(frozen=True)
class LevelRecord:
    """The outcome of one LangMap goal: a single-goal episode, or one subgoal of a multi-goal sequence."""

    level: str  # scene | room | region | instance ("object" is accepted for scene)
    success: bool
    spl: float  # of this goal alone; for subgoals measured from where the previous subgoal ended
    sequence_id: Optional[str] = None  # multi-goal: the sequence this subgoal belongs to
    index: Optional[int] = None  # multi-goal: position in the sequence, from 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", parse_level(self.level))
        _check_success_spl(self.success, self.spl, f"LangMap {self.level} goal")
        if (self.sequence_id is None) != (self.index is None):
            raise InvalidMetricInputError(
                f"a sequence subgoal needs both sequence_id and index, got {self.sequence_id!r}, {self.index!r}"
            )
        if self.index is not None and (isinstance(self.index, bool) or not isinstance(self.index, int)
                                       or self.index < 0):
            raise InvalidMetricInputError(f"index must be an integer >= 0, got {self.index!r}")


def langmap_by_level(records: Iterable[LevelRecord]) -> dict[str, GroupStats]:
    """SR and SPL per goal level, levels in LangMap order, absent levels left out.

    LangMap ``analyze_langmap_results.py`` (single-goal): each level's SR is the mean success and its SPL the
    mean SPL over that level's goals. Multi-goal subgoals are grouped by their own level the same way.
    """
    groups = group_by(records, lambda r: r.level)
    return {level: _stats(groups[level]) for level in LANGMAP_LEVELS if level in groups}


def langmap_overall(records: Iterable[LevelRecord]) -> GroupStats:
    """SR and SPL over every goal of every level (LangMap's "Overall" row): the means over goals."""
    items = list(records)
    if not items:
        raise InvalidMetricInputError("LangMap metrics of no goals are undefined")
    return _stats(items)


def _sequences(records: Iterable[LevelRecord]) -> dict[str, dict[int, bool]]:
    sequences: dict[str, dict[int, bool]] = {}
    for r in records:
        if r.sequence_id is None or r.index is None:
            raise InvalidMetricInputError(f"SeqSR needs sequence subgoals; got a single-goal record {r!r}")
        outcomes = sequences.setdefault(r.sequence_id, {})
        if r.index in outcomes:
            raise InvalidMetricInputError(f"sequence {r.sequence_id!r}: subgoal {r.index} is recorded twice")
        outcomes[r.index] = r.success
    return sequences


def seq_sr(records: Iterable[LevelRecord], n: int, sequence_length: int = 5) -> float:
    """SeqSR@n: the fraction of sequences whose first ``n`` subgoals all succeed.

    LangMap ``analyze_langmap_results.py`` (``analyze_sequences``): "the percentage of complete sequences where
    the first K subtasks all succeed", the denominator being every sequence; a sequence without all of its
    ``sequence_length`` (5) subgoal records is incomplete and scores 0 at every K (the script warns). Returns a
    fraction in [0, 1]; LangMap prints percent.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidMetricInputError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, int) or sequence_length < n:
        raise InvalidMetricInputError(f"sequence_length must be an integer >= n ({n}), got {sequence_length!r}")
    sequences = _sequences(records)
    if not sequences:
        raise InvalidMetricInputError("SeqSR of no sequences is undefined")
    complete = [o for o in sequences.values() if set(o) == set(range(sequence_length))]
    passed = sum(all(outcomes[i] for i in range(n)) for outcomes in complete)
    return passed / len(sequences)


def seq_sr_table(records: Iterable[LevelRecord], max_n: int = 5) -> dict[int, float]:
    """SeqSR@1 .. SeqSR@max_n of sequences of ``max_n`` subgoals (LangMap reports @1-@5 of its 5-goal ones)."""
    items = list(records)
    return {n: seq_sr(items, n, max_n) for n in range(1, max_n + 1)}


# ----------------------------------------------------------------------------------------------- FindingDory


@dataclass(frozen=True)
class FindingDoryRecord:
    """The outcome of one FindingDory task (one instruction of one episode).

    The high-level (HL) policy picks frames of the experience video; the task verifier teleports the agent to
    the poses of those frames and checks the goal expression three times (``assign_and_validate_high_level_goal``):
    with every threshold (``hl_success``), with the distance threshold only (``hl_dtg_success``, semantic
    coverage threshold set to 0) and with the semantic-coverage threshold only (``hl_sc_success``, distance
    threshold set to 10 km). The low-level (LL) policy then navigates; ``ll_success`` is the task verifier's
    ``predicate_task_success`` at its STOP. The LL policy only runs after an HL success, so LL success implies
    HL success, and full HL success implies both relaxed ones.
    """

    episode_id: str
    task_id: str  # FindingDory "task_<k>"
    task_type: str  # FindingDory instruction ``task_type``, for per-type tables
    hl_success: bool
    hl_dtg_success: bool
    hl_sc_success: bool
    ll_success: bool
    hl_spl: Optional[float]  # None where the upstream measure is undefined (multi-goal tasks report -1)
    ll_spl: float

    def __post_init__(self) -> None:
        name = f"FindingDory episode {self.episode_id!r} {self.task_id!r}"
        for field_name in ("hl_success", "hl_dtg_success", "hl_sc_success", "ll_success"):
            if not isinstance(getattr(self, field_name), bool):
                raise InvalidMetricInputError(f"{name}: {field_name} must be a bool, got "
                                              f"{getattr(self, field_name)!r}")
        if self.hl_spl is not None:
            _check_success_spl(self.hl_success, self.hl_spl, f"{name} high level")
        _check_success_spl(self.ll_success, self.ll_spl, f"{name} low level")
        if self.ll_success and not self.hl_success:
            raise InvalidMetricInputError(f"{name}: low-level success without high-level success is impossible")
        if self.hl_success and not (self.hl_dtg_success and self.hl_sc_success):
            raise InvalidMetricInputError(
                f"{name}: full high-level success implies the distance-only and coverage-only successes"
            )

    @classmethod
    def from_distances(
        cls,
        episode_id: str,
        task_id: str,
        task_type: str,
        *,
        hl_success: bool,
        hl_dtg_success: bool,
        hl_sc_success: bool,
        ll_success: bool,
        shortest_path_m: float,
        hl_goal_path_m: Optional[float],
        path_length_m: float,
    ) -> FindingDoryRecord:
        """A record whose SPLs are computed as FindingDory does.

        ``shortest_path_m``: geodesic length from the start of the interaction phase to the nearest valid goal
        (through every goal, in order or by the shortest tour, for multi-goal tasks). ``hl_goal_path_m``: the
        geodesic length to the goal pose(s) the HL policy chose, i.e. the path a perfect low-level policy would
        take (None when unknown). ``path_length_m``: what the agent travelled.

        HL-SPL = S_HL * l / max(l, l_HL) (``FindingDoryHighLevelSPL``), LL-SPL = S_LL * l / max(l, p)
        (``FindingDorySPL``); both are Anderson et al.'s SPL, :func:`goat_suites.common.metrics.spl`.
        """
        hl_spl = None if hl_goal_path_m is None else spl(hl_success, shortest_path_m, hl_goal_path_m)
        return cls(episode_id=episode_id, task_id=task_id, task_type=task_type, hl_success=hl_success,
                   hl_dtg_success=hl_dtg_success, hl_sc_success=hl_sc_success, ll_success=ll_success,
                   hl_spl=hl_spl, ll_spl=spl(ll_success, shortest_path_m, path_length_m))


@dataclass(frozen=True)
class FindingDoryStats:
    """FindingDory's table row. Rates are fractions in [0, 1]."""

    hl_sr: float  # high-level success rate, all thresholds
    ll_sr: float  # low-level (end-to-end) success rate
    hl_spl: Optional[float]  # mean over tasks where it is defined; None when it is defined for none
    ll_spl: float
    dtg_sr: float  # high-level success rate with the distance-to-goal threshold only
    sc_sr: float  # high-level success rate with the semantic-coverage threshold only
    count: int

    def to_json(self) -> dict[str, Union[float, int, None]]:
        return {"hl_sr": self.hl_sr, "ll_sr": self.ll_sr, "hl_spl": self.hl_spl, "ll_spl": self.ll_spl,
                "dtg_sr": self.dtg_sr, "sc_sr": self.sc_sr, "count": self.count}


def findingdory_stats(records: Iterable[FindingDoryRecord]) -> FindingDoryStats:
    """HL-SR, LL-SR, HL-SPL, LL-SPL, DTG-SR and SC-SR: means over tasks of the per-task values.

    FindingDory (``measures.py`` measures ``high_level_goal_success``, ``predicate_task_success``,
    ``high_level_dtg_success``, ``high_level_sem_cov_success``, ``findingdory_high_level_spl``,
    ``findingdory_spl``) reports each as its mean over evaluated tasks. HL-SPL is undefined upstream for
    multi-goal tasks (reported as -1); those tasks are left out of the HL-SPL mean only.
    """
    items = list(records)
    if not items:
        raise InvalidMetricInputError("FindingDory metrics of no tasks are undefined")
    hl_spls = [r.hl_spl for r in items if r.hl_spl is not None]
    return FindingDoryStats(
        hl_sr=mean_over(items, lambda r: float(r.hl_success)),
        ll_sr=mean_over(items, lambda r: float(r.ll_success)),
        hl_spl=math.fsum(hl_spls) / len(hl_spls) if hl_spls else None,
        ll_spl=mean_over(items, lambda r: r.ll_spl),
        dtg_sr=mean_over(items, lambda r: float(r.hl_dtg_success)),
        sc_sr=mean_over(items, lambda r: float(r.hl_sc_success)),
        count=len(items),
    )


def findingdory_by_task_type(records: Iterable[FindingDoryRecord]) -> dict[str, FindingDoryStats]:
    """:func:`findingdory_stats` per instruction ``task_type``, in order of first appearance."""
    return {k: findingdory_stats(group) for k, group in group_by(records, lambda r: r.task_type).items()}


# ----------------------------------------------------------------------------------------------- PASTURE

# PASTURE splits, named after CoW's (environment build, class type) experiment pairs in pasture_runner.py:
#   uncommon = (LONGTAIL, LONGTAIL)          appearance = (NORMAL, APPEARENCE)   spatial = (NORMAL, SPATIAL)
#   appearance_distractors = (DUP, APPEARENCE)   spatial_distractors = (DUP, SPATIAL)
#   hidden = (REMOVE, HIDDEN): the visible same-type object is removed, only the hidden one is left;
#   hidden_distractors = (NORMAL, HIDDEN): the visible same-type object stays as a distractor.
# The two hidden pairings are read from the build names ("remove" vs "normal"), not stated in the repository.
PASTURE_CATEGORIES = (
    "uncommon",
    "appearance",
    "spatial",
    "appearance_distractors",
    "spatial_distractors",
    "hidden",
    "hidden_distractors",
)
PASTURE_EXPERIMENTS: Mapping[tuple[str, str], str] = {
    ("longtail", "longtail"): "uncommon",
    ("normal", "appearence"): "appearance",
    ("normal", "spatial"): "spatial",
    ("dup", "appearence"): "appearance_distractors",
    ("dup", "spatial"): "spatial_distractors",
    ("remove", "hidden"): "hidden",
    ("normal", "hidden"): "hidden_distractors",
}


@dataclass(frozen=True)
class PastureRecord:
    """The outcome of one PASTURE episode."""

    episode_id: str  # "<floor plan>_<object type>_<n>", e.g. "FloorPlan_Val3_5_GingerbreadHouse_1"
    category: str  # one of PASTURE_CATEGORIES
    success: bool  # CoW: the agent called Stop while the target was visible
    spl: float

    def __post_init__(self) -> None:
        if self.category not in PASTURE_CATEGORIES:
            raise InvalidMetricInputError(
                f"PASTURE episode {self.episode_id!r}: unknown category {self.category!r}; expected one of "
                f"{PASTURE_CATEGORIES}"
            )
        _check_success_spl(self.success, self.spl, f"PASTURE episode {self.episode_id!r}")


def pasture_by_category(records: Iterable[PastureRecord]) -> dict[str, GroupStats]:
    """SR and SPL per PASTURE split, splits in paper order, absent splits left out.

    CoW ``success_agg.py``: SR is the mean success over a split's episodes, SPL is AI2-THOR's
    ``compute_spl`` = the mean over episodes of S_i * l_i / max(p_i, l_i).
    """
    groups = group_by(records, lambda r: r.category)
    return {c: _stats(groups[c]) for c in PASTURE_CATEGORIES if c in groups}
