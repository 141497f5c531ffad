"""The experience log of a FindingDory episode: what the robot saw and did while a day went by.

FindingDory (Yadav et al. 2025, arXiv:2506.15635) gives the agent a video of its own past: a scripted oracle
walks the home, picks objects up and places them elsewhere, and every frame carries the robot pose and the time
of day. This module holds the structured form of that video the high-level selector reads: per frame the pose
(episode frame, metres / radians), the room the robot stood in, the clock, the objects in view with the share of
the image each covers and what each stood on, and the pick or place that happened at that frame. What the robot
knows about each object it saw (category, colour, material) is in :class:`ObjectInfo`; with ground-truth
perception it is read off the simulator, with a detector it would come from the detector and attribute
classifiers.

Frame conventions: a ``pick`` event is logged on the last frame that still shows the object where it stood; a
``place`` event on the first frame logged after the object was put down (which shows it there when it is in
view).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal, Mapping, Optional

from goat_core.errors import ConfigError
from goat_core.types import Pose2D
from goat_suites.findingdory.experience_video import check_frame_sequence

InteractionKind = Literal["pick", "place"]
# The receptacle of a pick or place that perception could not identify: kept in the log so that ordinals still
# count the interaction, never a target to navigate to.
UNKNOWN_RECEPTACLE = "unknown_receptacle"
SECONDS_PER_DAY = 24 * 3600
_CLOCK = re.compile(r"^(\d{2}):(\d{2})$")


def format_clock(time_s: float) -> str:
    """Seconds since midnight -> "HH:MM" (24 h clock, seconds dropped)."""
    if not (math.isfinite(time_s) and 0.0 <= time_s < SECONDS_PER_DAY):
        raise ConfigError(f"time of day must be in [0, {SECONDS_PER_DAY}) s, got {time_s!r}")
    minutes = int(time_s // 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def parse_clock(text: str) -> int:
    """"HH:MM" -> the minute of the day it names (0 .. 1439)."""
    match = _CLOCK.match(text.strip())
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise ConfigError(f"expected a 24 h time 'HH:MM', got {text!r}")
    return int(match[1]) * 60 + int(match[2])


def minute_of_day(time_s: float) -> int:
    return int(time_s // 60)


@dataclass(frozen=True)
class ObjectInfo:
    """What the robot knows about one object it saw."""

    object_id: str
    category: str
    colour: str
    material: str
    is_receptacle: bool


@dataclass(frozen=True)
class SeenObject:
    """One object in view in one frame."""

    object_id: str
    coverage: float  # share of the image's pixels it covers, in (0, 1]
    support_id: Optional[str]  # the receptacle it stood on in this frame, None for furniture on the floor


@dataclass(frozen=True)
class Interaction:
    """A pick or a place by the robot."""

    kind: InteractionKind
    object_id: str  # the object picked or placed
    receptacle_id: str  # picked from / placed on; UNKNOWN_RECEPTACLE when it could not be identified


@dataclass(frozen=True)
class ExperienceFrame:
    """One frame of the experience video."""

    index: int  # position in the video, from 0
    time_s: float  # clock: seconds since midnight of the experience day
    pose: Pose2D  # GPS+compass: base pose in the episode frame (origin: where the experience started)
    camera_tilt_rad: float  # head tilt, 0 = level, positive looks up
    room_id: Optional[int]  # the room the base stood in, None in a doorway
    seen: tuple[SeenObject, ...] = ()
    event: Optional[Interaction] = None

    def coverage_of(self, object_id: str) -> float:
        """The share of this frame covered by ``object_id`` (0 when not in view)."""
        return next((s.coverage for s in self.seen if s.object_id == object_id), 0.0)


@dataclass(frozen=True)
class ExperienceLog:
    """The whole experience: frames in time order, the objects they show, the rooms of the home."""

    frames: tuple[ExperienceFrame, ...]
    objects: Mapping[str, ObjectInfo]  # object_id -> what is known about it (every object some frame shows)
    room_types: Mapping[int, str] = field(default_factory=dict)  # room id -> room type, e.g. "kitchen"

    def __post_init__(self) -> None:
        check_frame_sequence([(f.index, f.time_s) for f in self.frames], "experience")
        for k, frame in enumerate(self.frames):
            for seen in frame.seen:
                if seen.object_id not in self.objects:
                    raise ConfigError(f"experience frame {k} shows {seen.object_id!r}, which the log does not "
                                      "describe in objects")
            if frame.room_id is not None and self.room_types and frame.room_id not in self.room_types:
                raise ConfigError(f"experience frame {k} is in room {frame.room_id}, unknown to room_types")

    def events(self, kind: Optional[InteractionKind] = None) -> list[tuple[ExperienceFrame, Interaction]]:
        """(frame, interaction) in time order, of one kind or both."""
        return [(f, f.event) for f in self.frames if f.event is not None and (kind is None or f.event.kind == kind)]
