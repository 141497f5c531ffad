"""Procedural PASTURE (CoWs on Pasture, Gadre et al. 2023) episodes in the embedded simulator.

PASTURE evaluates one object-goal agent on seven splits of the same floor plans. Here each home of a dataset
gives one target per split, and every target is its own single-goal episode (fresh memory, its own start
1-30 m geodesic from the target, as GOAT-Bench draws starts):

* uncommon: an object of a long-tail category (catalogue.UNCOMMON_CATALOGUE, placed for
  HomeConfig.uncommon_objects); the goal is its category name, a category task;
* appearance: "small red ceramic mug" (size, colour, material), the only instance of its category;
* spatial: "mug on the coffee table in the living room" (what it stands on or next to, and the room), the only
  instance of its category;
* appearance + distractors, spatial + distractors: the same texts for an object whose category has other
  instances in the home; the text must fit the target and none of them;
* hidden: "remote control inside the bookshelf in the living room", an object in a hiding place of a piece of
  furniture (catalogue.HIDING_PLACES, HomeConfig.hidden_objects), the only instance of its category (CoW's
  "remove" build);
* hidden + distractors: the same for a hidden object whose category is also in sight elsewhere (CoW's "normal"
  build keeps the visible one).

Hidden targets are checked, not assumed: from the view points of the furniture that hides them (navigable
points within ``view_point_radius_m`` of its footprint, the GOAT-Bench view points of that furniture) a head
camera aimed at the object sees at least ``min_visible_px`` pixels of it in the ground-truth segmentation from
no more than ``max_hidden_visible_fraction`` of them, and from at least one. Success for a hidden target is
stopping within the success distance of one of those view points from which it is visible: the robot has
reached the furniture hiding the object and can see it there (CoW counts a Stop while the target is visible).
All other targets use the GOAT-Bench view points of the object itself.

Scene ids carry the home's PASTURE settings ("embedded/pasture_s<seed>_r<rooms>_h<hidden>_u<uncommon>"); use
:func:`home_for_scene` to rebuild a home from the id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import SceneGenerationError
from goat_core.types import GoalModality
from goat_suites.common.episodes import GoatDataset, GoatEpisode, GoatTask, goals_key
from goat_suites.common.suite_gen import (
    check_positive,
    check_start_range,
    goal_object,
    home_seeds,
    pick_start,
    placement,
    standard_view_points,
    visible_from,
)
from goat_suites.common.suite_metrics import PASTURE_CATEGORIES
from goat_suites.goat.generator import credits_info, parse_scene_id
from sim_bridge.embedded.catalogue import UNCOMMON_CATEGORIES
from sim_bridge.embedded.furniture_categories import UNCOMMON_MODEL_CATEGORIES
from sim_bridge.embedded.home import (
    FURNITURE_TAG_PATTERN,
    Home,
    HomeConfig,
    ObjectSpec,
    furniture_fields,
    furniture_tag,
    generate_home,
    with_furniture_of,
)
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig

PASTURE_SCENE_PREFIX = "embedded/pasture"
# Uncommon categories of primitive homes (catalogue) and of furnished ones (models no category covers).
UNCOMMON_NAMES = frozenset(UNCOMMON_CATEGORIES) | frozenset(UNCOMMON_MODEL_CATEGORIES)
_SCENE_RE = re.compile(r"^embedded/pasture_s(?P<seed>\d+)_r(?P<rooms>\d+)_h(?P<hidden>\d+)_u(?P<uncommon>\d+)"
                       + FURNITURE_TAG_PATTERN + "$")
EXTRA_CATEGORY = "pasture_category"  # GoatEpisode.extra: the PASTURE split of the episode's one task
EXTRA_TEXT = "pasture_text"  # GoatEpisode.extra: the words given to the agent
EXTRA_VISIBLE_FRACTION = "pasture_visible_fraction"  # hidden targets: share of furniture view points seeing it
EPISODE_STREAM = 12  # random stream of a home's episodes: default_rng([home seed, EPISODE_STREAM])
GENERATOR = "goat_nav embedded pasture v1"


@dataclass(frozen=True)
class PastureGenConfig:
    """Settings of the procedural PASTURE episodes (one default each)."""

    hidden_objects: int = 4  # HomeConfig.hidden_objects of the PASTURE homes
    uncommon_objects: int = 3  # HomeConfig.uncommon_objects of the PASTURE homes
    near_radius_m: float = 1.5  # "near the X" for floor objects: the anchor's footprint is this close
    view_point_radius_m: float = 1.0
    view_point_spacing_m: float = 0.25
    min_visible_px: int = 50  # "visible": as many pixels as the ground-truth perception needs to report it
    max_hidden_visible_fraction: float = 0.5  # hidden: out of sight from more than half the furniture's views
    min_start_geodesic_m: float = 1.0
    max_start_geodesic_m: float = 30.0
    start_attempts: int = 200

    def __post_init__(self) -> None:
        owner = "PastureGenConfig"
        for name in ("near_radius_m", "view_point_radius_m", "view_point_spacing_m"):
            check_positive(owner, name, getattr(self, name))
        if isinstance(self.min_visible_px, bool) or not isinstance(self.min_visible_px, int) \
                or self.min_visible_px < 1:
            raise SceneGenerationError(f"{owner}.min_visible_px must be an integer >= 1, got {self.min_visible_px!r}")
        if not 0.0 <= self.max_hidden_visible_fraction < 1.0:
            raise SceneGenerationError(f"{owner}.max_hidden_visible_fraction must be in [0, 1), got "
                                       f"{self.max_hidden_visible_fraction!r}")
        check_start_range(owner, self.min_start_geodesic_m, self.max_start_geodesic_m, self.start_attempts)
        HomeConfig(hidden_objects=self.hidden_objects, uncommon_objects=self.uncommon_objects)  # range checks

    def home_config(self, num_rooms: int, furniture: HomeConfig = HomeConfig()) -> HomeConfig:
        """The home settings of a PASTURE home; the furniture settings come from ``furniture``."""
        return with_furniture_of(furniture, num_rooms=num_rooms, hidden_objects=self.hidden_objects,
                                 uncommon_objects=self.uncommon_objects)


@dataclass(frozen=True)
class PastureTarget:
    """One target of one split in one home."""

    category: str  # one of PASTURE_CATEGORIES
    object_id: str
    object_category: str
    text: str  # what the agent is given: the category name (uncommon) or a description
    view_points_xy_m: np.ndarray  # (K, 2) world-frame points whose reaching counts as success
    visible_fraction: Optional[float] = None  # hidden targets: share of the hiding furniture's views seeing it


# ----------------------------------------------------------------------------------------------- scene ids


def pasture_scene_id(seed: int, home_config: HomeConfig) -> str:
    """The scene id of a PASTURE home; only the room count and the PASTURE fields may differ from defaults."""
    plain = with_furniture_of(home_config, num_rooms=home_config.num_rooms,
                              hidden_objects=home_config.hidden_objects, uncommon_objects=home_config.uncommon_objects)
    if home_config != plain:
        raise SceneGenerationError(f"a PASTURE scene id holds num_rooms, hidden_objects, uncommon_objects and the "
                                   f"furniture only; got {home_config}")
    return (f"{PASTURE_SCENE_PREFIX}_s{seed}_r{home_config.num_rooms}_h{home_config.hidden_objects}"
            f"_u{home_config.uncommon_objects}{furniture_tag(home_config)}")


def parse_pasture_scene_id(scene_id: str) -> tuple[int, HomeConfig]:
    """(seed, HomeConfig) of a scene id written by :func:`pasture_scene_id`."""
    match = _SCENE_RE.match(scene_id)
    if match is None:
        raise SceneGenerationError(f"scene id {scene_id!r} is not a PASTURE home of the embedded simulator "
                                   f"(expected '{PASTURE_SCENE_PREFIX}_s<seed>_r<rooms>_h<hidden>_u<uncommon>')")
    return int(match["seed"]), HomeConfig(num_rooms=int(match["rooms"]), hidden_objects=int(match["hidden"]),
                                          uncommon_objects=int(match["uncommon"]),
                                          **furniture_fields(match["furniture"]))  # type: ignore[arg-type]


def home_for_scene(scene_id: str) -> Home:
    """The home of a PASTURE scene id, or of an ordinary embedded scene id (``episodes.scene_id_for``)."""
    parse = parse_pasture_scene_id if scene_id.startswith(PASTURE_SCENE_PREFIX) else parse_scene_id
    seed, config = parse(scene_id)
    return generate_home(seed, config)


# ----------------------------------------------------------------------------------------------- texts


def appearance_text(obj: ObjectSpec) -> str:
    """"small red ceramic mug": size (unless medium), colour, material and category."""
    size = "" if obj.size_label == "medium" else f"{obj.size_label} "
    return f"{size}{obj.colour} {obj.material} {obj.category}"


def spatial_text(obj: ObjectSpec, home: Home, near_radius_m: float) -> str:
    """"mug on the coffee table in the living room": where it is, without what it looks like."""
    where = placement(obj, home, near_radius_m)
    text = obj.category if where is None else f"{obj.category} {where.relation} the {where.anchor.category}"
    return f"{text} in the {obj.room_type}"


def _appearance_key(obj: ObjectSpec) -> tuple[str, str, str]:
    return (obj.size_label, obj.colour, obj.material)


def _spatial_key(obj: ObjectSpec, home: Home, near_radius_m: float) -> tuple[object, str]:
    where = placement(obj, home, near_radius_m)
    return (None if where is None else where.key, obj.room_type)


# ----------------------------------------------------------------------------------------------- targets


class _Finder:
    """Finds the target of each split in one home."""

    def __init__(self, sim: EmbeddedSim, config: PastureGenConfig) -> None:
        self.sim = sim
        self.home = sim.home
        self.config = config
        self.count: dict[str, int] = {}
        for obj in self.home.objects:
            self.count[obj.category] = self.count.get(obj.category, 0) + 1

    def points(self, obj: ObjectSpec) -> Optional[np.ndarray]:
        return standard_view_points(self.sim, obj, self.config.view_point_radius_m, self.config.view_point_spacing_m)

    def hidden_points(self, obj: ObjectSpec) -> tuple[Optional[np.ndarray], float]:
        """The hiding furniture's view points that see ``obj``, and the share of them that do."""
        holder = self.home.object(str(obj.receptacle_id))
        ring = self.points(holder)
        if ring is None:
            return None, 0.0
        seen = visible_from(self.sim, obj, ring, self.config.min_visible_px)
        return (ring[seen] if seen.any() else None), float(seen.mean())

    def ordinary(self, obj: ObjectSpec) -> bool:
        return obj.category not in UNCOMMON_NAMES and self.home.hidden_relation(obj) is None

    def unique_among_kin(self, obj: ObjectSpec, key: Callable[[ObjectSpec], object]) -> bool:
        mine = key(obj)
        return all(key(o) != mine for o in self.home.objects
                   if o.category == obj.category and o.object_id != obj.object_id)

    def text_for(self, split: str, obj: ObjectSpec) -> Optional[str]:
        """The split's text for ``obj`` when ``obj`` is a valid target of the split, else None."""
        home, near = self.home, self.config.near_radius_m
        alone = self.count[obj.category] == 1
        if split == "uncommon":
            return obj.category if obj.category in UNCOMMON_NAMES else None
        if split.startswith("hidden"):
            relation = home.hidden_relation(obj)
            if relation is None or alone != (split == "hidden"):
                return None
            holder = home.object(str(obj.receptacle_id))
            return f"{obj.category} {relation} the {holder.category} in the {obj.room_type}"
        if not self.ordinary(obj) or alone != (split in ("appearance", "spatial")):
            return None
        if split.startswith("appearance"):
            return appearance_text(obj) if self.unique_among_kin(obj, _appearance_key) else None
        if self.unique_among_kin(obj, lambda o: _spatial_key(o, home, near)):
            return spatial_text(obj, home, near)
        return None

    def target(self, split: str, rng: np.random.Generator, taken: set[str]) -> Optional[PastureTarget]:
        """A random valid target of ``split`` not in ``taken``, or None when the home has none."""
        objects = self.home.objects
        for k in rng.permutation(len(objects)):
            obj = objects[int(k)]
            text = None if obj.object_id in taken else self.text_for(split, obj)
            if text is None:
                continue
            fraction: Optional[float] = None
            if split.startswith("hidden"):
                points, fraction = self.hidden_points(obj)
                if fraction > self.config.max_hidden_visible_fraction:
                    continue
            else:
                points = self.points(obj)
            if points is not None:
                return PastureTarget(split, obj.object_id, obj.category, text, points, fraction)
        return None


def pasture_targets(sim: EmbeddedSim, rng: np.random.Generator, config: Optional[PastureGenConfig] = None
                    ) -> list[PastureTarget]:
    """One target per PASTURE split (in PASTURE order) where the home has one; distinct objects."""
    finder = _Finder(sim, config or PastureGenConfig())
    taken: set[str] = set()
    targets = []
    for split in PASTURE_CATEGORIES:
        target = finder.target(split, rng, taken)
        if target is not None:
            taken.add(target.object_id)
            targets.append(target)
    return targets


# ----------------------------------------------------------------------------------------------- episodes


def _episode(sim: EmbeddedSim, scene_id: str, episode_id: str, target: PastureTarget, rng: np.random.Generator,
             config: PastureGenConfig) -> GoatEpisode:
    home = sim.home
    obj = home.object(target.object_id)
    is_category = target.category == "uncommon"
    goal = goal_object(obj, target.view_points_xy_m, None if is_category else target.text,
                       {"pasture_category": target.category})
    start = pick_start(sim, (goal,), rng, config.min_start_geodesic_m, config.max_start_geodesic_m,
                       config.start_attempts)
    task = GoatTask(category=obj.category, modality=GoalModality.CATEGORY) if is_category else \
        GoatTask(category=obj.category, modality=GoalModality.DESCRIPTION, object_id=obj.object_id)
    extra: dict[str, object] = {EXTRA_CATEGORY: target.category, EXTRA_TEXT: target.text}
    if target.visible_fraction is not None:
        extra[EXTRA_VISIBLE_FRACTION] = round(target.visible_fraction, 4)
    return GoatEpisode(episode_id=episode_id, scene_id=scene_id, start_position=start.position,
                       start_rotation=start.rotation, tasks=(task,),
                       goals={goals_key(scene_id, obj.category): (goal,)},
                       info={"geodesic_distance": round(start.geodesic_m, 3), "generator": GENERATOR,
                             **credits_info(sim.home)},
                       extra=extra)


def generate_pasture_episodes(sim: EmbeddedSim, scene_id: str, id_prefix: str, rng: np.random.Generator,
                              config: Optional[PastureGenConfig] = None) -> list[GoatEpisode]:
    """The single-goal episodes of one home, one per split it offers, ids "<id_prefix>-<split>"."""
    config = config or PastureGenConfig()
    return [_episode(sim, scene_id, f"{id_prefix}-{t.category}", t, rng, config)
            for t in pasture_targets(sim, rng, config)]


def generate_pasture_dataset(num_homes: int, seed: int, num_rooms: Optional[int] = None,
                             config: Optional[PastureGenConfig] = None, sim_config: Optional[SimConfig] = None,
                             on_home: Optional[Callable[[Sequence[GoatEpisode]], None]] = None,
                             furniture: HomeConfig = HomeConfig()) -> GoatDataset:
    """The episodes of ``num_homes`` homes (the homes of ``episodes.generate_dataset`` with the PASTURE
    additions), up to seven each; a split a home cannot offer is left out for that home. ``furniture``: the
    furniture settings of the homes (HomeConfig.furniture*)."""
    if isinstance(num_homes, bool) or not isinstance(num_homes, int) or num_homes < 1:
        raise SceneGenerationError(f"num_homes must be an integer >= 1, got {num_homes!r}")
    config = config or PastureGenConfig()
    home_config = config.home_config(HomeConfig().num_rooms if num_rooms is None else num_rooms, furniture)
    seeds = home_seeds(seed)
    episodes: list[GoatEpisode] = []
    for k in range(num_homes):
        home_seed = next(seeds)
        with EmbeddedSim(generate_home(home_seed, home_config), sim_config or SimConfig()) as sim:
            found = generate_pasture_episodes(sim, pasture_scene_id(home_seed, home_config), f"pasture-{seed}-{k}",
                                              np.random.default_rng([home_seed, EPISODE_STREAM]), config)
        episodes.extend(found)
        if on_home is not None:
            on_home(found)
    return GoatDataset(episodes=tuple(episodes))


def splits_of(episodes: Sequence[GoatEpisode]) -> Mapping[str, int]:
    """How many episodes each split has, in PASTURE order."""
    counts = {c: sum(e.extra.get(EXTRA_CATEGORY) == c for e in episodes) for c in PASTURE_CATEGORIES}
    return {c: n for c, n in counts.items() if n}


__all__ = ["EXTRA_CATEGORY", "EXTRA_TEXT", "EXTRA_VISIBLE_FRACTION", "PastureGenConfig", "PastureTarget",
           "appearance_text", "generate_pasture_dataset", "generate_pasture_episodes", "home_for_scene",
           "parse_pasture_scene_id", "pasture_scene_id", "pasture_targets", "spatial_text", "splits_of"]
