"""Object tracks over a video: where and when each object was seen, and where it stopped being.

A track is one physical object. It has *places* (where it stood between moves; each a set of back-projected
surface points in the episode frame) and *sightings* (frame, place, share of the image it covered). Association
of a detection to a track:

* backends with persistent keys (ground-truth segmentation): the same key is the same object;
* detectors (per-frame keys): a detection joins the track of its category whose current place is nearest, if its
  box comes within ``same_place_m`` of that place's box; else it starts a track.

A sighting whose box lies farther than ``same_place_m`` from its track's current place starts a new place (the
object was moved) if the object was missed at its place or carried meanwhile, or if it lies farther than
``relocated_m`` (more than any one object's extent); otherwise it is a far part of a large object seen before
from another side. A place is *gone* once the object was expected in view there for ``missing_frames``
frames in a row (its centroid projects into the image, within ``miss_max_depth_m``, and the depth image shows
nothing in front of it) and not seen. Carrying (:meth:`ObjectTracker.pick`, :meth:`ObjectTracker.place`) is
decided by the experience memory from proprioception; while carried a track is neither expected nor associated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from goat_core.errors import ConfigError, InvalidObservationError, require_at_least, require_positive
from goat_core.geometry import episode_to_pixels, pixels_to_episode, voxel_downsample
from goat_core.types import Detection, Observation


@dataclass(frozen=True)
class TrackConfig:
    max_depth_m: float = 5.0  # mask pixels farther away are too coarse to place an object
    pixel_stride_px: int = 2  # back-project every 2nd mask pixel in both directions (all for small masks)
    min_points: int = 3  # detections with fewer valid depth points are not placed
    voxel_m: float = 0.03  # surface points of a place are kept one per voxel of this side
    max_points_per_place: int = 4000
    floor_height_m: float = 0.1  # surface points below this height are floor-high
    # A track with at least this share of its points (at some place) floor-high stands on the floor (furniture).
    # A share, not its lowest percentile: a mesh table seen from above shows its top in thousands of points and
    # the legs that reach the floor in a few dozen (0.5-2 %), while a small object on a receptacle shows none.
    floor_share: float = 0.005
    same_place_m: float = 0.35  # a sighting whose box comes this close to its place's box is at that place
    # ... and one farther is a new place only once the object was missed at its place or carried (a partial view
    # of a large piece shows a far part of it), or when it is farther than any one object's extent.
    relocated_m: float = 2.0
    missing_frames: int = 2  # frames in a row expected in view and not seen before a place is gone
    miss_max_depth_m: float = 3.0  # farther than this a small object may be too small to be detected
    occlusion_margin_m: float = 0.15  # the depth image must reach this close to the expected depth
    border_px: int = 10  # projections this close to the image border do not count as in view

    def __post_init__(self) -> None:
        require_positive(self, ("max_depth_m", "voxel_m", "same_place_m", "relocated_m", "miss_max_depth_m",
                         "occlusion_margin_m"))
        require_at_least(self, 1, ("pixel_stride_px", "min_points", "max_points_per_place", "missing_frames"))
        if self.floor_height_m < 0.0 or self.border_px < 0:
            raise ConfigError("TrackConfig.floor_height_m and border_px must be >= 0")
        if not 0.0 < self.floor_share < 1.0:
            raise ConfigError(f"TrackConfig.floor_share must be in (0, 1), got {self.floor_share!r}")


class SurfacePoints:
    """Shape of a set of back-projected surface points ``points_xyz_m`` ((N, 3), episode frame)."""

    points_xyz_m: np.ndarray

    @property
    def centroid_m(self) -> np.ndarray:
        return np.asarray(self.points_xyz_m.mean(axis=0))

    @property
    def box_m(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounding box: (min corner, max corner)."""
        return np.asarray(self.points_xyz_m.min(axis=0)), np.asarray(self.points_xyz_m.max(axis=0))

    @property
    def bottom_z_m(self) -> float:
        """Height of the lowest points (2nd percentile: robust to a stray point)."""
        return float(np.percentile(self.points_xyz_m[:, 2], 2.0))

    def share_below(self, height_m: float) -> float:
        """Share of the points lower than ``height_m``."""
        return float(np.count_nonzero(self.points_xyz_m[:, 2] < height_m)) / max(self.points_xyz_m.shape[0], 1)


@dataclass(eq=False)
class Place(SurfacePoints):
    """Where a track stood between two moves (episode frame)."""

    first_frame: int
    last_frame: int  # last frame that saw it here
    points_xyz_m: np.ndarray  # (N, 3) voxel-subsampled surface points
    gone_frame: Optional[int] = None  # first frame of the run of frames that expected it here and missed it
    support: Optional[str] = None  # track id of what it stood on (small objects; set by the memory)

    def gap_m(self, lo_m: np.ndarray, hi_m: np.ndarray) -> float:
        """Distance between this place's bounding box and the box [lo_m, hi_m] (0 when they overlap)."""
        own_lo, own_hi = self.box_m
        gap = np.maximum(own_lo - hi_m, 0.0) + np.maximum(lo_m - own_hi, 0.0)
        return float(np.linalg.norm(gap))


@dataclass(frozen=True)
class Sighting:
    frame: int
    place: int  # index into the track's places
    coverage: float  # share of the image's pixels its mask covers
    centre_px: tuple[float, float]  # (u, v) mean of the mask's pixels


@dataclass(eq=False)
class ObjectTrack:
    """One object over the video."""

    track_id: str
    key: Optional[int]  # the perception backend's persistent instance key; None for detectors
    category_votes: dict[str, int] = field(default_factory=dict)
    places: list[Place] = field(default_factory=list)
    sightings: list[Sighting] = field(default_factory=list)
    rgb_sum: np.ndarray = field(default_factory=lambda: np.zeros(3))  # of the pixels seen, for its colour
    rgb_count: int = 0
    held: bool = False  # in the gripper now
    missing: int = 0  # frames in a row it was expected at its place and not seen

    @property
    def category(self) -> str:
        return min(self.category_votes.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    @property
    def place(self) -> Place:
        return self.places[-1]

    def share_below(self, height_m: float) -> float:
        """The largest share of one place's points lower than ``height_m``, over every place it stood at."""
        return max(p.share_below(height_m) for p in self.places)

    @property
    def mean_rgb(self) -> Optional[np.ndarray]:
        return None if self.rgb_count == 0 else self.rgb_sum / self.rgb_count

    def frames_at(self, place: int) -> list[Sighting]:
        return [s for s in self.sightings if s.place == place]


@dataclass(frozen=True, eq=False)
class Measured(SurfacePoints):
    """A detection placed in 3D."""

    detection: Detection
    points_xyz_m: np.ndarray  # (N, 3) episode frame, voxel-subsampled
    coverage: float
    centre_px: tuple[float, float]
    rgb_sum: np.ndarray
    rgb_count: int


class ObjectTracker:
    """Tracks in order of first sight, ids ``track_0``, ``track_1``, ..."""

    def __init__(self, config: TrackConfig = TrackConfig(), persistent_keys: bool = True) -> None:
        self.config = config
        self.persistent_keys = persistent_keys
        self.tracks: dict[str, ObjectTrack] = {}
        self._by_key: dict[int, str] = {}
        self.seen_last: set[str] = set()  # tracks sighted in the last frame observed
        self.seen_now: set[str] = set()

    # --------------------------------------------------------------------------------------------- measure
    def measure(self, obs: Observation, detections: Sequence[Detection]) -> list[Measured]:
        """Back-project each detection's mask; detections with too few depth points are dropped."""
        out = []
        size = float(obs.depth_m.size)
        s = self.config.pixel_stride_px
        for det in detections:
            if det.mask.shape != obs.depth_m.shape:
                raise InvalidObservationError(f"detection {det.instance_key} ({det.category}) has mask shape "
                                              f"{det.mask.shape}, the image is {obs.depth_m.shape}")
            all_rows, all_cols = np.nonzero(det.mask)
            keep = (all_rows % s == 0) & (all_cols % s == 0)
            rows, cols = (all_rows[keep], all_cols[keep]) if int(keep.sum()) >= self.config.min_points * 4 \
                else (all_rows, all_cols)
            pts = pixels_to_episode(obs.depth_m, rows, cols, obs.intrinsics, obs.pose, obs.camera_height_m,
                                    obs.camera_tilt_rad, self.config.max_depth_m)
            if pts.points_xyz_m.shape[0] < self.config.min_points:
                continue
            points = voxel_downsample(pts.points_xyz_m, self.config.voxel_m)
            rgb = obs.rgb[pts.rows, pts.cols].astype(np.float64)
            out.append(Measured(det, points, all_rows.shape[0] / size,
                                (float(all_cols.mean()), float(all_rows.mean())), rgb.sum(axis=0), int(rgb.shape[0])))
        return out

    # ------------------------------------------------------------------------------------------- associate
    def observe(self, frame: int, measured: Sequence[Measured], placed: Optional[tuple[str, Measured]] = None
                ) -> list[tuple[str, Measured]]:
        """Fold one frame's measured detections into the tracks; ``placed`` is a carried track put down in this
        frame and the detection that shows it (decided by the memory). Returns (track id, detection) pairs."""
        self.seen_last, self.seen_now = self.seen_now, set()
        pairs: list[tuple[str, Measured]] = []
        if placed is not None:
            track = self.tracks[placed[0]]
            track.held = False
            self._sight(track, frame, placed[1], new_place=True)
            pairs.append(placed)
        for m in measured:
            if placed is not None and m is placed[1]:
                continue
            track_id = self._associate(m)
            if track_id is None:
                track_id = self._create(m)
                self._sight(self.tracks[track_id], frame, m, new_place=True)
            else:
                track = self.tracks[track_id]
                was_held, track.held = track.held, False  # (seen while carried: the memory missed the put-down)
                self._sight(track, frame, m, new_place=self._moved(track, m, was_held))
            pairs.append((track_id, m))
        return pairs

    def _moved(self, track: ObjectTrack, m: Measured, was_held: bool) -> bool:
        gap = track.place.gap_m(*m.box_m)
        if gap > self.config.relocated_m:
            return True
        return gap > self.config.same_place_m and (was_held or track.place.gone_frame is not None)

    def _associate(self, m: Measured) -> Optional[str]:
        det = m.detection
        if self.persistent_keys:
            return self._by_key.get(det.instance_key)
        best: Optional[tuple[float, str]] = None
        for track_id, track in self.tracks.items():
            if track.held or track_id in self.seen_now or det.category not in track.category_votes:
                continue
            gap = track.place.gap_m(*m.box_m)
            if gap <= self.config.same_place_m and (best is None or gap < best[0]):
                best = (gap, track_id)
        return None if best is None else best[1]

    def would_associate(self, m: Measured) -> bool:
        """Whether a detection belongs to a track that is not carried (before :meth:`observe` of its frame)."""
        if self.persistent_keys:
            track_id = self._by_key.get(m.detection.instance_key)
            return track_id is not None and not self.tracks[track_id].held
        return any(not t.held and m.detection.category in t.category_votes
                   and t.place.gap_m(*m.box_m) <= self.config.same_place_m for t in self.tracks.values())

    def is_furniture(self, track: ObjectTrack) -> bool:
        """It stands on the floor: at some place it stood, a share of its points is floor-high."""
        return track.share_below(self.config.floor_height_m) >= self.config.floor_share

    def is_small(self, m: Measured) -> bool:
        """A detection above the floor: a small object on a receptacle (furniture reaches down to the floor)."""
        return m.share_below(self.config.floor_height_m) < self.config.floor_share

    def track_of_key(self, key: int) -> Optional[str]:
        return self._by_key.get(key)

    def _create(self, m: Measured) -> str:
        track_id = f"track_{len(self.tracks)}"
        self.tracks[track_id] = ObjectTrack(track_id=track_id, key=m.detection.instance_key if self.persistent_keys
                                            else None)
        if self.persistent_keys:
            self._by_key[m.detection.instance_key] = track_id
        return track_id

    def _sight(self, track: ObjectTrack, frame: int, m: Measured, new_place: bool) -> None:
        if new_place or not track.places:
            if track.places and track.place.gone_frame is None:
                track.place.gone_frame = frame  # seen elsewhere: it left its place by now at the latest
            track.places.append(Place(first_frame=frame, last_frame=frame, points_xyz_m=m.points_xyz_m))
        else:
            place = track.place
            merged = voxel_downsample(np.concatenate([place.points_xyz_m, m.points_xyz_m]), self.config.voxel_m)
            cap = self.config.max_points_per_place
            if merged.shape[0] > cap:
                merged = merged[np.linspace(0, merged.shape[0] - 1, cap).astype(np.int64)]
            place.points_xyz_m = merged
            place.last_frame = frame
            place.gone_frame = None  # it is still (or again) here
        track.category_votes[m.detection.category] = track.category_votes.get(m.detection.category, 0) + 1
        track.sightings.append(Sighting(frame, len(track.places) - 1, m.coverage, m.centre_px))
        track.rgb_sum = track.rgb_sum + m.rgb_sum
        track.rgb_count += m.rgb_count
        track.missing = 0
        self.seen_now.add(track.track_id)

    # ---------------------------------------------------------------------------------------- carry, miss
    def pick(self, track_id: str, frame: int) -> None:
        """The track went into the gripper before ``frame``: its place is gone from then on."""
        track = self.tracks[track_id]
        track.held = True
        if track.place.gone_frame is None:
            track.place.gone_frame = frame

    def expected_in_view(self, place: Place, obs: Observation) -> bool:
        """Whether the place's centroid projects into the image, near enough, with nothing in front of it."""
        cfg = self.config
        uv, depth = episode_to_pixels(place.centroid_m[None], obs.intrinsics, obs.pose, obs.camera_height_m,
                                      obs.camera_tilt_rad)
        d = float(depth[0])
        if not 0.2 < d <= cfg.miss_max_depth_m or not np.all(np.isfinite(uv)):
            return False
        u, v = float(uv[0, 0]), float(uv[0, 1])
        h, w = obs.depth_m.shape
        if not (cfg.border_px <= u < w - cfg.border_px and cfg.border_px <= v < h - cfg.border_px):
            return False
        r = 2
        window = obs.depth_m[int(v) - r:int(v) + r + 1, int(u) - r:int(u) + r + 1]
        valid = window[window > 0]
        return bool(valid.size) and float(np.median(valid)) >= d - cfg.occlusion_margin_m

    def update_missing(self, frame: int, obs: Observation) -> list[str]:
        """Count the frame for every small object not seen at its place though in view; returns the tracks whose
        place became gone in this frame."""
        gone = []
        for track in self.tracks.values():
            place = track.place
            if track.held or place.gone_frame is not None or track.track_id in self.seen_now \
                    or self.is_furniture(track):
                continue
            if not self.expected_in_view(place, obs):
                continue  # out of view says nothing; the run of misses continues
            track.missing += 1
            if track.missing >= self.config.missing_frames:
                place.gone_frame = frame - track.missing + 1
                gone.append(track.track_id)
        return gone


def image_centre_distance_px(m: Measured, obs: Observation) -> float:
    """How far a detection's pixels are from the image centre."""
    return math.hypot(m.centre_px[0] - obs.intrinsics.cx, m.centre_px[1] - obs.intrinsics.cy)
