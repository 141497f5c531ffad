"""A plan over the robot's own discrete actions, turns priced: weighted A* in (x, y, heading).

The geodesic path of :mod:`goat_core.control.planner` is a descent on 0.1 m cells; it bends wherever the cells
do, and a follower that faces its waypoint re-aims at every bend and at every few degrees of heading noise. On a
base whose turns in place are not free (the stretch profile moves it about 3 cm a 30 deg turn, and GOAT-Bench
counts it) a plan in the action set itself, where a turn costs ``turn_cost_m`` of path, bends only where the
home makes it worth a turn. Moves: forward ``forward_m`` along the heading (free on the map as the field's
inflated obstacle layer says; a metre in the safety margin costs 1 / ``margin_speed``, as in the field), turn
left or right by ``turn_rad`` in place. Heuristic: the travel cost to the goal from an FMM whose source is the
goal (same cells, same speeds), weighted by ``epsilon``. States are hashed at ``hash_m`` and the heading index.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from goat_core.control.planner import PlanningField, geodesic_distance
from goat_core.types import DiscreteAction

_ACTIONS = (DiscreteAction.MOVE_FORWARD, DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)


@dataclass
class LatticeStats:
    """Counts for benchmarks: plans searched, of them complete, partial (the expansion cap hit; the plan goes to
    the state nearest the goal) and failed (no plan: the caller's follower steps), and the time spent searching."""

    plans: int = 0
    at_goal: int = 0  # asked for where the start is within the goal radius already (no search)
    complete: int = 0
    partial: int = 0
    failed: int = 0
    steps: int = 0  # actions taken from a plan
    kept: int = 0  # searches whose new plan was not cheaper by the margin than the plan under way (kept)
    rejoins: int = 0  # poses off the plan's next state that went on from a later state of it (no search)
    time_s: float = 0.0
    # Why a search was asked for (the caller's count): no plan under way, its actions done, its goal moved, the pose
    # left the planned one, the map blocks it.
    replans: dict[str, int] = field(default_factory=dict)
    failed_why: dict[str, int] = field(default_factory=dict)  # why a search found nothing

    def text(self) -> str:
        mean_ms = 1e3 * self.time_s / max(1, self.plans)
        return (f"lattice plans {self.plans} (complete {self.complete}, partial {self.partial}, failed "
                f"{self.failed}; at the goal already {self.at_goal}; old plan kept {self.kept}), steps from plans "
                f"{self.steps}, re-joins {self.rejoins}, "
                f"search {self.time_s:.1f} s ({mean_ms:.1f} ms a plan); searched for: "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.replans.items()))
                + "; found nothing: " + ", ".join(f"{k} {v}" for k, v in sorted(self.failed_why.items())))


STATS = LatticeStats()  # process-wide (benchmarks print it)


@dataclass
class LatticePlan:
    """Actions to take and the pose (x, y, yaw) expected before each; the goal it was planned to."""

    goal_xy_m: np.ndarray
    actions: list[DiscreteAction]
    poses: list[tuple[float, float, float]]
    complete: bool
    next: int = 0
    cost_m: float = field(default=0.0)


def plan_blocked(fld: PlanningField, plan: LatticePlan, forward_m: float) -> bool:
    """Whether a forward move the plan has still to take (from its ``next`` action on), from the pose the plan
    expects it at, touches an inflated obstacle on ``fld``'s map (sampled every half map cell; the map cell a move
    starts in is not checked, as :meth:`PlanningField.forward_free` does not)."""
    starts = [pose for action, pose in zip(plan.actions[plan.next:], plan.poses[plan.next:], strict=True)
              if action is DiscreteAction.MOVE_FORWARD]
    if not starts:
        return False
    xyyaw = np.asarray(starts, dtype=np.float64)
    n = max(2, int(math.ceil(2.0 * forward_m / fld.map_res_m)))
    t = forward_m * np.arange(n + 1) / n
    heading = np.stack([np.cos(xyyaw[:, 2]), np.sin(xyyaw[:, 2])], axis=1)
    xy = xyyaw[:, None, :2] + t[None, :, None] * heading[:, None, :]
    cells = np.floor((xy - fld.origin_xy_m) / fld.map_res_m).astype(np.int64)
    h, w = fld.touching.shape
    if np.any((cells < 0) | (cells >= (h, w))):
        return True
    ahead = np.any(cells != cells[:, :1], axis=2)
    return bool(np.any(fld.touching[cells[..., 0], cells[..., 1]] & ahead))


def plan_actions(fld: PlanningField, start: tuple[float, float, float], goal_xy_m: np.ndarray, turn_rad: float,
                 forward_m: float, turn_cost_m: float, goal_radius_m: float, margin_speed: float,
                 epsilon: float = 1.2, max_expansions: int = 3000, hash_m: float = 0.05, tie_m: float = 0.0,
                 keep: Optional[LatticePlan] = None, keep_margin_m: float = 0.0) -> Optional[LatticePlan]:
    """The cheapest action sequence found from ``start`` to within ``goal_radius_m`` of ``goal_xy_m``, or, when
    the expansion cap is hit, to the expanded state of least heuristic (if it is nearer the goal than the start
    by a forward step); None when the goal cell is not traversable, the start is within the goal radius already,
    or no plan makes progress.

    Among states whose estimated totals round to the same multiple of ``tie_m`` (0: exact ties only) the search
    expands first the one reached with fewer turns, then the one with the longer straight run, so that of plans of
    about equal cost it finds the one that turns least and latest. ``keep`` is a plan under way (its remainder from
    its ``next`` action on, which starts at ``start``): it is returned, its goal set to ``goal_xy_m``, unless the new
    plan is complete and cheaper than its remainder's cost on this map plus the travel cost from its end to the
    goal by more than ``keep_margin_m`` (STATS.kept counts it)."""
    if math.hypot(start[0] - float(goal_xy_m[0]), start[1] - float(goal_xy_m[1])) <= goal_radius_m:
        STATS.at_goal += 1
        return None
    t0 = time.perf_counter()
    STATS.plans += 1
    plan = _search(fld, start, goal_xy_m, turn_rad, forward_m, turn_cost_m, goal_radius_m, margin_speed, epsilon,
                   max_expansions, hash_m, tie_m, keep, keep_margin_m)
    STATS.time_s += time.perf_counter() - t0
    if plan is not None and plan is keep:
        STATS.kept += 1
        return plan
    if plan is None:
        STATS.failed += 1
    elif plan.complete:
        STATS.complete += 1
    else:
        STATS.partial += 1
    return plan


# x, y, heading index, cost, parent, action, turns so far, forward moves since the last turn
_Node = tuple[float, float, int, float, int, Optional[DiscreteAction], int, int]


class _Search:
    """One search's moves and costs over one field (pure Python on lists: a few microseconds a move)."""

    def __init__(self, fld: PlanningField, start: tuple[float, float, float], goal_xy_m: np.ndarray,
                 turn_rad: float, forward_m: float, turn_cost_m: float, margin_speed: float, hash_m: float,
                 to_goal: np.ndarray) -> None:
        self.fld = fld
        self.start = start
        self.gx, self.gy = float(goal_xy_m[0]), float(goal_xy_m[1])
        self.turn_rad, self.forward_m, self.turn_cost_m, self.hash_m = turn_rad, forward_m, turn_cost_m, hash_m
        self.heur = to_goal.tolist()
        self.clear = fld.clear.tolist()
        self.touching = fld.touching.tolist()
        self.h_cells, self.w_cells = fld.traversable.shape
        self.th, self.tw = fld.touching.shape
        self.ox, self.oy = float(fld.origin_xy_m[0]), float(fld.origin_xy_m[1])
        self.n_head = max(1, int(round(2.0 * math.pi / turn_rad)))
        self.samples = max(2, int(math.ceil(2.0 * forward_m / fld.map_res_m)))
        self.slow = forward_m / margin_speed
        # A cell's value is its centre's, up to ``slack`` more than a point in it: the straight line to the goal
        # bounds it from below, and in open floor equals it (a turn's cost is smaller than the slack).
        self.slack = math.sqrt(0.5) * fld.cell_m

    def key(self, x: float, y: float, k: int) -> tuple[int, int, int]:
        return int(round(x / self.hash_m)), int(round(y / self.hash_m)), k % self.n_head

    def cell(self, x: float, y: float) -> Optional[tuple[int, int]]:
        i = int(math.floor((x - self.ox) / self.fld.cell_m))
        j = int(math.floor((y - self.oy) / self.fld.cell_m))
        return (i, j) if 0 <= i < self.h_cells and 0 <= j < self.w_cells else None

    def h_at(self, x: float, y: float) -> float:
        c = self.cell(x, y)
        if c is None:
            return math.inf
        return max(float(self.heur[c[0]][c[1]]) - self.slack, math.hypot(x - self.gx, y - self.gy))

    def free(self, x: float, y: float, yaw: float, first: bool) -> bool:
        """The forward move from (x, y) along ``yaw`` touches no inflated obstacle (the first move: as the field's
        own :meth:`PlanningField.forward_free` says, which lets a base that grazed something back out)."""
        if first:
            return self.fld.forward_free(yaw, self.forward_m)
        c, s = math.cos(yaw), math.sin(yaw)
        ox, oy, res = self.ox, self.oy, self.fld.map_res_m
        i0, j0 = int(math.floor((x - ox) / res)), int(math.floor((y - oy) / res))
        for n in range(1, self.samples + 1):
            t = self.forward_m * n / self.samples
            i, j = int(math.floor((x + t * c - ox) / res)), int(math.floor((y + t * s - oy) / res))
            if not (0 <= i < self.th and 0 <= j < self.tw) or ((i, j) != (i0, j0) and self.touching[i][j]):
                return False
        return True

    def moves(self, node: _Node, first: bool) -> list[tuple[float, float, int, float, DiscreteAction]]:
        """(x, y, heading index, cost, action) of each action from ``node`` that the map allows."""
        x, y, k = node[0], node[1], node[2]
        out = [(x, y, k + 1, self.turn_cost_m, DiscreteAction.TURN_LEFT),
               (x, y, k - 1, self.turn_cost_m, DiscreteAction.TURN_RIGHT)]
        yaw = self.start[2] + k * self.turn_rad
        if self.free(x, y, yaw, first):
            nx, ny = x + self.forward_m * math.cos(yaw), y + self.forward_m * math.sin(yaw)
            c = self.cell(nx, ny)
            if c is not None:
                out.insert(0, (nx, ny, k, self.forward_m if self.clear[c[0]][c[1]] else self.slow,
                               DiscreteAction.MOVE_FORWARD))
        return out

    def remainder_m(self, plan: LatticePlan, goal_radius_m: float) -> float:
        """The cost on this map of ``plan``'s actions from its ``next`` one on, plus the travel cost from where
        they end to within ``goal_radius_m`` of the goal."""
        cost = 0.0
        x, y, yaw = plan.poses[plan.next]
        for action, pose in zip(plan.actions[plan.next:], plan.poses[plan.next:], strict=True):
            x, y, yaw = pose
            if action is DiscreteAction.MOVE_FORWARD:
                x, y = x + self.forward_m * math.cos(yaw), y + self.forward_m * math.sin(yaw)
                c = self.cell(x, y)
                cost += self.forward_m if c is not None and self.clear[c[0]][c[1]] else self.slow
            else:
                cost += self.turn_cost_m
        return cost + max(0.0, self.h_at(x, y) - goal_radius_m)

    def plan(self, nodes: list[_Node], end: int, complete: bool) -> Optional[LatticePlan]:
        actions: list[DiscreteAction] = []
        poses: list[tuple[float, float, float]] = []
        nid = end
        while nid > 0:
            parent, action = nodes[nid][4], nodes[nid][5]
            px, py, pk = nodes[parent][0], nodes[parent][1], nodes[parent][2]
            if action is not None:
                actions.append(action)
                poses.append((px, py, self.start[2] + pk * self.turn_rad))
            nid = parent
        if not actions:
            return None
        actions.reverse()
        poses.reverse()
        return LatticePlan(goal_xy_m=np.array([self.gx, self.gy]), actions=actions, poses=poses, complete=complete,
                           cost_m=nodes[end][3])


def _search(fld: PlanningField, start: tuple[float, float, float], goal_xy_m: np.ndarray, turn_rad: float,
            forward_m: float, turn_cost_m: float, goal_radius_m: float, margin_speed: float, epsilon: float,
            max_expansions: int, hash_m: float, tie_m: float = 0.0, keep: Optional[LatticePlan] = None,
            keep_margin_m: float = 0.0) -> Optional[LatticePlan]:
    gx, gy = float(goal_xy_m[0]), float(goal_xy_m[1])
    sx, sy, _ = start
    if math.hypot(sx - gx, sy - gy) <= goal_radius_m:
        return None
    h_cells, w_cells = fld.traversable.shape
    goal_cell = (int(math.floor((gx - fld.origin_xy_m[0]) / fld.cell_m)),
                 int(math.floor((gy - fld.origin_xy_m[1]) / fld.cell_m)))
    if not (0 <= goal_cell[0] < h_cells and 0 <= goal_cell[1] < w_cells) or not fld.traversable[goal_cell]:
        _failed("goal cell")
        return None
    to_goal = geodesic_distance(fld.traversable, goal_cell, fld.cell_m, np.where(fld.clear, 1.0, margin_speed))
    search = _Search(fld, start, goal_xy_m, turn_rad, forward_m, turn_cost_m, margin_speed, hash_m, to_goal)
    h0 = search.h_at(sx, sy)
    if not math.isfinite(h0):
        _failed("start cell")
        return None
    found = _astar(search, sx, sy, h0, goal_radius_m, epsilon, max_expansions, tie_m)
    if keep is None or keep.next >= len(keep.actions):
        return found
    kept_m = search.remainder_m(keep, goal_radius_m)
    if found is not None and math.isfinite(kept_m):
        found_m = found.cost_m
        if not found.complete:
            end = found.poses[-1]
            if found.actions[-1] is DiscreteAction.MOVE_FORWARD:
                end = (end[0] + forward_m * math.cos(end[2]), end[1] + forward_m * math.sin(end[2]), end[2])
            found_m += search.h_at(end[0], end[1])
        if found_m < kept_m - keep_margin_m:
            return found
    elif found is not None:
        return found
    keep.goal_xy_m = np.array([gx, gy])
    return keep


def _astar(search: _Search, sx: float, sy: float, h0: float, goal_radius_m: float, epsilon: float,
           max_expansions: int, tie_m: float) -> Optional[LatticePlan]:
    gx, gy = search.gx, search.gy
    r2 = goal_radius_m * goal_radius_m
    nodes: list[_Node] = [(sx, sy, 0, 0.0, -1, None, 0, 0)]
    best_g: dict[tuple[int, int, int], float] = {search.key(sx, sy, 0): 0.0}
    closed: set[tuple[int, int, int]] = set()

    def rank(f: float) -> float:
        return float(round(f / tie_m)) if tie_m > 0.0 else f

    # (estimated total, rounded to tie_m; turns so far; minus the straight run; node id)
    heap: list[tuple[float, int, int, int]] = [(rank(epsilon * h0), 0, 0, 0)]
    nearest = (h0, 0)
    expansions = 0
    while heap and expansions < max_expansions:
        nid = heapq.heappop(heap)[3]
        node = nodes[nid]
        key = search.key(node[0], node[1], node[2])
        if key in closed:
            continue
        closed.add(key)
        expansions += 1
        if (node[0] - gx) ** 2 + (node[1] - gy) ** 2 <= r2:
            return search.plan(nodes, nid, True)
        h_here = search.h_at(node[0], node[1])
        if h_here < nearest[0]:
            nearest = (h_here, nid)
        for nx, ny, nk, step, action in search.moves(node, nid == 0):
            nkey = search.key(nx, ny, nk)
            ng = node[3] + step
            if nkey in closed or ng >= best_g.get(nkey, math.inf):
                continue
            hn = search.h_at(nx, ny)
            if not math.isfinite(hn):
                continue
            best_g[nkey] = ng
            forward = action is DiscreteAction.MOVE_FORWARD
            turns = node[6] + (0 if forward else 1)
            run = node[7] + 1 if forward else 0
            nodes.append((nx, ny, nk, ng, nid, action, turns, run))
            heapq.heappush(heap, (rank(ng + epsilon * hn), turns, -run, len(nodes) - 1))
    if nearest[0] > h0 - search.forward_m:
        _failed("no progress at the cap" if heap else "no way")
        return None
    return search.plan(nodes, nearest[1], False)


def _failed(why: str) -> None:
    STATS.failed_why[why] = STATS.failed_why.get(why, 0) + 1
