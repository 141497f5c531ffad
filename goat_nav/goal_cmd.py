"""`goat-nav goal`: send one goal to a running graph (simulator or robot), wait for its outcome and print it.

    goat-nav goal "the red mug on the kitchen table"      (a description)
    goat-nav goal --category sofa                          (an object category)
    goat-nav goal --image photo.png [--category mug]       (a picture, optionally naming its category)

The goals of one ``--episode`` (default ``live``) share the controller's map and instance memory; ``--new-episode``
starts afresh. Ctrl-C cancels the goal (the controller ends the subtask) and exits 130. Exit status: 0 for a
success, 1 for a subtask that ended otherwise, 2 for a bad goal or no graph. Needs ROS 2 (scripts/setup_ros.sh).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from goat_core.errors import GoatError
from goat_core.types import DiscreteAction, Goal, GoalModality
from goat_suites.common.metrics import path_length_m

DEFAULT_EPISODE = "live"


def add_goal_parser(sub: Any) -> None:
    """The ``goal`` subcommand's arguments (cli.py wires it in)."""
    p = sub.add_parser("goal", help="send one goal to a running ROS 2 graph and print its outcome (Ctrl-C cancels)")
    p.add_argument("text", nargs="?", default=None, help="a free-text description of the thing to go to")
    p.add_argument("--category", default=None, help="an object category (alone: a category goal; with --image: the "
                                                    "pictured object's category)")
    p.add_argument("--image", type=Path, default=None, help="a picture of the thing (PNG or JPEG)")
    p.add_argument("--image-hfov-deg", type=float, default=None,
                   help="horizontal field of view the picture was taken with (default: unknown)")
    p.add_argument("--max-actions", type=int, default=500, help="action budget, STOP included (default 500)")
    p.add_argument("--episode", default=DEFAULT_EPISODE,
                   help=f"episode id: goals of one episode share the map and memory (default {DEFAULT_EPISODE})")
    p.add_argument("--new-episode", action="store_true", help="start the episode afresh (forget map and memory)")
    p.add_argument("--timeout-s", type=float, default=600.0, help="give up waiting for the outcome after this")
    p.add_argument("--connect-timeout-s", type=float, default=30.0,
                   help="how long to wait for a controller to subscribe to /goat/goal (default 30)")


def goal_from_args(args: argparse.Namespace) -> Goal:
    """The core goal of the arguments; GoatError naming what is wrong or missing."""
    if args.image is not None:
        if args.text is not None:
            raise GoatError("give either a description or --image, not both")
        hfov = math.radians(args.image_hfov_deg) if args.image_hfov_deg is not None else None
        return Goal(GoalModality.IMAGE, category=args.category, image=read_rgb(args.image), image_hfov_rad=hfov)
    if args.text is not None:
        if args.category is not None:
            raise GoatError("give either a description or --category, not both (--category names an --image's object)")
        return Goal(GoalModality.DESCRIPTION, text=args.text)
    if args.category is not None:
        return Goal(GoalModality.CATEGORY, category=args.category)
    raise GoatError("no goal: give a description, --category CATEGORY or --image PICTURE")


def read_rgb(path: Path) -> np.ndarray:
    import cv2

    if not Path(path).is_file():
        raise GoatError(f"--image {path}: no such file")
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None:
        raise GoatError(f"--image {path}: not an image OpenCV can read (PNG or JPEG expected)")
    return np.ascontiguousarray(bgr[:, :, ::-1])


@dataclass(frozen=True)
class OutcomeSummary:
    """What one goal came to, from the controller's outcome (and the evaluator's score where one runs)."""

    success: bool
    judged_by: str  # "evaluator" (scored against the ground truth) or "agent" (its own verdict at STOP)
    stop_reason: str
    why: str
    actions: tuple[int, ...]
    path_length_m: float
    spl: Optional[float] = None

    def lines(self) -> list[str]:
        verdict = "success" if self.success else "failure"
        judge = ("scored by the evaluator" if self.judged_by == "evaluator"
                 else "the agent's own verdict: no evaluator in this graph")
        counts = {a.name.lower(): self.actions.count(int(a)) for a in DiscreteAction if int(a) in self.actions}
        out = [f"outcome: {verdict} ({judge})",
               f"actions: {len(self.actions)} ({', '.join(f'{n} {k}' for k, n in counts.items()) or 'none'})",
               f"path length: {self.path_length_m:.2f} m"]
        if self.spl is not None:
            out.append(f"SPL: {self.spl:.3f}")
        out.append(f"ended: {self.stop_reason}{': ' + self.why if self.why else ''}")
        return out


def summarise(outcome: Any, result: Any = None) -> OutcomeSummary:
    """The summary of a ``SubtaskOutcome`` message (and a ``SubtaskResult``, when an evaluator scored it)."""
    poses = [(p.x, p.y) for p in outcome.poses]
    at_target = outcome.stop_reason == "stop" and bool(outcome.stop_at_target)
    why = outcome.error or outcome.stop_detail
    if at_target and outcome.stop_target_category:
        where = f"stopped at a {outcome.stop_target_category}" + (
            " (confident)" if outcome.stop_target_confident else " (not confident)")
        why = f"{where}; {why}" if why else where
    if result is not None:
        return OutcomeSummary(bool(result.success), "evaluator", outcome.stop_reason, why, tuple(outcome.actions),
                              path_length_m(poses) if len(poses) > 1 else 0.0, float(result.spl))
    return OutcomeSummary(at_target, "agent", outcome.stop_reason, why, tuple(outcome.actions),
                          path_length_m(poses) if len(poses) > 1 else 0.0)


def run_goal(args: argparse.Namespace) -> int:
    goal = goal_from_args(args)  # a bad goal fails before ROS is loaded
    if args.max_actions < 1:
        raise GoatError(f"--max-actions must be >= 1, got {args.max_actions}")
    from goat_nav.launcher import _require_ros

    _require_ros()
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from goat_ros.goal_client import GoalClient

    # A fresh index per goal keeps the episode (and the controller's memory) going; index 0 starts it afresh.
    index = 0 if args.new_episode else int(time.time() * 1000) % 2**31 or 1
    # Ctrl-C stays Python's KeyboardInterrupt (rclpy's handler would shut the context before the cancel is sent).
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    client = GoalClient()
    try:
        client.send(goal, args.episode, index, args.max_actions, args.connect_timeout_s)
        print(f"goal sent: {goal.modality.value} {goal.category or goal.text or ''}".rstrip()
              + f" (episode {args.episode}, subtask {index}); Ctrl-C cancels", flush=True)
        try:
            outcome = client.wait(args.timeout_s)
        except KeyboardInterrupt:
            print("cancelling the goal ...", flush=True)
            outcome = client.cancel()
            if outcome is not None:
                print("\n".join(summarise(outcome, client.result).lines()))
            return 130
        if outcome is None:
            client.cancel()
            raise GoatError(f"no outcome within {args.timeout_s:.0f} s; the goal was cancelled")
        summary = summarise(outcome, client.result)
        print("\n".join(summary.lines()), flush=True)
        return 0 if summary.success else 1
    finally:
        client.close()
        rclpy.try_shutdown()

