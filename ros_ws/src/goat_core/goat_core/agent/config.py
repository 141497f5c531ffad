"""The agent's parameters: one frozen dataclass, each field with its one default.

``config/agent.yaml`` mirrors these defaults (a test checks that they agree) and is what a user edits; the
measurements behind the defaults are in docs/agent.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from goat_core.control.frontier import FrontierConfig
from goat_core.control.planner import PlannerConfig
from goat_core.control.policy import check_drive_settings
from goat_core.control.recovery import RecoveryConfig
from goat_core.errors import require_at_least, require_positive
from goat_core.mapping.instance_memory import InstanceMemoryConfig
from goat_core.mapping.occupancy import OccupancyConfig
from goat_core.types import ActionSizes


@dataclass(frozen=True)
class AgentConfig:
    """Every agent parameter, each with its one default (sub-configs hold their own)."""

    occupancy: OccupancyConfig = field(default_factory=OccupancyConfig)
    memory: InstanceMemoryConfig = field(default_factory=InstanceMemoryConfig)
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    frontier: FrontierConfig = field(default_factory=FrontierConfig)
    recovery: RecoveryConfig = field(default_factory=RecoveryConfig)
    actions: ActionSizes = field(default_factory=ActionSizes)
    robot_radius_m: float = 0.17  # Stretch base
    # STOP within this planar distance of the target's nearest point. GOAT-Bench's view points reach 1 m from the
    # object and a STOP within 0.25 m of one succeeds, but view points lie on a grid and only on free floor in
    # sight: in a furnished home a STOP 0.9-1.0 m away can find none within 0.25 m (3 of 41 such stops of the
    # large homes' 20 episodes of stop 39 missed by 0.25-0.35 m, none of 74 at 0.7-0.9 m; docs/agent.md).
    stop_radius_m: float = 0.9
    # When no reachable cell is that close (an object at the back of a deep counter), STOP at the closest
    # reachable spot if it is within this distance.
    max_stop_radius_m: float = 1.1
    goal_margin_m: float = 0.15  # plan to cells this far inside the stop radius (cell size, step overshoot)
    # Approximate sensing (Observation.sensing_exact False: localised odometry, noisy depth): at the goal spot the
    # agent STOPs only once the frame it sees puts the target within the stop radius less this margin, 0.8 m (the map's
    # instance and the believed pose can each be a few decimetres off; the frame measures the offset itself), and
    # else turns toward it and steps closer, at most ``sight_approach_max_steps`` times per instance and subtask.
    # The offset in the frame carries no pose error, only the depth's (under 1 cm at 1 m for the D435), so the
    # margin is small: at 0.2 nearly every arrival at a goal spot (0.85-0.98 m away) took one more step.
    sight_stop_margin_m: float = 0.05
    sight_approach_max_steps: int = 8
    # A subtask that starts near its target (the last one ended there) STOPs without moving when the target is
    # within this distance (clipped to [stop_radius_m, max_stop_radius_m]) and in view: any move would cost the
    # subtask's whole SPL, its shortest path being about zero.
    start_stop_radius_m: float = 1.05
    # Under approximate sensing such a subtask STOPs there even when the target is out of view, instead of turning
    # in place until the frame shows it, if memory holds a view of the target taken within this distance of where
    # the robot stands (it was in sight from here: the last subtask walked past it): each turn moves the base
    # about 3 cm (the stretch profile), and a subtask whose shortest path is a few centimetres loses most of its
    # SPL to a few turns (stop 44's runs: 2-5 such turns cost 5000-18/5, 18/6 and 16/7 0.37-0.49 of SPL each).
    # Without such a view the turns look: a target the map puts within reach may stand behind a counter, its view
    # points on the far side (5000-18/2, stop 45: a STOP 0.59 m from the stove, 2.17 m from its view points). Not
    # while the arrival check is active (a detector's instances need a look). 0: always turn to look first.
    approximate_start_stop_view_m: float = 0.3
    navigation_tilt_rad: float = -math.radians(30.0)  # head tilt while navigating (negative looks down)
    # With memory, a later subtask for a category goal also turns a full circle first when memory's confident
    # match is out of reach: another instance may stand unseen behind the robot, and turns cost no path. (A later
    # subtask whose goal memory holds no confident match always looks around first.)
    rescan_when_sure: bool = True
    # Under approximate sensing every turn in place moves the base a few centimetres (the stretch profile: 3 cm,
    # PyRobot's turn noise), and GOAT-Bench counts that path: a look around costs its 12 turns. A later subtask's
    # look around (not the episode's first, which lets the localiser learn the turn scale, nor one an image goal
    # compares its views in) is skipped where the map already shows the floor in every direction out to this far
    # or to the first obstacle: what it would show has been seen. 0: never skipped. Exact sensing never skips.
    approximate_rescan_mapped_m: float = 3.0
    use_memory: bool = True  # False: the no-memory ablation, map and instances cleared at every subtask
    # A subtask still running after this many actions ends with STOP where the robot stands (at its best guess):
    # GOAT-Bench's budget is 5000 actions per episode, shared by its subtasks, so one that never settles would
    # otherwise take every action of the later ones.
    max_subtask_actions: int = 500
    collision_ahead_m: float = 0.1  # a bump is marked this far past the front of the base
    collision_half_width_m: float = 0.1
    stuck_collisions: int = 3  # blocked moves in a row before the current target is given up
    no_progress_steps: int = 20  # moves without ``progress_m`` of net displacement before giving up
    progress_m: float = 0.3
    frontier_reached_m: float = 0.3  # a frontier still there when the robot is this close is unobservable
    # Drive on while the waypoint is within this many turn steps of the heading; above one half, turning
    # never overshoots, and the slack above it saves turns when the path runs between two headings.
    heading_tolerance_turns: float = 0.6
    # Under approximate sensing a turn in place is off by a few degrees (the stretch profile: 3 deg sd), so a
    # heading error just past half a turn step can overshoot into the opposite error and turn back (at a goal
    # spot or a detour). Every turn-in-place decision then tolerates this many turn steps (the waypoint's at
    # least ``heading_tolerance_turns``); exact sensing keeps half a step and the above. 0.5: as exact sensing.
    # 0.7 was measured in stop 38 and not kept: `--realism stretch`, seed 1000, 20 episodes, SR / SPL 0.890 /
    # 0.584 against 0.930 / 0.625 at 0.5 (docs/realism.md, "Stop 38").
    approximate_heading_tolerance_turns: float = 0.5
    # Under approximate sensing the path follower picks its step by cost (goat_core.control.policy.cheapest_drive):
    # a short plan of turns in place and straight forward moves, weighed against the travel it leaves, instead of
    # facing the waypoint within the tolerance. A turn in place costs ``turn_cost_m`` of path: the stretch profile
    # moves the base about 3 cm a 30 deg turn (GOAT-Bench counts it), plus 2 cm for the time and the heading noise
    # it adds. False: main's rules (face the waypoint; Motion._no_turn_back, Motion._no_turn_against_bend).
    # Exact sensing never uses it. Off: measured in stop 44 (`--realism stretch`, 20 episodes a seed) it left seed
    # 1000's SPL where it was (0.674 -> 0.676) and lowered seed 5000's (0.637 -> 0.611; docs/realism.md, "Stop 44").
    approximate_cost_drive: bool = False
    turn_cost_m: float = 0.05
    # Under approximate sensing the path follower takes its steps from a plan over its own actions, turns priced
    # at ``turn_cost_m`` (goat_core.control.lattice: weighted A* in (x, y, heading) to the path's end), while the
    # believed pose stays near the planned one; it plans again when the pose leaves it, the path's end moves or the
    # map blocks the next move, and main's rules step where no plan is found. Exact sensing never uses it.
    # Off: measured in stop 45 (`--realism stretch`, 20 episodes a seed) it lowered both seeds' SPL (1000: 0.674 ->
    # 0.651, 5000: 0.637 -> 0.599) and raised the goto turns (docs/realism.md, "Stop 45").
    approximate_lattice_drive: bool = False
    # Image goals that no remembered view matches once the home is explored: visit the most similar-looking
    # instances (goal picture centre colour vs instance colour) from a side not seen yet, up to this many.
    inspect_max_instances: int = 8
    inspect_new_side_penalty_m: float = 3.0  # extra path cost of a spot on a side the instance was seen from
    inspect_side_rad: float = math.radians(60.0)  # spots within this bearing of a stored view count as seen
    inspect_max_steps: int = 80  # actions spent on one instance's inspection before it counts as inspected
    # Image goals: sides an instance is looked at from before it counts as inspected. A goal picture is taken from
    # a random side; one close look matches it only when it happens to face that side.
    inspect_image_sides: int = 2
    # Only stored views taken this close to the instance make their side count as seen: from farther, a crop of
    # the object is too small to match a picture taken from a view point.
    inspect_close_view_m: float = 1.6
    expected_view_fraction: float = 0.2  # share of the target's points inside the image that means "in view"
    blocked_view_radius_m: float = 0.5  # spots this close to one where a wall hid the target are not used again
    # Goal spots from which the map shows a wall or tall furniture in front of the instance are not used while
    # others are in reach: a goal's nearest points may lie just across a wall. The last ``sight_skip_end_m`` of
    # the line (the instance's own cells, the shelf around a book) is not checked.
    goal_in_sight: bool = True
    sight_skip_end_m: float = 0.1

    def __post_init__(self) -> None:
        positive = ("robot_radius_m", "stop_radius_m", "progress_m", "frontier_reached_m", "sight_skip_end_m",
                    "blocked_view_radius_m", "start_stop_radius_m", "inspect_close_view_m")
        require_positive(self, positive)
        if isinstance(self.max_subtask_actions, bool) or not (isinstance(self.max_subtask_actions, int)
                                                              and self.max_subtask_actions > 0):
            raise ValueError(f"AgentConfig.max_subtask_actions must be a positive integer, got "
                             f"{self.max_subtask_actions!r}")
        check_drive_settings(self)
        if not 0.0 < self.expected_view_fraction <= 1.0:
            raise ValueError(
                f"AgentConfig.expected_view_fraction must be in (0, 1], got {self.expected_view_fraction}"
            )
        if self.max_stop_radius_m < self.stop_radius_m:
            raise ValueError(
                f"AgentConfig.max_stop_radius_m must be >= stop_radius_m, got {self.max_stop_radius_m!r}"
            )
        if not 0.0 <= self.goal_margin_m < self.stop_radius_m:
            raise ValueError(
                f"AgentConfig.goal_margin_m must be in [0, stop_radius_m), got {self.goal_margin_m!r}"
            )
        if not 0.0 <= self.sight_stop_margin_m < self.stop_radius_m:
            raise ValueError(
                f"AgentConfig.sight_stop_margin_m must be in [0, stop_radius_m), got {self.sight_stop_margin_m!r}"
            )
        if not 0.5 <= self.approximate_heading_tolerance_turns < 1.0:
            raise ValueError(f"AgentConfig.approximate_heading_tolerance_turns must be in [0.5, 1), got "
                             f"{self.approximate_heading_tolerance_turns!r}")
        if not (self.turn_cost_m >= 0.0 and math.isfinite(self.turn_cost_m)):
            raise ValueError(f"AgentConfig.turn_cost_m must be a finite number >= 0, got {self.turn_cost_m!r}")
        if not self.approximate_rescan_mapped_m >= 0.0:
            raise ValueError(f"AgentConfig.approximate_rescan_mapped_m must be >= 0, got "
                             f"{self.approximate_rescan_mapped_m!r}")
        if not self.approximate_start_stop_view_m >= 0.0:
            raise ValueError(f"AgentConfig.approximate_start_stop_view_m must be >= 0, got "
                             f"{self.approximate_start_stop_view_m!r}")
        require_at_least(self, 0, ("sight_approach_max_steps",))
        require_at_least(self, 1, ("stuck_collisions", "no_progress_steps", "inspect_max_steps", "inspect_image_sides"))

    def turn_tolerance_rad(self, exact: bool) -> float:
        """The heading error a turn in place toward a set heading leaves (a goal, a detour's heading): half a
        turn step under exact sensing, ``approximate_heading_tolerance_turns`` steps under approximate."""
        return (0.5 if exact else self.approximate_heading_tolerance_turns) * self.actions.turn_rad

    @property
    def full_circle_turns(self) -> int:
        """Turns in place that bring the robot back to its heading."""
        return int(math.ceil(2.0 * math.pi / self.actions.turn_rad - 1e-9))
