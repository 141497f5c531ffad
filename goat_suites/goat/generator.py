"""Procedural GOAT episodes in the embedded simulator, saved in the GOAT-Bench schema.

An episode is one home (from its seed) and 5-10 subtasks whose modality is drawn uniformly from object category,
description and image. Every goal is checked before it is used:

* category goals name the category or one of its synonyms (catalogue), and succeed at any instance of it;
* descriptions are built from ground truth (colour, category, the receptacle it stands on or the furniture it
  is near, the room) and kept only when no other instance of the category fits the same words the agent can
  perceive (colour, relation, room); the material is added for detail;
* image goals are rendered from a view point, looking at the object, and kept only when the object covers at
  least ``image_min_coverage`` of the frame;
* the start is 1-30 m geodesic from the first goal (GOAT-Bench).

Positions in the saved episodes are in Habitat's Y-up frame, converted with goat_core.frames, so the loader of
real GOAT-Bench files reads ours unchanged.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from goat_core.errors import SceneGenerationError, UnreachableGoalError
from goat_core.frames import (
    habitat_to_ros_position,
    ros_to_habitat_position,
    ros_to_habitat_quaternion,
    yaw_to_habitat_quaternion,
)
from goat_core.types import GoalModality
from goat_suites.common.episodes import (
    CATEGORY_WORDS_FIELD,
    SCENE_STATS_FIELD,
    SUBTASK_DISTANCES_FIELD,
    GoalObject,
    GoatDataset,
    GoatEpisode,
    GoatTask,
    ImageGoalSpec,
    ViewPoint,
    goals_key,
    task_goal_text,
)
from goat_suites.common.home_stats import scene_stats_info, subtask_geodesics_m
from sim_bridge.embedded.catalogue import CATALOGUE, synonyms
from sim_bridge.embedded.home import (
    Home,
    HomeConfig,
    ObjectSpec,
    generate_home,
)
from sim_bridge.embedded.scene_ids import SCENE_PREFIX, parse_scene_id, scene_id_for
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig

GOAL_SAMPLING = ("object", "category")
VISIBILITY_VIEWS = 6  # view points rendered at most to test a goal's frame coverage (min_goal_coverage)


@dataclass(frozen=True)
class EpisodeGenConfig:
    """Settings of the procedural GOAT episodes (defaults follow GOAT-Bench)."""

    min_subtasks: int = 5
    max_subtasks: int = 10
    min_start_geodesic_m: float = 1.0
    max_start_geodesic_m: float = 30.0
    view_point_radius_m: float = 1.0
    view_point_spacing_m: float = 0.25
    near_radius_m: float = 1.5  # "near the X": the anchor's footprint is within this distance
    synonym_probability: float = 0.5  # a category task names a synonym instead of the category
    image_min_coverage: float = 0.03  # fraction of the goal picture the object must cover
    images_per_goal: int = 2
    start_attempts: int = 200
    # How a subtask's goal is drawn: "object" uniformly over the home's objects (the small homes), "category"
    # uniformly over the categories, then over their instances (GOAT-Bench).
    goal_sampling: str = "object"
    # A goal object must cover at least this fraction of the frame seen from one of its view points (GOAT-Bench's
    # 5 % rule; up to VISIBILITY_VIEWS view points are tried); 0 = no such test (the small homes).
    min_goal_coverage: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.min_subtasks <= self.max_subtasks:
            raise SceneGenerationError(
                f"need 1 <= min_subtasks <= max_subtasks, got {self.min_subtasks}, {self.max_subtasks}")
        if not 0.0 <= self.min_start_geodesic_m < self.max_start_geodesic_m:
            raise SceneGenerationError(
                f"need 0 <= min_start_geodesic_m < max_start_geodesic_m, got {self.min_start_geodesic_m}, "
                f"{self.max_start_geodesic_m}")
        if not 0.0 < self.image_min_coverage < 1.0:
            raise SceneGenerationError(f"image_min_coverage must be in (0, 1), got {self.image_min_coverage}")
        if self.goal_sampling not in GOAL_SAMPLING:
            raise SceneGenerationError(f"goal_sampling must be one of {GOAL_SAMPLING}, got {self.goal_sampling!r}")
        if not 0.0 <= self.min_goal_coverage < 1.0:
            raise SceneGenerationError(f"min_goal_coverage must be in [0, 1), got {self.min_goal_coverage}")


# The episodes of the large homes: drawn as GOAT-Bench draws them (goal category first, the 5 % frame coverage of
# every goal and image).
LARGE_HOME_EPISODES = EpisodeGenConfig(goal_sampling="category", min_goal_coverage=0.05, image_min_coverage=0.05)


def episode_config_for(home_config: HomeConfig) -> EpisodeGenConfig:
    """The episode settings of a kind of home: GOAT-Bench's rules for the large homes, today's for the small."""
    return LARGE_HOME_EPISODES if home_config.layout == "large" else EpisodeGenConfig()


def credits_info(home: Home) -> dict[str, object]:
    """Episode ``info`` fields crediting a furnished home's models (none for a primitive home: its episodes stay
    as they were)."""
    if home.config.furniture == "primitive":
        return {}
    return {"furniture": home.config.furniture, "model_credits": home.model_credits()}


def usable_synonyms(category: str) -> tuple[str, ...]:
    """Synonyms of ``category`` that cannot be read as another category of the catalogue.

    "table" (for dining table) is also part of "coffee table" and "side table", so a goal saying "table" would
    have several right answers; such words are not used as category goals.
    """
    others = [spec.name for spec in CATALOGUE if spec.name != category]
    words_of = {name: set(name.split()) for name in others}
    usable = []
    for synonym in synonyms(category):
        words = set(synonym.split())
        if any(synonym == name or words & words_of[name] for name in others):
            continue
        usable.append(synonym)
    return tuple(usable)


# ----------------------------------------------------------------------------------------------- descriptions


def _footprint_distance_m(a: ObjectSpec, b: ObjectSpec) -> float:
    """Distance between the axis-aligned footprints of two objects (0 when they overlap)."""
    dx = max(0.0, max(a.bbox_min_m[0], b.bbox_min_m[0]) - min(a.bbox_max_m[0], b.bbox_max_m[0]))
    dy = max(0.0, max(a.bbox_min_m[1], b.bbox_min_m[1]) - min(a.bbox_max_m[1], b.bbox_max_m[1]))
    return math.hypot(dx, dy)


def _relation(obj: ObjectSpec, home: Home, near_radius_m: float) -> Optional[tuple[str, str]]:
    """("on", receptacle category) for objects on a receptacle, else ("near", nearest furniture category)."""
    by_id = {o.object_id: o for o in home.objects}
    if obj.receptacle_id is not None:
        return ("on", by_id[obj.receptacle_id].category)
    others = [o for o in home.objects
              if o.object_id != obj.object_id and o.receptacle_id is None and o.room_id == obj.room_id
              and o.category != obj.category]
    if not others:
        return None
    dists = [_footprint_distance_m(obj, o) for o in others]
    best = int(np.argmin(dists))
    return ("near", others[best].category) if dists[best] <= near_radius_m else None


def _signature(obj: ObjectSpec, home: Home, use_room: bool, use_rel: bool, near_radius_m: float) -> tuple:
    return (obj.colour, obj.room_type if use_room else None,
            _relation(obj, home, near_radius_m) if use_rel else None)


def describe_object(obj: ObjectSpec, home: Home, near_radius_m: float = 1.5) -> Optional[str]:
    """A description that fits ``obj`` and no other instance of its category, or None if there is none."""
    same = [o for o in home.objects if o.category == obj.category and o.object_id != obj.object_id]
    relation = _relation(obj, home, near_radius_m)
    for use_room, use_rel in ((False, False), (True, False), (False, True), (True, True)):
        if use_rel and relation is None:
            continue
        mine = _signature(obj, home, use_room, use_rel, near_radius_m)
        if all(_signature(o, home, use_room, use_rel, near_radius_m) != mine for o in same):
            text = f"the {obj.colour} {obj.material} {obj.category}"
            if use_rel and relation is not None:
                text += f" {relation[0]} the {relation[1]}"
            # The room is always said when the relation is not, so every description places the object.
            if use_room or not use_rel:
                text += f" in the {obj.room_type}"
            return text
    return None


# ----------------------------------------------------------------------------------------------- goals


def _vec3(values: Sequence[float] | np.ndarray) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in values)
    return (x, y, z)


def _quat(values: Sequence[float] | np.ndarray) -> tuple[float, float, float, float]:
    x, y, z, w = (float(v) for v in values)
    return (x, y, z, w)


def _yaw_towards(from_xy: np.ndarray, to_xy: np.ndarray) -> float:
    d = np.asarray(to_xy, dtype=float) - np.asarray(from_xy, dtype=float)
    return math.atan2(float(d[1]), float(d[0]))


def camera_quaternion_habitat(yaw_rad: float, tilt_rad: float) -> np.ndarray:
    """Habitat [x, y, z, w] of a camera with ROS yaw ``yaw_rad`` looking ``tilt_rad`` up (pitch about ROS -y)."""
    cy, sy = math.cos(yaw_rad / 2.0), math.sin(yaw_rad / 2.0)
    # Looking up is a negative pitch about ROS +y (REP 103: positive pitch turns +x towards -z).
    cp, sp = math.cos(-tilt_rad / 2.0), math.sin(-tilt_rad / 2.0)
    # q = q_yaw(z) * q_pitch(y), both as [x, y, z, w].
    q_ros = np.array([-sy * sp, cy * sp, sy * cp, cy * cp])
    return ros_to_habitat_quaternion(q_ros)


class _GoalBuilder:
    """Builds (and caches) the GoalObject of each home object: view points, description, image goals."""

    def __init__(self, sim: EmbeddedSim, config: EpisodeGenConfig, rng: np.random.Generator) -> None:
        self.sim = sim
        self.home = sim.home
        self.config = config
        self.rng = rng
        self._cache: dict[str, Optional[GoalObject]] = {}

    def goal(self, obj: ObjectSpec, with_images: bool) -> Optional[GoalObject]:
        cached = self._cache.get(obj.object_id)
        if cached is not None and (cached.image_goals or not with_images):
            return cached
        try:
            points = self.sim.navgrid.view_points(obj, radius_m=self.config.view_point_radius_m,
                                                  spacing_m=self.config.view_point_spacing_m)
        except UnreachableGoalError:
            self._cache[obj.object_id] = None
            return None
        if len(points) == 0 or not self._visible_enough(obj, points):
            self._cache[obj.object_id] = None
            return None
        centre = np.asarray(obj.position_m, dtype=float)
        view_points = tuple(
            ViewPoint(position=_vec3(ros_to_habitat_position([p[0], p[1], 0.0])),
                      rotation=_quat(yaw_to_habitat_quaternion(_yaw_towards(p, centre[:2]))))
            for p in points)
        images = self._image_goals(obj, points) if with_images else ()
        goal = GoalObject(
            object_id=obj.object_id, object_category=obj.category,
            position=_vec3(ros_to_habitat_position(centre)),
            view_points=view_points, lang_desc=describe_object(obj, self.home, self.config.near_radius_m),
            image_goals=images,
            attributes={"colour": obj.colour, "material": obj.material, "room_type": obj.room_type,
                        "room_id": obj.room_id, "receptacle_id": obj.receptacle_id,
                        "instance_id": obj.instance_id})
        self._cache[obj.object_id] = goal
        return goal

    def _coverage(self, obj: ObjectSpec, xy: np.ndarray) -> tuple[float, float, float]:
        """(frame coverage, yaw, tilt) of the object seen from ``xy`` looking at its centre."""
        cfg = self.sim.config
        centre = np.asarray(obj.position_m, dtype=float)
        yaw = _yaw_towards(xy, centre[:2])
        dist = float(np.linalg.norm(centre[:2] - xy))
        tilt = math.atan2(float(centre[2]) - cfg.camera_height_m, max(dist, 1e-3))
        segmentation = self.sim.render_segmentation(xy, yaw, tilt)
        return float(np.mean(segmentation == obj.instance_id)), yaw, tilt

    def _visible_enough(self, obj: ObjectSpec, points: np.ndarray) -> bool:
        """True when the object covers min_goal_coverage of the frame from one of (up to VISIBILITY_VIEWS, spread
        over) its view points; always True when the rule is off."""
        if self.config.min_goal_coverage <= 0.0:
            return True
        picks = np.unique(np.linspace(0, len(points) - 1, min(len(points), VISIBILITY_VIEWS)).round().astype(int))
        return any(self._coverage(obj, points[k])[0] >= self.config.min_goal_coverage for k in picks)

    def _image_goals(self, obj: ObjectSpec, points: np.ndarray) -> tuple[ImageGoalSpec, ...]:
        cfg = self.sim.config
        centre = np.asarray(obj.position_m, dtype=float)
        order = self.rng.permutation(len(points))
        found: list[ImageGoalSpec] = []
        for k in order[: 4 * self.config.images_per_goal]:
            xy = points[k]
            yaw = _yaw_towards(xy, centre[:2])
            dist = float(np.linalg.norm(centre[:2] - xy))
            tilt = math.atan2(float(centre[2]) - cfg.camera_height_m, max(dist, 1e-3))
            coverage = float(np.mean(self.sim.render_segmentation(xy, yaw, tilt) == obj.instance_id))
            if coverage < self.config.image_min_coverage:
                continue
            position = ros_to_habitat_position([xy[0], xy[1], cfg.camera_height_m])
            found.append(ImageGoalSpec(
                position=_vec3(position),
                rotation=_quat(camera_quaternion_habitat(yaw, tilt)),
                hfov_deg=cfg.hfov_deg, image_height_px=cfg.height_px, image_width_px=cfg.width_px,
                frame_coverage=round(coverage, 4)))
            if len(found) >= self.config.images_per_goal:
                break
        return tuple(found)


# ----------------------------------------------------------------------------------------------- episodes


def _pick_tasks(builder: _GoalBuilder, n: int, rng: np.random.Generator,
                config: EpisodeGenConfig) -> tuple[list[GoatTask], dict[str, str]]:
    objects = list(builder.home.objects)
    categories = sorted({o.category for o in objects})
    tasks: list[GoatTask] = []
    words: dict[str, str] = {}
    used: set[str] = set()
    attempts = 0
    while len(tasks) < n and attempts < 50 * n:
        attempts += 1
        modality = (GoalModality.CATEGORY, GoalModality.DESCRIPTION, GoalModality.IMAGE)[int(rng.integers(3))]
        if config.goal_sampling == "category":
            category = categories[int(rng.integers(len(categories)))]
            instances = [o for o in objects if o.category == category]
            obj = instances[int(rng.integers(len(instances)))]
        else:
            obj = objects[int(rng.integers(len(objects)))]
        if obj.object_id in used:
            continue
        goal = builder.goal(obj, with_images=modality is GoalModality.IMAGE)
        if goal is None:
            continue
        if modality is GoalModality.CATEGORY:
            if any(t.category == obj.category and t.modality is GoalModality.CATEGORY for t in tasks):
                continue
            alternatives = usable_synonyms(obj.category)
            if alternatives and rng.random() < config.synonym_probability:
                words[str(len(tasks))] = alternatives[int(rng.integers(len(alternatives)))]
            tasks.append(GoatTask(category=obj.category, modality=modality, object_id=None))
        elif modality is GoalModality.DESCRIPTION:
            if goal.lang_desc is None:
                continue
            tasks.append(GoatTask(category=obj.category, modality=modality, object_id=obj.object_id))
        else:
            if not goal.image_goals:
                continue
            idx = int(rng.integers(len(goal.image_goals)))
            tasks.append(GoatTask(category=obj.category, modality=modality, object_id=obj.object_id,
                                  image_idx=idx))
        used.add(obj.object_id)
    if len(tasks) < n:
        raise SceneGenerationError(
            f"home {builder.home.seed}: found only {len(tasks)} usable goals of {n} wanted")
    return tasks, words


def _goal_table(builder: _GoalBuilder, scene_id: str, tasks: Sequence[GoatTask]) -> dict[str, tuple[GoalObject, ...]]:
    """Goals keyed "<scene>_<category>" holding every reachable instance of each category a task uses."""
    table: dict[str, tuple[GoalObject, ...]] = {}
    for category in sorted({t.category for t in tasks}):
        wanted_images = {t.object_id for t in tasks if t.modality is GoalModality.IMAGE}
        goals = []
        for obj in builder.home.objects:
            if obj.category != category:
                continue
            goal = builder.goal(obj, with_images=obj.object_id in wanted_images)
            if goal is not None:
                goals.append(goal)
        table[goals_key(scene_id, category)] = tuple(goals)
    return table


def _pick_start(sim: EmbeddedSim, first_goals: Sequence[GoalObject], rng: np.random.Generator,
                config: EpisodeGenConfig) -> tuple[np.ndarray, float, float]:
    targets = np.asarray([habitat_to_ros_position(v.position)[:2] for g in first_goals for v in g.view_points])
    field = sim.navgrid.distance_field(targets)
    for _ in range(config.start_attempts):
        xy = sim.navgrid.sample_navigable(rng)
        row, col = sim.navgrid.world_to_cell(xy)
        d = float(field[row, col])
        if config.min_start_geodesic_m <= d <= config.max_start_geodesic_m:
            return xy, float(rng.uniform(-math.pi, math.pi)), d
    raise SceneGenerationError(
        f"home {sim.home.seed}: no start within {config.min_start_geodesic_m}-{config.max_start_geodesic_m} m "
        f"geodesic of the first goal after {config.start_attempts} samples")


def generate_episode(sim: EmbeddedSim, scene_id: str, episode_id: str, rng: np.random.Generator,
                     config: EpisodeGenConfig = EpisodeGenConfig()) -> GoatEpisode:
    """One GOAT episode in the home loaded in ``sim``."""
    n = int(rng.integers(config.min_subtasks, config.max_subtasks + 1))
    builder = _GoalBuilder(sim, config, rng)
    tasks, words = _pick_tasks(builder, n, rng, config)
    goals = _goal_table(builder, scene_id, tasks)
    first = goals[goals_key(scene_id, tasks[0].category)]
    if tasks[0].modality is not GoalModality.CATEGORY:
        first = tuple(g for g in first if g.object_id == tasks[0].object_id)
    start_xy, start_yaw, start_geodesic_m = _pick_start(sim, first, rng, config)
    episode = GoatEpisode(
        episode_id=episode_id, scene_id=scene_id,
        start_position=_vec3(ros_to_habitat_position([start_xy[0], start_xy[1], 0.0])),
        start_rotation=_quat(yaw_to_habitat_quaternion(start_yaw)),
        tasks=tuple(tasks), goals=goals,
        info={"geodesic_distance": round(start_geodesic_m, 3), "generator": "goat_nav embedded v1",
              **credits_info(sim.home)},
        extra={CATEGORY_WORDS_FIELD: words} if words else {})
    # Every subtask's distance (GOAT-Bench stores the first only): what the workers of a parallel run estimate an
    # episode's length by (goat_suites.common.episode_worker.estimated_actions). No random draw: same episodes.
    distances_m = [round(d, 3) if math.isfinite(d) else None for d in subtask_geodesics_m(episode, sim.navgrid)]
    return dataclasses.replace(episode, info={**episode.info, SUBTASK_DISTANCES_FIELD: distances_m,
                                              SCENE_STATS_FIELD: scene_stats_info(sim.home, sim.navgrid)})


def home_seeds(num_episodes: int, seed: int) -> list[int]:
    """The home seed of each episode of ``generate_dataset(num_episodes, seed)``, in order."""
    rng = np.random.default_rng(seed)
    return [int(rng.integers(0, 2**31 - 1)) for _ in range(num_episodes)]


def generate_numbered_episode(seed: int, k: int, home_seed: int, home_config: HomeConfig = HomeConfig(),
                              config: EpisodeGenConfig = EpisodeGenConfig(),
                              sim_config: SimConfig = SimConfig()) -> GoatEpisode:
    """Episode ``k`` of ``generate_dataset(..., seed)`` in its own home (``home_seed = home_seeds(...)[k]``); it
    depends on nothing else, so episodes can be generated apart (goat-nav bench's workers do)."""
    scene_id = scene_id_for(home_seed, home_config)
    with EmbeddedSim(generate_home(home_seed, home_config), sim_config) as sim:
        return generate_episode(sim, scene_id, f"{seed}-{k}", np.random.default_rng(home_seed), config)


def generate_dataset(num_episodes: int, seed: int, home_config: HomeConfig = HomeConfig(),
                     config: EpisodeGenConfig = EpisodeGenConfig(), sim_config: SimConfig = SimConfig(),
                     on_episode: Optional[Callable[[GoatEpisode], None]] = None) -> GoatDataset:
    """``num_episodes`` episodes, each in its own home; home seeds are derived from ``seed``."""
    if num_episodes < 1:
        raise SceneGenerationError(f"num_episodes must be >= 1, got {num_episodes}")
    episodes: list[GoatEpisode] = []
    for k, home_seed in enumerate(home_seeds(num_episodes, seed)):
        episode = generate_numbered_episode(seed, k, home_seed, home_config, config, sim_config)
        episodes.append(episode)
        if on_episode is not None:
            on_episode(episode)
    return GoatDataset(episodes=tuple(episodes))


@dataclass(frozen=True)
class ProceduralEpisodes:
    """Makes procedural episode ``k`` of ``--seed`` from ``(k, home_seed)`` (picklable: workers generate them)."""

    seed: int
    home_config: HomeConfig
    config: EpisodeGenConfig

    def __call__(self, item: tuple[int, int]) -> GoatEpisode:
        k, home_seed = item
        return generate_numbered_episode(self.seed, k, home_seed, self.home_config, self.config)


__all__ = ["SCENE_PREFIX", "EpisodeGenConfig", "ProceduralEpisodes", "LARGE_HOME_EPISODES", "camera_quaternion_habitat",
           "describe_object", "episode_config_for",
           "generate_dataset", "generate_episode", "generate_numbered_episode", "home_seeds", "parse_scene_id",
           "scene_id_for", "task_goal_text"]
