"""The failure taxonomy: which class a failed subtask falls into, and from what."""

from __future__ import annotations

import math
from typing import Optional

import pytest

from goat_core.types import StopDecision
from goat_suites.common.failures import (
    FAILURE_CLASSES,
    InvalidFailureError,
    SceneObject,
    classify_failure,
    count_failures,
    episode_to_world_xy,
    failure_of_subtask,
    target_is_goal,
)

# A cabinet with a cup on its top, a second cabinet 3 m away.
OBJECTS = [SceneObject("cabinet_1", (2.0, 0.0), "cabinet"), SceneObject("cup_1", (2.1, 0.15), "cup"),
           SceneObject("cabinet_2", (5.0, 0.0), "cabinet")]


@pytest.mark.parametrize(("success", "stop_reason", "at_target", "is_goal", "expected"), [
    (True, "stop", True, True, None),
    (False, "budget", False, None, "budget"),
    (False, "error", False, None, "error"),
    (False, "stop", False, None, "gave_up"),
    (False, "stop", True, False, "wrong_instance"),
    (False, "stop", True, True, "near_miss"),
])
def test_classes(success: bool, stop_reason: str, at_target: bool, is_goal: Optional[bool],
                 expected: Optional[str]) -> None:
    assert classify_failure(success, stop_reason, at_target, is_goal) == expected


def test_bad_inputs_are_named() -> None:
    with pytest.raises(InvalidFailureError, match="'halted'"):
        classify_failure(False, "halted", False, None)
    with pytest.raises(InvalidFailureError, match="target_is_goal"):
        classify_failure(False, "stop", True, None)
    with pytest.raises(InvalidFailureError, match="'lost'"):
        count_failures(["gave_up", "lost"])


def test_the_instance_category_picks_the_object() -> None:
    """The cabinet's perceived centroid lies nearer to the cup on it than to the cabinet's own centre."""
    centroid = (2.12, 0.1)
    assert target_is_goal(centroid, ["cabinet_1"], OBJECTS, category="cabinet")
    assert not target_is_goal(centroid, ["cabinet_1"], OBJECTS)  # without the category the cup is nearest
    assert not target_is_goal(centroid, ["cabinet_2"], OBJECTS, category="cabinet")  # another cabinet
    assert not target_is_goal((3.5, 0.0), ["cabinet_1"], OBJECTS, category="cabinet", radius_m=1.0)  # too far
    assert not target_is_goal(centroid, ["cabinet_1"], [], category="cabinet")


def test_episode_frame_to_world() -> None:
    """The episode frame is the start pose: 1 m ahead of a robot at (1, 2) facing +y is (1, 3)."""
    xy = episode_to_world_xy((1.0, 2.0), math.pi / 2, (1.0, 0.0))
    assert xy == pytest.approx([1.0, 3.0])


def test_a_subtask_from_the_agents_account() -> None:
    """The robot started at the world origin facing +x; it stopped at an instance 2 m ahead."""
    at_cabinet = StopDecision(gave_up=False, reason="at cabinet #3", category="cabinet", confident=True,
                              target_xyz_m=(2.05, 0.05, 0.4))
    args = ((0.0, 0.0), 0.0)
    assert failure_of_subtask(False, "stop", at_cabinet, *args, ["cabinet_1"], OBJECTS) == "near_miss"
    assert failure_of_subtask(False, "stop", at_cabinet, *args, ["cabinet_2"], OBJECTS) == "wrong_instance"
    gave_up = StopDecision(gave_up=True, reason="recoveries tried: all")
    assert failure_of_subtask(False, "stop", gave_up, *args, ["cabinet_1"], OBJECTS) == "gave_up"
    assert failure_of_subtask(False, "stop", None, *args, ["cabinet_1"], OBJECTS) == "gave_up"  # no account
    assert failure_of_subtask(True, "stop", at_cabinet, *args, ["cabinet_1"], OBJECTS) is None
    assert failure_of_subtask(False, "budget", None, *args, ["cabinet_1"], OBJECTS) == "budget"


def test_counts_list_every_class() -> None:
    counts = count_failures([None, "gave_up", "near_miss", "gave_up"])
    assert list(counts) == list(FAILURE_CLASSES)
    assert counts["gave_up"] == 2 and counts["near_miss"] == 1 and counts["budget"] == 0


def test_a_stop_decision_has_a_target_exactly_when_it_did_not_give_up() -> None:
    with pytest.raises(ValueError, match="target"):
        StopDecision(gave_up=True, reason="x", target_xyz_m=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="target"):
        StopDecision(gave_up=False, reason="x")
