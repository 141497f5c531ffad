"""The trajectories file of a benchmark run: each episode's path and the navigable space it moved in.

The maps of the report need what the results JSON does not hold: the path and the navigable space of each episode.
``goat-nav bench --out results.json`` stores them next to the results, in ``results.trajectories.json.gz`` (named by
the results' ``meta["trajectories_file"]``), so ``goat-nav report results.json`` draws the same maps as ``goat-nav
bench --report``; both draw from the stored form, so for one run the two HTML files are byte-identical.

Trajectories file layout (gzip JSON)::

    {"format": "goat_nav.trajectories", "version": 1,
     "grids": {scene_id: {"shape": [H, W], "origin_xy_m": [x, y], "resolution_m": r,
                          "navigable_png": base64 PNG, 255 = navigable, row 0 at the lowest y}},
     "episodes": [{"episode_id", "scene_id", "positions_xy_m": [[x, y], ...], "subtask_starts": [i, ...],
                   "goal_positions_xy_m": [[[x, y], ...], ...]}]}     (world frame, metres, 0.1 mm steps)
"""

from __future__ import annotations

import base64
import gzip
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from goat_suites.common.results import (
    InvalidResultError,
    PathLike,
    atomic_write_bytes,
)
from goat_suites.common.runner import Trajectory

TRAJECTORIES_FORMAT = "goat_nav.trajectories"


TRAJECTORIES_VERSION = 1


TRAJECTORIES_META_KEY = "trajectories_file"  # results meta: the trajectories file, relative to the results file


_POSITION_DECIMALS = 4  # 0.1 mm: far below a map pixel, keeps the file small


def trajectories_path(results_path: PathLike) -> Path:
    """Where ``goat-nav bench`` stores the trajectories of ``results_path``: ``<stem>.trajectories.json.gz``."""
    p = Path(results_path)
    stem = p.stem if p.suffix == ".json" else p.name
    return p.with_name(f"{stem}.trajectories.json.gz")


def _grid_to_json(traj: Trajectory) -> dict[str, Any]:
    assert traj.navigable is not None
    grid = np.asarray(traj.navigable, dtype=bool)
    ok, png = cv2.imencode(".png", np.where(grid, 255, 0).astype(np.uint8))
    if not ok:
        raise ValueError(f"could not encode the navigable grid of scene {traj.scene_id!r} as PNG")
    return {"shape": list(grid.shape), "origin_xy_m": [float(v) for v in traj.grid_origin_xy_m],
            "resolution_m": float(traj.grid_resolution_m),
            "navigable_png": base64.b64encode(png.tobytes()).decode("ascii")}


def _xy(point: Sequence[float]) -> list[float]:
    return [round(float(point[0]), _POSITION_DECIMALS), round(float(point[1]), _POSITION_DECIMALS)]


def trajectories_to_json(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    """The stored form of ``trajectories``; each scene's grid is stored once."""
    grids = {t.scene_id: _grid_to_json(t) for t in trajectories if t.navigable is not None}
    episodes = [{"episode_id": t.episode_id, "scene_id": t.scene_id,
                 "positions_xy_m": [_xy(p) for p in t.positions_xy_m],
                 "subtask_starts": [int(i) for i in t.subtask_starts],
                 "goal_positions_xy_m": [[_xy(g) for g in goals] for goals in t.goal_positions_xy_m]}
                for t in trajectories]
    return {"format": TRAJECTORIES_FORMAT, "version": TRAJECTORIES_VERSION, "grids": grids, "episodes": episodes}


def _points(value: Any, where: str) -> list[tuple[float, float]]:
    try:
        array = np.asarray(value, dtype=np.float64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise InvalidResultError(f"{where} must be a list of [x, y] pairs, got {str(value)[:80]}") from None
    if len(array) != len(value) or not np.isfinite(array).all():
        raise InvalidResultError(f"{where} must be a list of finite [x, y] pairs, got {str(value)[:80]}")
    return [(float(x), float(y)) for x, y in array]


def _grid_from_json(raw: Any, where: str) -> tuple[np.ndarray, tuple[float, float], float]:
    try:
        shape = tuple(int(v) for v in raw["shape"])
        origin = _points([raw["origin_xy_m"]], f"{where}.origin_xy_m")[0]
        resolution = float(raw["resolution_m"])
        png = np.frombuffer(base64.b64decode(raw["navigable_png"], validate=True), dtype=np.uint8)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidResultError(f"{where}: expected shape, origin_xy_m, resolution_m and navigable_png; "
                                 f"{type(exc).__name__}: {exc}") from None
    image = cv2.imdecode(png, cv2.IMREAD_GRAYSCALE) if png.size else None
    if image is None or image.shape != shape:
        got = "an undecodable PNG" if image is None else f"a PNG of shape {image.shape}"
        raise InvalidResultError(f"{where}.navigable_png: expected a grey PNG of shape {shape}, got {got}")
    if not resolution > 0.0:
        raise InvalidResultError(f"{where}.resolution_m must be > 0, got {resolution!r}")
    return image > 127, origin, resolution


def _episode_from_json(raw: Any, grids: Mapping[str, Any], where: str) -> Trajectory:
    if not isinstance(raw, dict):
        raise InvalidResultError(f"{where}: expected an object, got {str(raw)[:80]}")
    missing = [k for k in ("episode_id", "scene_id", "positions_xy_m", "subtask_starts", "goal_positions_xy_m")
               if k not in raw]
    if missing:
        raise InvalidResultError(f"{where}: missing fields {missing}")
    positions = _points(raw["positions_xy_m"], f"{where}.positions_xy_m")
    starts = raw["subtask_starts"]
    if not isinstance(starts, list) or not all(isinstance(i, int) and 0 <= i < len(positions) for i in starts):
        raise InvalidResultError(f"{where}.subtask_starts must be indices into positions_xy_m, got {starts!r}")
    goals = raw["goal_positions_xy_m"]
    if not isinstance(goals, list):
        raise InvalidResultError(f"{where}.goal_positions_xy_m must be a list per subtask, got {str(goals)[:80]}")
    goal_xy = [_points(g, f"{where}.goal_positions_xy_m[{k}]") for k, g in enumerate(goals)]
    traj = Trajectory(str(raw["episode_id"]), str(raw["scene_id"]), positions_xy_m=positions,
                      subtask_starts=list(starts), goal_positions_xy_m=goal_xy)
    if traj.scene_id in grids:
        traj.navigable, traj.grid_origin_xy_m, traj.grid_resolution_m = grids[traj.scene_id]
    return traj


def trajectories_from_json(data: Any, source: str = "trajectories") -> list[Trajectory]:
    """Inverse of :func:`trajectories_to_json`; InvalidResultError names ``source`` and the bad field."""
    if not isinstance(data, dict) or data.get("format") != TRAJECTORIES_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise InvalidResultError(f"{source}: not a goat_nav trajectories file (format {got!r}, expected "
                                 f"{TRAJECTORIES_FORMAT!r})")
    if data.get("version") != TRAJECTORIES_VERSION:
        raise InvalidResultError(f"{source}: trajectories version {data.get('version')!r} is not supported "
                                 f"(this goat_nav reads version {TRAJECTORIES_VERSION})")
    raw_grids, raw_episodes = data.get("grids"), data.get("episodes")
    if not isinstance(raw_grids, dict) or not isinstance(raw_episodes, list):
        raise InvalidResultError(f"{source}: grids must be an object and episodes a list")
    grids = {scene: _grid_from_json(g, f"{source}: grids[{scene!r}]") for scene, g in raw_grids.items()}
    return [_episode_from_json(e, grids, f"{source}: episodes[{i}]") for i, e in enumerate(raw_episodes)]


def write_trajectories(path: PathLike, trajectories: Sequence[Trajectory]) -> None:
    """Write the trajectories file atomically (gzip without a timestamp: one run, one file)."""
    text = json.dumps(trajectories_to_json(trajectories), separators=(",", ":"), allow_nan=False)
    atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))


def read_trajectories(path: PathLike) -> list[Trajectory]:
    try:
        data = json.loads(gzip.decompress(Path(path).read_bytes()))
    except OSError as exc:  # a missing file, or gzip.BadGzipFile
        raise InvalidResultError(f"{path}: cannot read trajectories: {getattr(exc, 'strerror', None) or exc}") \
            from None
    except (EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidResultError(f"{path}: trajectories are not gzip JSON: {exc}") from None
    return trajectories_from_json(data, str(path))


def stored_trajectories(results_path: Path, meta: Mapping[str, Any]) -> list[Trajectory]:
    """The trajectories of the results file ``results_path`` (meta ``meta``): none if it names no file or the
    file is not there."""
    name = meta.get(TRAJECTORIES_META_KEY)
    path = results_path.parent / str(name) if name else None
    return read_trajectories(path) if path is not None and path.exists() else []


def load_run_trajectories(results_path: PathLike, meta: Mapping[str, Any]) -> list[Trajectory]:
    """The stored trajectories of a results file; none when its meta names no file (older results).

    A named file that is missing gives a warning and no maps; a file that is not ours is an error.
    """
    name = meta.get(TRAJECTORIES_META_KEY)
    if name is None:
        return []
    if not isinstance(name, str) or not name:
        raise InvalidResultError(f"{results_path}: meta.{TRAJECTORIES_META_KEY} must be a file name, got {name!r}")
    path = Path(results_path).parent / name
    if not path.exists():
        print(f"warning: {path} (named by {results_path}) is missing; the report has no maps", file=sys.stderr)
        return []
    return read_trajectories(path)
