"""Procedural LangMap / HieraNav episodes in the embedded simulator: 5-goal sequences over four goal levels.

LangMap (Miao et al., bo-miao/LangMap) asks for objects at four levels, with the instruction templates of
``goat_suites.langmap.loader``:

* scene ("object" in LangMap files): "Find the {category}", any instance counts;
* room: "Find the {category} in the {room type}";
* region: "Find the {category} in the {region category} that has {region description}";
* instance: "Find the {instance description}".

Regions of a procedural home are its furniture groups: floor objects of one room whose footprints come within
``region_link_m`` of each other (single-link clustering), with the small objects standing on them. A region's
category is its room type. Its description names the two largest pieces ("a couch beside a coffee table");
the concise style adds colours only when the plain text is not unique in the home, the detailed style always
gives colour and material of up to three pieces and up to two small objects on them. Every region description
kept is unique within its home; a region whose text cannot be made unique has no text in that style and is
not asked for.

Instance descriptions are checked the way ``episodes.describe_object`` checks GOAT descriptions: no other
instance of the category may fit what the text says that a robot can perceive (colour, what it stands on or
next to, the room). Concise descriptions say as little as singles the object out; detailed ones say all of it
(plus size and materials).

The procedural runner scores a description task against one object (``goals_for_task``), so every room, region
and instance goal generated here has exactly one target: the only instance of its category in the rooms of that
type, or in that region. Scene-level goals are category tasks and count every reachable instance. An episode is
one sequence of ``goals_per_sequence`` goals in one home, covering at least ``min_levels_per_sequence`` levels,
memory kept across them, each goal's SPL measured from where the previous ended (``langmap_multi_goal.py``).
What a GoatTask cannot hold is kept per task index in the episode's extra fields, as
``goat_suites.langmap.loader.sequence_to_goat_episode`` does for real LangMap files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import SceneGenerationError
from goat_core.types import GoalModality
from goat_suites.common.episodes import GoalObject, GoatDataset, GoatEpisode, GoatTask, goals_key
from goat_suites.common.suite_gen import (
    check_positive,
    check_start_range,
    footprint_gap_m,
    goal_object,
    home_seeds,
    pick_start,
    placement,
    standard_view_points,
)
from goat_suites.common.suite_metrics import LANGMAP_LEVELS
from goat_suites.goat.generator import credits_info, scene_id_for
from goat_suites.langmap.loader import EXTRA_LEVELS, EXTRA_TARGET_IDS, EXTRA_TEXTS
from sim_bridge.embedded.home import Home, HomeConfig, ObjectSpec, generate_home
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig

LANGMAP_STYLES = ("concise", "detailed")
EXTRA_STYLE = "langmap_style"  # GoatEpisode.extra: the description style of the episode
EXTRA_REGIONS = "langmap_regions"  # GoatEpisode.extra: region annotations of the home, like LangMap's files
EPISODE_STREAM = 11  # random stream of an episode: default_rng([home seed, EPISODE_STREAM])
GENERATOR = "goat_nav embedded langmap v1"


@dataclass(frozen=True)
class LangMapGenConfig:
    """Settings of the procedural LangMap sequences (one default each)."""

    goals_per_sequence: int = 5  # LangMap's multi-goal sequences have five goals
    min_levels_per_sequence: int = 3  # distinct levels a sequence must cover
    styles: tuple[str, ...] = LANGMAP_STYLES  # episode k uses styles[k % len(styles)]
    region_link_m: float = 1.0  # furniture footprints this close belong to one region
    near_radius_m: float = 1.5  # "beside the X" for floor objects: the anchor's footprint is this close
    view_point_radius_m: float = 1.0
    view_point_spacing_m: float = 0.25
    min_start_geodesic_m: float = 1.0  # GOAT-Bench start distances to the first goal
    max_start_geodesic_m: float = 30.0
    start_attempts: int = 200
    homes_per_episode: int = 5  # homes tried (next seeds of the dataset) before an episode is given up

    def __post_init__(self) -> None:
        owner = "LangMapGenConfig"
        if not 1 <= self.min_levels_per_sequence <= min(len(LANGMAP_LEVELS), self.goals_per_sequence):
            raise SceneGenerationError(
                f"{owner} needs 1 <= min_levels_per_sequence <= min(4, goals_per_sequence), got "
                f"{self.min_levels_per_sequence!r} levels for {self.goals_per_sequence!r} goals")
        if not self.styles or any(s not in LANGMAP_STYLES for s in self.styles):
            raise SceneGenerationError(f"{owner}.styles must be a non-empty tuple of {LANGMAP_STYLES}, "
                                       f"got {self.styles!r}")
        for name in ("region_link_m", "near_radius_m", "view_point_radius_m", "view_point_spacing_m"):
            check_positive(owner, name, getattr(self, name))
        check_start_range(owner, self.min_start_geodesic_m, self.max_start_geodesic_m, self.start_attempts)
        if self.homes_per_episode < 1:
            raise SceneGenerationError(f"{owner}.homes_per_episode must be >= 1, got {self.homes_per_episode!r}")


@dataclass(frozen=True)
class Region:
    """A described furniture group of a home (LangMap's ``region_annotation`` entry)."""

    region_id: str  # "room<k>_region<j>"
    room_id: int
    category: str  # the room type, LangMap's region_category
    object_ids: tuple[str, ...]  # furniture of the group and the small objects on it
    concise_description: Optional[str]  # None when no concise text is unique in the home
    detailed_description: Optional[str]

    def description(self, style: str) -> Optional[str]:
        return self.concise_description if style == "concise" else self.detailed_description


@dataclass(frozen=True)
class LangMapGoal:
    """One goal of a sequence: its level, what counts as reaching it, and the words of the instruction."""

    level: str  # scene | room | region | instance
    category: str
    target_ids: tuple[str, ...]  # object ids; reaching a view point of any of them succeeds
    text: str  # the goal phrase of the LangMap template (after "Find the")

    @property
    def instruction(self) -> str:
        return f"Find the {self.text}"


# ----------------------------------------------------------------------------------------------- regions


def _groups(furniture: Sequence[ObjectSpec], link_m: float) -> list[list[ObjectSpec]]:
    """Single-link clusters of furniture footprints, each in object order, clusters by their first object."""
    parent = list(range(len(furniture)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(furniture)):
        for j in range(i):
            if footprint_gap_m(furniture[i], furniture[j]) <= link_m:
                parent[root(i)] = root(j)
    clusters: dict[int, list[ObjectSpec]] = {}
    for i, obj in enumerate(furniture):
        clusters.setdefault(root(i), []).append(obj)
    return sorted(clusters.values(), key=lambda group: group[0].instance_id)


def _by_size(furniture: Sequence[ObjectSpec]) -> list[ObjectSpec]:
    """Furniture largest footprint first, one piece per category."""
    def area(o: ObjectSpec) -> float:
        return (o.bbox_max_m[0] - o.bbox_min_m[0]) * (o.bbox_max_m[1] - o.bbox_min_m[1])

    seen: set[str] = set()
    out = []
    for obj in sorted(furniture, key=lambda o: (-area(o), o.instance_id)):
        if obj.category not in seen:
            seen.add(obj.category)
            out.append(obj)
    return out


PLURAL_CATEGORIES = frozenset({"headphones"})  # named without an article


def with_article(phrase: str, category: str) -> str:
    """"a mug", "an armchair", "headphones": the indefinite article English puts before ``phrase``."""
    if category in PLURAL_CATEGORIES:
        return phrase
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase


def _region_texts(furniture: Sequence[ObjectSpec], smalls: Sequence[ObjectSpec],
                  home: Home) -> tuple[str, str, str]:
    """(plain, coloured, detailed) descriptions of a furniture group."""
    pieces = _by_size(furniture)
    plain = " beside ".join(with_article(o.category, o.category) for o in pieces[:2])
    coloured = " beside ".join(with_article(f"{o.colour} {o.category}", o.category) for o in pieces[:2])
    named = [with_article(f"{o.colour} {o.material} {o.category}", o.category) for o in pieces[:3]]
    detailed = named[0] + (" beside " + " and ".join(named[1:]) if len(named) > 1 else "")
    on_top = [with_article(f"{s.colour} {s.category}", s.category)
              + f" on the {home.object(str(s.receptacle_id)).category}" for s in smalls[:2]]
    if on_top:
        detailed += ", with " + " and ".join(on_top)
    return plain, coloured, detailed


def _unique(texts: Mapping[str, str]) -> dict[str, str]:
    """The entries whose text no other entry has."""
    counts: dict[str, int] = {}
    for text in texts.values():
        counts[text] = counts.get(text, 0) + 1
    return {key: text for key, text in texts.items() if counts[text] == 1}


def home_regions(home: Home, link_m: float = 1.0) -> tuple[Region, ...]:
    """The furniture groups of every room with descriptions unique within the home (see module doc)."""
    drafts: list[tuple[str, int, str, tuple[str, ...], tuple[str, str, str]]] = []
    for room in home.rooms:
        furniture = [o for o in home.objects if o.room_id == room.room_id and o.receptacle_id is None]
        for j, group in enumerate(_groups(furniture, link_m)):
            ids = {o.object_id for o in group}
            smalls = [o for o in home.objects if o.receptacle_id in ids and home.hidden_relation(o) is None]
            members = tuple(o.object_id for o in group) + tuple(o.object_id for o in smalls)
            drafts.append((f"room{room.room_id}_region{j}", room.room_id, room.room_type, members,
                           _region_texts(group, smalls, home)))
    # Concise: the plain text where no other region has it, else the coloured one where that is unique.
    plain = _unique({d[0]: d[4][0] for d in drafts})
    coloured = _unique({d[0]: d[4][1] for d in drafts if d[0] not in plain})
    concise = _unique({**plain, **coloured})  # checked again: the final texts must be unique, whatever the rule
    detailed = _unique({d[0]: d[4][2] for d in drafts})
    return tuple(Region(region_id=rid, room_id=room_id, category=category, object_ids=members,
                        concise_description=concise.get(rid), detailed_description=detailed.get(rid))
                 for rid, room_id, category, members, _ in drafts)


# ----------------------------------------------------------------------------------------------- instances


# Perceivable features a concise description may use, tried from the shortest text.
_CONCISE_FEATURES: tuple[tuple[str, ...], ...] = (
    ("colour",), ("placement",), ("colour", "placement"), ("colour", "room"), ("placement", "room"),
    ("colour", "placement", "room"),
)


def _features(obj: ObjectSpec, home: Home, near_radius_m: float) -> dict[str, object]:
    where = placement(obj, home, near_radius_m)
    return {"colour": obj.colour, "placement": None if where is None else where.key, "room": obj.room_type}


def instance_description(obj: ObjectSpec, home: Home, style: str, near_radius_m: float = 1.5) -> Optional[str]:
    """A description of ``obj`` that no other instance of its category fits, in a LangMap style, or None."""
    if style not in LANGMAP_STYLES:
        raise SceneGenerationError(f"LangMap style must be one of {LANGMAP_STYLES}, got {style!r}")
    others = [o for o in home.objects if o.category == obj.category and o.object_id != obj.object_id]
    mine = _features(obj, home, near_radius_m)
    theirs = [_features(o, home, near_radius_m) for o in others]
    where = placement(obj, home, near_radius_m)
    options = _CONCISE_FEATURES if style == "concise" else (("colour", "placement", "room"),)
    for used in options:
        if "placement" in used and where is None:
            continue
        if any(all(t[f] == mine[f] for f in used) for t in theirs):
            continue
        if style == "concise":
            text = (f"{obj.colour} " if "colour" in used else "") + obj.category
            if where is not None and "placement" in used:
                text += f" {_relation_words(where.relation)} the {where.anchor.category}"
        else:
            size = "" if obj.size_label == "medium" else f"{obj.size_label} "
            text = f"{size}{obj.colour} {obj.material} {obj.category}"
            if where is not None:
                text += f" {_relation_words(where.relation)} the {where.anchor.colour} {where.anchor.category}"
        if "room" in used:
            text += f" in the {obj.room_type}"
        return text
    return None


def _relation_words(relation: str) -> str:
    return "beside" if relation == "near" else relation


# ----------------------------------------------------------------------------------------------- goals


def _mentions(text: str, category: str) -> bool:
    return re.search(rf"\b{re.escape(category)}\b", text) is not None


def level_goals(home: Home, regions: Sequence[Region], style: str, reachable: Callable[[ObjectSpec], bool],
                near_radius_m: float = 1.5) -> dict[str, list[LangMapGoal]]:
    """Every goal of each level the home offers in ``style`` (see module doc for the single-target rule)."""
    by_id = {o.object_id: o for o in home.objects}
    goals: dict[str, list[LangMapGoal]] = {level: [] for level in LANGMAP_LEVELS}
    for category in sorted({o.category for o in home.objects}):
        instances = [o for o in home.objects if o.category == category]
        targets = tuple(o.object_id for o in instances if reachable(o))
        if targets:
            goals["scene"].append(LangMapGoal("scene", category, targets, category))
        for room_type in sorted({o.room_type for o in instances}):
            inside = [o for o in instances if o.room_type == room_type]
            if len(inside) == 1 and reachable(inside[0]):
                goals["room"].append(LangMapGoal("room", category, (inside[0].object_id,),
                                                 f"{category} in the {room_type}"))
    for region in regions:
        description = region.description(style)
        if description is None:
            continue
        members = [by_id[i] for i in region.object_ids]
        for category in sorted({o.category for o in members}):
            inside = [o for o in members if o.category == category]
            if len(inside) == 1 and reachable(inside[0]) and not _mentions(description, category):
                goals["region"].append(LangMapGoal(
                    "region", category, (inside[0].object_id,),
                    f"{category} in the {region.category} that has {description}"))
    for obj in home.objects:
        text = instance_description(obj, home, style, near_radius_m) if reachable(obj) else None
        if text is not None:
            goals["instance"].append(LangMapGoal("instance", obj.category, (obj.object_id,), text))
    return goals


def _level_order(rng: np.random.Generator, available: Sequence[str], n: int) -> list[str]:
    """Every available level once (as far as n allows), the rest drawn at random, in random order."""
    order = [available[int(i)] for i in rng.permutation(len(available))][:n]
    order += [available[int(rng.integers(len(available)))] for _ in range(n - len(order))]
    return [order[int(i)] for i in rng.permutation(len(order))]


def sample_sequence(rng: np.random.Generator, goals: Mapping[str, Sequence[LangMapGoal]], n: int,
                    min_levels: int) -> list[LangMapGoal]:
    """``n`` goals with disjoint targets covering at least ``min_levels`` levels, or SceneGenerationError."""
    available = [level for level in LANGMAP_LEVELS if goals.get(level)]
    if len(available) < min_levels:
        raise SceneGenerationError(f"only levels {available} have goals; a sequence needs {min_levels} levels")
    used: set[str] = set()
    chosen: list[LangMapGoal] = []
    for wanted in _level_order(rng, available, n):
        for level in [wanted] + [lv for lv in available if lv != wanted]:
            free = [g for g in goals[level] if used.isdisjoint(g.target_ids)]
            if free:
                goal = free[int(rng.integers(len(free)))]
                chosen.append(goal)
                used.update(goal.target_ids)
                break
    levels = {g.level for g in chosen}
    if len(chosen) < n or len(levels) < min_levels:
        raise SceneGenerationError(f"found {len(chosen)} of {n} goals over levels {sorted(levels)}; need "
                                   f"{min_levels} levels")
    return chosen


# ----------------------------------------------------------------------------------------------- episodes


class _Targets:
    """Caches the view points of the home's objects (None: unreachable)."""

    def __init__(self, sim: EmbeddedSim, config: LangMapGenConfig) -> None:
        self.sim = sim
        self.config = config
        self._points: dict[str, Optional[np.ndarray]] = {}

    def points(self, obj: ObjectSpec) -> Optional[np.ndarray]:
        if obj.object_id not in self._points:
            self._points[obj.object_id] = standard_view_points(
                self.sim, obj, self.config.view_point_radius_m, self.config.view_point_spacing_m)
        return self._points[obj.object_id]

    def reachable(self, obj: ObjectSpec) -> bool:
        return self.points(obj) is not None


def _goal_table(home: Home, scene_id: str, sequence: Sequence[LangMapGoal], targets: _Targets,
                region_of: Mapping[str, str]) -> dict[str, tuple[GoalObject, ...]]:
    """"<scene>_<category>" -> every reachable instance of each category the sequence asks for."""
    texts = {g.target_ids[0]: g.text for g in sequence if g.level != "scene"}
    table: dict[str, tuple[GoalObject, ...]] = {}
    for category in sorted({g.category for g in sequence}):
        objects = []
        for obj in home.objects:
            points = targets.points(obj) if obj.category == category else None
            if points is not None:
                objects.append(goal_object(obj, points, texts.get(obj.object_id),
                                           {"region_id": region_of.get(obj.object_id)}))
        table[goals_key(scene_id, category)] = tuple(objects)
    return table


def generate_langmap_episode(sim: EmbeddedSim, scene_id: str, episode_id: str, rng: np.random.Generator,
                             style: str, config: Optional[LangMapGenConfig] = None) -> GoatEpisode:
    """One 5-goal LangMap sequence in the home loaded in ``sim`` (SceneGenerationError if it has none)."""
    config = config or LangMapGenConfig()
    home = sim.home
    regions = home_regions(home, config.region_link_m)
    targets = _Targets(sim, config)
    goals = level_goals(home, regions, style, targets.reachable, config.near_radius_m)
    sequence = sample_sequence(rng, goals, config.goals_per_sequence, config.min_levels_per_sequence)
    region_of = {i: r.region_id for r in regions for i in r.object_ids}
    table = _goal_table(home, scene_id, sequence, targets, region_of)
    tasks = tuple(
        GoatTask(category=g.category, modality=GoalModality.CATEGORY) if g.level == "scene" else
        GoatTask(category=g.category, modality=GoalModality.DESCRIPTION, object_id=g.target_ids[0])
        for g in sequence)
    first = tuple(o for o in table[goals_key(scene_id, sequence[0].category)]
                  if o.object_id in sequence[0].target_ids)
    start = pick_start(sim, first, rng, config.min_start_geodesic_m, config.max_start_geodesic_m,
                       config.start_attempts)
    return GoatEpisode(
        episode_id=episode_id, scene_id=scene_id, start_position=start.position, start_rotation=start.rotation,
        tasks=tasks, goals=table,
        info={"geodesic_distance": round(start.geodesic_m, 3), "generator": GENERATOR,
                             **credits_info(sim.home)},
        extra={
            EXTRA_LEVELS: {str(i): g.level for i, g in enumerate(sequence)},
            EXTRA_TEXTS: {str(i): g.text for i, g in enumerate(sequence)},
            EXTRA_TARGET_IDS: {str(i): list(g.target_ids) for i, g in enumerate(sequence)},
            EXTRA_STYLE: style,
            EXTRA_REGIONS: {r.region_id: {"region_category": r.category, "object_ids": list(r.object_ids),
                                          "concise_description": r.concise_description,
                                          "detailed_description": r.detailed_description} for r in regions},
        })


def generate_langmap_dataset(num_episodes: int, seed: int, home_config: Optional[HomeConfig] = None,
                             config: Optional[LangMapGenConfig] = None, sim_config: Optional[SimConfig] = None,
                             on_episode: Optional[Callable[[GoatEpisode], None]] = None) -> GoatDataset:
    """``num_episodes`` sequences, each in its own home; home seeds follow ``episodes.generate_dataset``.

    A home that offers no valid sequence is skipped for the next seed of the dataset (at most
    ``homes_per_episode`` tries per episode), so the dataset stays a function of the seed.
    """
    if isinstance(num_episodes, bool) or not isinstance(num_episodes, int) or num_episodes < 1:
        raise SceneGenerationError(f"num_episodes must be an integer >= 1, got {num_episodes!r}")
    home_config = home_config or HomeConfig()
    config = config or LangMapGenConfig()
    seeds = home_seeds(seed)
    episodes: list[GoatEpisode] = []
    for k in range(num_episodes):
        style = config.styles[k % len(config.styles)]
        episode = _first_episode(seeds, f"langmap-{seed}-{k}", style, home_config, config,
                                 sim_config or SimConfig())
        episodes.append(episode)
        if on_episode is not None:
            on_episode(episode)
    return GoatDataset(episodes=tuple(episodes))


def _first_episode(seeds: Iterable[int], episode_id: str, style: str, home_config: HomeConfig,
                   config: LangMapGenConfig, sim_config: SimConfig) -> GoatEpisode:
    problems = []
    for _, home_seed in zip(range(config.homes_per_episode), seeds, strict=False):
        with EmbeddedSim(generate_home(home_seed, home_config), sim_config) as sim:
            try:
                return generate_langmap_episode(sim, scene_id_for(home_seed, home_config), episode_id,
                                                np.random.default_rng([home_seed, EPISODE_STREAM]), style, config)
            except SceneGenerationError as exc:
                problems.append(f"home {home_seed}: {exc}")
    raise SceneGenerationError(f"episode {episode_id}: no usable home in {config.homes_per_episode} tries: "
                               + "; ".join(problems))


__all__ = ["EXTRA_REGIONS", "EXTRA_STYLE", "LANGMAP_STYLES", "LangMapGenConfig", "LangMapGoal", "Region",
           "generate_langmap_dataset", "generate_langmap_episode", "home_regions", "instance_description",
           "level_goals", "sample_sequence"]
