"""Discrete action selection: point the head, face the next waypoint, then drive."""

from __future__ import annotations

import math
from typing import Callable, Optional, Protocol, Sequence

import numpy as np

from goat_core.control.planner import PlannerConfig, PlanningField, line_of_sight
from goat_core.errors import ConfigError
from goat_core.geometry import wrap_angle_rad
from goat_core.types import ActionSizes, DiscreteAction, Pose2D


def heading_error_rad(pose: Pose2D, target_xy_m: np.ndarray) -> float:
    """Signed angle from the robot heading to the target, counter-clockwise positive, in [-pi, pi)."""
    bearing = math.atan2(float(target_xy_m[1]) - pose.y_m, float(target_xy_m[0]) - pose.x_m)
    return wrap_angle_rad(bearing - pose.yaw_rad)


def turn_toward(error_rad: float, tolerance_rad: float) -> Optional[DiscreteAction]:
    """The turn that reduces a heading error larger than the tolerance, or None when it is within it.

    A tolerance of at least half a turn step is needed so that turning never overshoots into the opposite
    error and turns back.
    """
    if error_rad > tolerance_rad:
        return DiscreteAction.TURN_LEFT
    if error_rad < -tolerance_rad:
        return DiscreteAction.TURN_RIGHT
    return None


def free_heading(pose: Pose2D, bearing_rad: float, turn_rad: float,
                 is_free: Callable[[float], bool]) -> Optional[float]:
    """Among the headings reachable by whole turns, the one closest to ``bearing_rad`` with a free move ahead.

    Ties go to the left turn, so the choice is deterministic. None when every reachable heading is blocked.
    """
    half = int(math.ceil(math.pi / turn_rad - 1e-9))
    best: Optional[tuple[float, float]] = None
    for k in range(1, half + 1):
        for sign in (1, -1):
            yaw = wrap_angle_rad(pose.yaw_rad + sign * k * turn_rad)
            off = abs(wrap_angle_rad(bearing_rad - yaw))
            if (best is None or off < best[0] - 1e-9) and is_free(yaw):
                best = (off, yaw)
    return None if best is None else best[1]


def tilt_action(tilt_rad: float, target_tilt_rad: float, look_rad: float) -> Optional[DiscreteAction]:
    """LOOK_UP / LOOK_DOWN while the head is more than half a look step from the target tilt, else None."""
    diff = target_tilt_rad - tilt_rad
    if diff > 0.5 * look_rad:
        return DiscreteAction.LOOK_UP
    if diff < -0.5 * look_rad:
        return DiscreteAction.LOOK_DOWN
    return None


def drive_along(fld: PlanningField, path: np.ndarray, pose: Pose2D, commit_yaw_rad: Optional[float],
                turn_rad: float, forward_m: float, lookahead_m: float, heading_tolerance_turns: float,
                commit_tolerance_turns: float = 0.5) -> tuple[DiscreteAction, Optional[float]]:
    """One discrete step along ``path``, and the heading committed to for the next step (None if none).

    Face the path's lookahead waypoint, then move; when the heading that points at the waypoint would drive the
    base into a mapped obstacle, commit to the nearest heading whose move is free and turn to it before trying
    the waypoint again, so the robot does not swing back and forth between the two. The committed heading is
    reached within ``commit_tolerance_turns`` turn steps (more than half a step when turns are inexact).
    """
    if commit_yaw_rad is not None:
        to_commit = turn_toward(wrap_angle_rad(commit_yaw_rad - pose.yaw_rad), commit_tolerance_turns * turn_rad)
        if to_commit is not None:
            return to_commit, commit_yaw_rad
        if fld.forward_free(pose.yaw_rad, forward_m):
            return DiscreteAction.MOVE_FORWARD, None
    waypoint = fld.waypoint(path, lookahead_m)
    bearing = math.atan2(waypoint[1] - pose.y_m, waypoint[0] - pose.x_m)
    action = turn_toward(wrap_angle_rad(bearing - pose.yaw_rad), heading_tolerance_turns * turn_rad)
    if action is not None:
        return action, None
    if fld.forward_free(pose.yaw_rad, forward_m):
        return DiscreteAction.MOVE_FORWARD, None
    detour = free_heading(pose, bearing, turn_rad, lambda yaw: fld.forward_free(yaw, forward_m))
    if detour is None:  # boxed in on the map: turning shows more, and the stuck guard gives up eventually
        return DiscreteAction.TURN_LEFT, None
    action = turn_toward(wrap_angle_rad(detour - pose.yaw_rad), 0.5 * turn_rad)
    return (DiscreteAction.TURN_LEFT if action is None else action), detour


def cost_to_go_m(fld: PlanningField, path: np.ndarray, arc_m: np.ndarray, xy_m: np.ndarray,
                 window_m: float) -> tuple[float, np.ndarray]:
    """An estimate of the travel left from ``xy_m`` to the path's end, and the path point it heads for.

    From the path point nearest ``xy_m``, the path points up to ``window_m`` farther along it are the places the
    robot can rejoin the path; the estimate is the least of a straight line to one of them in line of sight on
    the field's traversable cells plus the path's length left from there. None in line of sight: the nearest
    point's (so an end behind furniture costs what walking around to the path costs, roughly)."""
    near = np.linalg.norm(path - xy_m, axis=1)
    j = int(np.argmin(near))
    left = arc_m[-1] - arc_m
    window = np.nonzero((arc_m >= arc_m[j]) & (arc_m <= arc_m[j] + window_m))[0]
    costs = left[window] + near[window]
    start = (xy_m - fld.origin_xy_m) / fld.cell_m
    for k in np.argsort(costs, kind="stable"):
        i = int(window[k])
        if line_of_sight(fld.traversable, start, (path[i] - fld.origin_xy_m) / fld.cell_m):
            return float(costs[k]), path[i]
    return float(left[j] + near[j]), path[j]


def cheapest_drive(fld: PlanningField, path: np.ndarray, pose: Pose2D, turn_rad: float, forward_m: float,
                   turn_cost_m: float, tolerance_rad: float, window_m: float, max_turns: int = 3,
                   max_steps: int = 4, waypoint_off_rad: float = math.inf) -> Optional[DiscreteAction]:
    """The first action of the cheapest short plan along ``path``: turn k steps in place (|k| <= ``max_turns``),
    then move n forward steps straight ahead (1 <= n <= ``max_steps``, the whole move free on the map as
    :meth:`PlanningField.forward_free` checks it). Its cost is |k| turns of ``turn_cost_m``, n forward steps,
    the travel left from where it ends (:func:`cost_to_go_m`), and the turns still needed there to face the path
    point it heads for within ``tolerance_rad``. Only headings within ``waypoint_off_rad`` of the bearing to the
    path's waypoint (:meth:`PlanningField.waypoint` at ``window_m``) are driven along: beside furniture the map
    ahead of a heading far from the path is often not drawn yet. Ties go to fewer turns, then to the left. None
    when no plan has a free move (the caller's detour logic takes over) or the path is too short to weigh.

    A turn in place costs path on a base that is not exact (the stretch profile moves it about 3 cm a turn), so
    a turn toward a waypoint that the path bends back from, or one that undoes a noisy turn that went a few
    degrees too far, is worth less than driving on: such turns lose here, without a rule per case.
    """
    if path.shape[0] < 2:
        return None
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
    waypoint = fld.waypoint(path, window_m)
    bearing = math.atan2(float(waypoint[1]) - pose.y_m, float(waypoint[0]) - pose.x_m)
    best: Optional[tuple[float, int, int]] = None  # (cost, |k|, -k) of the cheapest plan
    for k in sorted(range(-max_turns, max_turns + 1), key=lambda t: (abs(t), -t)):
        yaw = pose.yaw_rad + k * turn_rad
        if abs(wrap_angle_rad(bearing - yaw)) > waypoint_off_rad:
            continue
        heading = np.array([math.cos(yaw), math.sin(yaw)])
        for n in range(1, max_steps + 1):
            if not fld.forward_free(yaw, n * forward_m):
                break
            end = np.array([pose.x_m, pose.y_m]) + n * forward_m * heading
            left_m, toward = cost_to_go_m(fld, path, arc, end, window_m)
            turns_after = 0
            gap = toward - end
            if float(np.hypot(gap[0], gap[1])) > 0.5 * forward_m:
                off = abs(wrap_angle_rad(math.atan2(float(gap[1]), float(gap[0])) - yaw))
                turns_after = max(0, int(math.ceil((off - tolerance_rad) / turn_rad - 1e-9)))
            cost = (abs(k) + turns_after) * turn_cost_m + n * forward_m + left_m
            if best is None or cost < best[0] - 1e-9:
                best = (cost, abs(k), -k)
    if best is None:
        return None
    k = -best[2]
    if k == 0:
        return DiscreteAction.MOVE_FORWARD
    return DiscreteAction.TURN_LEFT if k > 0 else DiscreteAction.TURN_RIGHT


class DriveSettings(Protocol):
    """The settings of a navigator that drives along paths (AgentConfig, CowAgentConfig, PoseNavConfig)."""

    @property
    def actions(self) -> ActionSizes: ...

    @property
    def planner(self) -> PlannerConfig: ...

    @property
    def heading_tolerance_turns(self) -> float: ...


def check_drive_settings(config: DriveSettings) -> None:
    """ConfigError unless the heading tolerance is in [0.5, 1) turn steps: at least half a step, so that turning
    never overshoots into the opposite error (:func:`turn_toward`), and under a whole step."""
    if not 0.5 <= config.heading_tolerance_turns < 1.0:
        raise ConfigError(f"{type(config).__name__}.heading_tolerance_turns must be in [0.5, 1), got "
                          f"{config.heading_tolerance_turns!r}")


def drive_step(config: DriveSettings, fld: PlanningField, path: np.ndarray, pose: Pose2D,
               commit_yaw_rad: Optional[float]) -> tuple[DiscreteAction, Optional[float]]:
    """:func:`drive_along` with a navigator's action sizes, planner lookahead and heading tolerance."""
    return drive_along(fld, path, pose, commit_yaw_rad, config.actions.turn_rad, config.actions.forward_m,
                       config.planner.lookahead_m, config.heading_tolerance_turns)


def went_nowhere(recent_xy_m: Sequence[np.ndarray], steps: int, progress_m: float) -> bool:
    """Whether the robot's last positions (more than ``steps`` of them) all stayed within ``progress_m`` of the
    first: moves that went nowhere."""
    if len(recent_xy_m) <= steps:
        return False
    start = recent_xy_m[0]
    return max(float(np.linalg.norm(p - start)) for p in recent_xy_m) < progress_m
