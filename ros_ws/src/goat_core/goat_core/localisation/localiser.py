"""Scan-to-map localisation: wheel odometry corrected by registering each depth frame against the robot's map.

On the Stretch (and in the simulator's ``stretch`` realism profile) the base pose comes from wheel odometry,
which drifts: a per-run scale error of ~1 % and a heading error of ~2.5 % of every turn bend the map. This
localiser keeps the map straight the way slam_toolbox or AMCL do for a laser scan, with the head camera's depth
as the scan:

1. the depth image becomes a 2D scan: points between ``min_height_m`` and ``max_height_m`` above the floor
   (walls and furniture), within ``max_range_m``, in the base frame, thinned to one per ``voxel_m`` cell;
2. the scan is placed at the predicted pose, the last ``map -> odom`` correction applied to the new odometry
   pose, and registered against the points mapped so far by point-to-line ICP (the 2D form of point-to-plane
   ICP, Chen and Medioni 1992; Censi's PLICP): each scan point is paired with its nearest map point and the
   line fitted through that point's neighbours, and the rigid motion (x, y, yaw) minimising the squared
   distances to those lines is solved by Gauss-Newton;
3. a prior on the predicted pose (information ``prior_*``) joins every Gauss-Newton step, so a direction the
   scan does not constrain (a corridor's axis, a single wall) stays where odometry put it, and a registration
   with too few paired points or too large a jump is refused (odometry alone then);
4. a turn on the spot that has come full circle (the agent's look-around) closes a loop: the scan is matched
   against the spin's frame that looked the same way (a correlative search over the heading, then ICP), the
   spin's frames are re-placed along the registered turn and the odometry's rotation scale is learnt from it;
   a look-around's 30 deg steps overlap little, so without this its heading drifts by the scale error;
5. the walls hold the heading (``wall_axis_gain``, :mod:`goat_core.localisation.wall_axes`): most rooms are
   built on two perpendicular axes, so a scan's walls give the heading modulo 90 deg against the home's axis,
   which the episode's first coherent scan sets; each pose turns by a share of the difference;
6. the scan joins the map at the corrected pose, and ``map -> odom`` = corrected pose * odometry pose^-1 is
   what a ROS node would publish.

Depth is filtered before anything maps it (:func:`filter_depth`): returns beyond the range the D435 measures
well, flying pixels on depth discontinuities and isolated speckles are removed.

Frames: ``odom`` is the odometry's frame (origin: the pose at reset), ``map`` the agent's episode frame; both
start equal. Pure numpy/scipy (no Open3D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple, Optional

import numpy as np
from scipy import ndimage
from scipy.spatial import cKDTree

from goat_core.errors import ConfigError
from goat_core.geometry import depth_to_episode_points, wrap_angle_rad
from goat_core.localisation.pose_graph import PoseGraph
from goat_core.localisation.wall_axes import quarter_wrap_rad, wall_axis
from goat_core.types import Observation, Pose2D

__all__ = ["DepthFilterConfig", "Localiser", "LocaliserConfig", "RegistrationResult", "compose", "filter_depth",
           "inverse"]


def compose(a: Pose2D, b: Pose2D) -> Pose2D:
    """a * b: the pose b (given in a's frame) in a's parent frame."""
    c, s = math.cos(a.yaw_rad), math.sin(a.yaw_rad)
    return Pose2D(a.x_m + c * b.x_m - s * b.y_m, a.y_m + s * b.x_m + c * b.y_m,
                  wrap_angle_rad(a.yaw_rad + b.yaw_rad))


def inverse(a: Pose2D) -> Pose2D:
    c, s = math.cos(a.yaw_rad), math.sin(a.yaw_rad)
    return Pose2D(-(c * a.x_m + s * a.y_m), -(-s * a.x_m + c * a.y_m), wrap_angle_rad(-a.yaw_rad))


# --------------------------------------------------------------------------------------------- depth filter


@dataclass(frozen=True)
class DepthFilterConfig:
    max_depth_m: float = 5.0  # the D435's error grows as Z^2: ~9 cm RMS at 5 m
    flying_ratio: float = 0.08  # a pixel whose 3x3 neighbourhood spans more than this (relative) is dropped
    min_valid_neighbours: int = 5  # of 8: fewer valid neighbours make a speckle


def filter_depth(depth_m: np.ndarray, config: DepthFilterConfig = DepthFilterConfig()) -> np.ndarray:
    """A float32 copy of ``depth_m`` (0 = no return) with far returns, flying pixels and speckles removed."""
    d = depth_m.astype(np.float32, copy=True)
    d[~np.isfinite(d) | (d > config.max_depth_m)] = 0.0
    valid = d > 0.0
    big = np.where(valid, d, -np.inf)
    small = np.where(valid, d, np.inf)
    hi = ndimage.maximum_filter(big, size=3, mode="nearest")
    lo = ndimage.minimum_filter(small, size=3, mode="nearest")
    flying = valid & ((hi - lo) > config.flying_ratio * d)
    neighbours = ndimage.convolve(valid.astype(np.int16), np.ones((3, 3), dtype=np.int16), mode="constant") - 1
    speckle = valid & (neighbours < config.min_valid_neighbours)
    d[flying | speckle] = 0.0
    return d


# ---------------------------------------------------------------------------------------------- localiser


@dataclass(frozen=True)
class LocaliserConfig:
    """Scan extraction, ICP and acceptance settings."""

    min_height_m: float = 0.2  # scan points: above the floor's noise ...
    max_height_m: float = 1.8  # ... and below the ceiling
    max_range_m: float = 4.0
    stride_px: int = 2  # every second pixel of every second row (4: the heading of near scans wanders)
    voxel_m: float = 0.05
    max_iterations: int = 12
    max_pair_m: float = 0.25  # nearest map point farther than this: no pair (first iterations) ...
    final_pair_m: float = 0.06  # ... shrinking to this
    line_neighbours: int = 6  # map points whose spread weighs a pair
    point_sigma_m: float = 0.02  # noise of a scan point and a map point
    cauchy_scale: float = 2.0  # Mahalanobis distance at which a pair's weight halves
    # How far the prediction may be off, from the odometry's error model: a floor plus a fraction of the motion
    # since the last frame (Stage's bounds are 1.5 % of a translation and 2.5 % of a rotation; twice that here).
    prior_sigma_xy_m: float = 0.005
    prior_sigma_yaw_rad: float = math.radians(0.2)
    prior_per_m: float = 0.03
    prior_per_rad: float = 0.1
    min_pairs: int = 40
    # Why the translation scale is learnt short: moving forward, the scan reaches past the map's far edge (seen
    # from a step back at the same range limit), and a point on new surface pairs with the edge behind it,
    # pulling the registration back (about 1 % of a step with D435 depth). At a margin >= 0 the scale is learnt
    # from a second registration of only the scan points nearer than max_range_m - (the odometry's translation
    # since the last frame) - the margin (0.1 m: the learnt scale is right to ~0.1 %). Negative: off (before stop
    # 47): replays of two recorded episodes (docs/realism.md, stop 38) localised no better with the right scale,
    # since the pose still came from the whole scan and the heading, not the scale, set the error then.
    range_edge_margin_m: float = 0.1
    # With range_edge_margin_m >= 0: the pose of a step (not a turn on the spot) is that registration of the scan
    # points within the map's reach too, not only the scale learnt from it. False (before stop 47): the whole scan
    # places the pose, and the steps come out ~0.5 % short with the right scale (test_localiser.py), 1-3 % short
    # on the recordings. Cutting the far points lost the heading in a live episode of stop 38; since stop 47 the
    # walls hold the heading (wall_axis_gain), and replays and live runs gain from both (docs/realism.md, "Stop 47").
    range_edge_pose: bool = True
    min_paired_fraction: float = 0.15  # of the scan's points (a 30 deg turn keeps ~30 % in view)
    max_correction_m: float = 0.3
    max_correction_rad: float = math.radians(8.0)
    # A registration may turn the pose by at most this many sigma of the odometry's heading error since the last
    # accepted one (the prior's yaw sigmas, added in quadrature over refused frames): wheel odometry measures a
    # turn to within its scale error, so a larger heading change is a wrong match (a scan that overlaps its map
    # by a few degrees of view, a symmetric room), not a correction.
    max_correction_sigmas: float = 3.0
    # The rotation scale is learnt from loop closures only: a frame registered after a turn in place overlaps its
    # map by a few degrees of view, and nearest-neighbour pairs at the map's edge pull it back toward the views
    # already mapped, so single frames under-register turns (about 0.2 deg of a 30 deg turn, systematically)
    # and a scale learnt from them takes the wrong sign. True: learn from every accepted frame (before stop 37).
    learn_turn_from_frames: bool = False
    # Whether a turn on the spot is still registered frame by frame once a loop closure has learnt the turn scale
    # (False: the calibrated odometry, good to a fraction of a percent of the turn by then, carries it; the same
    # edge bias makes a single frame's registration the worse estimate). Before that turns are registered, since
    # the raw odometry can be 2.5 % off and one closure's scale can be wrong (register_turns_closures).
    register_turns: bool = False
    # How many loop closures the turn scale must rest on before turns stop being registered (see register_turns).
    # One closure can learn a wrong scale (replaying 5000-18 (stop 42): the first closing spin's reference carried
    # -3.5 deg gathered before the spin, its yaw search had no clear peak, and the closure read the difference as
    # a +1.1 % turn scale where the odometry was 0.1 % off; 3400 deg of net turns without another closure then
    # lost 15-20 deg). 1: the first closure (before stop 42).
    register_turns_closures: int = 2
    turn_min_rad: float = 0.2  # a frame that turned more than this on the spot (spin_max_shift_m) is a turn
    # A turn on the spot brings new view in at its leading side: the head camera sees 42 deg across, so a 30 deg
    # turn keeps 12 deg of the last frame's view, and the new view's points pair with the map's edge behind them
    # and pull the registered turn short (stop 45: the registered turns of six replays lost 0.11-0.15 deg a 30 deg
    # turn, -4 to -9 deg of heading before the second closure). At a margin >= 0 a turn's registration leaves out
    # the scan points at bearings the last frame did not see, less this margin (the odometry's turn error).
    # Negative: off (every point), the default: at 1 deg, live (stop 45) seed 1000's end-of-subtask error fell
    # (0.136 -> 0.112 m) but seed 5000's rose (0.164 -> 0.178 m) and its SPL fell (0.637 -> 0.616); the narrow
    # view's registration sometimes follows a wrong turn scale (replay 5000-18).
    turn_new_view_margin_rad: float = -1.0
    # What the new view's points weigh in such a turn's registration (with turn_new_view_margin_rad >= 0): a
    # factor on their pairs' information in the ICP's normal equations. 0: left out (stop 45's drop); between 0
    # and 1 (stop 46) the overlap decides the turn and the new view still holds it where the overlap is thin.
    turn_new_view_weight: float = 0.0
    # Learning the odometry's scale errors: the prior weighs like this much motion of zero error, and the
    # estimate is bounded (Stage's bounds are 1.5 % and 2.5 %).
    scale_prior_m2: float = 1.0
    scale_prior_rad2: float = 0.5
    max_scale_error: float = 0.08
    # Loop closure of a turn in place (a look-around): once the base has turned a full circle on the spot, the
    # scan is registered against the spin's frame that looked the same way (a correlative yaw search of
    # +-``closure_window_rad`` in ``closure_step_rad`` steps, then ICP), and the spin's frames are re-placed.
    closure: bool = True
    spin_max_shift_m: float = 0.12  # more translation in one step starts a new spin (a turn drifts up to ~8 cm)
    closure_window_rad: float = math.radians(15.0)
    closure_step_rad: float = math.radians(0.25)
    closure_min_points: int = 60  # both scans need this many points
    # The closing scan looks up to closure_window_rad past its reference (a 30 deg-a-step spin closes 6-9 deg past
    # it), and the reference is a single scan: the closing scan's points beyond the reference's view pair with its
    # edge and pull the closed turn short, as in a turn's registration (stop 46: closures 6-9 deg past their
    # reference registered 1.0-1.4 deg short on replay 1000-3, so the learnt turn scale came out short). What those
    # points weigh in the closure's ICP (bearings past the reference's view at the correlative search's heading):
    # 1, all alike (before stop 46); 0, left out. Below 1 the correlative search counts only the points at bearings
    # the reference saw at the predicted heading, less closure_new_view_margin_rad (rotated back, the new view's
    # wall points slide onto the reference's walls, and the overlap peaks short of the turn too).
    closure_new_view_weight: float = 1.0
    closure_new_view_margin_rad: float = math.radians(2.0)
    closure_min_overlap: float = 0.5  # of the smaller scan's points within closure_match_m at the best yaw
    # Which yaw of the closure's correlative search starts its ICP where several tie at the best overlap (a view
    # matched within closure_match_m holds all its points over a plateau of yaws, +-1 deg at 3 m). False: the
    # first, the most clockwise (before stop 46): a left spin's closure then starts short of its turn, and the ICP
    # (its yaw prior two search steps wide, a tight position prior) ends short, so the turn scale is learnt short
    # (stop 46: -0.3 to -1.5 deg a closure on exact scans and odometry). True: the middle of the tied yaws.
    closure_peak_middle: bool = False
    # What closure_min_overlap counts against: True, the smaller of the two scans (a look-around's first frames
    # often see little: replaying 5000-19 (stop 41), the first spin's only references held 56 and 65 points
    # against the closing scan's 125, so at most half of it could overlap; 0.60 of the reference did, with a
    # sharp peak, and the spin's -8.8 deg stayed for 130 frames); False (before stop 41), the current scan.
    closure_overlap_of_smaller: bool = True
    closure_match_m: float = 0.05
    # Once a closure has learnt the turn scale, the odometry's calibrated turn is good to a fraction of a percent,
    # so a later closure may change the heading by at most closure_base_rad + closure_scale_error * (the spin's
    # turn since its reference frame); a larger change is a wrong match (a view that overlaps itself over a broad
    # range of headings: replaying 5000-6 (stop 39), the fourth closure, 0.96 overlap at its best yaw and 0.87 five
    # degrees to either side, turned a -3.7 deg heading error into -11.7 over a 360 deg spin). The first closure is
    # bounded by the search window alone (the raw odometry's turn can be 2.5 % off).
    closure_base_rad: float = math.radians(1.5)
    closure_scale_error: float = 0.005
    # Where a closure re-places the spin's headings from: True, the spin's first frame, by the turn rate the
    # closure measured (registered / odometry turn), the reference's and the closed heading too; False (before
    # stop 39), the reference frame, whose own heading keeps the odometry's turn error since the spin began (a
    # look-around's first frames often see too little to register). Replays (docs/realism.md, stop 39): median
    # pose error 5000-6 0.524 -> 0.183 m, 5000-18 0.302 -> 0.286, 1000-0 0.067 -> 0.073, 1000-16 0.108 -> 0.109.
    closure_from_spin_start: bool = True
    # Loop closure at a revisited view (outside spins): where the believed pose is within keyframe_radius_m and
    # keyframe_window_rad of a frame at least keyframe_min_age frames older, the scan is registered against that
    # frame's scan alone (two scans of the same view: no edge of a map pulls it), and the frames since then are
    # re-placed, each by its share of the correction. Between look-arounds the pose otherwise only follows the map
    # built along the way, which carries the same drift. Off (the default): no such closure. Tried in stops 43 and
    # 44 (docs/realism.md): it helps recordings whose heading drifted and costs others, since the closed pose takes
    # its reference frame's error; live it lowered SR / SPL on both seeds (stop 44).
    keyframe_closure: bool = False
    keyframe_radius_m: float = 0.3
    keyframe_window_rad: float = math.radians(10.0)
    keyframe_min_age: int = 30
    keyframe_cooldown: int = 10  # frames between two keyframe closures
    keyframe_min_points: int = 60  # both scans need this many points
    keyframe_replace_frames: bool = True  # re-place the frames since the reference (False: the pose alone)
    # A correction smaller than both of these is left alone (within the registration's own noise).
    keyframe_min_turn_rad: float = 0.0
    keyframe_min_shift_m: float = 0.0
    keyframe_max_shift_m: float = 0.4  # a larger correction is a wrong match
    keyframe_max_turn_rad: float = math.radians(8.0)
    keyframe_search_m: float = 0.25  # the correlative search: +- this in x and y ...
    keyframe_search_step_rad: float = math.radians(0.5)  # ... and +- keyframe_window_rad of heading in these steps
    # A keyframe closure is accepted only where the correlative search's peak is clear of the prediction: the
    # points it puts on the old scan, less those the predicted pose puts there, at least this fraction of the
    # scan's (searched) points. 0: any peak (stop 43). Off: over 59 closures of six replays (stop 44) the gain of
    # the closures that turned the heading the wrong way (0.06-0.74) spanned that of the right ones (0.01-0.56).
    keyframe_min_peak_gain: float = 0.0
    # Where a closure's frames go (stop 44). True: a pose graph over the frames (goat_core.localisation.pose_graph)
    # is solved on each keyframe closure: sequential edges are each frame's motion from the one before as the
    # localiser placed it (information from the odometry's error model, the prior_* sigmas of the motion, times
    # graph_registered_gain where the frame's registration was accepted), closure edges the closures' registered
    # relative poses (spin closures too, after their own re-placement), kept for the episode, so a later closure
    # bends the frames between against every earlier closure's evidence. False: the re-placement by share
    # (keyframe_replace_frames).
    keyframe_pose_graph: bool = True
    graph_registered_gain: float = 4.0
    graph_closure_sigma_xy_m: float = 0.02  # a closure edge's sigmas (registered against one old scan)
    graph_closure_sigma_yaw_rad: float = math.radians(0.5)
    graph_iterations: int = 5  # Gauss-Newton steps per keyframe closure
    # A heading reference from the home's walls (goat_core.localisation.wall_axes): the wall direction modulo 90
    # deg of the episode's first scan whose walls are coherent (and many: wall_axis_set_min_points), turned by its
    # frame's heading, is the home's axis in the map frame (the earliest such frame: the map frame is the start's,
    # and the heading error only grows from there; a look-around's closure can come late or start from a heading
    # already a few degrees off). Each later scan's own wall direction implies the heading modulo 90 deg, and the
    # pose turns by this fraction of the difference (0: off, before stop 47; 0.5 did worse than 0.3 on replays,
    # docs/realism.md "Stop 47"). Only scans whose walls are coherent (wall_axis_min_coherence) and within
    # wall_axis_max_residual_rad of the pose's heading count: a larger difference is clutter or a wall off the
    # home's axes, not a heading error odometry makes. A home not built on two perpendicular axes gives no
    # coherent scan and no correction.
    wall_axis_gain: float = 0.3
    # The scan that sets the home's axis needs this many points with a full neighbourhood (40: any scan wall_axis
    # measures). A scan of a few dozen points can be coherent and still off the home's axes: replaying 11000-10
    # (stop 47), a 43-point scan at frame 3 set the axis 10 deg off, and the walls then held the heading there for
    # the whole episode (end of subtask 0.533 m; 0.292 at 100 points, 0.331 without the walls). But a later scan
    # carries the heading error made since the start: at 100 points 5000-19 went 0.047 -> 0.283 m, and the
    # fourteen recordings' median 0.084 -> 0.092 (docs/realism.md, "Stop 47").
    wall_axis_set_min_points: int = 40
    # The axis is set only once two such scans agree on it within this (the earlier of the two sets it; a scan
    # that disagrees with the last candidate becomes the candidate). One scan of clutter cannot set it then, and the
    # earliest agreeing scan still carries little of the heading error. 0: the first scan sets it alone.
    wall_axis_agree_rad: float = 0.0
    wall_axis_min_coherence: float = 0.5
    wall_axis_max_residual_rad: float = math.radians(4.0)
    filter: DepthFilterConfig = DepthFilterConfig()

    def __post_init__(self) -> None:
        for name in ("max_range_m", "voxel_m", "max_pair_m", "final_pair_m", "point_sigma_m", "cauchy_scale",
                     "prior_sigma_xy_m", "prior_sigma_yaw_rad", "max_correction_m", "max_correction_rad",
                     "max_correction_sigmas", "spin_max_shift_m", "turn_min_rad", "closure_window_rad",
                     "closure_step_rad", "closure_match_m", "closure_base_rad",
                     "closure_scale_error", "keyframe_radius_m", "keyframe_window_rad", "keyframe_max_shift_m",
                     "keyframe_max_turn_rad", "keyframe_search_m", "keyframe_search_step_rad",
                     "graph_registered_gain", "graph_closure_sigma_xy_m", "graph_closure_sigma_yaw_rad"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ConfigError(f"LocaliserConfig.{name} must be a positive number, got {value!r}")
        if not 0.0 <= self.min_height_m < self.max_height_m:
            raise ConfigError(f"LocaliserConfig needs 0 <= min_height_m < max_height_m, got {self.min_height_m!r} "
                              f"and {self.max_height_m!r}")
        if self.keyframe_min_peak_gain < 0.0 or self.graph_iterations < 1:
            raise ConfigError(f"LocaliserConfig needs keyframe_min_peak_gain >= 0 and graph_iterations >= 1, got "
                              f"{self.keyframe_min_peak_gain!r} and {self.graph_iterations!r}")
        if self.keyframe_min_age < 1 or self.keyframe_cooldown < 0:
            raise ConfigError(f"LocaliserConfig needs keyframe_min_age >= 1 and keyframe_cooldown >= 0, got "
                              f"{self.keyframe_min_age!r} and {self.keyframe_cooldown!r}")
        if not (math.isfinite(self.closure_new_view_margin_rad) and self.closure_new_view_margin_rad >= 0.0):
            raise ConfigError(f"LocaliserConfig.closure_new_view_margin_rad must be >= 0, got "
                              f"{self.closure_new_view_margin_rad!r}")
        for name in ("turn_new_view_weight", "closure_new_view_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"LocaliserConfig.{name} must be in [0, 1], got {getattr(self, name)!r}")
        self._check_wall_axis()
        if self.register_turns_closures < 0:
            raise ConfigError(f"LocaliserConfig.register_turns_closures must be >= 0, got "
                              f"{self.register_turns_closures!r}")
        if self.stride_px < 1 or self.max_iterations < 1 or self.line_neighbours < 2:
            raise ConfigError(f"LocaliserConfig stride_px, max_iterations >= 1 and line_neighbours >= 2, got "
                              f"{self.stride_px!r}, {self.max_iterations!r}, {self.line_neighbours!r}")

    def _check_wall_axis(self) -> None:
        if not 0.0 <= self.wall_axis_gain <= 1.0 or not 0.0 <= self.wall_axis_min_coherence <= 1.0:
            raise ConfigError(f"LocaliserConfig needs wall_axis_gain and wall_axis_min_coherence in [0, 1], got "
                              f"{self.wall_axis_gain!r} and {self.wall_axis_min_coherence!r}")
        if not (math.isfinite(self.wall_axis_max_residual_rad) and 0.0 < self.wall_axis_max_residual_rad
                < 0.25 * math.pi):
            raise ConfigError(f"LocaliserConfig.wall_axis_max_residual_rad must be in (0, pi/4), got "
                              f"{self.wall_axis_max_residual_rad!r}")
        if not (math.isfinite(self.wall_axis_agree_rad) and 0.0 <= self.wall_axis_agree_rad < math.pi / 4.0):
            raise ConfigError(f"LocaliserConfig.wall_axis_agree_rad must be in [0, pi/4), got "
                              f"{self.wall_axis_agree_rad!r}")
        if self.wall_axis_set_min_points < 1:
            raise ConfigError(f"LocaliserConfig.wall_axis_set_min_points must be >= 1, got "
                              f"{self.wall_axis_set_min_points!r}")


@dataclass(frozen=True)
class RegistrationResult:
    """What one frame's registration did."""

    accepted: bool
    pairs: int
    scan_points: int
    correction: Pose2D  # the change of the map pose made by this frame (map frame, at the predicted pose)


@dataclass
class _Frame:
    """A frame that joined the map: its scan (base frame), its pose, and the odometry's turn since the spin began."""

    scan: np.ndarray
    pose: Pose2D
    spin_turn_rad: float


class Localiser:
    """Holds the ``map -> odom`` correction and the 2D point map it registers against."""

    def __init__(self, config: LocaliserConfig = LocaliserConfig(), register: bool = True,
                 filter_depth_images: bool = True) -> None:
        self.config = config
        self.register = register
        self.filter_depth_images = filter_depth_images
        self.reset()

    def reset(self) -> None:
        """A new episode: map and odom coincide, and the map is empty."""
        self.map_to_odom = Pose2D(0.0, 0.0, 0.0)
        self._map_xy = np.zeros((0, 2))
        self._map_keys: set[int] = set()
        self._tree: Optional[cKDTree] = None
        self._last_odom: Optional[Pose2D] = None
        self._last_pose: Optional[Pose2D] = None
        self._unregistered_var_yaw = 0.0  # variance of the odometry's heading error since the last accepted frame
        self._scale_xy = 0.0
        self._scale_yaw = 0.0
        self._sum_xy = [0.0, 0.0]  # sum of d^2, sum of d * (registered - d)
        self._sum_yaw = [0.0, 0.0]
        self._frames: list[_Frame] = []
        self._spin_start = 0  # index of the current spin's first frame
        self._spin_turn_rad = 0.0  # the odometry's signed turn since then
        self._spin_closed_rad = 0.0  # the spin turn at its last loop closure
        self.closures = 0  # loop closures of spins made this episode (they learn the turn scale)
        self._half_fov: tuple[float, float] = (math.pi, math.pi)  # the camera's, left and right (_half_fov_rad)
        self.keyframe_closures = 0  # loop closures at a revisited view (see keyframe_closure)
        self._last_keyframe_closure = -(10 ** 9)  # the frame index of the last try
        self.keyframe_reference = -1  # the frame the last try registered against
        self.keyframe_predicted = Pose2D(0.0, 0.0, 0.0)  # the pose the last keyframe closure corrected
        # its search's clearance in heading and position, overlap, the two scans' points, the ICP's overlap (replay)
        self.keyframe_diagnostics: tuple[float, ...] = ()
        self.keyframe_peak_gain = 0.0  # the last try's correlative peak over the prediction (keyframe_min_peak_gain)
        # The pose graph over the frames (node k = self._frames[k]) and frame k's sequential edge's index in it.
        self._graph = PoseGraph()
        self._sequential_edge: dict[int, int] = {}
        self._pending_edge: Optional[tuple[Pose2D, np.ndarray]] = None  # the frame to come's sequential edge
        self.last: Optional[RegistrationResult] = None
        self.wall_axis_rad: Optional[float] = None  # the home's wall axis in the map frame (wall_axis_gain)
        self.wall_axis_corrections = 0  # frames whose heading the walls corrected this episode
        self._axis_candidate_rad: Optional[float] = None  # the last scan's axis that none has agreed with yet

    @property
    def map_points_xy_m(self) -> np.ndarray:
        return self._map_xy

    def localise(self, obs: Observation) -> Observation:
        """The observation as the agent should see it: filtered depth and the corrected (map-frame) pose."""
        obs = replace(obs, sensing_exact=False)
        if self.filter_depth_images:
            obs = replace(obs, depth_m=filter_depth(obs.depth_m, self.config.filter))
        if not self.register:
            return obs
        scan = self._scan(obs)
        self._half_fov = self._half_fov_rad(obs)
        self._pending_edge = None
        if self._last_odom is None or self._last_pose is None:
            pose = compose(self.map_to_odom, obs.pose)
        else:
            moved = compose(inverse(self._last_odom), obs.pose)
            self._track_spin(moved)
            self._unregistered_var_yaw += self._sigma_yaw(moved) ** 2
            predicted = compose(self._last_pose, self._calibrated(moved))
            pose = predicted
            turning = (math.hypot(moved.x_m, moved.y_m) <= self.config.spin_max_shift_m
                       and abs(moved.yaw_rad) > self.config.turn_min_rad)
            self.last = None
            scale_settled = self.closures >= self.config.register_turns_closures
            register = self.config.register_turns or not turning or not scale_settled
            if scan.shape[0] > 0 and self._tree is not None and register:
                seen, weights = self._seen_before(scan, obs, moved) if turning else (scan, None)
                pose, self.last = self._register(seen, predicted, moved, weights)
                if self.last.accepted and (not turning or self.config.learn_turn_from_frames):
                    # a turn's few centimetres of drift, registered as weakly as its heading, teach no scale
                    pose = self._learn_from_step(scan, predicted, moved, pose, turning)
            if self.config.keyframe_closure and self.config.keyframe_pose_graph:  # only that closure reads the graph
                self._pending_edge = (compose(inverse(self._last_pose), pose), self._motion_information(
                    moved, self.last is not None and self.last.accepted))
        closed = self._close_spin(scan, pose)
        rebuild = closed is not None
        if closed is None:
            closed = self._close_keyframe(scan, pose)
            rebuild = closed is not None and (self.config.keyframe_replace_frames or self.config.keyframe_pose_graph)
        if closed is not None:
            pose = closed
        pose = self._square_up(scan, pose)
        self._last_odom, self._last_pose = obs.pose, pose
        self.map_to_odom = compose(pose, inverse(obs.pose))
        self._frames.append(_Frame(scan, pose, self._spin_turn_rad))
        if self._pending_edge is not None:
            self._add_sequential_edge(len(self._frames) - 1, *self._pending_edge)
        if rebuild:
            self._rebuild_map()
        else:
            self._add(scan, pose)
        return replace(obs, pose=pose)

    def _square_up(self, scan: np.ndarray, pose: Pose2D) -> Pose2D:
        """``pose`` turned by wall_axis_gain of the heading difference its scan's walls imply (see wall_axis_gain);
        unchanged when they are not coherent or imply a heading too far off, and for the episode's first coherent
        scan of wall_axis_set_min_points, which sets the home's axis."""
        cfg = self.config
        if cfg.wall_axis_gain <= 0.0:
            return pose
        axis = wall_axis(scan)
        if axis is None or axis.coherence < cfg.wall_axis_min_coherence:
            return pose
        if self.wall_axis_rad is None:
            if axis.points >= cfg.wall_axis_set_min_points:
                self._propose_wall_axis(quarter_wrap_rad(pose.yaw_rad + axis.angle_rad))
            return pose
        residual = quarter_wrap_rad(self.wall_axis_rad - pose.yaw_rad - axis.angle_rad)
        if abs(residual) > cfg.wall_axis_max_residual_rad:
            return pose
        self.wall_axis_corrections += 1
        return replace(pose, yaw_rad=wrap_angle_rad(pose.yaw_rad + cfg.wall_axis_gain * residual))

    def _propose_wall_axis(self, axis_rad: float) -> None:
        """A coherent scan's axis in the map frame: it sets the home's axis alone (wall_axis_agree_rad 0), or once
        the next such scan agrees with it."""
        agree_rad = self.config.wall_axis_agree_rad
        if agree_rad <= 0.0:
            self.wall_axis_rad = axis_rad
        elif (self._axis_candidate_rad is not None
              and abs(quarter_wrap_rad(axis_rad - self._axis_candidate_rad)) <= agree_rad):
            self.wall_axis_rad = self._axis_candidate_rad
        else:
            self._axis_candidate_rad = axis_rad

    @property
    def scale_estimate(self) -> tuple[float, float]:
        """The odometry's learnt (translation, rotation) scale errors: true motion ~ odometry * (1 + e)."""
        return self._scale_xy, self._scale_yaw

    def _sigma_yaw(self, moved: Pose2D) -> float:
        """The odometry's heading error over the motion ``moved`` (one sigma)."""
        return self.config.prior_sigma_yaw_rad + self.config.prior_per_rad * abs(moved.yaw_rad)

    def _calibrated(self, moved: Pose2D) -> Pose2D:
        k_xy, k_yaw = 1.0 + self._scale_xy, 1.0 + self._scale_yaw
        return Pose2D(moved.x_m * k_xy, moved.y_m * k_xy, moved.yaw_rad * k_yaw)

    def _learn_scale(self, moved: Pose2D, registered: Pose2D) -> None:
        """Least-squares scale errors from the registered motions: wheel odometry's errors are mostly a per-run
        scale (a wheel diameter, the wheel separation), so learning them keeps the prediction close."""
        d = math.hypot(moved.x_m, moved.y_m)
        if d > 1e-6:
            along = (registered.x_m * moved.x_m + registered.y_m * moved.y_m) / d
            self._sum_xy[0] += d * d
            self._sum_xy[1] += d * (along - d)
        if self.config.learn_turn_from_frames and abs(moved.yaw_rad) > 1e-6:
            self._learn_turn(moved.yaw_rad, registered.yaw_rad)
        self._update_scales()

    def _learn_turn(self, odom_turn_rad: float, registered_turn_rad: float) -> None:
        self._sum_yaw[0] += odom_turn_rad ** 2
        self._sum_yaw[1] += odom_turn_rad * (registered_turn_rad - odom_turn_rad)

    def _update_scales(self) -> None:
        cfg = self.config
        self._scale_xy = float(np.clip(self._sum_xy[1] / (self._sum_xy[0] + cfg.scale_prior_m2),
                                       -cfg.max_scale_error, cfg.max_scale_error))
        self._scale_yaw = float(np.clip(self._sum_yaw[1] / (self._sum_yaw[0] + cfg.scale_prior_rad2),
                                        -cfg.max_scale_error, cfg.max_scale_error))

    # ---------------------------------------------------------------------------------- loop closure of spins

    def _track_spin(self, moved: Pose2D) -> None:
        """A turn on the spot continues the spin; a translation starts a new one (at the frame to come)."""
        if math.hypot(moved.x_m, moved.y_m) > self.config.spin_max_shift_m:
            self._spin_start = len(self._frames)
            self._spin_turn_rad = 0.0
            self._spin_closed_rad = 0.0
        else:
            self._spin_turn_rad += moved.yaw_rad

    def _close_spin(self, scan: np.ndarray, pose: Pose2D) -> Optional[Pose2D]:
        """After a full circle on the spot: the pose registered against the spin's frame that looked the same
        way, with the spin's frames re-placed and the odometry's rotation scale learnt; None if no closure."""
        cfg = self.config
        if not (cfg.closure and self.register) or scan.shape[0] < cfg.closure_min_points:
            return None
        turn = self._spin_turn_rad
        if abs(turn - self._spin_closed_rad) < 2.0 * math.pi - cfg.closure_window_rad:
            return None
        spin = self._frames[self._spin_start:]
        candidates = [(k, f) for k, f in enumerate(spin)
                      if abs(abs(turn - f.spin_turn_rad) - 2.0 * math.pi) <= cfg.closure_window_rad
                      and f.scan.shape[0] >= cfg.closure_min_points]
        if not candidates:
            return None
        k, ref = max(candidates, key=lambda kf: kf[1].scan.shape[0])
        target = _transform(ref.scan, ref.pose)
        tree = cKDTree(target)
        offset_rad, overlapping = self._spin_search(scan, pose, ref, tree)
        # the fraction of the scan's points on the reference, counted against the smaller scan if so configured
        of = min(scan.shape[0], ref.scan.shape[0]) if cfg.closure_overlap_of_smaller else scan.shape[0]
        if overlapping < cfg.closure_min_overlap * of:
            return None
        start = Pose2D(pose.x_m, pose.y_m, wrap_angle_rad(pose.yaw_rad + offset_rad))
        sigma_yaw = cfg.closure_step_rad * 2.0
        prior = np.diag([cfg.prior_sigma_xy_m ** -2, cfg.prior_sigma_xy_m ** -2, sigma_yaw ** -2])
        rel_rad = wrap_angle_rad(start.yaw_rad - ref.pose.yaw_rad)
        seen, weights = _new_view(scan, self._half_fov, rel_rad, 0.0, cfg.closure_new_view_weight, cfg.min_pairs)
        x, pairs = self._icp(seen, start, prior, tree, target, weights)
        if pairs < cfg.closure_min_overlap * of:
            return None
        closed = Pose2D(float(x[0]), float(x[1]), wrap_angle_rad(float(x[2])))
        span = turn - ref.spin_turn_rad
        if self.closures > 0 and (abs(wrap_angle_rad(closed.yaw_rad - pose.yaw_rad))
                                  > cfg.closure_base_rad + cfg.closure_scale_error * abs(span)):
            return None
        # The turn from the reference to now, as registered: the odometry's turn plus the pose's difference.
        registered = span + wrap_angle_rad(closed.yaw_rad - ref.pose.yaw_rad - span)
        # Re-place the spin's frames after the reference: their headings by the odometry's turn scaled to the
        # registered one (a scale error grows with the turn; the weak registrations of a young map are dropped),
        # their positions by a share of the correction.
        dx, dy = closed.x_m - pose.x_m, closed.y_m - pose.y_m
        for f in spin[k + 1:]:
            share = (f.spin_turn_rad - ref.spin_turn_rad) / span
            f.pose = Pose2D(f.pose.x_m + share * dx, f.pose.y_m + share * dy,
                            wrap_angle_rad(ref.pose.yaw_rad + share * registered))
        if cfg.closure_from_spin_start and k > 0:
            # The reference's own heading carries the odometry's turn error since the spin began: every heading of
            # the spin, the reference's and the closed one's too, from the spin's first frame by the turn rate the
            # closure measured (true turn per odometry turn).
            head, rate = spin[0], registered / span
            for f in spin[1:]:
                f.pose = replace(f.pose, yaw_rad=wrap_angle_rad(head.pose.yaw_rad
                                                                + rate * (f.spin_turn_rad - head.spin_turn_rad)))
            closed = replace(closed, yaw_rad=wrap_angle_rad(head.pose.yaw_rad + rate * (turn - head.spin_turn_rad)))
        self._learn_turn(span, registered)
        self._update_scales()
        if cfg.keyframe_closure and cfg.keyframe_pose_graph:
            self._spin_closed_in_graph(self._spin_start + k, closed)
        self._spin_closed_rad = turn
        self._unregistered_var_yaw = 0.0
        self.closures += 1
        return closed

    def _spin_search(self, scan: np.ndarray, pose: Pose2D, ref: _Frame, tree: cKDTree) -> tuple[float, float]:
        """A spin closure's correlative search over yaw about the current position: the best offset from the
        pose's heading and how many of the scan's points lie on the reference (``tree``) there."""
        cfg = self.config
        searched = scan
        if cfg.closure_new_view_weight < 1.0:
            # the bearings both views hold at the predicted heading, less the margin at both ends (so that the
            # search's plateau of tied overlaps is centred on the prediction)
            rel_rad = wrap_angle_rad(pose.yaw_rad - ref.pose.yaw_rad)
            left_rad, right_rad = self._half_fov
            lo = max(-right_rad, -right_rad - rel_rad) + cfg.closure_new_view_margin_rad
            hi = min(left_rad, left_rad - rel_rad) - cfg.closure_new_view_margin_rad
            bearing = np.arctan2(scan[:, 1], scan[:, 0])
            both = scan[(bearing >= lo) & (bearing <= hi)]
            searched = both if both.shape[0] >= cfg.min_pairs else scan
        offsets = np.arange(-cfg.closure_window_rad, cfg.closure_window_rad + 1e-9, cfg.closure_step_rad)
        scores = np.array([_overlap(tree, _transform(searched, Pose2D(pose.x_m, pose.y_m, pose.yaw_rad + float(o))),
                                    cfg.closure_match_m) for o in offsets])
        best = int(np.argmax(scores))
        if cfg.closure_peak_middle:
            tied = np.flatnonzero(scores >= scores[best])
            best = int(tied[len(tied) // 2])
        return float(offsets[best]), float(scores[best] * searched.shape[0])

    def _close_keyframe(self, scan: np.ndarray, pose: Pose2D) -> Optional[Pose2D]:
        """At a view an older frame saw from about the same pose: the pose registered against that frame's scan,
        with the frames since then re-placed by their share of the correction; None if no closure."""
        cfg = self.config
        n = len(self._frames)
        if (not (cfg.keyframe_closure and cfg.closure and self.register) or scan.shape[0] < cfg.keyframe_min_points
                or n - self._last_keyframe_closure < cfg.keyframe_cooldown):
            return None
        ref_index = -1
        for i in range(n - cfg.keyframe_min_age):
            f = self._frames[i]
            if (f.scan.shape[0] >= cfg.keyframe_min_points
                    and math.hypot(f.pose.x_m - pose.x_m, f.pose.y_m - pose.y_m) <= cfg.keyframe_radius_m
                    and abs(wrap_angle_rad(f.pose.yaw_rad - pose.yaw_rad)) <= cfg.keyframe_window_rad):
                ref_index = i  # the oldest such frame: the least drift gathered
                break
        if ref_index < 0:
            return None
        ref = self._frames[ref_index]
        self.keyframe_reference = ref_index
        self._last_keyframe_closure = n - cfg.keyframe_cooldown // 2  # tried: not again at once, closed or not
        target = _transform(ref.scan, ref.pose)
        tree = cKDTree(target)
        # Point-to-line ICP alone does not find a few degrees of heading between two scans of one view (it settles
        # where it starts): a correlative search over heading and position first, then ICP from its best.
        search = _correlative_search(scan, pose, target, cfg.closure_match_m, cfg.keyframe_search_m,
                                     cfg.keyframe_window_rad, cfg.keyframe_search_step_rad)
        start, self.keyframe_peak_gain = search.pose, search.gain
        if self.keyframe_peak_gain < cfg.keyframe_min_peak_gain:
            return None
        sigma_yaw = cfg.keyframe_search_step_rad
        prior = np.diag([cfg.closure_match_m ** -2, cfg.closure_match_m ** -2, sigma_yaw ** -2])
        x, _ = self._icp(scan, start, prior, tree, target)
        closed = Pose2D(float(x[0]), float(x[1]), wrap_angle_rad(float(x[2])))
        overlap = _overlap(tree, _transform(scan, closed), cfg.closure_match_m) * scan.shape[0]
        if (overlap < cfg.closure_min_overlap * min(scan.shape[0], ref.scan.shape[0])
                or math.hypot(closed.x_m - pose.x_m, closed.y_m - pose.y_m) > cfg.keyframe_max_shift_m
                or abs(wrap_angle_rad(closed.yaw_rad - pose.yaw_rad)) > cfg.keyframe_max_turn_rad):
            return None
        if (abs(wrap_angle_rad(closed.yaw_rad - pose.yaw_rad)) < cfg.keyframe_min_turn_rad
                and math.hypot(closed.x_m - pose.x_m, closed.y_m - pose.y_m) < cfg.keyframe_min_shift_m):
            return None
        self._unregistered_var_yaw = 0.0
        self._last_keyframe_closure = n
        self.keyframe_closures += 1
        self.keyframe_predicted = pose
        self.keyframe_diagnostics = (search.clear_yaw, search.clear_xy, search.overlap, float(ref.scan.shape[0]),
                                     float(scan.shape[0]),
                                     overlap / min(scan.shape[0], ref.scan.shape[0]))
        if cfg.keyframe_pose_graph:
            return self._solve_graph(ref_index, pose, closed)
        # The correction, a rigid motion of the map frame, spread over the frames since the reference: frame i
        # takes the share (i - ref) / (n - ref) of it (the drift grew along the way).
        c = compose(closed, inverse(pose))
        for i in range(ref_index + 1, n if cfg.keyframe_replace_frames else 0):
            share = (i - ref_index) / (n - ref_index)
            f = self._frames[i]
            f.pose = compose(Pose2D(share * c.x_m, share * c.y_m, share * c.yaw_rad), f.pose)
        return closed

    def _motion_information(self, moved: Pose2D, registered: bool) -> np.ndarray:
        """The information of a sequential edge: the odometry's error model over ``moved`` (the registration's
        prior), ``graph_registered_gain`` times stiffer where the frame's registration was accepted."""
        cfg = self.config
        sigma_xy = cfg.prior_sigma_xy_m + cfg.prior_per_m * math.hypot(moved.x_m, moved.y_m)
        info = np.diag([sigma_xy ** -2, sigma_xy ** -2, self._sigma_yaw(moved) ** -2])
        return info * cfg.graph_registered_gain if registered else info

    def _add_sequential_edge(self, n: int, motion: Pose2D, info: np.ndarray) -> None:
        """Frame n's edge from frame n - 1 (its motion as the localiser placed it) joins the graph."""
        self._pending_edge = None
        self._sequential_edge[n] = len(self._graph)
        self._graph.add_edge(n - 1, n, _vec(motion), info)

    def _closure_information(self) -> np.ndarray:
        cfg = self.config
        return np.diag([cfg.graph_closure_sigma_xy_m ** -2, cfg.graph_closure_sigma_xy_m ** -2,
                        cfg.graph_closure_sigma_yaw_rad ** -2])

    def _spin_closed_in_graph(self, ref_index: int, closed: Pose2D) -> None:
        """After a spin's closure re-placed its frames: the spin's sequential edges take the re-placed motions (the
        closure's registered turn rate is the better measurement of them), the frame to come's too, and the
        closure joins the graph as an edge from the reference frame to the frame to come."""
        n = len(self._frames)
        for m in range(max(self._spin_start, 1), n):
            if m in self._sequential_edge:
                self._graph.set_measurement(self._sequential_edge[m],
                                            _vec(compose(inverse(self._frames[m - 1].pose), self._frames[m].pose)))
        if self._pending_edge is not None and n > 0:
            self._pending_edge = (compose(inverse(self._frames[n - 1].pose), closed), self._pending_edge[1])
        self._graph.add_edge(ref_index, n, _vec(compose(inverse(self._frames[ref_index].pose), closed)),
                             self._closure_information())

    def _solve_graph(self, ref_index: int, pose: Pose2D, closed: Pose2D) -> Pose2D:
        """A keyframe closure through the pose graph: the frames and the pose to come (node n, predicted at
        ``pose``, registered at ``closed`` against frame ``ref_index``) placed by Gauss-Newton; the frames are
        moved there and the new pose returned. Both new edges join the graph for the rest of the episode."""
        n = len(self._frames)
        if self._pending_edge is None or n == 0:
            return closed
        self._add_sequential_edge(n, *self._pending_edge)
        self._graph.add_edge(ref_index, n, _vec(compose(inverse(self._frames[ref_index].pose), closed)),
                             self._closure_information())
        poses = np.array([_vec(f.pose) for f in self._frames] + [_vec(pose)])
        solved = self._graph.optimise(poses, fixed=0, iterations=self.config.graph_iterations)
        for f, p in zip(self._frames, solved[:n], strict=True):
            f.pose = Pose2D(float(p[0]), float(p[1]), wrap_angle_rad(float(p[2])))
        return Pose2D(float(solved[n, 0]), float(solved[n, 1]), wrap_angle_rad(float(solved[n, 2])))

    def _rebuild_map(self) -> None:
        self._map_xy = np.zeros((0, 2))
        self._map_keys = set()
        for f in self._frames:
            self._add(f.scan, f.pose, rebuild_tree=False)
        self._tree = cKDTree(self._map_xy) if self._map_xy.shape[0] else None

    # ---------------------------------------------------------------------------------------------- internals

    def _scan(self, obs: Observation) -> np.ndarray:
        """(N, 2) scan points in the base frame, one per voxel."""
        cfg = self.config
        pts = depth_to_episode_points(obs.depth_m, obs.intrinsics, Pose2D(0.0, 0.0, 0.0), obs.camera_height_m,
                                      obs.camera_tilt_rad, cfg.stride_px, cfg.max_range_m)
        xyz = pts.points_xyz_m
        keep = (xyz[:, 2] >= cfg.min_height_m) & (xyz[:, 2] <= cfg.max_height_m)
        xy = xyz[keep, :2]
        if xy.shape[0] == 0:
            return xy
        _, first = np.unique(np.floor(xy / cfg.voxel_m).astype(np.int64), axis=0, return_index=True)
        return np.asarray(xy[np.sort(first)])

    def _add(self, scan_base: np.ndarray, pose: Pose2D, rebuild_tree: bool = True) -> None:
        if scan_base.shape[0] == 0:
            return
        xy = _transform(scan_base, pose)
        cells = np.floor(xy / self.config.voxel_m).astype(np.int64)
        keys = (cells[:, 0] << 32) ^ (cells[:, 1] & 0xFFFFFFFF)
        new = np.array([int(k) not in self._map_keys for k in keys], dtype=bool)
        if not new.any():
            return
        self._map_keys.update(int(k) for k in keys[new])
        self._map_xy = np.vstack([self._map_xy, xy[new]])
        if rebuild_tree:
            self._tree = cKDTree(self._map_xy)

    def _seen_before(self, scan: np.ndarray, obs: Observation,
                     moved: Pose2D) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """A turn on the spot's scan points to register and their weights (None: all 1): the points at bearings
        the last frame did not see (turn_new_view_margin_rad) left out, or weighed by turn_new_view_weight; the
        whole scan at weight 1 when off or when too few points of the old view are left to register."""
        cfg = self.config
        if cfg.turn_new_view_margin_rad < 0.0:
            return scan, None
        return _new_view(scan, self._half_fov_rad(obs), moved.yaw_rad, cfg.turn_new_view_margin_rad,
                         cfg.turn_new_view_weight, cfg.min_pairs)

    @staticmethod
    def _half_fov_rad(obs: Observation) -> tuple[float, float]:
        """The camera's half field of view to the left (image left = positive bearing) and to the right."""
        k = obs.intrinsics
        return math.atan2(k.cx, k.fx), math.atan2(k.width - k.cx, k.fx)

    def _learn_from_step(self, scan: np.ndarray, predicted: Pose2D, moved: Pose2D, pose: Pose2D,
                         turning: bool) -> Pose2D:
        """Learn the scale errors from an accepted registration (the scan within the map's reach if so configured,
        range_edge_margin_m); the pose, from that registration where range_edge_pose asks for it."""
        assert self._last_pose is not None
        step = self._step_within_reach(scan, predicted, moved)
        self._learn_scale(moved, compose(inverse(self._last_pose), pose) if step is None else step)
        if step is not None and self.config.range_edge_pose and not turning:
            return compose(self._last_pose, step)
        return pose

    def _step_within_reach(self, scan: np.ndarray, predicted: Pose2D, moved: Pose2D) -> Optional[Pose2D]:
        """The motion since the last frame registered with the scan points the map can hold (see
        ``range_edge_margin_m``), for learning the translation scale; None when off or too few points pair."""
        cfg = self.config
        if cfg.range_edge_margin_m < 0.0 or self._last_pose is None or self._tree is None:
            return None
        reach_m = cfg.max_range_m - math.hypot(moved.x_m, moved.y_m) - cfg.range_edge_margin_m
        near = scan[np.hypot(scan[:, 0], scan[:, 1]) <= reach_m]
        if near.shape[0] < cfg.min_pairs:
            return None
        sigma_xy = cfg.prior_sigma_xy_m + cfg.prior_per_m * math.hypot(moved.x_m, moved.y_m)
        prior = np.diag([sigma_xy ** -2, sigma_xy ** -2, self._sigma_yaw(moved) ** -2])
        x, pairs = self._icp(near, predicted, prior, self._tree, self._map_xy)
        if pairs < max(cfg.min_pairs, cfg.min_paired_fraction * near.shape[0]):
            return None
        return compose(inverse(self._last_pose), Pose2D(float(x[0]), float(x[1]), wrap_angle_rad(float(x[2]))))

    def _register(self, scan: np.ndarray, predicted: Pose2D, moved: Pose2D,
                  weights: Optional[np.ndarray] = None) -> tuple[Pose2D, RegistrationResult]:
        """Point-to-line ICP with a prior on ``predicted`` (``weights``: a factor per scan point on its pair's
        information, None: 1); the predicted pose when refused."""
        cfg = self.config
        assert self._tree is not None
        sigma_xy = cfg.prior_sigma_xy_m + cfg.prior_per_m * math.hypot(moved.x_m, moved.y_m)
        sigma_yaw = self._sigma_yaw(moved)
        prior = np.diag([sigma_xy ** -2, sigma_xy ** -2, sigma_yaw ** -2])
        x0 = np.array([predicted.x_m, predicted.y_m, predicted.yaw_rad])
        x, pairs = self._icp(scan, predicted, prior, self._tree, self._map_xy, weights)
        corrected = Pose2D(float(x[0]), float(x[1]), wrap_angle_rad(float(x[2])))
        shift_m = math.hypot(x[0] - x0[0], x[1] - x0[1])
        turn_rad = abs(wrap_angle_rad(float(x[2] - x0[2])))
        accepted = (pairs >= cfg.min_pairs and pairs >= cfg.min_paired_fraction * scan.shape[0]
                    and shift_m <= cfg.max_correction_m and turn_rad <= cfg.max_correction_rad
                    and turn_rad <= cfg.max_correction_sigmas * math.sqrt(self._unregistered_var_yaw))
        if accepted:
            self._unregistered_var_yaw = 0.0
        pose = corrected if accepted else predicted
        result = RegistrationResult(accepted, pairs, int(scan.shape[0]), compose(inverse(predicted), pose))
        return pose, result

    def _icp(self, scan: np.ndarray, start: Pose2D, prior: np.ndarray, tree: cKDTree,
             points: np.ndarray, weights: Optional[np.ndarray] = None) -> tuple[np.ndarray, int]:
        """Generalised ICP of ``scan`` against ``points`` (indexed by ``tree``) from ``start``, with the Gaussian
        prior of information ``prior`` on ``start`` and a factor per scan point on its pair's information
        (``weights``, None: 1): the (x, y, yaw) reached and the last iteration's pairs."""
        cfg = self.config
        x0 = np.array([start.x_m, start.y_m, start.yaw_rad])
        x = x0.copy()
        pairs = 0
        for it in range(cfg.max_iterations):
            gate = max(cfg.final_pair_m, cfg.max_pair_m * (0.5 ** it))
            world = _transform(scan, Pose2D(*x))
            dist, idx = tree.query(world, k=1, distance_upper_bound=gate)
            paired = np.isfinite(dist)
            pairs = int(paired.sum())
            if pairs < cfg.min_pairs:
                break
            info = self._information(idx[paired], tree, points)
            p, q = world[paired], points[idx[paired]]
            e = p - q
            # d(world)/d(yaw) = (-(py - ty), px - tx): rotation about the robot's position.
            rel = p - x[:2]
            jac = np.zeros((pairs, 2, 3))
            jac[:, 0, 0] = 1.0
            jac[:, 1, 1] = 1.0
            jac[:, 0, 2] = -rel[:, 1]
            jac[:, 1, 2] = rel[:, 0]
            # Cauchy weights on the Mahalanobis distance: a pair a few sigma off (a new surface) hardly pulls.
            m2 = np.einsum("ni,nij,nj->n", e, info, e)
            robust = 1.0 / (1.0 + m2 / cfg.cauchy_scale ** 2)
            if weights is not None:
                robust = robust * weights[paired]
            wj = np.einsum("nij,njk->nik", info, jac) * robust[:, None, None]
            h = np.einsum("nji,njk->ik", jac, wj) + prior
            g = np.einsum("nji,nj->i", wj, e) + prior @ (x - x0)
            step = -np.linalg.solve(h, g)
            x = x + step
            if np.abs(step[:2]).max() < 1e-4 and abs(step[2]) < 1e-5 and gate <= cfg.final_pair_m:
                break
        return x, pairs

    def _information(self, idx: np.ndarray, tree: cKDTree, points: np.ndarray) -> np.ndarray:
        """(N, 2, 2) information matrices of pairs on the map points ``idx``: the inverse of their neighbourhood's
        spread plus the point noise (2D generalised ICP, Segal et al. 2009). Along a wall the spread is large and
        the pair hardly constrains; across it only the point noise is left and the pair constrains fully."""
        cfg = self.config
        k = min(cfg.line_neighbours, points.shape[0])
        _, nb = tree.query(points[idx], k=k)
        pts = points[np.asarray(nb).reshape(len(idx), k)]
        centred = pts - pts.mean(axis=1, keepdims=True)
        cov = np.einsum("nki,nkj->nij", centred, centred) / k + np.eye(2) * cfg.point_sigma_m ** 2
        return np.asarray(np.linalg.inv(cov))


class _Search(NamedTuple):
    """A correlative search's best pose and how clear its peak is (fractions of the searched points)."""

    pose: Pose2D
    gain: float  # the peak's hits less the predicted pose's
    clear_yaw: float  # less the best 2 deg or more away in heading
    clear_xy: float  # less the best 10 cm or more away in position, at the peak's heading
    overlap: float  # the peak's hits


def _correlative_search(scan: np.ndarray, pose: Pose2D, target: np.ndarray, within_m: float, search_m: float,
                        window_rad: float, step_rad: float, max_points: int = 400) -> _Search:
    """The pose within +- ``search_m`` (x, y) and +- ``window_rad`` of ``pose`` that puts the most points of ``scan``
    (base frame) within ``within_m`` of ``target`` (map frame): an exhaustive search on a grid of within_m / 2;
    and its peak's gain over ``pose`` itself (the points it puts on the target less those ``pose`` puts there, a
    fraction of the searched points)."""
    cell = within_m / 2.0
    lo = target.min(axis=0) - search_m - 2.0 * within_m - 4.0  # the scan reaches max_range_m from the pose
    hi = target.max(axis=0) + search_m + 2.0 * within_m + 4.0
    shape = np.ceil((hi - lo) / cell).astype(np.int64) + 1
    grid = np.zeros(tuple(int(v) for v in shape), dtype=bool)
    idx = np.floor((target - lo) / cell).astype(np.int64)
    grid[idx[:, 0], idx[:, 1]] = True
    r = int(math.ceil(within_m / cell))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    grid = ndimage.binary_dilation(grid, structure=(xx ** 2 + yy ** 2) <= r * r)
    pts = scan[:: max(1, int(math.ceil(scan.shape[0] / max_points)))]
    k = int(round(search_m / cell))
    shifts = np.arange(-k, k + 1)
    gx, gy = np.meshgrid(shifts, shifts, indexing="ij")
    sx, sy = gx.ravel(), gy.ravel()
    at_pose = np.floor((_transform(pts, pose) - lo) / cell).astype(np.int64)
    hits_at_pose = int(grid[np.clip(at_pose[:, 0], 0, grid.shape[0] - 1),
                            np.clip(at_pose[:, 1], 0, grid.shape[1] - 1)].sum())
    best, best_pose = -1, pose
    offsets = np.arange(-window_rad, window_rad + 1e-9, step_rad)
    per_yaw = np.zeros(len(offsets))
    hits_at_best = np.zeros(0)
    for m, o in enumerate(offsets):
        yaw = pose.yaw_rad + float(o)
        base = np.floor((_transform(pts, Pose2D(pose.x_m, pose.y_m, yaw)) - lo) / cell).astype(np.int64)
        ix = np.clip(base[None, :, 0] + sx[:, None], 0, grid.shape[0] - 1)
        iy = np.clip(base[None, :, 1] + sy[:, None], 0, grid.shape[1] - 1)
        hits = grid[ix, iy].sum(axis=1)
        j = int(np.argmax(hits))
        per_yaw[m] = hits[j]
        # prefer the smaller correction among equals: the search runs outward from no correction
        if hits[j] > best or (hits[j] == best and abs(o) < abs(best_pose.yaw_rad - pose.yaw_rad)):
            best = int(hits[j])
            best_pose = Pose2D(pose.x_m + float(sx[j]) * cell, pose.y_m + float(sy[j]) * cell, wrap_angle_rad(yaw))
            hits_at_best, best_j, best_o = hits, j, float(o)
    n_pts = max(1, pts.shape[0])
    # how clear the peak is: its hits less the best 2 deg or more away in heading, and 10 cm or more away in position
    far_yaw = np.abs(offsets - best_o) >= math.radians(2.0) - 1e-9
    sharp_yaw = (best - per_yaw[far_yaw].max()) / n_pts if far_yaw.any() else 1.0
    far_xy = np.hypot(sx - sx[best_j], sy - sy[best_j]) * cell >= 0.1 - 1e-9
    sharp_xy = (best - hits_at_best[far_xy].max()) / n_pts if far_xy.any() else 1.0
    return _Search(best_pose, (best - hits_at_pose) / n_pts, float(sharp_yaw), float(sharp_xy), best / n_pts)


def _new_view(scan: np.ndarray, half_fov_rad: tuple[float, float], turn_rad: float, margin_rad: float,
              weight: float, min_pairs: int) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """The points of ``scan`` (base frame) a view ``turn_rad`` back (to the right for a left turn) saw too, less
    ``margin_rad``, at weight 1 and the others at ``weight`` (0: left out): the scan and its weights (None: all 1).
    The whole scan at weight 1 where fewer than ``min_pairs`` points were seen before or nothing is down-weighted."""
    if weight >= 1.0:
        return scan, None
    half = half_fov_rad[0] if turn_rad > 0.0 else half_fov_rad[1]  # on the turn's leading side
    bearing = np.arctan2(scan[:, 1], scan[:, 0]) * math.copysign(1.0, turn_rad)
    old = bearing <= half - abs(turn_rad) - margin_rad
    if int(old.sum()) < min_pairs:
        return scan, None
    if weight <= 0.0:
        return scan[old], None
    return scan, np.where(old, 1.0, weight)


def _vec(pose: Pose2D) -> tuple[float, float, float]:
    return pose.x_m, pose.y_m, pose.yaw_rad


def _overlap(tree: cKDTree, xy: np.ndarray, within_m: float) -> float:
    """The fraction of the points ``xy`` within ``within_m`` of a point of ``tree``."""
    dist, _ = tree.query(xy, k=1, distance_upper_bound=within_m)
    return float(np.isfinite(dist).mean())


def _transform(xy: np.ndarray, pose: Pose2D) -> np.ndarray:
    c, s = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
    return np.column_stack([pose.x_m + c * xy[:, 0] - s * xy[:, 1], pose.y_m + s * xy[:, 0] + c * xy[:, 1]])
