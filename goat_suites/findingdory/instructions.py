"""FindingDory instructions (``goat_suites.findingdory.generator`` step 2): a template per task type filled
from the ground truth of the experience, its answer computed from it, kept when the oracle can solve it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from goat_suites.findingdory.experience import (
    format_clock,
    minute_of_day,
)
from goat_suites.findingdory.generator_config import FindingDoryGenConfig
from goat_suites.findingdory.judge import TaskJudge
from goat_suites.findingdory.oracle import Experience, MoveRecord
from goat_suites.findingdory.tasks import (
    LAST,
    ORDINALS,
    TASK_TYPES,
    FindingDoryTask,
    Subgoal,
    room_target_id,
    templates_of,
)
from sim_bridge.embedded.home import ObjectSpec
from sim_bridge.embedded.sim import EmbeddedSim

DURATION_TIE_S = 1.0  # carry durations closer than this are ties (as the selector reads them)



@dataclass
class _Facts:
    """Ground truth of an experience that the templates are filled from."""

    sim: EmbeddedSim
    experience: Experience
    config: FindingDoryGenConfig

    def spec(self, object_id: str) -> ObjectSpec:
        return self.sim.home.object(object_id)  # category, colour and material never change

    @property
    def moves(self) -> tuple[MoveRecord, ...]:
        return self.experience.moves

    def time_s(self, frame: int) -> float:
        return self.experience.log.frames[frame].time_s

    def seen_ids(self) -> list[str]:
        return sorted({s.object_id for f in self.experience.log.frames for s in f.seen
                       if s.coverage >= self.config.min_coverage})

    def rooms_visited(self) -> list[int]:
        visited: list[int] = []
        for frame in self.experience.log.frames:
            if frame.room_id is not None and frame.room_id not in visited:
                visited.append(frame.room_id)
        return visited


Built = Optional[tuple[dict[str, str], list[frozenset[str]]]]  # slots and per-goal answers, or None


def _choice(rng: np.random.Generator, items: Sequence[MoveRecord]) -> MoveRecord:
    return items[int(rng.integers(len(items)))]


def _moved_where(facts: _Facts, keep: Callable[[ObjectSpec], bool]) -> frozenset[str]:
    return frozenset(m.object_id for m in facts.moves if keep(facts.spec(m.object_id)))


def _recall_seen(facts: _Facts, rng: np.random.Generator) -> Built:
    moved = {facts.spec(m.object_id).category for m in facts.moves}
    categories = sorted({facts.spec(o).category for o in facts.seen_ids()} - moved)
    if not categories:
        return None
    category = categories[int(rng.integers(len(categories)))]
    return {"category": category}, [frozenset(o for o in facts.seen_ids() if facts.spec(o).category == category)]


def _picked_from(facts: _Facts, rng: np.random.Generator) -> Built:
    category = facts.spec(_choice(rng, facts.moves).source_id).category
    return {"receptacle": category}, [frozenset(m.object_id for m in facts.moves
                                                if facts.spec(m.source_id).category == category)]


def _placed_on(facts: _Facts, rng: np.random.Generator) -> Built:
    category = facts.spec(_choice(rng, facts.moves).object_id).category
    return {"category": category}, [frozenset(m.dest_id for m in facts.moves
                                              if facts.spec(m.object_id).category == category)]


def _attribute(name: str) -> Callable[[_Facts, np.random.Generator], Built]:
    def build(facts: _Facts, rng: np.random.Generator) -> Built:
        value = getattr(facts.spec(_choice(rng, facts.moves).object_id), name)
        return {name: value}, [_moved_where(facts, lambda o: getattr(o, name) == value)]
    return build


def _same_receptacle(facts: _Facts, rng: np.random.Generator) -> Built:
    with_neighbours = [m for m in facts.moves if m.neighbours]
    if not with_neighbours:
        return None
    chosen = _choice(rng, with_neighbours)
    category, receptacle = facts.spec(chosen.object_id).category, facts.spec(chosen.source_id).category
    found: set[str] = set()
    for m in facts.moves:
        if facts.spec(m.object_id).category == category and facts.spec(m.source_id).category == receptacle:
            found |= m.neighbours
    return {"receptacle": receptacle, "category": category}, [frozenset(found)]


def _room_order(facts: _Facts, rng: np.random.Generator) -> Built:
    visited = facts.rooms_visited()
    k = int(rng.integers(min(len(visited), facts.config.max_room_ordinal)))
    return {"ordinal": ORDINALS[k]}, [frozenset({room_target_id(visited[k])})]


def _room_of_pick(facts: _Facts, rng: np.random.Generator) -> Built:
    category = facts.spec(_choice(rng, facts.moves).object_id).category
    return {"category": category}, [frozenset(room_target_id(facts.spec(m.source_id).room_id) for m in facts.moves
                                              if facts.spec(m.object_id).category == category)]


def _ordinal(rng: np.random.Generator, count: int) -> tuple[int, str]:
    k = int(rng.integers(count))
    return k, LAST if k == count - 1 and rng.random() < 0.5 else ORDINALS[k]


def _order_pick(facts: _Facts, rng: np.random.Generator) -> Built:
    k, word = _ordinal(rng, len(facts.moves))
    return {"ordinal": word}, [frozenset({facts.moves[k].object_id})]


def _order_place(facts: _Facts, rng: np.random.Generator) -> Built:
    by_time = sorted(facts.moves, key=lambda m: m.place_frame)
    k, word = _ordinal(rng, len(by_time))
    return {"ordinal": word}, [frozenset({by_time[k].dest_id})]


def _time_pick(facts: _Facts, rng: np.random.Generator) -> Built:
    minute = minute_of_day(facts.time_s(_choice(rng, facts.moves).pick_frame))
    return {"clock": format_clock(minute * 60.0)}, [
        frozenset(m.object_id for m in facts.moves if minute_of_day(facts.time_s(m.pick_frame)) == minute)]


def _time_room(facts: _Facts, rng: np.random.Generator) -> Built:
    frames = facts.experience.log.frames
    minute = minute_of_day(frames[int(rng.integers(len(frames)))].time_s)
    rooms = frozenset(room_target_id(f.room_id) for f in frames
                      if f.room_id is not None and minute_of_day(f.time_s) == minute)
    return ({"clock": format_clock(minute * 60.0)}, [rooms]) if rooms else None


def _duration(longest: bool) -> Callable[[_Facts, np.random.Generator], Built]:
    def build(facts: _Facts, rng: np.random.Generator) -> Built:
        spans = {m.object_id: facts.time_s(m.place_frame) - facts.time_s(m.pick_frame) for m in facts.moves}
        best = max(spans.values()) if longest else min(spans.values())
        return {}, [frozenset(o for o, d in spans.items() if abs(d - best) < DURATION_TIE_S)]
    return build


_BUILDERS: dict[str, Callable[[_Facts, np.random.Generator], Built]] = {
    "recall_seen": _recall_seen,
    "interaction_picked": lambda facts, rng: ({}, [frozenset(m.object_id for m in facts.moves)]),
    "interaction_placed_on": lambda facts, rng: ({}, [frozenset(m.dest_id for m in facts.moves)]),
    "conditional_picked_from": _picked_from,
    "conditional_placed_on": _placed_on,
    "attribute_colour": _attribute("colour"),
    "attribute_material": _attribute("material"),
    "spatial_same_receptacle": _same_receptacle,
    "room_order": _room_order,
    "room_of_pick": _room_of_pick,
    "order_pick": _order_pick,
    "order_place": _order_place,
    "time_pick": _time_pick,
    "time_room": _time_room,
    "duration_longest": _duration(longest=True),
    "duration_shortest": _duration(longest=False),
    "revisit_any_order": lambda facts, rng: ({}, [frozenset({m.object_id}) for m in facts.moves]),
    "revisit_pick_order": lambda facts, rng: ({}, [frozenset({m.object_id}) for m in facts.moves]),
    "revisit_place_order": lambda facts, rng: (
        {}, [frozenset({m.dest_id}) for m in sorted(facts.moves, key=lambda m: m.place_frame)]),
}


def generate_tasks(sim: EmbeddedSim, experience: Experience, judge: TaskJudge, rng: np.random.Generator,
                   config: Optional[FindingDoryGenConfig] = None,
                   task_types: Sequence[str] = TASK_TYPES) -> tuple[FindingDoryTask, ...]:
    """At most one task per type, each with a non-empty answer per goal that some frame of the log satisfies."""
    facts = _Facts(sim, experience, config or FindingDoryGenConfig())
    tasks: list[FindingDoryTask] = []
    for task_type in task_types:
        templates = templates_of(task_type)
        for _ in range(facts.config.task_attempts):
            template = templates[int(rng.integers(len(templates)))]
            built = _BUILDERS[template.key](facts, rng)
            if built is None or not built[1] or any(not ids for ids in built[1]):
                continue
            slots, answer = built
            subgoals = tuple(Subgoal(template.target, ids) for ids in answer)
            if not all(judge.solvable(sg, experience.log) for sg in subgoals):
                continue
            tasks.append(FindingDoryTask(task_id=f"task_{len(tasks) + 1}", task_type=task_type,
                                         template_key=template.key, lang=template.fill(slots), subgoals=subgoals,
                                         revisit=template.revisit))
            break
    return tuple(tasks)
