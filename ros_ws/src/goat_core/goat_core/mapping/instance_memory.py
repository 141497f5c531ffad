"""Lifelong instance memory: 3D points, colour and best views of every object seen, in the episode frame.

Association of a detection to a remembered instance:

* backends with persistent keys (ground truth): the same ``instance_key`` is the same instance;
* otherwise (detectors, whose keys are per-frame indices): among remembered instances of the same category,
  merge into the one sharing the largest fraction of the detection's coarse voxels (``merge_voxel_m``) if that
  fraction reaches ``merge_overlap_ratio``; failing that, into the one whose centroid is nearest to the
  detection's if within ``merge_centroid_distance_m``; otherwise start a new instance. This is the 3D-overlap
  rule of ConceptGraphs (Gu et al., ICRA 2024) reduced to voxel sets, with a centroid fallback for thin views.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Container, Iterable, Optional, Sequence

import numpy as np
from scipy.spatial import cKDTree

from goat_core.errors import InvalidObservationError, require_at_least, require_positive
from goat_core.geometry import PixelPoints, pixels_to_episode, voxel_downsample, voxel_keys
from goat_core.mapping.evidence import EvidenceConfig, InstanceEvidence, should_be_detected
from goat_core.types import Detection, Instance, InstanceView, Observation, Pose2D


@dataclass(frozen=True)
class InstanceMemoryConfig:
    """How detections become remembered instances."""

    voxel_m: float = 0.05  # surface points are kept one per voxel of this side
    max_points_per_instance: int = 2000  # bounds memory and per-step time for large furniture
    max_depth_m: float = 5.0  # mask pixels farther away are too coarse to localise an object
    pixel_stride_px: int = 2  # back-project every 2nd mask pixel in both directions
    min_points: int = 3  # detections with fewer valid depth points are not placed in the map
    views_per_instance: int = 6  # views kept: the largest from each bearing sector, best first
    view_sectors: int = 6  # bearing sectors around an instance (60 degrees each) that views are spread over
    view_margin_px: int = 16  # context kept around the mask in a view crop
    merge_voxel_m: float = 0.1  # voxel side of the overlap test (detector backends)
    merge_overlap_ratio: float = 0.2
    merge_centroid_distance_m: float = 0.5
    # Evidence over views (goat_core.mapping.evidence): off, every detection is believed at once (ground truth).
    evidence: EvidenceConfig = field(default_factory=EvidenceConfig)

    def __post_init__(self) -> None:
        require_positive(self, ("voxel_m", "max_depth_m", "merge_voxel_m", "merge_centroid_distance_m"))
        require_at_least(self, 1, ("max_points_per_instance", "pixel_stride_px", "min_points", "views_per_instance",
                         "view_sectors"))
        if self.view_margin_px < 0:
            raise ValueError(f"InstanceMemoryConfig.view_margin_px must be >= 0, got {self.view_margin_px!r}")
        if not 0.0 < self.merge_overlap_ratio <= 1.0:
            raise ValueError(
                f"InstanceMemoryConfig.merge_overlap_ratio must be in (0, 1], got {self.merge_overlap_ratio}"
            )


class InstanceMemory:
    """Instances keyed by a memory id (0, 1, 2, ... in order of first sight).

    ``instances`` holds what the agent may use. With evidence on (``config.evidence``) it is the trusted subset
    of every instance kept (``candidates``), each named by its category votes; without, the two are one dict.
    """

    def __init__(self, config: InstanceMemoryConfig) -> None:
        self.config = config
        self.candidates: dict[int, Instance] = {}
        self.instances: dict[int, Instance] = self.candidates if not config.evidence.enabled else {}
        self.evidence: dict[int, InstanceEvidence] = {}
        self._key_to_id: dict[int, int] = {}
        # With evidence (EvidenceConfig.tracker_gap_m): every instance a tracker key has named, oldest first.
        self._key_ids: dict[int, list[int]] = {}
        self._colour_weight: dict[int, int] = {}  # pixels averaged into mean_rgb so far
        # memory id -> the points array this memory last gave the instance, its voxel keys (point order) and those
        # keys sorted: a merge looks the new points' voxels up instead of deduplicating every point again.
        self._voxels: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._next_id = 0
        # The masks of the last update() placed in memory, with their memory ids (views_now crops them).
        self.last_labelled: list[tuple[np.ndarray, int]] = []
        self.last_categories: dict[int, str] = {}  # memory id -> the category the last update's detection named
        # memory id -> the points (episode frame) the last update's frame saw of it: their offsets from the pose
        # of that frame are measured, whatever the error of the pose or of the points mapped earlier.
        self.last_points: dict[int, np.ndarray] = {}
        self._last_boxes: list[tuple[int, int, int, int]] = []  # the detection boxes of last_labelled
        self._last_obs: Optional[Observation] = None
        self.trust_all = False  # with evidence: every candidate is shown, trusted or not (relax_trust)
        # With evidence: what forgetting took out of candidates this episode, with its evidence and colour weight
        # (recall brings it back).
        self._forgotten: dict[int, tuple[Instance, InstanceEvidence, int]] = {}
        # Recalled this subtask: not forgotten again until the subtask ends (the arrival check judges them).
        self._recalled: set[int] = set()

    def clear(self) -> None:
        self.last_labelled = []
        self.last_categories = {}
        self.last_points = {}
        self._last_boxes = []
        self._last_obs = None
        self.candidates.clear()
        self.instances.clear()
        self.evidence.clear()
        self._key_to_id.clear()
        self._key_ids.clear()
        self._colour_weight.clear()
        self._voxels.clear()
        self._next_id = 0
        self.trust_all = False
        self._forgotten.clear()
        self._recalled.clear()

    def update(self, detections: Sequence[Detection], obs: Observation,
               persistent_keys: bool = True) -> list[int]:
        """Fold one frame's detections into memory; returns the memory ids touched, in detection order."""
        touched: list[int] = []
        self.last_categories = {}
        self.last_points = {}
        labelled: list[tuple[np.ndarray, int]] = []
        boxes: list[tuple[int, int, int, int]] = []
        counts = [self._pixel_count(det, obs) for det in detections]  # each mask's pixels, counted once
        for det, count, pts in zip(detections, counts, self._back_project_all(detections, obs, counts), strict=True):
            if pts.points_xyz_m.shape[0] < self.config.min_points:
                continue
            # One point per voxel, the first of each in order (voxel_downsample), with its voxel's key.
            point_keys = voxel_keys(pts.points_xyz_m, self.config.voxel_m)
            _, first = np.unique(point_keys, return_index=True)
            first.sort()
            points, point_keys = pts.points_xyz_m[first], point_keys[first]
            mem_id = self._associate(det, points, persistent_keys)
            if mem_id is None:
                mem_id = self._create(det, points, obs.step)
                if persistent_keys:
                    self._key_to_id[det.instance_key] = mem_id
                    self._key_ids.setdefault(det.instance_key, []).append(mem_id)
            else:
                self._merge(self.candidates[mem_id], points, obs.step, point_keys)
            inst = self.candidates[mem_id]
            self._update_colour(inst, obs.rgb[pts.rows, pts.cols])
            self._offer_view(inst, det, obs, count)
            if self.config.evidence.enabled:
                self.evidence.setdefault(mem_id, InstanceEvidence()).add(det.category, det.score)
            touched.append(mem_id)
            self.last_categories[mem_id] = det.category
            seen = self.last_points.get(mem_id)
            self.last_points[mem_id] = points if seen is None else np.vstack([seen, points])
            labelled.append((det.mask, mem_id))
            boxes.append(det.bbox_xyxy)
        if self.config.evidence.enabled:
            touched, labelled, boxes = self._weigh_evidence(obs, touched, labelled, boxes)
            self.last_points = {k: v for k, v in self.last_points.items() if k in touched}
        self.last_labelled = labelled
        self._last_boxes = boxes
        self._last_obs = obs
        return touched

    def views_now(self, keep: Container[int]) -> list[tuple[int, InstanceView]]:
        """Views of the last update()'s detections of the instances in ``keep``, kept in memory or not.

        Memory keeps the largest view from each side of an instance; a smaller one from elsewhere may be the one
        that looks like a goal picture, so a matcher can compare what the camera shows now as well.
        """
        obs = self._last_obs
        if obs is None:
            return []
        margin = self.config.view_margin_px
        return [(iid, crop_view(mask, box, obs, margin))
                for (mask, iid), box in zip(self.last_labelled, self._last_boxes, strict=True) if iid in keep]

    # ------------------------------------------------------------------------------------------ internals
    @staticmethod
    def _pixel_count(det: Detection, obs: Observation) -> int:
        if det.mask.shape != obs.depth_m.shape:
            raise InvalidObservationError(
                f"detection {det.instance_key} ({det.category}) has mask shape {det.mask.shape}, "
                f"image is {obs.depth_m.shape}"
            )
        return int(np.count_nonzero(det.mask))

    def _back_project_all(self, detections: Sequence[Detection], obs: Observation,
                          counts: Sequence[int]) -> list[PixelPoints]:
        """Each detection's pixels back-projected, in one back-projection of all of them: the arithmetic is
        elementwise, so every point is the one a back-projection of its detection alone gives (a frame of a large
        home holds ten detections or more, and most of one's cost is the calls, not the points)."""
        pixels = []
        for det, count in zip(detections, counts, strict=True):
            rows, cols = mask_pixels(det.mask, det.bbox_xyxy, self.config.pixel_stride_px, count)
            if rows.shape[0] < self.config.min_points:  # small object: use every pixel
                rows, cols = mask_pixels(det.mask, det.bbox_xyxy, 1, count)
            pixels.append((rows, cols))
        if not pixels:
            return []
        rows = np.concatenate([r for r, _ in pixels])
        cols = np.concatenate([c for _, c in pixels])
        every = pixels_to_episode(obs.depth_m, rows, cols, obs.intrinsics, obs.pose, obs.camera_height_m,
                                  obs.camera_tilt_rad, self.config.max_depth_m)
        # Where each detection's kept pixels start and end: pixels_to_episode keeps those with a return in range.
        d = obs.depth_m[rows, cols].astype(np.float64)
        kept = np.concatenate([[0], np.cumsum((d > 0.0) & (d <= self.config.max_depth_m))])
        ends = kept[np.cumsum([r.shape[0] for r, _ in pixels])]
        starts = np.concatenate([[0], ends[:-1]])
        return [self._depth_band(PixelPoints(points_xyz_m=every.points_xyz_m[a:b], rows=every.rows[a:b],
                                             cols=every.cols[a:b], depth_m=every.depth_m[a:b]))
                for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]

    def _depth_band(self, pts: PixelPoints) -> PixelPoints:
        band_m = self.config.evidence.mask_depth_band_m
        if not self.config.evidence.enabled or band_m <= 0.0 or pts.depth_m.shape[0] == 0:
            return pts
        # A detector's mask bleeds past the object onto what is behind it (or in front): keep the pixels at the
        # depth of most of the mask, so the object's points are not smeared onto the wall behind.
        keep = np.abs(pts.depth_m - float(np.median(pts.depth_m))) <= band_m
        return PixelPoints(points_xyz_m=pts.points_xyz_m[keep], rows=pts.rows[keep], cols=pts.cols[keep],
                           depth_m=pts.depth_m[keep])

    def _associate(self, det: Detection, points: np.ndarray, persistent_keys: bool) -> Optional[int]:
        if persistent_keys:
            if self.config.evidence.enabled and self.config.evidence.tracker_gap_m > 0.0:
                return self._associate_tracked(det, points)
            return self._key_to_id.get(det.instance_key)
        cfg = self.config
        new_keys = np.unique(voxel_keys(points, cfg.merge_voxel_m))
        centroid = points.mean(axis=0)
        best_overlap: tuple[float, int] | None = None
        best_near: tuple[float, int] | None = None
        for mem_id, inst in self.candidates.items():
            overlap = float(np.isin(new_keys, voxel_keys(inst.points_xyz_m, cfg.merge_voxel_m)).mean())
            if inst.category != det.category and det.category not in self._votes_of(mem_id):
                # With evidence, a look-alike's name on the same surface is one more vote for this instance.
                if cfg.evidence.enabled and overlap >= cfg.evidence.other_name_overlap_ratio and (
                        best_overlap is None or overlap > best_overlap[0]):
                    best_overlap = (overlap, mem_id)
                continue
            if overlap >= cfg.merge_overlap_ratio and (best_overlap is None or overlap > best_overlap[0]):
                best_overlap = (overlap, mem_id)
            dist = float(np.linalg.norm(inst.centroid_m - centroid))
            if dist <= cfg.merge_centroid_distance_m and (best_near is None or dist < best_near[0]):
                best_near = (dist, mem_id)
        if best_overlap is not None:
            return best_overlap[1]
        return None if best_near is None else best_near[1]

    def _associate_tracked(self, det: Detection, points: np.ndarray) -> Optional[int]:
        """A tracker's key, checked against geometry: the instance it named before if the detection touches it
        (a merge gives two objects one key); else a same-named instance the detection overlaps (a split gives one
        object a new key), bound to the key from now on; None for a new instance."""
        gap_m = self.config.evidence.tracker_gap_m
        named = [m for m in self._key_ids.get(det.instance_key, ()) if m in self.candidates]
        for mem_id in named:
            distance_m, _ = cKDTree(self.candidates[mem_id].points_xyz_m).query(points, k=1)
            if float(np.min(distance_m)) <= gap_m:
                return mem_id
        cfg = self.config
        new_keys = np.unique(voxel_keys(points, cfg.merge_voxel_m))
        best: tuple[float, int] | None = None
        for mem_id, inst in self.candidates.items():
            if inst.category != det.category and det.category not in self._votes_of(mem_id):
                continue
            overlap = float(np.isin(new_keys, voxel_keys(inst.points_xyz_m, cfg.merge_voxel_m)).mean())
            if overlap >= cfg.merge_overlap_ratio and (best is None or overlap > best[0]):
                best = (overlap, mem_id)
        if best is not None:
            self._key_ids.setdefault(det.instance_key, []).append(best[1])
            return best[1]
        return None

    def _create(self, det: Detection, points: np.ndarray, step: int) -> int:
        mem_id = self._next_id
        self._next_id += 1
        keep = self._cap_index(points.shape[0])
        kept = points if keep is None else points[keep]
        self.candidates[mem_id] = Instance(instance_id=mem_id, category=det.category, points_xyz_m=kept,
                                          num_observations=1, first_seen_step=step, last_seen_step=step)
        keys = voxel_keys(kept, self.config.voxel_m)
        self._voxels[mem_id] = (kept, keys, np.sort(keys))
        self._colour_weight[mem_id] = 0
        return mem_id

    def _votes_of(self, mem_id: int) -> dict[str, float]:
        found = self.evidence.get(mem_id)
        return found.votes if found is not None else {}

    def _weigh_evidence(self, obs: Observation, touched: list[int], labelled: list[tuple[np.ndarray, int]],
                        boxes: list[tuple[int, int, int, int]],
                        ) -> tuple[list[int], list[tuple[np.ndarray, int]], list[tuple[int, int, int, int]]]:
        """Name each instance by its votes, forget those that views should have shown and did not, keep the
        trusted ones in ``instances``; returns this frame's detections of trusted instances only."""
        cfg = self.config.evidence
        seen = set(touched)
        for mem_id in list(self.candidates):
            ev = self.evidence[mem_id]
            inst = self.candidates[mem_id]
            inst.category = ev.category()
            if mem_id in seen or not should_be_detected(inst, obs, cfg, self.config.voxel_m):
                continue
            ev.unseen_in_a_row += 1
            if ev.forgotten(cfg) and mem_id not in self._recalled:
                self._forget(mem_id)
        trusted = self._show_trusted()
        keep = [i for i, mem_id in enumerate(touched) if mem_id in trusted]
        return [touched[i] for i in keep], [labelled[i] for i in keep], [boxes[i] for i in keep]

    def relax_trust(self, trust_all: bool) -> None:
        """With evidence on: show every instance still remembered (``trust_all``), trusted or not, from now on
        until called with False (the agent's last resort before giving up a subtask: EvidenceConfig.
        trust_all_before_giving_up). Forgetting goes on as before. Nothing changes with evidence off."""
        if not self.config.evidence.enabled:
            return
        self.trust_all = bool(trust_all)
        if not trust_all:
            self._recalled.clear()  # the subtask that recalled them is over: forgetting applies again
        self._show_trusted()

    @property
    def forgotten(self) -> dict[int, Instance]:
        """The instances forgetting took out of ``candidates`` in this episode (evidence on), by memory id."""
        return {mem_id: kept[0] for mem_id, kept in self._forgotten.items()}

    @property
    def recalled(self) -> frozenset[int]:
        """The instances recalled since trust was last restored (relax_trust(False)): not forgotten again."""
        return frozenset(self._recalled)

    def recall(self, mem_ids: Iterable[int]) -> list[int]:
        """Bring the forgotten instances ``mem_ids`` back into ``candidates``, with the evidence they had, their
        misses in a row cleared (the agent's last resort before giving up: EvidenceConfig.
        recall_forgotten_before_giving_up); returns the ids brought back. Ids not forgotten are ignored.

        A recalled instance is not forgotten again until relax_trust(False) (the next subtask): the misses that
        forgot it would forget it again on the way back to it, before anything at its place could be judged."""
        recalled = []
        for mem_id in mem_ids:
            kept = self._forgotten.pop(mem_id, None)
            if kept is None:
                continue
            inst, ev, colour_weight = kept
            ev.unseen_in_a_row = 0
            self.candidates[mem_id] = inst
            self.evidence[mem_id] = ev
            self._colour_weight[mem_id] = colour_weight
            self._recalled.add(mem_id)
            recalled.append(mem_id)
        if self.config.evidence.enabled:
            self._show_trusted()
        return recalled

    def _show_trusted(self) -> dict[int, Instance]:
        """Fill ``instances`` with the trusted candidates (every candidate while trust is relaxed); returns them."""
        cfg = self.config.evidence
        trusted = {k: v for k, v in self.candidates.items() if self.trust_all or self.evidence[k].trusted(cfg)}
        self.instances.clear()
        self.instances.update(trusted)
        return trusted

    def _forget(self, mem_id: int) -> None:
        self._forgotten[mem_id] = (self.candidates.pop(mem_id), self.evidence.pop(mem_id),
                                   self._colour_weight.pop(mem_id, 0))
        self._voxels.pop(mem_id, None)  # a recalled instance's points are deduplicated again at its next merge
        while len(self._forgotten) > self.config.evidence.max_forgotten:
            del self._forgotten[next(iter(self._forgotten))]  # the oldest forgotten first
        for key in [k for k, v in self._key_to_id.items() if v == mem_id]:
            del self._key_to_id[key]
        for ids in self._key_ids.values():
            if mem_id in ids:
                ids.remove(mem_id)

    def _merge(self, inst: Instance, points: np.ndarray, step: int, point_keys: np.ndarray) -> None:
        """The instance's points and the new ones, one per voxel (earlier points win), capped: what
        ``voxel_downsample(concatenate([old, new]))`` gives, thinned by :meth:`_cap_index`. ``points`` hold one
        point per voxel already (``voxel_downsample``'s), ``point_keys`` their voxels' keys.

        Points this memory gave the instance hold one point per voxel already, so every one of them is the first of
        its voxel and stays; of the new points those whose voxel is new stay, the first of each in order. Looking
        the new voxels up in the old ones' sorted keys costs about half the deduplication of all points again, and
        the sorted keys of the result are those sorted keys with the fresh ones merged in and the capped ones taken
        out (a linear merge, not a sort of up to ``max_points_per_instance`` keys at every merge).
        """
        voxel_m = self.config.voxel_m
        known = self._voxels.get(inst.instance_id)
        old_sorted: Optional[np.ndarray] = None
        if known is None or known[0] is not inst.points_xyz_m or known[2].shape[0] == 0:
            # points set from elsewhere: deduplicate them all
            merged = voxel_downsample(np.concatenate([inst.points_xyz_m, points]), voxel_m)
            keys = voxel_keys(merged, voxel_m)
        else:
            _, old_keys, old_sorted = known
            at = np.minimum(np.searchsorted(old_sorted, point_keys), old_sorted.shape[0] - 1)
            fresh = old_sorted[at] != point_keys  # every new point is the first of its voxel: those of new voxels
            merged = np.concatenate([inst.points_xyz_m, points[fresh]])
            keys = np.concatenate([old_keys, point_keys[fresh]])
        keep = self._cap_index(merged.shape[0])
        if old_sorted is None:
            sorted_keys = np.sort(keys if keep is None else keys[keep])
        else:
            sorted_keys = _sorted_union(old_sorted, keys[old_sorted.shape[0]:])
            if keep is not None:
                sorted_keys = _sorted_without(sorted_keys, keys, keep)
        if keep is not None:
            merged, keys = merged[keep], keys[keep]
        inst.points_xyz_m = merged
        self._voxels[inst.instance_id] = (merged, keys, sorted_keys)
        inst.num_observations += 1
        inst.last_seen_step = step

    def _cap_index(self, n: int) -> Optional[np.ndarray]:
        """Which of n points to keep for at most max_points: an evenly spaced systematic sample (deterministic, no
        RNG needed); None when all of them fit."""
        cap = self.config.max_points_per_instance
        if n <= cap:
            return None
        return np.linspace(0, n - 1, cap).astype(np.int64)

    def _update_colour(self, inst: Instance, pixels_rgb: np.ndarray) -> None:
        """Running mean over every pixel sampled so far: m <- (w m + sum) / (w + k)."""
        k = pixels_rgb.shape[0]
        if k == 0:
            return
        w = self._colour_weight[inst.instance_id]
        total = pixels_rgb.astype(np.float64).sum(axis=0)
        prev = inst.mean_rgb if inst.mean_rgb is not None else np.zeros(3)
        inst.mean_rgb = (prev * w + total) / (w + k)
        self._colour_weight[inst.instance_id] = w + k

    def _view_sector(self, centre: np.ndarray, pose: Pose2D) -> int:
        """Which of ``view_sectors`` equal angular sectors around an instance's xy ``centre`` the camera looks
        from."""
        bearing = math.atan2(pose.y_m - float(centre[1]), pose.x_m - float(centre[0]))
        n = self.config.view_sectors
        return int((bearing + math.pi) / (2.0 * math.pi) * n) % n

    def _offer_view(self, inst: Instance, det: Detection, obs: Observation, count: int) -> None:
        """Keep the largest view from each side of the instance, up to ``views_per_instance`` views.

        Image goals are pictures taken from one side of the object; stored views from the other side share
        almost no keypoints with them, so views are kept per bearing sector (the largest in each sector) rather
        than simply the largest overall. The list stays ordered by pixel count, best first.
        """
        centre = inst.points_xyz_m[:, :2].mean(axis=0)  # once for all the views compared
        sector = self._view_sector(centre, obs.pose)
        same = [i for i, v in enumerate(inst.views) if self._view_sector(centre, v.pose) == sector]
        if same:
            if count <= inst.views[same[0]].pixel_count:
                return
            replace: Optional[int] = same[0]
        elif len(inst.views) >= self.config.views_per_instance:
            if count <= inst.views[-1].pixel_count:
                return
            replace = len(inst.views) - 1
        else:
            replace = None
        view = crop_view(det.mask, det.bbox_xyxy, obs, self.config.view_margin_px, count)
        if replace is not None:
            del inst.views[replace]
        position = next((i for i, v in enumerate(inst.views) if v.pixel_count < count), len(inst.views))
        inst.views.insert(position, view)


def _sorted_union(sorted_keys: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """``sorted_keys`` with the keys ``extra`` (none of them among those) merged in, sorted: what sorting all of
    them gives. The stable sort (timsort) finds the two sorted runs and merges them in linear time."""
    return np.sort(np.concatenate([sorted_keys, np.sort(extra)]), kind="stable")


def _sorted_without(sorted_keys: np.ndarray, keys: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The sorted ``keys[keep]``, from ``sorted_keys`` (``keys`` sorted; every key distinct): the keys not kept
    taken out."""
    dropped = np.ones(keys.shape[0], dtype=bool)
    dropped[keep] = False
    return np.delete(sorted_keys, np.searchsorted(sorted_keys, keys[dropped]))


def mask_pixels(mask: np.ndarray, bbox_xyxy: tuple[int, int, int, int], stride_px: int,
                count: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the mask's pixels on every ``stride_px``-th row and column, in raster order: what
    ``np.nonzero(mask[::s, ::s]) * s`` gives, searched inside the detection's box only.

    A frame of a large home holds ten detections or more, and a search over the whole 360x640 mask costs ten times
    one over a typical box. The box is used only when it holds every pixel of the mask (two pixel counts, cheap next
    to the search; ``count`` is the mask's own, when the caller has it), so a box that is degenerate or misses part
    of its mask gives the same answer, slower.
    """
    s = stride_px
    h, w = mask.shape
    x0, y0, x1, y1 = bbox_xyxy
    if 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h:
        r0, c0 = -(-y0 // s) * s, -(-x0 // s) * s  # the first sampled row and column inside the box
        if np.count_nonzero(mask[y0:y1, x0:x1]) == (np.count_nonzero(mask) if count is None else count):
            rows, cols = np.nonzero(mask[r0:y1:s, c0:x1:s])
            return rows * s + r0, cols * s + c0
    rows, cols = np.nonzero(mask[::s, ::s])
    return rows * s, cols * s


def crop_view(mask: np.ndarray, bbox_xyxy: tuple[int, int, int, int], obs: Observation, margin_px: int,
              pixel_count: Optional[int] = None) -> InstanceView:
    """The view of one detection: the frame cropped around its box (``margin_px`` of context) and its mask there.

    A degenerate box (x1 <= x0 or y1 <= y0) is replaced by the mask's own bounding box. ``pixel_count`` is the
    mask's pixel count when the caller has it (else counted here).
    """
    h, w = mask.shape
    x0, y0, x1, y1 = bbox_xyxy
    if x1 <= x0 or y1 <= y0:
        rows = np.flatnonzero(mask.any(axis=1))
        cols = np.flatnonzero(mask.any(axis=0))
        x0, y0, x1, y1 = int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1
    r0, r1, c0, c1 = max(0, y0 - margin_px), min(h, y1 + margin_px), max(0, x0 - margin_px), min(w, x1 + margin_px)
    return InstanceView(rgb=obs.rgb[r0:r1, c0:c1].copy(), mask=mask[r0:r1, c0:c1].copy(),
                        pixel_count=int(np.count_nonzero(mask)) if pixel_count is None else pixel_count,
                        pose=obs.pose, step=obs.step)


def nearest_distance_2d_m(inst: Instance, x_m: float, y_m: float) -> float:
    """Planar distance from (x, y) to the instance's nearest surface point."""
    d = inst.points_xyz_m[:, :2] - np.array([x_m, y_m])
    return float(math.sqrt(float(np.min(np.einsum("ij,ij->i", d, d)))))
