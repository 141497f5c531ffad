"""Pictures for the HTML report: each goal's picture and a first-person view of its instance, and the credits.

Rendered after a run from the episodes (their homes are rebuilt from the scene ids), so the report shows what the
agent was asked to find and what that object looks like from where it counts as found.
"""

from __future__ import annotations

import base64
import html
import math
from typing import Any, Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import GoatError
from goat_core.frames import habitat_to_ros_position
from goat_core.types import GoalModality
from goat_suites.common.episodes import GoatEpisode, goals_for_task
from goat_suites.common.goal_images import ImageGoalRenderer
from goat_suites.common.parts import procedural_home
from sim_bridge.embedded.home import Home
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig

THUMB_WIDTH_PX = 120  # the 360 x 640 portrait frames are shown at a third


def _jpeg_uri(rgb: np.ndarray) -> str:
    height = round(rgb.shape[0] * THUMB_WIDTH_PX / rgb.shape[1])
    small = cv2.resize(rgb, (THUMB_WIDTH_PX, height), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", cv2.cvtColor(small, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:
        raise GoatError("OpenCV could not encode a report thumbnail as JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(data.tobytes()).decode("ascii")


def _figure(rgb: np.ndarray, caption: str) -> str:
    return (f'<figure class="goal-view"><img alt="{html.escape(caption)}" src="{_jpeg_uri(rgb)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def instance_view(sim: EmbeddedSim, episode: GoatEpisode, index: int) -> np.ndarray:
    """The head camera at the goal instance's first view point, looking at the instance."""
    goal = goals_for_task(episode, episode.tasks[index])[0]
    point = habitat_to_ros_position(goal.view_points[0].position)[:2]
    centre = habitat_to_ros_position(goal.position)
    yaw = math.atan2(float(centre[1] - point[1]), float(centre[0] - point[0]))
    tilt = math.atan2(float(centre[2]) - sim.config.camera_height_m, float(np.hypot(*(centre[:2] - point))))
    return sim.render_view(point, yaw, tilt).rgb


def episode_goal_views(sim: EmbeddedSim, episode: GoatEpisode) -> str:
    """HTML: per subtask, the goal picture (image goals) and the view of the goal instance."""
    images = ImageGoalRenderer(sim)
    figures = []
    for index, task in enumerate(episode.tasks):
        if task.modality is GoalModality.IMAGE:
            figures.append(_figure(images.render(episode, task), f"#{index} goal image ({task.category})"))
        figures.append(_figure(instance_view(sim, episode, index), f"#{index} {task.modality.value}: "
                                                                   f"{task.category} from a view point"))
    return f'<div class="goal-views">{"".join(figures)}</div>'


def goal_views(episodes: Sequence[GoatEpisode],
               sim_config: SimConfig = SimConfig()) -> dict[tuple[Optional[str], str], str]:
    """(scene_id, episode_id) -> the HTML of :func:`episode_goal_views`; homes are built once per scene."""
    out: dict[tuple[Optional[str], str], str] = {}
    by_scene: dict[str, list[GoatEpisode]] = {}
    for episode in episodes:
        by_scene.setdefault(episode.scene_id, []).append(episode)
    for scene_id, scene_episodes in by_scene.items():
        with EmbeddedSim(procedural_home(scene_id), sim_config) as sim:
            for episode in scene_episodes:
                out[(scene_id, episode.episode_id)] = episode_goal_views(sim, episode)
    return out


def credits_section(homes: Sequence[Home]) -> str:
    """HTML: every 3D model the homes use, with its library, creator and licence ('' for primitive homes)."""
    rows: dict[tuple[str, str], Mapping[str, Any]] = {}
    for home in homes:
        for row in home.model_credits():
            rows[(row["library"], row["model_id"])] = row
    if not rows:
        return ""
    body = "".join(f"<tr><td>{html.escape(r['name'])}</td><td>{html.escape(r['creator'])}</td>"
                   f"<td>{html.escape(r['library'])}</td><td>{html.escape(r['model_id'])}</td>"
                   f"<td>{html.escape(r['licence'])}</td></tr>" for _, r in sorted(rows.items()))
    return ('<h2>3D models (credits)</h2><p class="note">Furniture models of the Sweet Home 3D libraries in '
            "Debian's sweethome3d-furniture package, rendered by the embedded simulator.</p>"
            '<table id="model-credits"><tr><th>model</th><th>creator</th><th>library</th><th>id</th>'
            f"<th>licence</th></tr>{body}</table>")


def report_extras(episodes: Sequence[GoatEpisode]) -> tuple[dict[tuple[Optional[str], str], str], str]:
    """The per-episode goal views and the credits section of a run's report."""
    views = goal_views(episodes)
    homes = [procedural_home(scene) for scene in dict.fromkeys(e.scene_id for e in episodes)]
    return views, credits_section(homes)
