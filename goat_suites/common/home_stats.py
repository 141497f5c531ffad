"""Statistics of procedural homes beside the published figures of the scenes GOAT-Bench evaluates in.

Per home: rooms, navigable area (the nav grid's navigable cells for the Stretch footprint), objects, objects per
room, instances per category; per dataset: the same over homes and the geodesic distance of each subtask (from the
start, then from the previous goal, to the nearest view point of its goal). ``scene_meta`` is the ``meta.scenes``
entry a results file carries for each home it ran in. A procedural episode carries its home's entry in its info
(``SCENE_STATS_FIELD``, computed where the generator builds the home anyway), so that the driver of a run does not
build every home a second time for ``meta.scenes``.

Published figures (reference, not measured here; as the issue quotes them):

* HM3D (Ramakrishnan et al., 2021): about 112 m² navigable area per scene.
* HM3DSem (Yadav et al., 2023): 142,646 object instances in 216 scenes and about 3,100 rooms, so about 14 rooms,
  about 660 objects per scene and about 46 per room.
* GOAT-Bench (Khanna et al., 2024): 5-10 subtasks per episode.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from goat_core.frames import habitat_to_ros_position
from goat_core.types import GoalModality
from goat_suites.common.episodes import SCENE_STATS_FIELD, GoatEpisode, goals_key
from goat_suites.common.parts import procedural_home
from sim_bridge.embedded.home import Home
from sim_bridge.embedded.home_config import home_kind
from sim_bridge.embedded.navgrid import DEFAULT_GRID_RESOLUTION_M, NavGrid
from sim_bridge.embedded.scene_ids import SCENE_PREFIX, parse_scene_id

# statistic -> (published value, its source); see the module doc.
PUBLISHED: dict[str, tuple[float, str]] = {
    "navigable_area_m2": (112.0, "HM3D, navigable area per scene"),
    "num_rooms": (14.4, "HM3DSem, ~3,100 rooms in 216 scenes"),
    "num_objects": (660.4, "HM3DSem, 142,646 instances in 216 scenes"),
    "objects_per_room": (46.0, "HM3DSem, instances / rooms"),
}
_EMBEDDED_SCENE = re.compile(r"^embedded/(home|pasture)_s")
_HOME_SCENE_PREFIX = SCENE_PREFIX + "_s"  # the scene ids of sim_bridge.embedded.scene_ids


@dataclass(frozen=True)
class HomeStats:
    scene_id: str
    num_rooms: int
    navigable_area_m2: float
    num_objects: int
    objects_per_room: float
    num_categories: int
    categories_with_two_or_more: int  # categories with several instances (look-alikes)
    mean_instances_per_category: float
    floor_area_m2: float  # the rooms' floors inside the walls, furniture included


def home_stats(home: Home, grid: Optional[NavGrid] = None, scene_id: str = "") -> HomeStats:
    """The statistics of one home (its nav grid is built when not given)."""
    grid = grid if grid is not None else NavGrid.from_home(home)
    per_category = Counter(o.category for o in home.objects)
    return HomeStats(
        scene_id=scene_id, num_rooms=len(home.rooms),
        navigable_area_m2=round(float(grid.navigable.sum()) * grid.resolution_m ** 2, 2),
        num_objects=len(home.objects), objects_per_room=round(len(home.objects) / len(home.rooms), 2),
        num_categories=len(per_category),
        categories_with_two_or_more=sum(n >= 2 for n in per_category.values()),
        mean_instances_per_category=round(len(home.objects) / max(1, len(per_category)), 2),
        floor_area_m2=round(sum(r.area_m2 for r in home.rooms), 2))


_CARRIED_KEYS = ("num_rooms", "navigable_area_m2", "num_objects")  # a meta.scenes entry but its scene id


def scene_meta(stats: HomeStats) -> dict[str, Any]:
    """The ``meta.scenes`` entry of a home."""
    return {"scene_id": stats.scene_id, **{k: getattr(stats, k) for k in _CARRIED_KEYS}}


def scene_stats_info(home: Home, grid: NavGrid) -> dict[str, Any]:
    """What a procedural episode carries in ``info[SCENE_STATS_FIELD]``: its home's ``meta.scenes`` entry without
    the scene id. ``grid`` is the simulator's nav grid, used where it is the one ``home_stats`` builds (the
    default resolution and the home's robot radius), else that one is built."""
    same = grid.resolution_m == DEFAULT_GRID_RESOLUTION_M and grid.robot_radius_m == home.config.robot_radius_m
    entry = scene_meta(home_stats(home, grid if same else None))
    del entry["scene_id"]
    return entry


def scenes_meta(scene_ids: Iterable[str], home_for_scene: Callable[[str], Home] = procedural_home,
                episodes: Iterable[GoatEpisode] = ()) -> list[dict[str, Any]]:
    """``meta.scenes``: one entry per embedded-simulator home among ``scene_ids`` (each home once, in order of
    first appearance); scenes of other simulators are left out. A home one of ``episodes`` carries the entry of
    (``SCENE_STATS_FIELD``, written by the generator) is not built again; the others are built by the suite's
    ``home_for_scene``."""
    carried = {e.scene_id: e.info[SCENE_STATS_FIELD] for e in episodes
               if isinstance(e.info.get(SCENE_STATS_FIELD), dict)}
    entries = []
    for scene_id in dict.fromkeys(scene_ids):
        if not _EMBEDDED_SCENE.match(scene_id):
            continue
        if scene_id in carried:
            entries.append({"scene_id": scene_id, **{k: carried[scene_id][k] for k in _CARRIED_KEYS}})
        else:
            entries.append(scene_meta(home_stats(home_for_scene(scene_id), scene_id=scene_id)))
    return entries


def describe_homes(scene_ids: Iterable[str]) -> str:
    """Which homes a run ran in, as ``--homes`` names them, with the number of each: "large-furnished, 2 homes".
    ``meta.homes`` of a GOAT results file, the "homes" row of its report and the ``homes:`` line of the command."""
    kinds: Counter[tuple[str, str]] = Counter()
    for scene_id in dict.fromkeys(scene_ids):
        if scene_id.startswith(_HOME_SCENE_PREFIX):
            kinds[home_kind(parse_scene_id(scene_id)[1]), "home"] += 1
        elif _EMBEDDED_SCENE.match(scene_id):  # PASTURE's small homes with hidden and uncommon objects
            kinds["pasture", "home"] += 1
        else:
            kinds["another simulator's", "scene"] += 1
    return "; ".join(f"{kind}, {n} {noun}{'' if n == 1 else 's'}" for (kind, noun), n in kinds.items()) or "none"


def subtask_geodesics_m(episode: GoatEpisode, grid: NavGrid) -> list[float]:
    """Geodesic distance of each subtask: from the start (then from where the previous subtask ended, the view
    point of its goal nearest to where it began) to the nearest view point of its goal."""
    here = habitat_to_ros_position(episode.start_position)[:2]
    found = []
    for task in episode.tasks:
        goals = episode.goals[goals_key(episode.scene_id, task.category)]
        if task.modality is not GoalModality.CATEGORY:
            goals = tuple(g for g in goals if g.object_id == task.object_id)
        points = np.asarray([habitat_to_ros_position(v.position)[:2] for g in goals for v in g.view_points])
        field = grid.distance_field(points)
        row, col = grid.snap(here)
        found.append(float(field[row, col]))
        from_here = grid.distance_field(np.asarray([here]))
        cells = np.asarray([grid.snap(p) for p in points])
        here = points[int(np.argmin(from_here[cells[:, 0], cells[:, 1]]))]
    return found


def summarise(stats: Sequence[HomeStats]) -> dict[str, dict[str, float]]:
    """Mean, min and max of each numeric field over homes."""
    table: dict[str, dict[str, float]] = {}
    for name, value in asdict(stats[0]).items():
        if isinstance(value, (int, float)):
            values = np.asarray([getattr(s, name) for s in stats], dtype=float)
            table[name] = {"mean": float(values.mean()), "min": float(values.min()), "max": float(values.max())}
    return table


def format_table(summary: dict[str, dict[str, float]], geodesics_m: Sequence[float] = (),
                 num_homes: int = 0, label: str = "") -> str:
    """A Markdown table of the summary beside the published figures."""
    lines = [f"{label} ({num_homes} homes)" if label else f"{num_homes} homes", "",
             "| statistic | mean | min | max | published (HM3D / HM3DSem) |", "| --- | --- | --- | --- | --- |"]
    for name, row in summary.items():
        published = PUBLISHED.get(name)
        ref = f"{published[0]:g} ({published[1]})" if published else ""
        lines.append(f"| {name} | {row['mean']:.1f} | {row['min']:.1f} | {row['max']:.1f} | {ref} |")
    if len(geodesics_m):
        g = np.asarray(geodesics_m, dtype=float)
        lines.append(f"| subtask geodesic distance (m), {len(g)} subtasks | {g.mean():.1f} | {g.min():.1f} | "
                     f"{g.max():.1f} | median {np.median(g):.1f} m here |")
    return "\n".join(lines)


__all__ = ["HomeStats", "PUBLISHED", "describe_homes", "format_table", "home_stats", "scene_meta",
           "scene_stats_info", "scenes_meta", "subtask_geodesics_m", "summarise"]
