"""The FindingDory generator's settings: FindingDory's action sizes, the simulator it runs in, and the settings
of the experience and of the instructions (``goat_suites.findingdory.generator``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from goat_core.errors import ConfigError
from goat_core.types import ActionSizes
from goat_suites.common.protocols import FINDINGDORY
from goat_suites.findingdory.tasks import ORDINALS
from sim_bridge.embedded.sim import SimConfig

# FindingDory's embodiment (findingdory-habitat task config): 10 deg turns, 0.25 m steps, head 30 deg down.
FINDINGDORY_ACTIONS = ActionSizes(forward_m=0.25, turn_rad=math.radians(10.0), look_rad=math.radians(30.0))


def findingdory_sim_config() -> SimConfig:
    """The embedded simulator with FindingDory's embodiment (``goat_suites.common.protocols.FINDINGDORY``): its action
    sizes, its head camera (480 x 640, HFOV 43 deg, 1.31 m) and no sliding along walls."""
    e = FINDINGDORY.embodiment
    assert e.camera_height_m is not None
    return SimConfig(action_sizes=FINDINGDORY_ACTIONS, width_px=e.width_px, height_px=e.height_px,
                     hfov_deg=e.hfov_deg, camera_height_m=e.camera_height_m, allow_sliding=e.allow_sliding)


@dataclass(frozen=True)
class FindingDoryGenConfig:
    """Settings of the experience and of the instructions (one default each)."""

    interactions: tuple[int, int] = (3, 4)  # pick-and-place moves per experience, inclusive range
    start_clock_range_s: tuple[float, float] = (8 * 3600.0, 10 * 3600.0)  # when the day's experience starts
    seconds_per_action: float = 3.0  # clock time of one discrete action
    pick_duration_s: float = 20.0
    place_duration_s: float = 20.0
    camera_tilt_rad: float = -math.radians(30.0)  # FindingDory's head tilt (task config ``camera_tilt``)
    arrive_radius_m: float = 0.2  # the oracle has reached a view point within this distance
    lookahead_m: float = 1.0  # the oracle steers to the farthest path point within this, in line of sight
    max_walk_actions: int = 800  # per walk to one view point
    # The oracle's day: FindingDory's num_steps_daily (config/task/findingdory.yaml l.73); an oracle that has not
    # made its moves by then times out and the episode is dropped (findingdory_task.py l.513-519).
    max_experience_actions: int = 4000
    view_point_radius_m: float = 1.0  # as the GOAT episodes' view points
    view_point_spacing_m: float = 0.25
    view_point_tries: int = 3  # view points tried per object until the object is in view
    min_coverage: float = 0.001  # share of the image an object must cover to count as seen
    place_margin_m: float = 0.03  # a placed object keeps this far from the top's edge and from other objects
    place_attempts: int = 60
    task_attempts: int = 12  # template fillings tried per task type before the type is left out
    max_room_ordinal: int = 5

    def __post_init__(self) -> None:
        lo, hi = self.interactions
        if not 1 <= lo <= hi <= len(ORDINALS):
            raise ConfigError(f"FindingDoryGenConfig.interactions must be (lo, hi) with 1 <= lo <= hi <= "
                              f"{len(ORDINALS)}, got {self.interactions!r}")
        c0, c1 = self.start_clock_range_s
        if not 0.0 <= c0 <= c1 < 20 * 3600.0:
            raise ConfigError(f"FindingDoryGenConfig.start_clock_range_s must be within [0, 20 h), got "
                              f"{self.start_clock_range_s!r}")
        if self.max_experience_actions < 1:
            raise ConfigError(f"FindingDoryGenConfig.max_experience_actions must be >= 1, got "
                              f"{self.max_experience_actions!r}")
        for name in ("seconds_per_action", "arrive_radius_m", "lookahead_m", "view_point_radius_m",
                     "view_point_spacing_m"):
            if not getattr(self, name) > 0.0:
                raise ConfigError(f"FindingDoryGenConfig.{name} must be positive, got {getattr(self, name)!r}")
        if not 0.0 < self.min_coverage < 1.0:
            raise ConfigError(f"FindingDoryGenConfig.min_coverage must be in (0, 1), got {self.min_coverage!r}")
