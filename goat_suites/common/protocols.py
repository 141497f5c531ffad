"""Evaluation protocols: how each benchmark's official code runs and scores an episode, as typed frozen data.

A protocol names everything that makes a number comparable with a paper's: the action budget, the embodiment
(camera size, HFOV, height, sliding), the success rule and its thresholds, which objects count as the goal and
how per-subtask outcomes are averaged. Each suite runs under its official protocol by default; a run that
changes any of it (``--embodiment stretch``, a per-subtask budget, another threshold) is *custom*, and
:func:`protocol_label` says so in words, so that no custom number can pass for an official one.

Sources (file and line at the commits read for this module):

* GOAT-Bench, ``Ram81/goat-bench`` (commit 74c41d1):
  ``config/tasks/goat_stretch_hm3d.yaml`` l.31 ``max_episode_steps: 5000``, l.59 ``success_distance: 0.25``,
  l.52 ``distance_to: "VIEW_POINTS"``, l.70-75 camera 360 x 640, HFOV 42, at 1.31 m, agent height 1.41 m,
  radius 0.17 m, l.78 ``allow_sliding: False``; ``goat_bench/measurements/nav.py`` l.289-297 success =
  ``subtask_stop`` called and the distance before it ``< success_distance`` (strict), l.300-316 per-episode
  ``partial_success`` = successes / subtasks and ``{modality}_success`` = successes / subtasks of that modality
  (0.0 when there are none), l.385-406 per-subtask SPL and per-episode ``composite_spl``;
  ``goat_bench/trainers/ppo_trainer_no_2d.py`` l.415-419 every metric is the mean over episodes;
  ``goat_bench/dataset/goat_dataset.py`` l.172-181 description subtasks over 55 words are dropped, l.195-205
  category goals gain the instances of ``children_object_categories``.
* habitat-lab ``habitat-lab/habitat/tasks/nav/nav.py``: ``Success`` (``distance_to_target < success_distance``)
  and ``SPL`` (``success * l / max(l, p)``, no epsilon).
* CoW / PASTURE, ``columbia-ai-robotics/cow``: ``config_cow.yaml`` l.3 ``visibilityDistance: 1.0``, l.9
  ``fieldOfView: 90``, l.12-14 672 x 672, ``max_steps: 250``; ``robothor_challenge.py`` l.390-391 success =
  ``stopped and target_visible`` (AI2-THOR's ``visible``: in view and within the visibility distance), l.496-497
  the mean over episodes.
* FindingDory, ``findingdory-benchmark/findingdory-habitat``: ``findingdory/config/task/pddl_domain_fp.yaml``
  l.77-82 ``robot_at_object``: geodesic 2.0 m, angle 0.785 rad, semantic coverage 0.001; l.93-100
  ``robot_at_receptacle``: geodesic 0.1 m, angle 1.57 rad, coverage 0.001;
  ``findingdory/config/benchmark/findingdory.yaml`` l.27 ``max_episode_steps: 5000``, l.39 ``turn_angle: 10``;
  ``findingdory/config/agents/stretch.yaml`` l.14-18 head camera 480 x 640, HFOV 43, at 1.31 m;
  ``findingdory/config/simulator/findingdory_sim.yaml`` l.14 ``allow_sliding: False``;
  ``findingdory/task/pddl/pddl.py`` ``is_robot_at_position`` l.403 coverage, l.440 ``dist > dist_thresh`` fails
  (so ``<=`` passes), l.461 angle; l.190-213 receptacles are measured to their view points, movable objects
  (which have none) to ``safe_snap_point`` of their position (l.420-426).
* LangMap, ``bo-miao/LangMap``: success geodesic <= 0.25 m to a view point of any target object when the subgoal
  ends (no STOP needed), 500 actions per subgoal, camera 640 x 480, HFOV 120, no sliding (as summarised in
  issue 28; the per-subgoal records under ``tmp/planavid_multi_3b/log/`` carry ``success``, ``spl`` and
  ``final_goal_dist``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Optional

from goat_core.errors import ConfigError

COMPARISONS = ("<", "<=")  # how a distance is compared with its success threshold
AVERAGING = ("per_episode", "pooled")  # mean of per-episode means | mean over all subtasks


@dataclass(frozen=True)
class Budget:
    """Actions an agent may take; None = no cap at that level. STOP counts as an action."""

    max_actions_per_episode: Optional[int] = None
    max_actions_per_subtask: Optional[int] = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"Budget.{f.name} must be an integer >= 1 or None, got {value!r}")
        if self.max_actions_per_episode is None and self.max_actions_per_subtask is None:
            raise ConfigError("Budget needs max_actions_per_episode or max_actions_per_subtask (got neither)")

    def subtask_budget(self, actions_used_in_episode: int) -> int:
        """Actions the next subtask may take after ``actions_used_in_episode`` (0 when the episode is spent)."""
        if actions_used_in_episode < 0:
            raise ConfigError(f"actions_used_in_episode must be >= 0, got {actions_used_in_episode}")
        caps = []
        if self.max_actions_per_episode is not None:
            caps.append(max(0, self.max_actions_per_episode - actions_used_in_episode))
        if self.max_actions_per_subtask is not None:
            caps.append(self.max_actions_per_subtask)
        return min(caps)

    def describe(self) -> str:
        parts = []
        if self.max_actions_per_episode is not None:
            parts.append(f"{self.max_actions_per_episode} actions/episode")
        if self.max_actions_per_subtask is not None:
            parts.append(f"{self.max_actions_per_subtask} actions/subtask")
        return " + ".join(parts)


@dataclass(frozen=True)
class Embodiment:
    """The agent's sensor and body as the benchmark's config sets them (None: the config does not fix it)."""

    width_px: int
    height_px: int
    hfov_deg: float
    camera_height_m: Optional[float]
    allow_sliding: bool

    def __post_init__(self) -> None:
        if self.width_px < 1 or self.height_px < 1:
            raise ConfigError(f"Embodiment image size must be positive, got {self.width_px} x {self.height_px}")
        if not 0.0 < self.hfov_deg < 180.0:
            raise ConfigError(f"Embodiment.hfov_deg must be in (0, 180), got {self.hfov_deg!r}")


@dataclass(frozen=True)
class SuccessRule:
    """When a (sub)task counts as a success."""

    distance_m: float  # threshold on the distance below
    # "view_points" (geodesic to the goal set's view points) | "object" | "visible_object" | "snapped_object"
    # (geodesic to the object's position snapped to the floor: FindingDory's movable objects)
    distance_to: str
    comparison: str = "<"  # "<" (habitat-lab, GOAT-Bench) or "<="
    requires_stop: bool = True  # the agent must call STOP (GOAT, CoW) or the subgoal's end is scored (LangMap)
    max_angle_rad: Optional[float] = None  # FindingDory: the robot must face the target within this angle
    min_coverage: Optional[float] = None  # FindingDory: fraction of the image the target must cover

    def __post_init__(self) -> None:
        if not (math.isfinite(self.distance_m) and self.distance_m > 0.0):
            raise ConfigError(f"SuccessRule.distance_m must be a positive length, got {self.distance_m!r}")
        if self.comparison not in COMPARISONS:
            raise ConfigError(f"SuccessRule.comparison must be one of {COMPARISONS}, got {self.comparison!r}")

    def within(self, distance_m: float) -> bool:
        """``distance_m`` meets the threshold under this rule's comparison (an infinite distance never does)."""
        if math.isnan(distance_m):
            raise ConfigError("distance_m must be a number, got nan")
        if self.comparison == "<":
            return distance_m < self.distance_m
        return distance_m <= self.distance_m

    def is_success(self, called_stop: bool, distance_m: float) -> bool:
        return (called_stop or not self.requires_stop) and self.within(distance_m)


@dataclass(frozen=True)
class Protocol:
    """One benchmark's official evaluation protocol."""

    name: str
    version: str
    budget: Budget
    embodiment: Embodiment
    success: SuccessRule
    averaging: str  # one of AVERAGING
    goal_sets: str  # which objects count as the goal, in words
    source: str  # where the values come from (repository and file)

    def __post_init__(self) -> None:
        if self.averaging not in AVERAGING:
            raise ConfigError(f"Protocol.averaging must be one of {AVERAGING}, got {self.averaging!r}")

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version,
                "budget": {"max_actions_per_episode": self.budget.max_actions_per_episode,
                           "max_actions_per_subtask": self.budget.max_actions_per_subtask},
                "embodiment": {"width_px": self.embodiment.width_px, "height_px": self.embodiment.height_px,
                               "hfov_deg": self.embodiment.hfov_deg,
                               "camera_height_m": self.embodiment.camera_height_m,
                               "allow_sliding": self.embodiment.allow_sliding},
                "success": {"distance_m": self.success.distance_m, "distance_to": self.success.distance_to,
                            "comparison": self.success.comparison, "requires_stop": self.success.requires_stop,
                            "max_angle_rad": self.success.max_angle_rad,
                            "min_coverage": self.success.min_coverage},
                "averaging": self.averaging, "goal_sets": self.goal_sets, "source": self.source}


GOAT_BENCH = Protocol(
    name="goat-bench", version="v1",
    budget=Budget(max_actions_per_episode=5000),
    embodiment=Embodiment(width_px=360, height_px=640, hfov_deg=42.0, camera_height_m=1.31, allow_sliding=False),
    success=SuccessRule(distance_m=0.25, distance_to="view_points", comparison="<", requires_stop=True),
    averaging="per_episode",
    goal_sets="category: every instance of the category and of its children_object_categories; image and "
              "description: the one instance; description subtasks over 55 words dropped",
    source="Ram81/goat-bench config/tasks/goat_stretch_hm3d.yaml, goat_bench/measurements/nav.py, "
           "goat_bench/dataset/goat_dataset.py")

# The GOAT-Bench README's text (500 actions per subtask, each subtask starting afresh): a named deviation.
GOAT_README_BUDGET = Budget(max_actions_per_subtask=500)

LANGMAP = Protocol(
    name="langmap", version="v1",
    budget=Budget(max_actions_per_subtask=500),
    embodiment=Embodiment(width_px=640, height_px=480, hfov_deg=120.0, camera_height_m=None, allow_sliding=False),
    success=SuccessRule(distance_m=0.25, distance_to="view_points", comparison="<=", requires_stop=False),
    averaging="pooled",
    goal_sets="every view point of every target_object_ids entry; SeqSR counts complete 5-goal sequences; "
              "single-goal evaluation excludes the official blacklist of task ids",
    source="bo-miao/LangMap evaluation scripts")

PASTURE_COW = Protocol(
    name="pasture-cow", version="v1",
    budget=Budget(max_actions_per_episode=250),
    embodiment=Embodiment(width_px=672, height_px=672, hfov_deg=90.0, camera_height_m=None, allow_sliding=False),
    success=SuccessRule(distance_m=1.0, distance_to="visible_object", comparison="<=", requires_stop=True),
    averaging="pooled",
    goal_sets="the target instance, matched by id; success needs it visible (in view and within 1.0 m)",
    source="columbia-ai-robotics/cow config_cow.yaml, robothor_challenge.py")

FINDINGDORY = Protocol(
    name="findingdory", version="v1",
    budget=Budget(max_actions_per_episode=5000),
    embodiment=Embodiment(width_px=480, height_px=640, hfov_deg=43.0, camera_height_m=1.31, allow_sliding=False),
    success=SuccessRule(distance_m=2.0, distance_to="snapped_object", comparison="<=", requires_stop=True,
                        max_angle_rad=0.785, min_coverage=0.001),
    averaging="pooled",
    goal_sets="objects: 2.0 m geodesic to the snapped object position, pi/4, coverage 0.001; receptacles: 0.1 m "
              "geodesic to its view points, pi/2, coverage 0.001",
    source="findingdory-benchmark/findingdory-habitat findingdory/config/task/pddl_domain_fp.yaml")

# FindingDory's receptacle predicate (robot_at_receptacle): a second success rule of the same protocol.
FINDINGDORY_RECEPTACLE = SuccessRule(distance_m=0.1, distance_to="view_points", comparison="<=",
                                     requires_stop=True, max_angle_rad=1.57, min_coverage=0.001)

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (GOAT_BENCH, LANGMAP, PASTURE_COW, FINDINGDORY)}


def protocol_by_name(name: str) -> Protocol:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ConfigError(f"unknown protocol {name!r}; known: {sorted(PROTOCOLS)}") from None


def protocol_label(protocol: Protocol, deviations: tuple[str, ...]) -> str:
    """``"goat-bench v1"`` for an official run, else ``"custom (goat-bench v1; <deviation>; ...)"``."""
    if not deviations:
        return protocol.label
    return f"custom ({protocol.label}; " + "; ".join(deviations) + ")"
