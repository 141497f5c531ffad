"""The FindingDory flags of ``goat-nav bench`` and the high-level policy they choose.

    --selector memory|oracle|vlm    the high level (default memory: rules over a memory built from the frames)
    --perception ground_truth|owlvit|owlv2, --model-dir, --clip-model-dir, --device
                                    the memory's perception (and CLIP frame embeddings); shared with the GOAT suite
    --vlm-url URL --vlm-model NAME [--vlm-api-key-env VAR] [--vlm-frames N] [--vlm-timeout-s S] [--vlm-retries N]
    --experience-bags DIR           each episode's experience video as a rosbag2 MCAP bag, DIR/<episode id>/

This module only parses and builds: the environment variable named by ``--vlm-api-key-env`` is read here, at
the command line's boundary, and the key is passed on (nothing below reads the environment). The policy is
built before any episode runs, so a missing model folder, a missing key or an unreachable VLM endpoint stops the
run in a second with a message that names it.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from goat_core.errors import ConfigError
from goat_core.perception.factory import PerceptionConfig, build_perception
from goat_core.perception.model_folder import check_model_folder
from goat_ros.record import check_bag_path
from goat_suites.findingdory.experience_video import VideoEncoding
from goat_suites.findingdory.policy import HIGH_LEVEL_POLICIES, HighLevelPolicy, OracleSelector
from goat_suites.findingdory.vlm import DEFAULT_FRAME_BUDGET, VlmClient, VlmConfig, VlmSelector
from sim_bridge.embedded.catalogue import CATALOGUE

if TYPE_CHECKING:  # the memory's modules load when a memory is built: every goat-nav command parses these flags
    from goat_suites.findingdory.experience_memory import FrameEmbedder

_VLM_DEFAULTS = VlmConfig(url="http://localhost/v1", model="-")


def add_findingdory_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("FindingDory high level (--suite findingdory)")
    g.add_argument("--selector", choices=HIGH_LEVEL_POLICIES, default="memory",
                   help="memory: rule-based selector over a memory built from the experience frames with --perception "
                        "(default); oracle: the same rules over the simulator's log (an upper bound); vlm: a "
                        "video-language model over an OpenAI-compatible endpoint")
    g.add_argument("--vlm-url", default=None,
                   help="base URL of an OpenAI-compatible chat-completions API (vLLM, Ollama, a hosted API), e.g. "
                        "http://localhost:8000/v1")
    g.add_argument("--vlm-model", default=None, help="model name the endpoint serves")
    g.add_argument("--vlm-api-key-env", default=None, metavar="VAR",
                   help="name of the environment variable holding the API key (sent as a bearer token)")
    g.add_argument("--vlm-frames", type=int, default=DEFAULT_FRAME_BUDGET,
                   help=f"frame budget: the video is evenly subsampled to this many frames (default "
                        f"{DEFAULT_FRAME_BUDGET}, as FindingDory's VLM baselines)")
    g.add_argument("--vlm-timeout-s", type=float, default=_VLM_DEFAULTS.timeout_s,
                   help=f"per request (default {_VLM_DEFAULTS.timeout_s:g})")
    g.add_argument("--vlm-retries", type=int, default=_VLM_DEFAULTS.retries,
                   help=f"further attempts after a failed request (default {_VLM_DEFAULTS.retries})")
    g.add_argument("--experience-bags", type=Path, default=None, metavar="DIR",
                   help="write each episode's experience (RGB as JPEG, depth as PNG, poses, clock, gripper; "
                        "segmentation with ground-truth perception) as a rosbag2 MCAP bag DIR/<episode id>/")


@dataclass(frozen=True)
class PolicyChoice:
    """The high-level policy a run uses, and what it needs."""

    selector: str = "memory"
    perception: PerceptionConfig = field(default_factory=PerceptionConfig)  # the memory's perception
    clip_model_dir: Optional[str] = None  # CLIP frame embeddings for the memory (default: category histograms)
    vlm: Optional[VlmConfig] = None
    experience_bags: Optional[Path] = None

    def __post_init__(self) -> None:
        if self.selector not in HIGH_LEVEL_POLICIES:
            raise ConfigError(f"--selector must be one of {HIGH_LEVEL_POLICIES}, got {self.selector!r}")
        if (self.selector == "vlm") != (self.vlm is not None):
            raise ConfigError("--selector vlm needs --vlm-url and --vlm-model, and they apply to it only")
        if self.selector != "memory" and (self.perception.backend != "ground_truth" or self.clip_model_dir):
            raise ConfigError(f"--perception and --clip-model-dir choose the memory's perception; --selector "
                              f"{self.selector} does not build a memory")

    @property
    def perception_name(self) -> str:
        """What the frames were chosen from, for results: a backend, the simulator's log, or the VLM's eyes."""
        if self.selector == "oracle":
            return "simulator log (oracle)"
        if self.selector == "vlm":
            return "vlm (rgb frames)"
        return self.perception.backend

    def video_encoding(self) -> VideoEncoding:
        """Segmentation is recorded only for the memory under ground-truth perception."""
        return VideoEncoding(with_segmentation=self.selector == "memory"
                             and self.perception.backend == "ground_truth")


def _api_key(var: Optional[str]) -> Optional[str]:
    if var is None:
        return None
    value = os.environ.get(var)
    if not value:
        raise ConfigError(f"--vlm-api-key-env names {var!r}, which is not set in the environment (or is empty)")
    return value


def policy_choice(args: argparse.Namespace) -> PolicyChoice:
    """The choice of the command line flags (checked; the API key is read from its variable here)."""
    selector = getattr(args, "selector", "memory")
    vlm = None
    if args.vlm_url is not None or args.vlm_model is not None:
        if selector != "vlm":
            raise ConfigError("--vlm-url and --vlm-model apply to --selector vlm only")
        if args.vlm_url is None or args.vlm_model is None:
            raise ConfigError("--selector vlm needs both --vlm-url and --vlm-model")
        vlm = VlmConfig(url=args.vlm_url, model=args.vlm_model, api_key=_api_key(args.vlm_api_key_env),
                        frame_budget=args.vlm_frames, timeout_s=args.vlm_timeout_s, retries=args.vlm_retries)
    perception = PerceptionConfig(backend=getattr(args, "perception", "ground_truth"),
                                  model_dir=getattr(args, "model_dir", None), device=getattr(args, "device", "cpu"))
    choice = PolicyChoice(selector=selector, perception=perception,
                          clip_model_dir=getattr(args, "clip_model_dir", None), vlm=vlm,
                          experience_bags=getattr(args, "experience_bags", None))
    if choice.experience_bags is not None:  # every bag this run will write: a bad folder fails now
        for k in range(args.episodes):
            check_bag_path(choice.experience_bags / f"{args.seed}-{k}")
    return choice


def experience_bag_folder(choice: PolicyChoice, episode_id: str) -> Optional[Path]:
    return None if choice.experience_bags is None else choice.experience_bags / episode_id


def build_policy(choice: PolicyChoice) -> HighLevelPolicy:
    """The policy, ready to begin episodes: models loaded, a VLM endpoint checked (VlmUnreachableError)."""
    if choice.selector == "oracle":
        return OracleSelector()
    if choice.selector == "vlm":
        assert choice.vlm is not None
        client = VlmClient(choice.vlm)
        client.check()
        return VlmSelector(client)
    from goat_suites.findingdory.experience_memory import CategoryHistogramEmbedder, ClipFrameEmbedder
    from goat_suites.findingdory.memory import MemorySelector

    labels = [spec.name for spec in CATALOGUE]
    if choice.perception.backend != "ground_truth":
        check_model_folder(choice.perception.model_dir, choice.perception.backend)
    embedder: FrameEmbedder = CategoryHistogramEmbedder(labels)
    if choice.clip_model_dir is not None:
        from goat_core.perception.clip_embedder import ClipEmbedder  # torch: only when asked for

        embedder = ClipFrameEmbedder(ClipEmbedder.load(choice.clip_model_dir, choice.perception.device,
                                                       choice.perception.torch_threads))
    return MemorySelector(build_perception(choice.perception, labels), choice.perception.backend, embedder=embedder)
