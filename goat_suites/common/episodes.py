"""The GOAT-Bench episode schema every suite runs in: episodes, subtasks, goal objects, view points, image goals.

GOAT-Bench episode fields (GOAT-Bench ``goat/dataset/goat_dataset.py``): ``episode_id``, ``scene_id``,
``start_position`` ([x, y, z] m), ``start_rotation`` ([x, y, z, w]), ``tasks`` = list of
``[category, modality, object_id, image_idx?]`` with modality ``object`` | ``description`` | ``image``.
Goals are keyed ``"<scene basename>_<category>"`` (``TEEsavR23oF.basis.glb_chair``); each goal object has
``object_id``, ``object_category``, ``position``, ``view_points`` =
``[{agent_state: {position, rotation}, iou}]``, ``lang_desc`` (description goals) and ``image_goals`` = camera
parameters of the goal pictures (habitat-lab ``InstanceImageParameters``: ``position``, ``rotation``, ``hfov``
in degrees, ``image_dimensions`` = [height, width], ``frame_coverage``, ``object_coverage``). ObjectNav v1
files carry the same goal objects under ``goals_by_category`` and one ``object_category`` per episode.
The files themselves (layouts, the loader and the writer) are :mod:`goat_suites.common.episode_files`.

Positions and rotations are kept exactly as stored (Habitat frame: y up, the agent looks along -Z); the
``*_ros*`` helpers return REP 103 values through :mod:`goat_core.frames`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from goat_core import frames
from goat_core.errors import EpisodeFormatError, SceneGenerationError
from goat_core.types import GoalModality, Pose2D

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]

CHILDREN_FIELD = "children_object_categories"  # GOAT-Bench goal objects: categories that also count
# Episode field (kept by the loader in GoatEpisode.extra) holding the word a category task uses, by task index.
CATEGORY_WORDS_FIELD = "category_words"
# Episode "info" field of procedural episodes: every subtask's geodesic distance in metres, from the start, then from
# where the previous subtask ended (GOAT-Bench's "geodesic_distance" is the first subtask's only).
SUBTASK_DISTANCES_FIELD = "subtask_geodesic_distances_m"
# Episode "info" field of procedural episodes: its home's rooms, navigable area and objects (the results' meta.scenes
# entry, goat_suites.common.home_stats), computed where the generator builds the home.
SCENE_STATS_FIELD = "scene_stats"


# ----------------------------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class ViewPoint:
    """An agent state from which the goal object is visible; success is measured against these."""

    position: Vec3  # Habitat frame, metres, on the floor (agent base)
    rotation: Quat  # Habitat frame, [x, y, z, w]
    iou: Optional[float] = None  # how well the object is framed from here (ObjectNav "iou")

    def position_ros_m(self) -> np.ndarray:
        return frames.habitat_to_ros_position(self.position)

    def pose_ros(self) -> Pose2D:
        return frames.habitat_pose_to_pose2d(self.position, self.rotation)


@dataclass(frozen=True)
class ImageGoalSpec:
    """Camera parameters of one goal picture (habitat-lab InstanceImageParameters + GOAT-Bench meta)."""

    position: Vec3  # camera position, Habitat frame, metres
    rotation: Quat  # camera rotation, Habitat frame, [x, y, z, w]; the camera looks along its -Z
    hfov_deg: float  # file field "hfov"
    image_height_px: Optional[int] = None  # file field "image_dimensions"[0]
    image_width_px: Optional[int] = None  # file field "image_dimensions"[1]
    frame_coverage: Optional[float] = None  # fraction of the picture covered by the object
    object_coverage: Optional[float] = None  # fraction of the object visible in the picture
    caption: Optional[str] = None  # "image_caption" in GOAT-Bench image_goal_meta files (BLIP-2)

    def position_ros_m(self) -> np.ndarray:
        return frames.habitat_to_ros_position(self.position)

    def yaw_rad(self) -> float:
        """ROS heading of the camera's look direction."""
        return frames.habitat_quaternion_to_yaw(self.rotation)

    def tilt_rad(self) -> float:
        """Elevation of the camera's look direction, positive up."""
        return frames.habitat_quaternion_to_tilt(self.rotation)


@dataclass(frozen=True)
class GoalObject:
    """One object instance that can be a goal."""

    object_id: str  # GOAT-Bench ids are strings ("heater_128"); ObjectNav integer ids are kept as their text
    object_category: str
    position: Vec3  # object centre, Habitat frame, metres
    view_points: tuple[ViewPoint, ...] = ()
    lang_desc: Optional[str] = None  # description-goal text
    image_goals: tuple[ImageGoalSpec, ...] = ()
    # Every other field of the goal object as stored (ours: "colour", "room"; HM3D: "object_name", "room_id").
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def position_ros_m(self) -> np.ndarray:
        return frames.habitat_to_ros_position(self.position)


@dataclass(frozen=True)
class GoatTask:
    """One subtask: where to go, in one modality."""

    category: str
    modality: GoalModality
    object_id: Optional[str] = None  # the target instance; required for description and image tasks
    image_idx: Optional[int] = None  # image tasks: index into the goal object's image_goals


@dataclass(frozen=True)
class GoatEpisode:
    """A sequence of subtasks in one scene, starting from one agent state."""

    episode_id: str
    scene_id: str  # as stored, e.g. "hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb"
    start_position: Vec3  # Habitat frame, metres
    start_rotation: Quat  # Habitat frame, [x, y, z, w]
    tasks: tuple[GoatTask, ...]
    goals: Mapping[str, tuple[GoalObject, ...]]  # "<scene basename>_<category>" -> instances (whole scene)
    info: Mapping[str, Any] = field(default_factory=dict)  # the file's "info" (geodesic distances, ...)
    extra: Mapping[str, Any] = field(default_factory=dict)  # other stored episode fields, kept on save

    @property
    def uid(self) -> str:
        """Episode ids repeat across scenes in GOAT-Bench; "<scene>/<episode_id>" does not."""
        return f"{scene_name(self.scene_id)}/{self.episode_id}"

    def start_pose_ros(self) -> Pose2D:
        """The start base pose as a planar ROS pose in the world frame."""
        return frames.habitat_pose_to_pose2d(self.start_position, self.start_rotation)

    def to_episode_frame_m(self, position: Sequence[float]) -> np.ndarray:
        """A Habitat world point in this episode's frame (origin at the start, x forward, y left, z up)."""
        return frames.habitat_to_episode_frame(position, self.start_position, self.start_rotation)


@dataclass(frozen=True)
class GoatDataset:
    episodes: tuple[GoatEpisode, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)  # other top-level fields of the file, kept on save


@dataclass(frozen=True)
class ImageGoalKey:
    """Key of a GOAT-Bench image_goal_meta entry, stored as "<scene>/<episode>_<object_id>_<image_idx>"."""

    scene: str
    episode_id: str
    object_id: str
    image_idx: int


# ----------------------------------------------------------------------------------------------- lookups


def scene_basename(scene_id: str) -> str:
    """The scene file name used in goal keys: ".../00800-TEEsavR23oF/TEEsavR23oF.basis.glb" -> the name."""
    return os.path.basename(scene_id)


def scene_name(scene_id: str) -> str:
    """The scene name used for content files: "TEEsavR23oF.basis.glb" -> "TEEsavR23oF"."""
    return scene_basename(scene_id).split(".")[0]


def goals_key(scene_id: str, category: str) -> str:
    """The key of a category's goal objects, "<scene basename>_<category>"."""
    return f"{scene_basename(scene_id)}_{category}"


def _category_goals(episode: GoatEpisode, category: str) -> Optional[tuple[GoalObject, ...]]:
    found = episode.goals.get(goals_key(episode.scene_id, category))
    if found is not None:
        return found
    # GOAT-Bench's own loader matches on object_category rather than on the key, so do the same as a fallback.
    for objects in episode.goals.values():
        if objects and objects[0].object_category == category:
            return objects
    return None


def goals_for_task(episode: GoatEpisode, task: GoatTask) -> tuple[GoalObject, ...]:
    """The goal instances that count for a task.

    A category task: every instance of the category (reaching any one succeeds) and, as GOAT-Bench's reader
    adds them (``goat_bench/dataset/goat_dataset.py`` l.195-205), every instance of the categories its first goal
    object lists under ``children_object_categories`` (looked up by key; a child without goals is skipped).
    Description and image tasks: the single ``object_id`` instance.
    """
    objects = _category_goals(episode, task.category)
    if not objects:
        raise EpisodeFormatError(
            f"episode {episode.uid}: no goal objects of category {task.category!r} "
            f"(expected key {goals_key(episode.scene_id, task.category)!r})"
        )
    if task.modality is GoalModality.CATEGORY:
        return objects + _children_goals(episode, objects[0])
    chosen = tuple(g for g in objects if g.object_id == task.object_id)
    if not chosen:
        raise EpisodeFormatError(
            f"episode {episode.uid}: object_id {task.object_id!r} is not among the {task.category!r} goals "
            f"{[g.object_id for g in objects]}"
        )
    return chosen


def task_goal_text(episode: GoatEpisode, index: int, task: GoatTask) -> str:
    """The words the agent is given for a category or description task."""
    if task.modality is GoalModality.CATEGORY:
        words = episode.extra.get(CATEGORY_WORDS_FIELD) or {}
        return str(words.get(str(index), task.category))
    if task.modality is GoalModality.DESCRIPTION:
        goal = next(g for g in episode.goals[goals_key(episode.scene_id, task.category)]
                    if g.object_id == task.object_id)
        if not goal.lang_desc:
            raise SceneGenerationError(f"episode {episode.episode_id}: object {task.object_id} has no lang_desc")
        return goal.lang_desc
    raise ValueError(f"task {index} of episode {episode.episode_id} is an image task and has no text")


def _children_goals(episode: GoatEpisode, first: GoalObject) -> tuple[GoalObject, ...]:
    children = first.attributes.get(CHILDREN_FIELD) or ()
    if isinstance(children, str) or not isinstance(children, (list, tuple)):
        raise EpisodeFormatError(f"episode {episode.uid}: {CHILDREN_FIELD} of {first.object_id!r} must be a list of "
                                 f"category names, got {short_repr(children)}")
    found: list[GoalObject] = []
    for child in children:
        found.extend(episode.goals.get(goals_key(episode.scene_id, str(child)), ()))
    return tuple(found)


def image_goal_for_task(episode: GoatEpisode, task: GoatTask) -> ImageGoalSpec:
    """The camera parameters of an image task's goal picture."""
    if task.modality is not GoalModality.IMAGE or task.image_idx is None:
        raise EpisodeFormatError(f"episode {episode.uid}: task {task!r} is not an image task with an index")
    goal = goals_for_task(episode, task)[0]
    if not 0 <= task.image_idx < len(goal.image_goals):
        raise EpisodeFormatError(
            f"episode {episode.uid}: image_idx {task.image_idx} out of range for object {goal.object_id!r} "
            f"with {len(goal.image_goals)} image goals"
        )
    return goal.image_goals[task.image_idx]


def short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

