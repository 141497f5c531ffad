"""Templated FindingDory instructions: the task types, their sentences, and the answer of a generated task.

FindingDory (Yadav et al. 2025, arXiv:2506.15635, Table 1) groups its instructions into single-goal spatial
tasks (object recall, interaction, conditional interaction, object attributes, spatial relationship, room
visitation), single-goal temporal tasks (interaction order, time-based, duration) and multi-goal tasks
(unordered and ordered revisitation). The sentences below are this project's own templates for those types,
written for the procedural homes of the embedded simulator; each fills named slots (``{category}``,
``{clock}``, ...) and :func:`parse_instruction` reads a filled sentence back, so the high-level selector works
from the words alone.

A task's answer is one :class:`Subgoal` per goal to reach (several for revisitation), each the set of targets
any of which is correct: object ids (``obj_007``) or rooms (:func:`room_target_id`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Mapping, Optional

from goat_core.errors import InvalidGoalError

TASK_TYPES = (
    "object_recall",
    "interaction",
    "conditional_interaction",
    "attribute",
    "spatial_relationship",
    "room_visitation",
    "interaction_order",
    "time_based",
    "duration",
    "unordered_revisitation",
    "ordered_revisitation",
)
TargetKind = Literal["object", "room"]  # objects include receptacles (furniture)
Revisit = Literal["ordered", "unordered"]
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
LAST = "last"
_ROOM_PREFIX = "room_"
_SLOT = re.compile(r"\{(\w+)\}")
# What a slot may hold when a sentence is read back; other slots hold any words.
_SLOT_PATTERNS = {"ordinal": "|".join(ORDINALS + (LAST,)), "clock": r"\d{2}:\d{2}"}


def room_target_id(room_id: int) -> str:
    """The target id of a room ("room_3")."""
    return f"{_ROOM_PREFIX}{int(room_id)}"


def room_of_target(target_id: str) -> Optional[int]:
    """The room id of a room target id, None for an object id."""
    if target_id.startswith(_ROOM_PREFIX) and target_id[len(_ROOM_PREFIX):].isdigit():
        return int(target_id[len(_ROOM_PREFIX):])
    return None


def ordinal_index(word: str, count: int) -> int:
    """0-based position named by an ordinal word ("second" -> 1, "last" -> count - 1)."""
    if word == LAST:
        if count < 1:
            raise InvalidGoalError("'last' of an empty sequence")
        return count - 1
    if word not in ORDINALS:
        raise InvalidGoalError(f"unknown ordinal {word!r}; expected one of {ORDINALS + (LAST,)}")
    return ORDINALS.index(word)


@dataclass(frozen=True)
class Template:
    """One instruction sentence with named slots."""

    key: str  # unique name, e.g. "order_pick"
    task_type: str  # one of TASK_TYPES
    text: str  # str.format text with {slot} fields
    target: TargetKind
    revisit: Optional[Revisit] = None  # multi-goal tasks: whether the goals must be visited in order

    @property
    def slots(self) -> tuple[str, ...]:
        return tuple(_SLOT.findall(self.text))

    def fill(self, slots: Mapping[str, str]) -> str:
        missing = [s for s in self.slots if s not in slots]
        if missing:
            raise InvalidGoalError(f"template {self.key!r} needs slots {missing}, got {dict(slots)}")
        return self.text.format(**{s: slots[s] for s in self.slots})

    def match(self, lang: str) -> Optional[dict[str, str]]:
        """The slot values if ``lang`` is this template filled in, else None."""
        pattern = "".join(f"(?P<{piece}>{_SLOT_PATTERNS.get(piece, '.+?')})" if k % 2 else re.escape(piece)
                          for k, piece in enumerate(_SLOT.split(self.text)))
        found = re.fullmatch(pattern, lang.strip())
        return None if found is None else found.groupdict()


TEMPLATES: tuple[Template, ...] = (
    Template("recall_seen", "object_recall", "Navigate to the {category} you saw yesterday.", "object"),
    Template("interaction_picked", "interaction", "Navigate to any object you picked up yesterday.", "object"),
    Template("interaction_placed_on", "interaction",
             "Navigate to any receptacle you placed an object on yesterday.", "object"),
    Template("conditional_picked_from", "conditional_interaction",
             "Navigate to the object you picked up from the {receptacle}.", "object"),
    Template("conditional_placed_on", "conditional_interaction",
             "Navigate to the receptacle you placed the {category} on.", "object"),
    Template("attribute_colour", "attribute", "Navigate to the {colour} object you picked up yesterday.", "object"),
    Template("attribute_material", "attribute",
             "Navigate to the {material} object you moved yesterday.", "object"),
    Template("spatial_same_receptacle", "spatial_relationship",
             "Navigate to an object that stood on the same {receptacle} as the {category} you picked up.",
             "object"),
    Template("room_order", "room_visitation", "Navigate to the {ordinal} room you visited yesterday.", "room"),
    Template("room_of_pick", "room_visitation", "Navigate to the room where you picked up the {category}.",
             "room"),
    Template("order_pick", "interaction_order", "Navigate to the object you picked up {ordinal}.", "object"),
    Template("order_place", "interaction_order", "Navigate to the receptacle you placed an object on {ordinal}.",
             "object"),
    Template("time_pick", "time_based", "Navigate to the object you picked up at {clock}.", "object"),
    Template("time_room", "time_based", "Navigate to the room you were in at {clock}.", "room"),
    Template("duration_longest", "duration", "Navigate to the object you carried for the longest time.", "object"),
    Template("duration_shortest", "duration", "Navigate to the object you carried for the shortest time.",
             "object"),
    Template("revisit_any_order", "unordered_revisitation",
             "Revisit every object you picked up yesterday, in any order.", "object", "unordered"),
    Template("revisit_pick_order", "ordered_revisitation",
             "Revisit the objects you picked up yesterday, in the order you picked them up.", "object", "ordered"),
    Template("revisit_place_order", "ordered_revisitation",
             "Revisit the receptacles you placed objects on yesterday, in the order you placed them.", "object",
             "ordered"),
)
TEMPLATES_BY_KEY: Mapping[str, Template] = {t.key: t for t in TEMPLATES}


def templates_of(task_type: str) -> tuple[Template, ...]:
    if task_type not in TASK_TYPES:
        raise InvalidGoalError(f"unknown FindingDory task type {task_type!r}; expected one of {TASK_TYPES}")
    return tuple(t for t in TEMPLATES if t.task_type == task_type)


def parse_instruction(lang: str) -> tuple[Template, dict[str, str]]:
    """The template a sentence was written from and its slot values; InvalidGoalError unless exactly one fits."""
    found = [(t, slots) for t in TEMPLATES if (slots := t.match(lang)) is not None]
    if len(found) != 1:
        names = [t.key for t, _ in found]
        raise InvalidGoalError(f"instruction {lang!r} fits {len(found)} FindingDory templates {names}; "
                               "expected exactly one")
    return found[0]


@dataclass(frozen=True)
class Subgoal:
    """One goal of a task: reaching any of ``valid_ids`` satisfies it."""

    kind: TargetKind
    valid_ids: frozenset[str]

    def __post_init__(self) -> None:
        if not self.valid_ids:
            raise InvalidGoalError("a subgoal needs at least one valid target")
        rooms = [room_of_target(t) is not None for t in self.valid_ids]
        if any(rooms) != (self.kind == "room") or len(set(rooms)) > 1:
            raise InvalidGoalError(f"{self.kind} subgoal with targets {sorted(self.valid_ids)}: room targets "
                                   "are 'room_<id>' and only room subgoals hold them")


@dataclass(frozen=True)
class FindingDoryTask:
    """One generated instruction with its answer."""

    task_id: str  # "task_<k>", FindingDory's naming
    task_type: str
    template_key: str
    lang: str
    subgoals: tuple[Subgoal, ...]  # in the order they must be reached when ``revisit`` is "ordered"
    revisit: Optional[Revisit] = None

    def __post_init__(self) -> None:
        template = TEMPLATES_BY_KEY.get(self.template_key)
        if template is None or template.task_type != self.task_type:
            raise InvalidGoalError(f"task {self.task_id}: template {self.template_key!r} is not a "
                                   f"{self.task_type!r} template")
        if not self.subgoals:
            raise InvalidGoalError(f"task {self.task_id}: no subgoals")
        if self.revisit is None and len(self.subgoals) != 1:
            raise InvalidGoalError(f"task {self.task_id}: a single-goal task has {len(self.subgoals)} subgoals")

    @property
    def multi_goal(self) -> bool:
        return self.revisit is not None
