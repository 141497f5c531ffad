"""FindingDory's high-level policies behind one interface: instruction + experience -> frames to go to.

FindingDory splits the agent into a high-level policy, which reads the instruction and the experience video
and names the frame(s) whose poses the robot should go back to, and a low-level policy that drives there (Yadav
et al. 2025, arXiv:2506.15635, Sec. 4). Three high-level policies plug in here:

* ``memory`` (the default, :class:`~goat_suites.findingdory.memory.MemorySelector`): the rule-based selector
  over a memory built from the video's frames by a perception backend;
* ``oracle`` (:class:`OracleSelector`): the same rules over the simulator's structured log (perfect perception
  and bookkeeping): an upper bound, labelled as such in results;
* ``vlm`` (:class:`~goat_suites.findingdory.vlm.VlmSelector`): a video-language model behind an
  OpenAI-compatible chat-completions endpoint, shown the video subsampled to a frame budget.

A policy sees one episode at a time (:meth:`HighLevelPolicy.begin_episode`), then answers its instructions; it
raises a :class:`~goat_core.errors.GoatError` naming the problem when it has no answer (the run records it as
the task's error and goes on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence

from goat_core.errors import ConfigError
from goat_suites.findingdory.experience import ExperienceLog
from goat_suites.findingdory.experience_video import ExperienceVideo
from goat_suites.findingdory.selector import ExperienceSelector, Selection, SelectorConfig

HIGH_LEVEL_POLICIES = ("memory", "oracle", "vlm")


@dataclass(frozen=True, eq=False)
class EpisodeExperience:
    """What a high-level policy may be given about one episode's experience."""

    video: Optional[ExperienceVideo]  # what the robot recorded; None only for a run that records no video
    log: ExperienceLog  # the simulator's structured log: scoring data, read only by the oracle


class HighLevelPolicy(Protocol):
    name: str  # one of HIGH_LEVEL_POLICIES: the label results carry

    def begin_episode(self, experience: EpisodeExperience) -> None: ...

    def select(self, lang: str, start_xy_m: Sequence[float] = (0.0, 0.0)) -> Selection: ...

    def describe(self) -> dict[str, Any]: ...


class OracleSelector:
    """The rule-based selector over the simulator's structured log (an upper bound: perfect perception)."""

    name = "oracle"

    def __init__(self, config: Optional[SelectorConfig] = None) -> None:
        self.rules = ExperienceSelector(config if config is not None else SelectorConfig())
        self._log: Optional[ExperienceLog] = None

    def begin_episode(self, experience: EpisodeExperience) -> None:
        self._log = experience.log

    def select(self, lang: str, start_xy_m: Sequence[float] = (0.0, 0.0)) -> Selection:
        if self._log is None:
            raise ConfigError("OracleSelector.select before begin_episode")
        return self.rules.select(lang, self._log, start_xy_m)

    def describe(self) -> dict[str, Any]:
        return {"selector": self.name, "reads": "the simulator's structured experience log (perfect perception)"}
