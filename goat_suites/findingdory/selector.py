"""The high-level policy of FindingDory: answer an instruction from the experience log with frames to go to.

FindingDory's high-level policy is a video-language model that reads the instruction and the experience video
and names the frame(s) whose pose the robot should go back to (Yadav et al. 2025, arXiv:2506.15635, Sec. 4).
This selector is rule based instead: it reads the instruction back into its template (``findingdory_tasks``)
and answers over the structured log (``experience``), i.e. it assumes perfect perception and perfect language
understanding, and it is an upper bound for the memory part of the task, not a VLM baseline. What it can still
get wrong is the frame: the task verifier checks the world as it is *after* the experience, so a frame that
shows an object before it was moved is wrong, and a frame that shows it small and far away may fail the
distance check.

Frame choice: for an object, the frames after its last move (the place frame on) that show it, the one where it
covers most of the image (closest and most central); for a receptacle the robot put something on (else took
something from), the same among the frames of those places (picks): the robot stood at it then; for a room,
the frame in it nearest to the start among those at least ``room_margin_m`` from every frame taken outside it
(away from doorways), else the one nearest the mean position of its frames. Among several correct targets of a
single-goal task the one whose frame is nearest the start is chosen; unordered revisitation visits the targets
nearest-neighbour first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError, InvalidGoalError
from goat_suites.findingdory.experience import (
    UNKNOWN_RECEPTACLE,
    ExperienceFrame,
    ExperienceLog,
    Interaction,
    minute_of_day,
    parse_clock,
)
from goat_suites.findingdory.tasks import (
    Template,
    ordinal_index,
    parse_instruction,
    room_of_target,
    room_target_id,
)

DURATION_TIE_S = 1.0  # carry durations closer than this are ties (the clock of a frame is a whole step)


@dataclass(frozen=True)
class SelectorConfig:
    # An object counts as seen in a frame when it covers at least this share of the image (FindingDory's
    # semantic coverage threshold of its task verifier, pddl_domain_fp.yaml).
    min_coverage: float = 0.001
    # A room's frame is chosen this far from every frame taken outside the room, so that stopping near its
    # pose stays inside (doorways belong to no room).
    room_margin_m: float = 0.75

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_coverage < 1.0:
            raise ConfigError(f"SelectorConfig.min_coverage must be in [0, 1), got {self.min_coverage!r}")
        if not self.room_margin_m >= 0.0:
            raise ConfigError(f"SelectorConfig.room_margin_m must be >= 0, got {self.room_margin_m!r}")


@dataclass(frozen=True)
class Selection:
    """The high-level answer: one frame per goal, in the order to visit them."""

    frame_indices: tuple[int, ...]
    target_ids: tuple[str, ...]  # what each chosen frame is meant to show (object id or room target id)
    candidates: tuple[frozenset[str], ...]  # every answer the selector found, per goal (before choosing)
    notes: tuple[str, ...] = ()  # what the answer rests on that is less than certain (a guessed receptacle ...)


Answer = list[frozenset[str]]  # one set of acceptable targets per goal


class ExperienceSelector:
    """Rule-based FindingDory high-level policy over an :class:`ExperienceLog`."""

    def __init__(self, config: SelectorConfig = SelectorConfig()) -> None:
        self.config = config
        self._rules: Mapping[str, Callable[[ExperienceLog, Mapping[str, str]], Answer]] = {
            "recall_seen": self._recall_seen,
            "interaction_picked": lambda log, _: [frozenset(i.object_id for _, i in log.events("pick"))],
            "interaction_placed_on": lambda log, _: [frozenset(i.receptacle_id for _, i in log.events("place"))],
            "conditional_picked_from": self._picked_from,
            "conditional_placed_on": self._placed_on,
            "attribute_colour": lambda log, s: [self._picked_where(log, lambda o: o.colour == s["colour"])],
            "attribute_material": lambda log, s: [self._picked_where(log, lambda o: o.material == s["material"])],
            "spatial_same_receptacle": self._same_receptacle,
            "room_order": self._room_order,
            "room_of_pick": self._room_of_pick,
            "order_pick": lambda log, s: [self._nth(log, "pick", s["ordinal"], lambda i: i.object_id)],
            "order_place": lambda log, s: [self._nth(log, "place", s["ordinal"], lambda i: i.receptacle_id)],
            "time_pick": self._time_pick,
            "time_room": self._time_room,
            "duration_longest": lambda log, _: [self._by_duration(log, longest=True)],
            "duration_shortest": lambda log, _: [self._by_duration(log, longest=False)],
            "revisit_any_order": lambda log, _: [frozenset({i.object_id}) for _, i in log.events("pick")],
            "revisit_pick_order": lambda log, _: [frozenset({i.object_id}) for _, i in log.events("pick")],
            "revisit_place_order": lambda log, _: [frozenset({i.receptacle_id}) for _, i in log.events("place")],
        }

    # ------------------------------------------------------------------------------------------------ API
    def answer(self, lang: str, log: ExperienceLog) -> tuple[Template, Answer]:
        """The template of the instruction and the acceptable targets of each of its goals."""
        template, slots = parse_instruction(lang)
        # An unidentified receptacle is no place to go to: it is dropped from every goal's targets.
        answer = [ids - {UNKNOWN_RECEPTACLE} for ids in self._rules[template.key](log, slots)]
        if not answer or any(not ids for ids in answer):
            unknown = [f.index for f, i in log.events() if i.receptacle_id == UNKNOWN_RECEPTACLE]
            why = "" if not unknown else (f"; the receptacle of the pick or place at frame(s) {unknown} could not "
                                          "be identified")
            raise InvalidGoalError(f"the experience holds no answer to {lang!r}{why}")
        return template, answer

    def select(self, lang: str, log: ExperienceLog, start_xy_m: Sequence[float] = (0.0, 0.0)) -> Selection:
        """Frames to go to for ``lang``; ``start_xy_m`` is where the robot stands now, episode frame.

        Raises InvalidGoalError when the instruction fits no template or the log holds no answer or no frame.
        """
        template, answer = self.answer(lang, log)
        here = np.asarray(start_xy_m, dtype=np.float64)
        options = [self._best_frames(log, ids, here) for ids in answer]
        for ids, frames in zip(answer, options, strict=True):
            if not frames:
                raise InvalidGoalError(f"no frame of the experience shows any of {sorted(ids)} for {lang!r}")
        if template.revisit is None:
            target, frame = min(options[0].items(), key=lambda kv: (_dist(log.frames[kv[1]], here), kv[0]))
            return Selection((frame,), (target,), tuple(answer))
        picks = [min(o.items(), key=lambda kv: (-self._score(log, kv), kv[0])) for o in options]
        order = list(range(len(picks)))
        if template.revisit == "unordered":
            order = _nearest_neighbour_order([log.frames[f].pose.xy() for _, f in picks], here)
        return Selection(tuple(picks[k][1] for k in order), tuple(picks[k][0] for k in order), tuple(answer))

    # --------------------------------------------------------------------------------------------- frames
    def _best_frames(self, log: ExperienceLog, ids: frozenset[str], here: np.ndarray) -> dict[str, int]:
        """For each target that some frame can show: its best frame index."""
        out: dict[str, int] = {}
        for target in sorted(ids):
            room = room_of_target(target)
            frame = self._room_frame(log, room, here) if room is not None else self._object_frame(log, target)
            if frame is not None:
                out[target] = frame
        return out

    def _score(self, log: ExperienceLog, item: tuple[str, int]) -> float:
        target, frame = item
        return log.frames[frame].coverage_of(target)

    def _object_frame(self, log: ExperienceLog, object_id: str) -> Optional[int]:
        """The frame showing the object largest since it was last put down (all frames if it never moved)."""
        moves = [(f.index, i.kind) for f, i in log.events() if i.object_id == object_id]
        since = moves[-1][0] if moves else 0
        if moves and moves[-1][1] == "pick":
            return None  # still carried when the experience ended
        frames: Sequence[ExperienceFrame] = log.frames[since:]
        info = log.objects.get(object_id)
        if info is not None and info.is_receptacle:
            # Where the robot put something on it (or else took something from it) it stood right at the
            # receptacle: FindingDory checks receptacles 0.1 m from their view points, where its oracle stood to
            # place (findingdory-habitat oracle_agent.py l.257-262).
            for kind in ("place", "pick"):
                at = [f for f in frames if f.event is not None and f.event.kind == kind
                      and f.event.receptacle_id == object_id and f.coverage_of(object_id) >= self.config.min_coverage]
                if at:
                    frames = at
                    break
        best: Optional[tuple[float, int]] = None
        for frame in frames:
            coverage = frame.coverage_of(object_id)
            if coverage >= self.config.min_coverage and (best is None or coverage > best[0]):
                best = (coverage, frame.index)
        return None if best is None else best[1]

    def _room_frame(self, log: ExperienceLog, room_id: int, here: np.ndarray) -> Optional[int]:
        frames = [f for f in log.frames if f.room_id == room_id]
        if not frames:
            return None
        outside = np.array([f.pose.xy() for f in log.frames if f.room_id != room_id]).reshape(-1, 2)
        inside = np.array([f.pose.xy() for f in frames])
        if outside.shape[0]:
            gap = np.min(np.linalg.norm(inside[:, None, :] - outside[None, :, :], axis=2), axis=1)
            interior = [f for f, g in zip(frames, gap, strict=True) if g >= self.config.room_margin_m]
            if interior:
                return min(interior, key=lambda f: (_dist(f, here), f.index)).index
        centre = np.mean(inside, axis=0)
        return min(frames, key=lambda f: (_dist(f, centre), f.index)).index

    # ---------------------------------------------------------------------------------------------- rules
    def _seen_ids(self, log: ExperienceLog) -> set[str]:
        return {s.object_id for f in log.frames for s in f.seen if s.coverage >= self.config.min_coverage}

    def _recall_seen(self, log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        return [frozenset(o for o in self._seen_ids(log) if log.objects[o].category == slots["category"])]

    @staticmethod
    def _picked_where(log: ExperienceLog, keep: Callable[..., bool]) -> frozenset[str]:
        return frozenset(i.object_id for _, i in log.events("pick") if keep(log.objects[i.object_id]))

    @staticmethod
    def _category(log: ExperienceLog, object_id: str) -> str:
        info = log.objects.get(object_id)
        return "" if info is None else info.category

    def _picked_from(self, log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        return [frozenset(i.object_id for _, i in log.events("pick")
                          if self._category(log, i.receptacle_id) == slots["receptacle"])]

    def _placed_on(self, log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        return [frozenset(i.receptacle_id for _, i in log.events("place")
                          if self._category(log, i.object_id) == slots["category"])]

    def _same_receptacle(self, log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        """Objects last seen standing on the receptacle an object of the category was picked from."""
        found: set[str] = set()
        for frame, pick in log.events("pick"):
            if (self._category(log, pick.object_id) != slots["category"]
                    or self._category(log, pick.receptacle_id) != slots["receptacle"]):
                continue
            found |= _standing_on(log, pick.receptacle_id, frame.index) - {pick.object_id}
        return [frozenset(found)]

    @staticmethod
    def _room_order(log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        visited: list[int] = []
        for frame in log.frames:
            if frame.room_id is not None and frame.room_id not in visited:
                visited.append(frame.room_id)
        k = ordinal_index(slots["ordinal"], len(visited))
        return [frozenset({room_target_id(visited[k])})] if k < len(visited) else [frozenset()]

    @staticmethod
    def _room_of_pick(log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        rooms = set()
        for frame, pick in log.events("pick"):
            if ExperienceSelector._category(log, pick.object_id) == slots["category"]:
                room = _room_near(log, frame.index)
                if room is not None:
                    rooms.add(room_target_id(room))
        return [frozenset(rooms)]

    @staticmethod
    def _nth(log: ExperienceLog, kind: str, ordinal: str, target: Callable[[Interaction], str]) -> frozenset[str]:
        events = log.events("pick" if kind == "pick" else "place")
        k = ordinal_index(ordinal, len(events))
        return frozenset({target(events[k][1])}) if k < len(events) else frozenset()

    @staticmethod
    def _time_pick(log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        minute = parse_clock(slots["clock"])
        return [frozenset(i.object_id for f, i in log.events("pick") if minute_of_day(f.time_s) == minute)]

    @staticmethod
    def _time_room(log: ExperienceLog, slots: Mapping[str, str]) -> Answer:
        minute = parse_clock(slots["clock"])
        return [frozenset(room_target_id(f.room_id) for f in log.frames
                          if f.room_id is not None and minute_of_day(f.time_s) == minute)]

    @staticmethod
    def _by_duration(log: ExperienceLog, longest: bool) -> frozenset[str]:
        durations = carry_durations_s(log)
        if not durations:
            return frozenset()
        best = max(durations.values()) if longest else min(durations.values())
        return frozenset(o for o, d in durations.items() if abs(d - best) < DURATION_TIE_S)


def carry_durations_s(log: ExperienceLog) -> dict[str, float]:
    """Object id -> seconds from its pick to its next place, for objects put down again."""
    picked: dict[str, float] = {}
    out: dict[str, float] = {}
    for frame, event in log.events():
        if event.kind == "pick":
            picked[event.object_id] = frame.time_s
        elif event.object_id in picked:
            out[event.object_id] = frame.time_s - picked.pop(event.object_id)
    return out


def _standing_on(log: ExperienceLog, receptacle_id: str, until_frame: int) -> set[str]:
    """Objects whose last sighting up to ``until_frame`` shows them on the receptacle (and not moved since)."""
    last_support: dict[str, Optional[str]] = {}
    for frame in log.frames[: until_frame + 1]:
        for seen in frame.seen:
            last_support[seen.object_id] = seen.support_id
        if frame.event is not None and frame.event.kind == "pick" and frame.index < until_frame:
            last_support[frame.event.object_id] = None  # carried away
    return {o for o, support in last_support.items() if support == receptacle_id}


def _room_near(log: ExperienceLog, index: int) -> Optional[int]:
    """The room of frame ``index``, or of the nearest frame in time that is in a room (doorways have none)."""
    for offset in range(len(log.frames)):
        for k in (index - offset, index + offset):
            if 0 <= k < len(log.frames) and log.frames[k].room_id is not None:
                return log.frames[k].room_id
    return None


def _dist(frame: ExperienceFrame, xy: np.ndarray) -> float:
    return math.hypot(frame.pose.x_m - float(xy[0]), frame.pose.y_m - float(xy[1]))


def _nearest_neighbour_order(points: Sequence[np.ndarray], start: np.ndarray) -> list[int]:
    """Visit order of ``points`` from ``start``, always to the nearest one left (ties: lower index)."""
    left = list(range(len(points)))
    here = start
    order: list[int] = []
    while left:
        k = min(left, key=lambda i: (float(np.linalg.norm(points[i] - here)), i))
        order.append(k)
        left.remove(k)
        here = points[k]
    return order
