"""Image goals: find the remembered instance whose stored views show the object in the goal picture.

Classical wide-baseline matching: SIFT keypoints and descriptors (Lowe, IJCV 2004), approximate nearest
neighbours with FLANN randomised kd-trees (Muja & Lowe, VISAPP 2009), Lowe's ratio test, one match per goal
keypoint, and RANSAC (Fischler & Bolles, 1981) on a homography; the RANSAC inliers are geometrically
consistent matches. Object faces at room scale are close to planar, and a homography admits far fewer chance
inliers than a fundamental matrix, which matters when most instances are unrelated to the goal. Homographies
that fold, collapse or stretch the view implausibly are rejected: on weakly textured renders, RANSAC otherwise
finds "consensus" among many view points matched into one small patch of the goal picture.

GOAT-Bench goal pictures are taken looking at the goal object, so the object covers the picture's centre.
An instance whose inliers lie away from the centre (convex hull of its goal-side inliers farther than a
margin from it) is most likely another object in the picture (the globe on the desk that is the goal), and
its inliers are discounted.

Cost: SIFT on a full 360x640 frame is tens of milliseconds here, so descriptors of each stored view are
computed once (cached by instance id and view step, at most ``max_extractions_per_step`` new views per
call) and each view is matched against the goal once per goal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import GoatError, InvalidGoalError, require_positive
from goat_core.matching.base import MatchResult
from goat_core.matching.category import ScoredInstance, runner_up
from goat_core.matching.image_colour import ColourEvidence, ColourEvidenceConfig
from goat_core.types import Goal, GoalModality, Instance, InstanceView

_FLANN_INDEX_KDTREE = 1  # FLANN's algorithm id for randomised kd-trees
_MIN_HOMOGRAPHY_MATCHES = 4  # a homography has 8 degrees of freedom: 4 point pairs


@dataclass(frozen=True)
class ImageMatcherConfig:
    """Feature, matching and decision parameters of the image-goal matcher."""

    goal_features: int = 1000  # SIFT keypoints kept on the goal picture
    view_features: int = 500  # SIFT keypoints kept on each stored view crop
    # Half of OpenCV's default (0.04): the simulator's textures are smooth and give few corners at 0.04.
    sift_contrast_threshold: float = 0.02
    goal_max_side_px: int = 640  # the goal picture is downscaled to this longer side (GOAT-Bench: 640)
    # View crops are downscaled to this longer side: SIFT is scale invariant, and a crop costs ~10 ms at
    # 240x240 but ~6 ms at 192 px (2 cores). On simulator scenes 256 px found a few more goals confidently
    # (27 vs 25 of 50) at ~1.7x the cost per new view.
    view_max_side_px: int = 192
    ratio_test: float = 0.8  # Lowe's ratio of best to second-best descriptor distance (Lowe 2004: 0.8)
    min_matches: int = 8  # ratio-test matches needed before RANSAC is worth running
    ransac_reprojection_px: float = 5.0  # RANSAC inlier threshold, in goal-picture pixels
    max_scale_change: float = 8.0  # homography plausibility: local scale within [1/8, 8]
    max_anisotropy: float = 6.0  # ... and stretch (ratio of the singular values of its linear part)
    min_inlier_area_frac: float = 0.002  # ... and goal-side inliers spanning this share of the picture
    flann_trees: int = 5
    flann_checks: int = 50
    flann_seed: int = 0  # seeds the random kd-tree construction (see set_goal)
    mask_dilation_px: int = 9  # keypoints near the instance's silhouette describe its outline too
    # Inliers count fully when their hull reaches within this share of the picture's shorter side of its
    # centre, and fade linearly to ``off_centre_weight`` over a further ``centre_falloff_frac``.
    centre_margin_frac: float = 0.15
    centre_falloff_frac: float = 0.25
    off_centre_weight: float = 0.1
    min_inliers: int = 12  # unrelated pairs of simulator views give <= 8 plausible inliers
    # When every candidate is of the goal's named category (GOAT-Bench image tasks name it), the rivals are a few
    # instances of one kind, each compared with the picture, and a clear winner needs less evidence: on seeds
    # 1000 and 5000, 22 of 22 image subtasks that ended at an unconfident best with >= 6 weighted inliers were
    # right, but only after exploring the whole home first.
    min_inliers_same_category: int = 6
    confident_ratio: float = 2.0  # the best weighted score must be this many times the runner-up's
    duplicate_radius_m: float = 0.5  # candidates this close (xy) are taken as one object split in two
    max_views_per_instance: int = 6  # stored views of each instance that are matched (memory keeps one per side)
    max_extractions_per_step: int = 1  # new view crops run through SIFT per match() call (~10 ms each)
    # A new view of an instance already compared with the goal is only worth comparing when it shows the
    # object from another side or much closer (the memory replaces best views nearly every step on approach).
    # A view is novel unless some scored view was taken nearby (the goal picture was taken from one spot: views
    # from around it share its perspective and scale, which the largest view of a side need not), from the same
    # side (bearing from the object to the camera) and was not much smaller.
    novel_position_m: float = 0.5
    novel_bearing_rad: float = math.radians(30.0)
    novel_growth: float = 1.5  # pixel count, vs that scored view
    # Compare the current frame's views of the candidates too, not only those memory kept (LiveViewObserver).
    # On seed 1000 episode 1000-17 subtask 4, the views that matched the desk in the goal picture (7 and 13
    # inliers) were seen on the way and dropped by memory for a larger view of that side that matched nothing.
    live_views: bool = True
    # Colour evidence (goat_core.matching.image_colour), used only among instances of the category the goal names
    # and only when keypoints settle nothing: it names the likeliest instance, confidently when it is clear.
    colour: ColourEvidenceConfig = field(default_factory=ColourEvidenceConfig)
    use_colour: bool = True

    def __post_init__(self) -> None:
        require_positive(self, ("goal_features", "view_features", "goal_max_side_px", "view_max_side_px", "min_inliers",
                         "min_inliers_same_category", "min_matches", "flann_trees", "flann_checks",
                         "max_views_per_instance", "max_extractions_per_step", "sift_contrast_threshold",
                         "max_scale_change", "max_anisotropy", "centre_falloff_frac", "novel_position_m"))
        if not 0.0 < self.ratio_test < 1.0:
            raise ValueError(f"ImageMatcherConfig.ratio_test must be in (0, 1), got {self.ratio_test!r}")


@dataclass(frozen=True)
class _Features:
    points_px: np.ndarray  # (K, 2) float32 keypoint positions in the (downscaled) image
    descriptors: np.ndarray  # (K, 128) float32 SIFT descriptors


@dataclass(frozen=True)
class ViewScore:
    """Geometric agreement of one stored view with the goal picture."""

    inliers: int  # RANSAC inliers
    weighted: float  # inliers, discounted when they lie away from the goal picture's centre


_NO_AGREEMENT = ViewScore(inliers=0, weighted=0.0)


def _to_gray(rgb: np.ndarray, max_side_px: int) -> tuple[np.ndarray, float]:
    """Grayscale image no longer than ``max_side_px`` and the scale applied to it."""
    gray = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY)
    scale = min(1.0, max_side_px / max(gray.shape))
    if scale < 1.0:
        size = (max(1, round(gray.shape[1] * scale)), max(1, round(gray.shape[0] * scale)))
        gray = cv2.resize(gray, size, interpolation=cv2.INTER_AREA)
    return gray, scale


class ImageMatcher:
    """GoalMatcher for image goals."""

    def __init__(self, config: ImageMatcherConfig = ImageMatcherConfig()) -> None:
        self.config = config
        threshold = config.sift_contrast_threshold
        self._goal_sift = cv2.SIFT.create(nfeatures=config.goal_features, contrastThreshold=threshold)
        self._view_sift = cv2.SIFT.create(nfeatures=config.view_features, contrastThreshold=threshold)
        self._flann: Optional[cv2.FlannBasedMatcher] = None
        self._goal: Optional[_Features] = None
        self._goal_centre_px = (0.0, 0.0)
        self._goal_short_side_px = 1.0
        self._goal_area_px2 = 1.0
        # Goal-independent: descriptors of stored views, kept while the view is in memory.
        self._view_features: dict[tuple[int, int], _Features] = {}
        # Per goal: agreement of each processed view, and the best of them per instance.
        self._view_scores: dict[tuple[int, int], ViewScore] = {}
        self._instance_scores: dict[int, ViewScore] = {}
        # Per instance: (bearing, pixels, camera x, camera y) of every scored view.
        self._scored_geometry: dict[int, list[tuple[float, int, float, float]]] = {}
        self._live: dict[int, InstanceView] = {}  # the current frame's view of each candidate (observe_live_views)
        # Views judged not novel stay so for this goal (the scored set only grows); not checked again.
        self._not_novel: set[tuple[int, int]] = set()
        self._work_left = False  # views were left unscored by the last call (see MatchResult.pending)
        # Set by whoever filters the candidates: every instance passed to match() is of the goal's named category
        # (then ``min_inliers_same_category`` makes a clear winner confident). Reset by set_goal().
        self.candidates_share_category = False
        self._colour = ColourEvidence(config.colour)

    def reset(self) -> None:
        """Forget all cached views and scores (call when the instance memory is cleared: ids restart)."""
        self._view_features.clear()
        self._view_scores.clear()
        self._instance_scores.clear()
        self._scored_geometry.clear()
        self._not_novel.clear()
        self._live.clear()
        self._colour.reset()

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        if goal.modality is not GoalModality.IMAGE or goal.image is None:
            raise InvalidGoalError(f"ImageMatcher needs an image goal, got {goal.describe()!r}")
        gray, _ = _to_gray(goal.image, self.config.goal_max_side_px)
        features = self._extract(self._goal_sift, gray, None)
        if len(features.descriptors) < _MIN_HOMOGRAPHY_MATCHES:
            raise InvalidGoalError(f"goal image ({goal.describe()}) has only {len(features.descriptors)} "
                                   "SIFT keypoints: too little texture to match")
        self._goal = features
        self._colour.set_goal(goal.image)
        self.candidates_share_category = False
        self._goal_centre_px = ((gray.shape[1] - 1) / 2.0, (gray.shape[0] - 1) / 2.0)
        self._goal_short_side_px = float(min(gray.shape))
        self._goal_area_px2 = float(gray.shape[0] * gray.shape[1])
        index_params: dict[str, bool | int | float | str] = {"algorithm": _FLANN_INDEX_KDTREE,
                                                             "trees": self.config.flann_trees}
        search_params: dict[str, bool | int | float | str] = {"checks": self.config.flann_checks}
        self._flann = cv2.FlannBasedMatcher(index_params, search_params)
        self._flann.add([features.descriptors])
        # FLANN draws its random kd-tree split dimensions from OpenCV's per-thread RNG, so an unseeded build
        # gives slightly different matches from run to run; seeding it here makes the index reproducible.
        cv2.setRNGSeed(self.config.flann_seed)
        self._flann.train()
        self._view_scores.clear()
        self._instance_scores.clear()
        self._scored_geometry.clear()
        self._not_novel.clear()
        self._live.clear()

    def observe_live_views(self, views: Sequence[tuple[int, InstanceView]]) -> None:
        """The current frame's views of the candidates (they replace the last frame's): each is compared with the
        goal on a later call when it is novel (another side, much closer, or another spot than every view scored
        so far), within the same budget of extractions per call as stored views."""
        self._live = dict(views)

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """Instances with at least one matched view, by centre-weighted inliers, best first.

        Each call first compares up to ``max_extractions_per_step`` new views with the goal.
        """
        if self._goal is None:
            raise GoatError("ImageMatcher.candidates() called before set_goal()")
        self._forget_missing(instances)
        todo = self._pending(instances)
        for iid, view in todo[:self.config.max_extractions_per_step]:
            self._score_view(iid, view, instances[iid].centroid_m[:2])
        self._live.clear()  # compared, or not novel, or left for a newer frame
        self._work_left = len(todo) > self.config.max_extractions_per_step
        ids = {iid for iid, s in self._instance_scores.items() if s.inliers > 0}
        scored = [ScoredInstance(iid, self._instance_scores[iid].weighted) for iid in ids]
        scored.sort(key=lambda s: (-s.score, s.instance_id))
        return scored

    def instance_inliers(self, instance_id: int) -> int:
        """Most RANSAC inliers of any processed view of an instance for the current goal (0 if none)."""
        return self._instance_scores.get(instance_id, _NO_AGREEMENT).inliers

    def _ratio_matches(self, descriptors: np.ndarray) -> list[cv2.DMatch]:
        """Lowe's ratio test, then at most one query keypoint per goal keypoint (the closest), by query index.

        Many-to-one matches into a small goal patch are what lets RANSAC accept a collapsing model.
        """
        assert self._flann is not None
        pairs = self._flann.knnMatch(descriptors, k=2)
        best_for_goal: dict[int, cv2.DMatch] = {}
        for p in pairs:
            if len(p) == 2 and p[0].distance < self.config.ratio_test * p[1].distance:
                kept = best_for_goal.get(p[0].trainIdx)
                if kept is None or p[0].distance < kept.distance:
                    best_for_goal[p[0].trainIdx] = p[0]
        return sorted(best_for_goal.values(), key=lambda m: m.queryIdx)

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        """The crop ranking decides when it is confident; else, among instances of the goal's named category that
        keypoints leave undecided, colour (confidently when clear); else the crop ranking names the likeliest
        instance, not confidently."""
        ranked = self.candidates(instances)
        # Every instance must have had a view compared first: a background neighbour in the goal picture
        # scored early must not win before the object itself is looked at.
        all_seen = all(iid in self._instance_scores for iid, inst in instances.items() if inst.views)
        cfg = self.config
        crops = sorted((ScoredInstance(iid, s.weighted) for iid, s in self._instance_scores.items() if s.inliers > 0),
                       key=lambda s: (-s.score, s.instance_id))
        needed = cfg.min_inliers_same_category if self.candidates_share_category else cfg.min_inliers
        keypoints_decide = bool(crops) and self.instance_inliers(crops[0].instance_id) >= needed
        if keypoints_decide and all_seen and self._clear_winner(crops, instances):
            return MatchResult(instance_id=crops[0].instance_id, score=ranked[0].score, confident=True,
                               pending=self._work_left)
        if not keypoints_decide and self.candidates_share_category and cfg.use_colour:
            by_colour = self._colour_match(instances, all_seen)
            if by_colour is not None:
                return by_colour
        if not ranked:
            return MatchResult(instance_id=None, score=0.0, confident=False, pending=self._work_left)
        return MatchResult(instance_id=ranked[0].instance_id, score=ranked[0].score, confident=False,
                           pending=self._work_left)

    def tied_with_best(self, instances: Mapping[int, Instance]) -> list[int]:
        """The instances the evidence so far cannot rank apart from the best, best first (TiedCandidates).

        Only for a goal whose candidates share its named category, while keypoints decide nothing (no instance has
        ``min_inliers_same_category`` inliers): those whose colour is within
        ``colour.tie_margin`` of the leader's. Empty when the evidence points at one instance.
        """
        cfg = self.config
        if not (self.candidates_share_category and cfg.use_colour):
            return []
        if any(self.instance_inliers(iid) >= cfg.min_inliers_same_category for iid in instances):
            return []
        ranked = self.colour_scores(instances)
        if len(ranked) < 2:
            return []
        floor = ranked[0].score - cfg.colour.tie_margin
        tied = [s.instance_id for s in ranked if s.score >= floor]
        return tied if len(tied) >= 2 else []

    def colour_scores(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """Instances with colour evidence by histogram intersection with the goal picture's centre, best first."""
        scored = [ScoredInstance(iid, s) for iid, s in self._colour.scores(instances).items()]
        scored.sort(key=lambda s: (-s.score, s.instance_id))
        return scored

    def _colour_match(self, instances: Mapping[int, Instance], all_seen: bool) -> Optional[MatchResult]:
        """The colour leader among instances of the goal's category: confident when it is clear (every view
        compared by keypoints first, similarity above the floor, a margin over every non-twin rival)."""
        ranked = self.colour_scores(instances)
        if not ranked:
            return None
        cfg = self.config.colour
        best = ranked[0]
        second = runner_up(ranked, instances, self.config.duplicate_radius_m)
        margin = best.score - (second.score if second is not None else 0.0)
        confident = (all_seen and not self._work_left and best.score >= cfg.min_similarity
                     and margin >= cfg.confident_margin)
        return MatchResult(instance_id=best.instance_id, score=best.score, confident=confident,
                           pending=self._work_left)

    def _clear_winner(self, ranked: Sequence[ScoredInstance], instances: Mapping[int, Instance]) -> bool:
        second = runner_up(ranked, instances, self.config.duplicate_radius_m)
        return second is None or ranked[0].score >= self.config.confident_ratio * second.score

    def _forget_missing(self, instances: Mapping[int, Instance]) -> None:
        """Drop cached descriptors of views no longer stored and scores of instances no longer present."""
        live = {(iid, v.step) for iid, inst in instances.items()
                for v in inst.views[:self.config.max_views_per_instance]}
        for key in set(self._view_features) - live:
            del self._view_features[key]
        self._not_novel &= live
        for iid in set(self._instance_scores) - set(instances):
            del self._instance_scores[iid]
            self._scored_geometry.pop(iid, None)
        for key in [k for k in self._view_scores if k[0] not in instances]:
            del self._view_scores[key]

    def _pending(self, instances: Mapping[int, Instance]) -> list[tuple[int, InstanceView]]:
        """Novel views not yet scored for this goal: unscored instances first, then the current frame's views,
        then larger stored views."""
        limit = self.config.max_views_per_instance
        todo: list[tuple[int, InstanceView]] = []
        for iid, inst in instances.items():
            fresh = list(inst.views[:limit])
            live = self._live.get(iid)
            if live is not None and all(v.step != live.step for v in fresh):
                fresh.append(live)
            fresh = [v for v in fresh
                     if (iid, v.step) not in self._view_scores and (iid, v.step) not in self._not_novel]
            if fresh and iid in self._scored_geometry:
                centre_xy = inst.centroid_m[:2]
                stale = [v for v in fresh if not self._is_novel(iid, centre_xy, v)]
                self._not_novel.update((iid, v.step) for v in stale)
                fresh = [v for v in fresh if (iid, v.step) not in self._not_novel]
            todo.extend((iid, v) for v in fresh)
        todo.sort(key=lambda item: (item[0] in self._instance_scores, self._live.get(item[0]) is not item[1],
                                    -item[1].pixel_count, item[0], item[1].step))
        return todo

    @staticmethod
    def _bearing_rad(centre_xy: np.ndarray, view: InstanceView) -> float:
        """Direction from the object to the robot that took the view (episode frame)."""
        return math.atan2(view.pose.y_m - float(centre_xy[1]), view.pose.x_m - float(centre_xy[0]))

    def _is_novel(self, iid: int, centre_xy: np.ndarray, view: InstanceView) -> bool:
        """True unless a scored view of the instance is like it: taken within ``novel_position_m`` of its camera,
        from within ``novel_bearing_rad`` of its side, and not ``novel_growth`` times smaller (a turn of the
        head that brings the rest of a large object into the frame counts as growth)."""
        cfg = self.config
        bearing_rad = self._bearing_rad(centre_xy, view)
        for b, pixels, x, y in self._scored_geometry[iid]:
            if (math.hypot(view.pose.x_m - x, view.pose.y_m - y) < cfg.novel_position_m
                    and abs(math.remainder(bearing_rad - b, math.tau)) <= cfg.novel_bearing_rad
                    and view.pixel_count < cfg.novel_growth * pixels):
                return False
        return True

    def _score_view(self, iid: int, view: InstanceView, centre_xy: np.ndarray) -> None:
        key = (iid, view.step)
        if key not in self._view_features:
            self._view_features[key] = self._view_descriptors(iid, view)
        score = self._agreement(self._view_features[key])
        self._view_scores[key] = score
        geometry = (self._bearing_rad(centre_xy, view), view.pixel_count, view.pose.x_m, view.pose.y_m)
        self._scored_geometry.setdefault(iid, []).append(geometry)
        previous = self._instance_scores.get(iid, _NO_AGREEMENT)
        if (score.weighted, score.inliers) > (previous.weighted, previous.inliers):
            self._instance_scores[iid] = score
        else:
            self._instance_scores.setdefault(iid, previous)

    def _view_descriptors(self, iid: int, view: InstanceView) -> _Features:
        gray, mask = self._view_gray_and_mask(iid, view)
        return self._extract(self._view_sift, gray, mask)

    def _view_gray_and_mask(self, iid: int, view: InstanceView) -> tuple[np.ndarray, np.ndarray]:
        """A stored view as the matcher describes it: grayscale, downscaled, and its dilated mask (uint8 0/255)."""
        if view.rgb.ndim != 3 or view.rgb.dtype != np.uint8 or view.mask.shape != view.rgb.shape[:2]:
            raise GoatError(f"view of instance {iid} at step {view.step} must be a uint8 (h, w, 3) crop with "
                            f"a matching mask, got rgb {view.rgb.dtype} {view.rgb.shape}, "
                            f"mask {view.mask.shape}")
        gray, scale = _to_gray(view.rgb, self.config.view_max_side_px)
        mask: np.ndarray = np.where(view.mask, 255, 0).astype(np.uint8)
        if scale < 1.0:
            mask = cv2.resize(mask, (gray.shape[1], gray.shape[0]), interpolation=cv2.INTER_NEAREST)
        radius = self.config.mask_dilation_px
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
        return gray, cv2.dilate(mask, kernel)

    @staticmethod
    def _extract(sift: cv2.SIFT, gray: np.ndarray, mask: Optional[np.ndarray]) -> _Features:
        keypoints, descriptors = sift.detectAndCompute(gray, mask)
        if descriptors is None or len(keypoints) == 0:
            return _Features(np.zeros((0, 2), np.float32), np.zeros((0, 128), np.float32))
        points = np.array([kp.pt for kp in keypoints], dtype=np.float32)
        return _Features(points, np.asarray(descriptors, dtype=np.float32))

    def _agreement(self, view: _Features) -> ViewScore:
        """Plausible RANSAC-homography inliers between a view and the goal picture, and their weight."""
        assert self._flann is not None and self._goal is not None
        if len(view.descriptors) < 2:
            return _NO_AGREEMENT
        good = self._ratio_matches(view.descriptors)
        if len(good) < max(self.config.min_matches, _MIN_HOMOGRAPHY_MATCHES):
            return _NO_AGREEMENT
        src = view.points_px[[m.queryIdx for m in good]]
        dst = self._goal.points_px[[m.trainIdx for m in good]]
        homography, inlier_mask = cv2.findHomography(src, dst, cv2.RANSAC, self.config.ransac_reprojection_px)
        if homography is None or inlier_mask is None:
            return _NO_AGREEMENT
        keep = inlier_mask.ravel().astype(bool)
        inliers = dst[keep]
        if len(inliers) <= _MIN_HOMOGRAPHY_MATCHES:
            return _NO_AGREEMENT
        if not self._plausible(homography, src[keep].mean(axis=0), inliers):
            return _NO_AGREEMENT
        return ViewScore(inliers=len(inliers), weighted=len(inliers) * self._centre_weight(inliers))

    def _plausible(self, homography: np.ndarray, view_centre_px: np.ndarray, goal_inliers_px: np.ndarray) -> bool:
        """The homography keeps orientation and a sane scale and stretch where the inliers are; they span
        some area of the goal picture."""
        cfg = self.config
        x, y = float(view_centre_px[0]), float(view_centre_px[1])
        w = float(homography[2, 0] * x + homography[2, 1] * y + homography[2, 2])
        if abs(w) < 1e-12:
            return False
        mapped = (homography[:2, 0] * x + homography[:2, 1] * y + homography[:2, 2]) / w
        # Jacobian of (u, v) = (H[0:2] . p) / (H[2] . p) at p = (x, y, 1).
        jacobian = (homography[:2, :2] - np.outer(mapped, homography[2, :2])) / w
        big, small = np.linalg.svd(jacobian, compute_uv=False)
        if np.linalg.det(jacobian) <= 0.0 or small < 1.0 / cfg.max_scale_change or big > cfg.max_scale_change:
            return False
        if big / small > cfg.max_anisotropy:
            return False
        hull = cv2.convexHull(goal_inliers_px.reshape(-1, 1, 2).astype(np.float32))
        return cv2.contourArea(hull) >= cfg.min_inlier_area_frac * self._goal_area_px2

    def _centre_weight(self, goal_inliers_px: np.ndarray) -> float:
        """1 when the inliers' convex hull reaches the goal picture's centre, less the farther it stays off."""
        cfg = self.config
        hull = cv2.convexHull(goal_inliers_px.reshape(-1, 1, 2).astype(np.float32))
        inside_px = cv2.pointPolygonTest(hull, self._goal_centre_px, True)  # negative outside
        excess = -inside_px - cfg.centre_margin_frac * self._goal_short_side_px
        fade = 1.0 - max(0.0, excess) / (cfg.centre_falloff_frac * self._goal_short_side_px)
        return max(cfg.off_centre_weight, fade)
