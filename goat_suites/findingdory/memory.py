"""The rule-based FindingDory selector over a memory built from the experience's frames.

:func:`memory_log` writes an :class:`~goat_suites.findingdory.experience_memory.ExperienceMemory` in the form of the
structured experience log: objects are the memory's tracks (category from perception; colour and material from
the simulator's annotation under ground-truth perception, else the colour named from the pixels seen and the
material unknown), each frame lists the tracks it shows with the share of the image they cover and what they
stood on, the inferred picks and places are its events, and rooms are the memory's room labels. The rules of
:class:`~goat_suites.findingdory.selector.ExperienceSelector` then answer from it exactly as they answer from
the simulator's log, so any gap between ``memory`` and ``oracle`` results is a gap in what was perceived.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

from goat_core.errors import ConfigError
from goat_core.matching.attributes import ColourNamer
from goat_core.perception.base import PerceptionBackend
from goat_suites.findingdory.experience import (
    UNKNOWN_RECEPTACLE,
    ExperienceFrame,
    ExperienceLog,
    Interaction,
    ObjectInfo,
    SeenObject,
)
from goat_suites.findingdory.experience_memory import (
    ExperienceMemory,
    FrameEmbedder,
    MemoryConfig,
    build_experience_memory,
)
from goat_suites.findingdory.policy import EpisodeExperience
from goat_suites.findingdory.selector import ExperienceSelector, Selection, SelectorConfig

UNKNOWN = "unknown"  # what the chosen perception cannot tell


def memory_log(memory: ExperienceMemory, namer: Optional[ColourNamer] = None) -> ExperienceLog:
    """The memory as a structured log. Interactions whose object could not be identified stay in it (as an object
    ``unknown_<k>`` of unknown category), so that ordinals ("the second object you picked up") still count them;
    an unidentified receptacle is ``UNKNOWN_RECEPTACLE``, which the selector never navigates to."""
    objects: dict[str, ObjectInfo] = {}
    for track_id, track in memory.tracks.items():
        note = memory.annotations.get(track_id)
        if note is not None:
            colour, material = note.colour, note.material
        else:
            rgb = track.mean_rgb
            namer = namer if namer is not None else ColourNamer()
            colour, material = (UNKNOWN if rgb is None else namer.rank(rgb)[0][0]), UNKNOWN
        objects[track_id] = ObjectInfo(track_id, track.category, colour, material, track_id in memory.furniture)
    events: dict[int, Interaction] = {}
    for k, inter in enumerate(memory.interactions):
        object_id = inter.track_id if inter.track_id is not None else f"unknown_{k}"
        objects.setdefault(object_id, ObjectInfo(object_id, UNKNOWN, UNKNOWN, UNKNOWN, False))
        receptacle = inter.receptacle_id if inter.receptacle_id is not None else UNKNOWN_RECEPTACLE
        events.setdefault(inter.frame, Interaction(inter.kind, object_id, receptacle))
    frames = []
    for k, sightings in enumerate(memory.frame_sightings):
        seen = tuple(SeenObject(t, round(coverage, 6), memory.tracks[t].places[place].support)
                     for t, coverage, place in sightings)
        frames.append(ExperienceFrame(index=k, time_s=memory.frame_times_s[k], pose=memory.frame_poses[k],
                                      camera_tilt_rad=memory.frame_tilts_rad[k], room_id=memory.frame_rooms[k],
                                      seen=seen, event=events.get(k)))
    return ExperienceLog(frames=tuple(frames), objects=objects)


class MemorySelector:
    """Builds the memory of each episode's video with ``perception``, then answers with the rule-based selector."""

    name = "memory"

    def __init__(self, perception: PerceptionBackend, perception_name: str, config: Optional[MemoryConfig] = None,
                 embedder: Optional[FrameEmbedder] = None, selector_config: Optional[SelectorConfig] = None) -> None:
        self.perception = perception
        self.perception_name = perception_name
        self.config = config if config is not None else MemoryConfig()
        self.embedder = embedder
        self.rules = ExperienceSelector(selector_config if selector_config is not None else SelectorConfig())
        self.memory: Optional[ExperienceMemory] = None
        self._log: Optional[ExperienceLog] = None

    def begin_episode(self, experience: EpisodeExperience) -> None:
        if experience.video is None:
            raise ConfigError("the memory selector needs the experience video; the episode recorded none")
        self.memory = build_experience_memory(experience.video, self.perception, self.config, self.embedder)
        self._log = memory_log(self.memory)

    def select(self, lang: str, start_xy_m: Sequence[float] = (0.0, 0.0)) -> Selection:
        if self._log is None:
            raise ConfigError("MemorySelector.select before begin_episode")
        selection = self.rules.select(lang, self._log, start_xy_m)
        return replace(selection, notes=selection.notes + self._guess_notes(selection))

    def _guess_notes(self, selection: Selection) -> tuple[str, ...]:
        """Which chosen targets are receptacles the memory only guessed (the furniture filling the frame)."""
        assert self.memory is not None
        guessed = {i.receptacle_id: i for i in self.memory.interactions if i.receptacle_guessed}
        notes = []
        for target in selection.target_ids:
            inter = guessed.get(target)
            if inter is not None:
                what = inter.track_id if inter.track_id is not None else "an unidentified object"
                notes.append(f"{target} is the guessed receptacle of the {inter.kind} at frame {inter.frame} (no "
                             f"support found under {what}; the furniture covering most of the frame)")
        return tuple(notes)

    def describe(self) -> dict[str, Any]:
        return {"selector": self.name, "perception": self.perception_name,
                "reads": "a memory built from the experience video's frames and proprioception",
                "frame_embedding": None if self.embedder is None else self.embedder.name}
