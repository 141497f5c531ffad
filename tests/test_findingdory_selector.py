"""The FindingDory templates, the experience log and the rule-based high-level selector, on a hand-made log."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import pytest

from goat_core.errors import ConfigError, InvalidGoalError
from goat_core.types import Pose2D
from goat_suites.findingdory.experience import (
    UNKNOWN_RECEPTACLE,
    ExperienceFrame,
    ExperienceLog,
    Interaction,
    ObjectInfo,
    SeenObject,
    format_clock,
    parse_clock,
)
from goat_suites.findingdory.selector import ExperienceSelector, SelectorConfig, carry_durations_s
from goat_suites.findingdory.tasks import (
    TASK_TYPES,
    TEMPLATES,
    FindingDoryTask,
    Subgoal,
    parse_instruction,
    room_target_id,
    templates_of,
)

# The day in the log: the robot sees a red mug (A) and a book (B) on a table (T) in room 0, picks the mug up,
# puts it on a shelf (S) in room 1, picks a cup (C) from the shelf and puts it on a counter (K) in room 2.
OBJECTS = {
    "A": ObjectInfo("A", "mug", "red", "ceramic", False),
    "B": ObjectInfo("B", "book", "blue", "fabric", False),
    "C": ObjectInfo("C", "cup", "white", "glass", False),
    "T": ObjectInfo("T", "table", "brown", "wooden", True),
    "S": ObjectInfo("S", "shelf", "white", "wooden", True),
    "K": ObjectInfo("K", "counter", "gray", "metal", True),
}
NINE = 9 * 3600.0


def _frame(index: int, time_s: float, xy: tuple[float, float], room: Optional[int],
           seen: tuple[tuple[str, float, Optional[str]], ...], event: Optional[Interaction] = None) -> ExperienceFrame:
    return ExperienceFrame(index=index, time_s=time_s, pose=Pose2D(xy[0], xy[1], 0.0), camera_tilt_rad=-0.5,
                           room_id=room, seen=tuple(SeenObject(*s) for s in seen), event=event)


def _log() -> ExperienceLog:
    frames = [
        # The mug is seen biggest before it is picked up: that view is stale once it moved.
        _frame(0, NINE, (0.0, 0.0), 0, (("A", 0.2, "T"), ("B", 0.01, "T"), ("T", 0.3, None))),
        _frame(1, NINE + 3, (0.5, 0.0), 0, (("A", 0.1, "T"), ("B", 0.02, "T"), ("T", 0.3, None)),
               Interaction("pick", "A", "T")),
        _frame(2, NINE + 23, (0.5, 0.0), 0, (("B", 0.02, "T"), ("T", 0.3, None))),
        _frame(3, NINE + 50, (1.5, 0.0), None, ()),  # in the doorway
        _frame(4, NINE + 60, (2.5, 0.0), 1, (("S", 0.3, None),)),
        _frame(5, NINE + 80, (3.0, 0.0), 1, (("A", 0.05, "S"), ("S", 0.3, None)), Interaction("place", "A", "S")),
        _frame(6, NINE + 130, (3.0, 0.5), 1, (("A", 0.01, "S"), ("C", 0.03, "S"), ("S", 0.2, None)),
               Interaction("pick", "C", "S")),
        _frame(7, NINE + 150, (3.0, 0.5), 1, (("A", 0.005, "S"),)),
        _frame(8, NINE + 200, (4.5, 0.0), None, ()),
        _frame(9, NINE + 240, (6.0, 0.0), 2, (("K", 0.2, None),)),
        _frame(10, NINE + 260, (6.5, 0.0), 2, (("C", 0.04, "K"), ("K", 0.2, None)), Interaction("place", "C", "K")),
        _frame(11, NINE + 300, (7.0, 0.0), 2, (("C", 0.02, "K"),)),
    ]
    return ExperienceLog(frames=tuple(frames), objects=OBJECTS, room_types={0: "bedroom", 1: "office", 2: "kitchen"})


@pytest.fixture(scope="module")
def log() -> ExperienceLog:
    return _log()


def test_every_template_reads_back_as_itself() -> None:
    for template in TEMPLATES:
        slots = {s: {"ordinal": "second", "clock": "09:14"}.get(s, "coffee table") for s in template.slots}
        found, read = parse_instruction(template.fill(slots))
        assert found is template and read == slots
    assert {t.task_type for t in TEMPLATES} == set(TASK_TYPES)
    assert all(templates_of(t) for t in TASK_TYPES)


def test_unknown_instruction_is_named_in_the_error() -> None:
    with pytest.raises(InvalidGoalError, match="Go dance"):
        parse_instruction("Go dance.")
    with pytest.raises(InvalidGoalError, match="unknown FindingDory task type"):
        templates_of("dancing")


def test_clock_round_trip_and_errors() -> None:
    assert format_clock(NINE + 14 * 60 + 59) == "09:14"
    assert parse_clock("09:14") == 9 * 60 + 14
    for bad in ("9:14", "24:00", "09:60"):
        with pytest.raises(ConfigError):
            parse_clock(bad)
    with pytest.raises(ConfigError):
        format_clock(-1.0)


def test_log_rejects_frames_out_of_order() -> None:
    frames = _log().frames
    swapped = (replace(frames[1], index=0), replace(frames[0], index=1))
    with pytest.raises(ConfigError, match="goes back in time"):
        ExperienceLog(frames=swapped, objects=OBJECTS)
    with pytest.raises(ConfigError, match="numbered"):
        ExperienceLog(frames=(frames[1],), objects=OBJECTS)
    with pytest.raises(ConfigError, match="does not describe"):
        ExperienceLog(frames=(frames[0],), objects={})


def test_carry_durations(log: ExperienceLog) -> None:
    assert carry_durations_s(log) == {"A": 77.0, "C": 130.0}


@pytest.mark.parametrize("lang, target, frame", [
    # The mug's biggest views (frames 0, 1) show it before it moved: the answer is its biggest view since.
    ("Navigate to the object you picked up first.", "A", 5),
    ("Navigate to the object you picked up second.", "C", 10),
    ("Navigate to the object you picked up last.", "C", 10),
    # A receptacle: the frame of the place on it, where the robot stood at it (not its biggest view, frame 4).
    ("Navigate to the receptacle you placed an object on first.", "S", 5),
    ("Navigate to the object you picked up at 09:02.", "C", 10),
    ("Navigate to the object you carried for the longest time.", "C", 10),
    ("Navigate to the object you carried for the shortest time.", "A", 5),
    ("Navigate to the red object you picked up yesterday.", "A", 5),
    ("Navigate to the glass object you moved yesterday.", "C", 10),
    ("Navigate to the object you picked up from the table.", "A", 5),
    ("Navigate to the receptacle you placed the cup on.", "K", 10),
    ("Navigate to an object that stood on the same table as the mug you picked up.", "B", 1),
    ("Navigate to the book you saw yesterday.", "B", 1),
    ("Navigate to the room where you picked up the cup.", room_target_id(1), None),
    ("Navigate to the second room you visited yesterday.", room_target_id(1), None),
    ("Navigate to the room you were in at 09:04.", room_target_id(2), None),
])
def test_single_goal_answers(log: ExperienceLog, lang: str, target: str, frame: Optional[int]) -> None:
    selection = ExperienceSelector().select(lang, log)
    assert selection.target_ids == (target,)
    if frame is not None:
        assert selection.frame_indices == (frame,)
    else:  # a room: a frame taken in that room
        assert room_target_id(log.frames[selection.frame_indices[0]].room_id or -1) == target


def test_a_stale_view_is_never_chosen(log: ExperienceLog) -> None:
    # Any picked object, from a start next to the table where the mug was: the mug's nearest *valid* frame is
    # on the shelf, and the cup's on the counter; the mug (nearer) wins.
    selection = ExperienceSelector().select("Navigate to any object you picked up yesterday.", log, (0.0, 0.0))
    assert selection.candidates == (frozenset({"A", "C"}),)
    assert selection.target_ids == ("A",) and selection.frame_indices == (5,)


def test_room_frame_stays_away_from_doorways(log: ExperienceLog) -> None:
    # Room 2's frames: 9 at x=6.0 (1.5 m from the doorway frame 8), 10 and 11 further in. With a margin of
    # 2 m only frame 10 or 11 qualify; the nearest of them to the start is 10.
    selection = ExperienceSelector(SelectorConfig(room_margin_m=2.0)).select(
        "Navigate to the room you were in at 09:04.", log)
    assert selection.frame_indices == (10,)


def test_ordered_keeps_the_order_and_unordered_goes_nearest_first(log: ExperienceLog) -> None:
    near_counter = (7.0, 0.0)
    ordered = ExperienceSelector().select(
        "Revisit the objects you picked up yesterday, in the order you picked them up.", log, near_counter)
    assert ordered.target_ids == ("A", "C") and ordered.frame_indices == (5, 10)
    unordered = ExperienceSelector().select(
        "Revisit every object you picked up yesterday, in any order.", log, near_counter)
    assert unordered.target_ids == ("C", "A") and unordered.frame_indices == (10, 5)
    places = ExperienceSelector().select(
        "Revisit the receptacles you placed objects on yesterday, in the order you placed them.", log)
    assert places.target_ids == ("S", "K")


def test_no_answer_is_an_error_naming_the_instruction(log: ExperienceLog) -> None:
    with pytest.raises(InvalidGoalError, match="green"):
        ExperienceSelector().select("Navigate to the green object you picked up yesterday.", log)
    with pytest.raises(InvalidGoalError, match="fourth"):
        ExperienceSelector().select("Navigate to the object you picked up fourth.", log)


def _log_with_unknown_receptacle() -> ExperienceLog:
    """The day, but the shelf the mug was put on could not be identified, and the frame nearest the start shows
    something under the unknown receptacle's name, as large as anything: only the rule can keep it out."""
    base = _log()
    frames = list(base.frames)
    frames[0] = replace(frames[0], seen=frames[0].seen + (SeenObject(UNKNOWN_RECEPTACLE, 0.5, None),))
    frames[5] = replace(frames[5], event=Interaction("place", "A", UNKNOWN_RECEPTACLE))
    objects = dict(base.objects)
    objects[UNKNOWN_RECEPTACLE] = ObjectInfo(UNKNOWN_RECEPTACLE, "", "", "", True)
    return replace(base, frames=tuple(frames), objects=objects)


def test_an_unknown_receptacle_is_never_a_target() -> None:
    log = _log_with_unknown_receptacle()
    selector = ExperienceSelector()
    # Among the receptacles placed on, the identified one is chosen, though the unknown one is nearer the start.
    any_place = selector.select("Navigate to any receptacle you placed an object on yesterday.", log)
    assert any_place.target_ids == ("K",) and any_place.candidates == (frozenset({"K"}),)
    # Where the unknown one is the only answer, the error names the instruction and the frame of the place.
    with pytest.raises(InvalidGoalError, match=r"placed an object on first.*frame\(s\) \[5\] could not be identified"):
        selector.select("Navigate to the receptacle you placed an object on first.", log)
    with pytest.raises(InvalidGoalError, match=r"in the order you placed them.*\[5\]"):
        selector.select("Revisit the receptacles you placed objects on yesterday, in the order you placed them.", log)
    # Every answer of every template leaves it out.
    for template in TEMPLATES:
        slots = {"ordinal": "first", "clock": "09:00", "category": "mug", "receptacle": "shelf", "colour": "red",
                 "material": "ceramic"}
        try:
            chosen = selector.select(template.fill({k: slots.get(k, "shelf") for k in template.slots}), log)
        except InvalidGoalError:
            continue
        assert UNKNOWN_RECEPTACLE not in chosen.target_ids
        assert all(UNKNOWN_RECEPTACLE not in ids for ids in chosen.candidates)


def test_task_and_subgoal_checks() -> None:
    with pytest.raises(InvalidGoalError, match="at least one"):
        Subgoal("object", frozenset())
    with pytest.raises(InvalidGoalError, match="room targets"):
        Subgoal("object", frozenset({room_target_id(2)}))
    goal = Subgoal("object", frozenset({"A"}))
    with pytest.raises(InvalidGoalError, match="single-goal"):
        FindingDoryTask("task_1", "interaction", "interaction_picked", "x", (goal, goal))
    with pytest.raises(InvalidGoalError, match="not a 'duration' template"):
        FindingDoryTask("task_1", "duration", "interaction_picked", "x", (goal,))
