"""Every object of a large home within reach: objects without a view point are left out of the home.

GOAT-Bench draws goals among objects with a navigable view point in sight within 1 m (``NavGrid.view_points``).
A dense home can leave a few without one (a book at the foot of a bed that stands against the far wall, a vase
in a strip behind a bed narrower than the robot); the large homes drop those, with what stands on them, and
number the rest again, so that every object of the home is a goal the robot can reach. Dropping floor objects
only frees floor: what had a view point keeps it.
"""

from __future__ import annotations

from dataclasses import replace

from goat_core.errors import UnreachableGoalError
from sim_bridge.embedded.home_types import Home, ObjectSpec
from sim_bridge.embedded.navgrid import NavGrid


def reachable_only(home: Home) -> Home:
    """``home`` without its objects that have no view point (module doc), numbered again in order."""
    grid = NavGrid.from_home(home)
    kept: list[ObjectSpec] = []
    dropped: set[str] = set()
    for obj in home.objects:  # a receptacle comes before what stands on it
        if obj.receptacle_id in dropped or not _has_view_point(grid, obj):
            dropped.add(obj.object_id)
        else:
            kept.append(obj)
    if not dropped:
        return home
    new_ids = {obj.object_id: f"obj_{k:03d}" for k, obj in enumerate(kept, start=1)}
    objects = tuple(replace(obj, object_id=new_ids[obj.object_id], instance_id=k,
                            receptacle_id=None if obj.receptacle_id is None else new_ids[obj.receptacle_id])
                    for k, obj in enumerate(kept, start=1))
    return replace(home, objects=objects)


def _has_view_point(grid: NavGrid, obj: ObjectSpec) -> bool:
    try:
        grid.view_points(obj)
    except UnreachableGoalError:
        return False
    return True


__all__ = ["reachable_only"]
