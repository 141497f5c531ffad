"""Per-frame latency of every perception and goal-matching backend, as medians on this machine.

    python benchmarks/bench_perception.py [--frames 20] [--device cpu|cuda] [--threads 1]
        [--owlvit-dir DIR] [--owlv2-dir DIR] [--clip-dir DIR]

Frames are 360x640 renders of a generated home (embedded simulator). Without model folders, OWL-ViT, OWLv2 and
CLIP are tiny random models built offline (goat_core.perception.tiny_models): their numbers measure the
pipeline around the network (preprocessing, post-processing, masks), not a real network; pass the folders of
real weights (docs/perception.md) to measure those. Rows:

* ground truth: GroundTruthPerception.detect on the simulator's segmentation;
* owlvit / owlv2: OwlDetector.detect over the simulator's category labels (depth-band masks);
* clip crops: ClipEmbedder.encode_images of the ground-truth instance crops of the frame (per frame, per crop);
* cow owl / cow clip patches: the CoW localizer on the frame (relevance map + centre pixel);
* sift / xfeat: one stored view compared with an image goal through the matcher's public API (view features,
  pairing, RANSAC), and the goal's set-up once per goal.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional, Sequence, TypeVar

import numpy as np
from latency import summarise_ms

from goat_core.errors import GoatError
from goat_core.matching.cow import CowConfig, build_cow
from goat_core.matching.image import ImageMatcher, ImageMatcherConfig
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import DiscreteAction, Goal, GoalModality, Instance, InstanceView, Observation
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim

LABELS = [spec.name for spec in CATALOGUE]
T = TypeVar("T")


def render_frames(seed: int, count: int, starts: int = 6) -> list[Observation]:
    """The ``count`` frames showing the most objects among full turns at a few random places of a generated home
    (a frame of bare wall would flatter every backend)."""
    frames: list[Observation] = []
    with EmbeddedSim(generate_home(seed, HomeConfig())) as sim:
        rng = np.random.default_rng(seed)
        for _ in range(starts):
            frames.append(sim.reset(sim.navgrid.sample_navigable(rng), float(rng.uniform(-np.pi, np.pi))))
            frames.extend(sim.step(DiscreteAction.TURN_LEFT) for _ in range(11))
    gt = GroundTruthPerception(LABELS)
    found = [gt.detect(obs) for obs in frames]
    rank = sorted(range(len(frames)), key=lambda i: (-len(found[i]), -sum(int(d.mask.sum()) for d in found[i]), i))
    return [frames[i] for i in sorted(rank[:count])]


def timed(fn: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    """Milliseconds of each call after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(1000.0 * (time.perf_counter() - t))
    return samples


def cycle(items: Sequence[T]) -> Callable[[], T]:
    """A callable returning the next item each time (round robin)."""
    state = {"i": 0}

    def next_item() -> T:
        item = items[state["i"] % len(items)]
        state["i"] += 1
        return item

    return next_item


def report(name: str, samples_ms: Sequence[float], note: str = "") -> None:
    print(f"{name:<34}{summarise_ms(samples_ms)}{('  ' + note) if note else ''}")


def crops_of(obs: Observation, limit: int = 8) -> list[np.ndarray]:
    """Crops around the largest ground-truth instances of a frame (what the memory stores as views)."""
    detections = GroundTruthPerception(LABELS).detect(obs)
    detections.sort(key=lambda d: -int(d.mask.sum()))
    crops = []
    for det in detections[:limit]:
        x0, y0, x1, y1 = det.bbox_xyxy
        crops.append(obs.rgb[max(0, y0 - 16):y1 + 16, max(0, x0 - 16):x1 + 16].copy())
    return crops


def bench_detectors(frames: Sequence[Observation], dirs: dict[str, str], device: str, threads: int,
                    repeats: int) -> None:
    from goat_core.perception.factory import PerceptionConfig, build_perception

    gt = GroundTruthPerception(LABELS)
    next_frame = cycle(frames)
    report("ground truth", timed(lambda: gt.detect(next_frame()), repeats))
    for variant in ("owlvit", "owlv2"):
        detector = build_perception(PerceptionConfig(backend=variant, model_dir=dirs[variant], device=device,
                                                     torch_threads=threads), LABELS)
        report(f"{variant} ({dirs['kind_' + variant]})", timed(lambda d=detector: d.detect(next_frame()), repeats),
               f"{len(LABELS)} labels")


def bench_clip(frames: Sequence[Observation], dirs: dict[str, str], device: str, threads: int,
               repeats: int) -> None:
    from goat_core.perception.clip_embedder import ClipEmbedder

    clip = ClipEmbedder.load(dirs["clip"], device, threads)
    crops = [crops_of(obs) for obs in frames]
    n_crops = sum(len(c) for c in crops)
    next_crops = cycle(crops)
    samples = timed(lambda: clip.encode_images(next_crops()), repeats)
    per_crop = float(np.median(samples)) * len(frames) / max(n_crops, 1)
    report(f"clip crops ({dirs['kind_clip']})", samples, f"~{n_crops / len(frames):.1f} crops/frame, "
           f"~{per_crop:.1f} ms/crop")


def bench_cow(frames: Sequence[Observation], dirs: dict[str, str], device: str, threads: int, repeats: int) -> None:
    from goat_core.perception.clip_embedder import ClipEmbedder
    from goat_core.perception.openvocab import OwlModel

    goal = Goal(GoalModality.CATEGORY, category="sofa")
    next_frame = cycle(frames)
    owl = OwlModel.load("owlvit", dirs["owlvit"], device, threads)
    perception, matcher = build_cow(CowConfig(), owl=owl)
    matcher.set_goal(goal, LABELS)
    report(f"cow owl ({dirs['kind_owlvit']})", timed(lambda: perception.detect(next_frame()), repeats))
    clip = ClipEmbedder.load(dirs["clip"], device, threads)
    perception, matcher = build_cow(CowConfig(relevance="clip_patches"), clip=clip)
    matcher.set_goal(goal, LABELS)
    report(f"cow clip patches ({dirs['kind_clip']})", timed(lambda: perception.detect(next_frame()), repeats),
           "4x2 crops")


def bench_image_matcher(name: str, matcher: ImageMatcher, frames: Sequence[Observation], repeats: int) -> None:
    """A fresh single-view instance per call, so every call extracts and matches one new view."""
    goal = Goal(GoalModality.IMAGE, image=frames[0].rgb)
    report(f"{name} set_goal", timed(lambda: matcher.set_goal(goal, LABELS), 3))
    views = [crop for obs in frames[1:] for crop in crops_of(obs, limit=2)]
    counter = {"k": 0}

    def one_view() -> None:
        k = counter["k"]
        counter["k"] += 1
        crop = views[k % len(views)]
        view = InstanceView(rgb=crop, mask=np.ones(crop.shape[:2], dtype=bool),
                            pixel_count=crop.shape[0] * crop.shape[1], pose=frames[0].pose, step=k)
        points = np.array([[1.0, 0.0, 0.5], [1.0, 0.1, 0.6]])
        inst = Instance(instance_id=k, category="object", points_xyz_m=points, last_seen_step=k, views=[view])
        matcher.match({k: inst})

    report(f"{name} per view", timed(one_view, repeats), f"view crops <= {matcher.config.view_max_side_px} px")


def tiny_dirs(root: Path) -> dict[str, str]:
    from goat_core.perception.tiny_models import save_tiny_model

    return {family: str(save_tiny_model(root / family, family, seed=0)) for family in ("owlvit", "owlv2", "clip")}


def model_dirs(args: argparse.Namespace, root: Path) -> dict[str, str]:
    """Folders of real weights where given, else tiny random ones; ``kind_<family>`` says which."""
    given = {"owlvit": args.owlvit_dir, "owlv2": args.owlv2_dir, "clip": args.clip_dir}
    tiny = tiny_dirs(root) if not all(given.values()) else {}
    dirs: dict[str, str] = {}
    for family, folder in given.items():
        dirs[family] = folder if folder else tiny[family]
        dirs[f"kind_{family}"] = "real" if folder else "tiny random"
    return dirs


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=20, help="timed calls per backend")
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--owlvit-dir", help="OWL-ViT model folder (real weights); default: a tiny random model")
    parser.add_argument("--owlv2-dir", help="OWLv2 model folder (real weights); default: a tiny random model")
    parser.add_argument("--clip-dir", help="CLIP model folder (real weights); default: a tiny random model")
    args = parser.parse_args(argv)
    try:
        import torch
        import transformers
    except ImportError as exc:
        print(f"this benchmark needs the openvocab extra (pip install -e '.[openvocab]'): {exc}", file=sys.stderr)
        return 2
    transformers.utils.logging.disable_progress_bar()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}, "
          f"torch {torch.__version__}, transformers {transformers.__version__}, device {args.device}, "
          f"{args.threads} torch thread(s)")
    frames = render_frames(args.seed, 8)
    print(f"frames: {len(frames)} renders of {frames[0].rgb.shape[1]}x{frames[0].rgb.shape[0]}, "
          f"{args.frames} timed calls per row")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dirs = model_dirs(args, Path(tmp))
            bench_detectors(frames, dirs, args.device, args.threads, args.frames)
            bench_clip(frames, dirs, args.device, args.threads, args.frames)
            bench_cow(frames, dirs, args.device, args.threads, args.frames)
        bench_image_matcher("sift", ImageMatcher(ImageMatcherConfig()), frames, args.frames)
        from goat_core.matching.image_xfeat import XFeatConfig, XFeatImageMatcher

        xfeat = XFeatImageMatcher(ImageMatcherConfig(), XFeatConfig(device=args.device, torch_threads=args.threads))
        bench_image_matcher("xfeat+lighterglue", xfeat, frames, args.frames)
    except GoatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
