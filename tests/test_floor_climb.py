"""Low things on the floor (a book, a bowl) are driven over: the grid and the forward step ignore objects whose top
is below FLOOR_CLIMB_HEIGHT_M; taller ones still block. The agent's map cannot see them (points below 0.1 m are
floor), so a blocking one would be an invisible wall (episode 1000-7 of large-furnished gave up at a book)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from goat_core.types import DiscreteAction
from sim_bridge.embedded.home import Home, HomeConfig, ObjectSpec, generate_home, large_home_config
from sim_bridge.embedded.home_types import Part
from sim_bridge.embedded.navgrid import FLOOR_CLIMB_HEIGHT_M, NavGrid
from sim_bridge.embedded.sim import EmbeddedSim

AHEAD_M = 0.8  # from the start to the near edge of the object
HALF_M = 0.15  # half the object's side


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(7, HomeConfig(furniture="primitive"))


@pytest.fixture(scope="module")
def start(home: Home) -> np.ndarray:
    """A navigable point with open floor 2 m ahead (+x) and 0.5 m to either side."""
    grid = NavGrid.from_home(home)
    nav = grid.navigable
    for row, col in np.argwhere(nav):
        window = nav[row - 10:row + 11, col:col + 41]
        if window.shape == (21, 41) and window.all():
            return grid.cell_to_world(int(row), int(col))
    raise AssertionError("no open stretch of floor in the home")


def _with_floor_object(home: Home, start: np.ndarray, height_m: float) -> tuple[Home, ObjectSpec]:
    """The home with a flat box of the given height on the floor across the way ahead of ``start``."""
    centre = (float(start[0]) + AHEAD_M + HALF_M, float(start[1]), height_m / 2)
    part = Part(shape="box", centre_m=centre, half_size_m=(HALF_M, HALF_M, height_m / 2), axis="z", trim=False)
    template = next(o for o in home.objects if o.receptacle_id is None and o.model is None)
    obj = dataclasses.replace(
        template, object_id="obj_low", instance_id=max(o.instance_id for o in home.objects) + 1, category="book",
        receptacle_id=None, position_m=centre, yaw_rad=0.0, is_receptacle=False, parts=(part,), hidden_in=None,
        bbox_min_m=(centre[0] - HALF_M, centre[1] - HALF_M, 0.0),
        bbox_max_m=(centre[0] + HALF_M, centre[1] + HALF_M, height_m))
    return dataclasses.replace(home, objects=home.objects + (obj,)), obj


def test_a_low_floor_object_is_driven_over_and_still_a_goal(home: Home, start: np.ndarray) -> None:
    low, obj = _with_floor_object(home, start, 0.02)
    assert obj.bbox_max_m[2] < FLOOR_CLIMB_HEIGHT_M
    with EmbeddedSim(low) as sim:
        assert sim.navgrid.is_navigable(obj.position_m[:2])
        sim.reset(start, 0.0)
        for _ in range(6):  # 1.5 m: over the object and beyond
            obs = sim.step(DiscreteAction.MOVE_FORWARD)
            assert not obs.collided
        assert obs.pose.x_m == pytest.approx(1.5, abs=1e-9)
        # Still a thing of the world: it renders and has view points.
        seg = sim.render_segmentation(start, 0.0, -0.6)
        assert (seg == obj.instance_id).any()
        assert sim.navgrid.view_points(obj).shape[0] > 0


def test_an_object_above_the_climb_height_still_blocks(home: Home, start: np.ndarray) -> None:
    high, obj = _with_floor_object(home, start, FLOOR_CLIMB_HEIGHT_M + 0.05)
    with EmbeddedSim(high) as sim:
        assert not sim.navgrid.is_navigable(obj.position_m[:2])
        sim.reset(start, 0.0)
        collided = False
        for _ in range(6):
            obs = sim.step(DiscreteAction.MOVE_FORWARD)
            collided = collided or obs.collided
        assert collided
        assert obs.pose.x_m < AHEAD_M - sim.config.robot_radius_m + 1e-9


def test_a_large_home_blocks_only_with_its_taller_floor_objects() -> None:
    """In a generated large home the grid is the one of the home without its low floor objects (they are many:
    books, bowls), while taking away a taller floor object frees floor."""
    home = generate_home(3, large_home_config())
    floor = [o for o in home.objects if o.receptacle_id is None]
    low = {o.object_id for o in floor if o.bbox_max_m[2] < FLOOR_CLIMB_HEIGHT_M}
    assert len(low) >= 3
    grid = NavGrid.from_home(home)
    without_low = dataclasses.replace(home, objects=tuple(o for o in home.objects if o.object_id not in low))
    assert np.array_equal(NavGrid.from_home(without_low).obstacle, grid.obstacle)
    tall = next(o for o in floor if o.bbox_max_m[2] >= FLOOR_CLIMB_HEIGHT_M and not o.is_receptacle)
    without_tall = dataclasses.replace(home, objects=tuple(o for o in home.objects if o is not tall))
    assert NavGrid.from_home(without_tall).obstacle.sum() < grid.obstacle.sum()
