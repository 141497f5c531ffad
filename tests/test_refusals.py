"""A forward move the world refused is not repeated from the same pose and heading (issue 33; ideal 1000-9 #6 in
stop 41: 457 refused moves in a row at one spot).

The scene: the robot walks through a door to a chair, then a pane nobody can see (glass, a closed screen) fills
the door and the next goal is back in the first room. The map says free where the world is blocked: nothing was
seen there, and the collision marks spare the robot's own trail through the door.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from test_agent import BUDGET, Box, BoxWorld, make_agent, run, two_rooms

from goat_core.types import ActionSizes, DiscreteAction, Goal, GoalModality, Pose2D

PANE = Box((3.95, 0.5, 0.0), (4.15, 1.5, 2.5))  # across the door of two_rooms, unseen by the camera


@dataclass
class PaneWorld(BoxWorld):
    """BoxWorld whose ``panes`` block the robot but never show in depth or segmentation."""

    panes: list[Box] = field(default_factory=list)

    def free(self, x: float, y: float) -> bool:
        inside = any(b.lo[0] <= x <= b.hi[0] and b.lo[1] <= y <= b.hi[1] for b in self.panes)
        return not inside and super().free(x, y)


def _same(a: Pose2D, b: Pose2D, sizes: ActionSizes) -> bool:
    return (math.hypot(a.x_m - b.x_m, a.y_m - b.y_m) < 0.05 * sizes.forward_m
            and abs(math.remainder(a.yaw_rad - b.yaw_rad, 2 * math.pi)) < 0.25 * sizes.turn_rad)


def _nowhere(a: Pose2D, b: Pose2D, sizes: ActionSizes) -> bool:
    return math.hypot(a.x_m - b.x_m, a.y_m - b.y_m) < 0.05 * sizes.forward_m


def _second_subtask(world: PaneWorld) -> tuple[list[Pose2D], list[tuple[int, str]], str]:
    """Walk to the chair, put the pane into the door, then go for the table in the first room: the poses where a
    forward move ended refused, the (step, mode) of forward moves from such a pose and heading, and the STOP's
    account (empty without a STOP)."""
    agent = make_agent()
    first = run(world, agent, "chair")
    assert first.actions[-1] is DiscreteAction.STOP and world.pose.x_m > 4.1  # through the door, at the chair
    world.panes.append(PANE)
    obs = world.render(False)
    agent.start_subtask(Goal(GoalModality.CATEGORY, category="table"))
    refused: list[Pose2D] = []
    repeats: list[tuple[int, str]] = []
    for step in range(BUDGET):
        action = agent.act(obs)
        if action is DiscreteAction.STOP:
            stop = agent.last_stop
            return refused, repeats, stop.reason if stop is not None else ""
        pose = world.pose
        if action is DiscreteAction.MOVE_FORWARD and any(_same(pose, p, world.actions) for p in refused):
            repeats.append((step, agent.debug_state().mode))
        obs = world.step(action)
        if action is DiscreteAction.MOVE_FORWARD and obs.collided and _nowhere(world.pose, pose, world.actions):
            refused.append(world.pose)  # refused, and it went nowhere: the same move from here goes nowhere
    return refused, repeats, ""


def test_a_refused_forward_move_is_not_repeated_from_the_same_pose_and_heading() -> None:
    refused, repeats, reason = _second_subtask(PaneWorld(two_rooms()))
    assert refused, "the pane refused no move: the scene does not test the guard"
    assert repeats == [], f"{len(repeats)} forward moves into a refusal again, (step, mode): {repeats[:8]}"
    assert len(refused) <= 20  # each refusal at a new pose or heading; the target is given up in time
    assert "forward moves into a refusal not made" in reason  # the guard's count reaches the results
