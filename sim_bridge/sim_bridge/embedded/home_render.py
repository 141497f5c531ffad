"""Pictures of one home for people: a top-down map, first-person views, and the credits of its models.

``goat-nav render --seed S --out DIR`` writes them; the views are the robot's head camera (360 x 640, 42 deg
HFOV, 1.31 m) from the navigable spot of each room that shows the most objects.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import cv2
import numpy as np

from sim_bridge.embedded.home import Home
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig
from sim_bridge.embedded.world import Renderer

MAP_PX = 800
MAP_VFOV_RAD = math.radians(50.0)
CANDIDATES_PER_ROOM = 24  # (spot, heading) pairs tried per room for its first-person view
VIEW_TILT_RAD = math.radians(-20.0)


@dataclass(frozen=True)
class HomeViews:
    """What ``render_home`` wrote."""

    top_down: Path
    views: tuple[Path, ...]
    credits: Path


def top_down(home: Home, size_px: int = MAP_PX) -> np.ndarray:
    """(size, size, 3) RGB of the home seen from above its centre, ceilings left out."""
    (x0, y0), (x1, y1) = home.bounds_min_xy_m, home.bounds_max_xy_m
    half_extent = max(x1 - x0, y1 - y0) / 2.0 * 1.05
    height = home.config.wall_height_m + half_extent / math.tan(MAP_VFOV_RAD / 2.0)
    with Renderer(home, size_px, size_px, MAP_VFOV_RAD) as renderer:
        renderer.hide_ceilings()
        # Looking straight down with heading +y: image up is world +y, image right is world +x.
        view = renderer.render(((x0 + x1) / 2.0, (y0 + y1) / 2.0, height), math.pi / 2.0, -math.pi / 2.0)
    return view.rgb


def best_view(sim: EmbeddedSim, room_id: int, rng: np.random.Generator) -> Optional[tuple[np.ndarray, int]]:
    """The head-camera image of a room's navigable spot and heading that shows the most objects, and how many."""
    room = sim.home.rooms[room_id]
    best: Optional[tuple[np.ndarray, int]] = None
    tries = 0
    while tries < CANDIDATES_PER_ROOM * 20 and (best is None or tries < CANDIDATES_PER_ROOM):
        tries += 1
        xy = sim.navgrid.sample_navigable(rng)
        if not room.contains((float(xy[0]), float(xy[1]))):
            continue
        centre = np.asarray([(room.min_xy_m[0] + room.max_xy_m[0]) / 2, (room.min_xy_m[1] + room.max_xy_m[1]) / 2])
        # Look from the spot across the room (away from the nearest wall), give or take 45 degrees.
        yaw = math.atan2(*(centre - xy)[::-1]) + float(rng.uniform(-math.pi / 4, math.pi / 4))
        view = sim.render_view(xy, yaw, VIEW_TILT_RAD)
        ids, counts = np.unique(view.segmentation[view.segmentation > 0], return_counts=True)
        shown = int(np.count_nonzero(counts > 400))
        if best is None or shown > best[1]:
            best = (view.rgb, shown)
    return best


def render_home(home: Home, out_dir: Path, views: int = 6, sim_config: SimConfig = SimConfig()) -> HomeViews:
    """Write ``top_down.png``, ``view_<k>_<room>.png`` (one per room, up to ``views``) and ``credits.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    top = out_dir / "top_down.png"
    cv2.imwrite(str(top), cv2.cvtColor(top_down(home), cv2.COLOR_RGB2BGR))
    rng = np.random.default_rng([home.seed, 7])
    written: list[Path] = []
    with EmbeddedSim(home, sim_config) as sim:
        for room in home.rooms[:views]:
            found = best_view(sim, room.room_id, rng)
            if found is None:
                continue
            path = out_dir / f"view_{len(written)}_{room.room_type.replace(' ', '_')}.png"
            cv2.imwrite(str(path), cv2.cvtColor(found[0], cv2.COLOR_RGB2BGR))
            written.append(path)
    credit_file = out_dir / "credits.json"
    credit_file.write_text(json.dumps({"seed": home.seed, "furniture": home.config.furniture,
                                       "models": home.model_credits()}, indent=2))
    return HomeViews(top_down=top, views=tuple(written), credits=credit_file)
