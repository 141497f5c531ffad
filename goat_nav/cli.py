"""`goat-nav`: the command line of goat_nav.

    goat-nav bench --episodes 20 --seed 1000 --out results.json --report report.html
    goat-nav bench --suite langmap --episodes 10      (also: findingdory, pasture)
    goat-nav bench --episodes 300 --workers 8 --out results.json   (Ray; --ray-address auto on a cluster)
    goat-nav report results.json --out report.html
    goat-nav generate --episodes 10 --seed 7 --out episodes.json.gz
    goat-nav render --seed 7 --out home7/        (a top-down map and first-person views of one home)
    goat-nav launch sim                     (ROS 2: the simulator bridge and the agent's nodes)
    goat-nav goal --category sofa           (ROS 2: one goal to the running graph, prints its outcome)
    goat-nav view                           (ROS 2: the graph live in Foxglove / Lichtblick, ws://127.0.0.1:8765)
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from goat_core.errors import GoatError
from goat_core.matching.cow import COW_RELEVANCE
from goat_core.matching.selection import GOAL_MATCHERS, IMAGE_MATCHERS
from goat_core.perception.detector_errors import PERCEPTION_ERROR_PRESETS
from goat_core.perception.factory import PERCEPTION_BACKENDS
from goat_nav.goal_cmd import add_goal_parser
from goat_suites.common.agents import AGENTS
from goat_suites.common.parallel import add_parallel_args, parallel_config
from goat_suites.common.realism import add_realism_args, check_realism_args
from goat_suites.findingdory.args import add_findingdory_args
from sim_bridge.embedded.home import HOME_KINDS

LIVE_DEFAULT = "127.0.0.1:8765"

SUITES = ("goat", "langmap", "findingdory", "pasture")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _add_generation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--episodes", type=_positive_int, default=20, help="number of procedural episodes (default 20)")
    p.add_argument("--seed", type=int, default=1000, help="seed of the procedural homes and episodes (default 1000)")
    p.add_argument("--num-rooms", type=int, default=None, help="rooms per generated home (default: the generator's)")
    _add_homes_args(p)


def _add_homes_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--homes", choices=HOME_KINDS, default=None,
                   help="large / large-furnished: real-scale homes of 12-16 rooms along a hallway, densely "
                        "furnished, of MuJoCo primitives / of real 3D models of Debian's sweethome3d-furniture; "
                        "small (also 'primitive'): 5 rooms in a grid, furniture of MuJoCo boxes, cylinders and "
                        "spheres; furnished: the same with the 3D models. Default: large-furnished for the GOAT "
                        "suite of bench and for generate unless --num-rooms is given, small otherwise (other "
                        "suites, render; docs/homes.md)")
    p.add_argument("--furniture-libraries", default=None, metavar="A,B",
                   help="Sweet Home 3D libraries (.sh3f stems in /usr/share/sweethome3d/furniture) of furnished "
                        "homes, comma-separated (default BlendSwap-CC-0,BlendSwap-CC-BY: the CC0 and CC-BY ones)")


def _add_perception_args(p: argparse.ArgumentParser) -> None:
    """Perception and goal matching (docs/perception.md); models are read from local folders only."""
    g = p.add_argument_group("perception and matching (open-vocabulary backends need the openvocab extra)")
    g.add_argument("--perception", choices=PERCEPTION_BACKENDS, default="ground_truth",
                   help="ground_truth (the simulator's segmentation, GOAT-GTSem) or an OWL detector (default "
                        "ground_truth)")
    g.add_argument("--model-dir", default=None, help="local folder of the OWL-ViT / OWLv2 model (save_pretrained)")
    g.add_argument("--clip-model-dir", default=None, help="local folder of a CLIP model (modular_goat, cow clip)")
    g.add_argument("--matcher", choices=GOAL_MATCHERS, default="structured",
                   help="structured (category/description/image matchers), modular_goat or cow (default structured)")
    g.add_argument("--image-matcher", choices=IMAGE_MATCHERS, default="sift",
                   help="keypoints of image goals: sift (OpenCV SIFT + RANSAC) or xfeat (XFeat + LighterGlue)")
    g.add_argument("--cow-relevance", choices=COW_RELEVANCE, default="owl",
                   help="CoW's relevance map: owl (OWL box scores) or clip_patches (default owl)")
    g.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N for the models (default cpu)")
    g.add_argument("--perception-errors", choices=PERCEPTION_ERROR_PRESETS, default="off",
                   help="ground truth through a detector error model (misses, confusions, phantoms, mask and id "
                        "errors; docs/perception_errors.md), seeded by --seed (default off)")
    g.add_argument("--evidence", choices=("auto", "on", "off"), default="auto",
                   help="the instance memory trusts an object after repeated detections, names it by its votes and "
                        "forgets what views should show and do not (docs/perception_errors.md); auto: on exactly "
                        "when --perception-errors is (default auto)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="goat-nav", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="run a benchmark in process on the embedded simulator and score it")
    _add_generation_args(bench)
    bench.add_argument("--suite", choices=SUITES, default="goat",
                       help="task family: goat (GOAT-Bench), langmap (LangMap/HieraNav levels), findingdory "
                            "(memory of a past experience), pasture (CoW's PASTURE); default goat")
    bench.add_argument("--agent", choices=AGENTS, default=AGENTS[0],
                       help="the method: goat (this project's agent) or cow (CLIP on Wheels, Gadre et al. 2023: "
                            "frontier exploration, the goal category localized per frame, no memory across "
                            "subtasks; GOAT suite only; ground-truth perception, or its own OWL / CLIP localizer "
                            "with --matcher cow; docs/baselines.md); default goat")
    bench.add_argument("--episodes-file", type=Path, default=None,
                       help="replay episodes from a GOAT-Bench style .json/.json.gz instead of generating them")
    bench.add_argument("--no-memory", action="store_true",
                       help="ablation: forget the map and instances at the start of every subtask")
    bench.add_argument("--agent-config", type=Path, default=None, metavar="FILE",
                       help="the agent's settings: a YAML file like config/agent.yaml, which may state only what it "
                            "changes (default: the defaults that file lists); --no-memory applies on top")
    bench.add_argument("--image-noise", action="store_true",
                       help="noise robustness: Gaussian pixel noise on image goals, sigma ~ U(0.1, 2.0) (GOAT-Bench)")
    bench.add_argument("--image-without-category", action="store_true",
                       help="image goals give the picture alone, without the object category that GOAT-Bench "
                            "tasks carry (Instance ImageNav's setting)")
    bench.add_argument("--paraphrase", action="store_true",
                       help="noise robustness: description goals restated in other words (relation synonyms, "
                            "room clause first, an instruction verb)")
    bench.add_argument("--out", type=Path, default=None, help="write results JSON here (updated per episode)")
    bench.add_argument("--report", type=Path, default=None, help="write a self-contained HTML report here")
    bench.add_argument("--force", action="store_true", help="replace an existing --out results file")
    bench.add_argument("--max-actions", type=_positive_int, default=None,
                       help="action budget per subtask; for GOAT this replaces the official 5000-per-episode "
                            "budget (500 is the GOAT-Bench README's variant) and marks the run custom")
    bench.add_argument("--max-episode-actions", type=_positive_int, default=None,
                       help="GOAT: action budget per episode, shared by its subtasks (official: 5000)")
    bench.add_argument("--embodiment", choices=("official", "stretch"), default="official",
                       help="official: the suite protocol's camera and motion (docs/protocols.md); stretch: the "
                            "robot's own camera and sliding motion, for sim-to-real runs (marks the run custom)")
    bench.add_argument("--success-distance-m", type=float, default=None,
                       help="success radius in metres (default 0.25 geodesic to a view point)")
    bench.add_argument("--success-metric", choices=("geodesic_viewpoint", "euclidean_object"), default=None,
                       help="geodesic to the nearest view point (GOAT-Bench) or euclidean to the object (paper)")
    bench.add_argument("--quiet", action="store_true", help="no progress bar")
    bench.add_argument("--verbose", action="store_true",
                       help="print one line per subtask: the goal, what the agent chose, how it ended")
    bench.add_argument("--record", type=Path, default=None, metavar="RUN",
                       help="write the run (images, poses, goals, actions) as a rosbag2 bag: folder RUN/ with "
                            "metadata.yaml and RUN.mcap (about 0.5 MB per step)")
    bench.add_argument("--live", nargs="?", const=LIVE_DEFAULT, default=None, metavar="HOST:PORT",
                       help=f"serve the run live to Foxglove / Lichtblick over a Foxglove WebSocket (default "
                            f"{LIVE_DEFAULT}; port 0 picks a free one); needs the live extra")
    _add_perception_args(bench)
    add_findingdory_args(bench)
    bench.add_argument("--ros", action="store_true",
                       help="replay the episodes through the ROS 2 graph (needs scripts/setup_ros.sh)")
    add_parallel_args(bench)
    add_realism_args(bench)

    launch = sub.add_parser("launch", help="run a ROS 2 bringup's nodes without ros2 launch (same nodes, same params)")
    launch.add_argument("bringup", choices=("sim", "bench", "stretch"), help="which node set (goat_ros.graph)")
    launch.add_argument("--episodes-file", type=Path, default=None, help="episode file for the bench bringup")
    launch.add_argument("--param", action="append", metavar="NODE.NAME=VALUE",
                        help="override one parameter, e.g. controller.publish_debug=false (repeatable)")
    launch.add_argument("--isolated", action="store_true", help="one process per node instead of one in all")
    launch.add_argument("--record", type=Path, default=None, metavar="RUN",
                        help="also run the recorder: the graph's topics into a new rosbag2 bag, folder RUN/ with "
                             "metadata.yaml and RUN.mcap (topics: config/recorder.yaml)")

    add_goal_parser(sub)

    view = sub.add_parser("view", help="serve a running graph's topics to Foxglove / Lichtblick (Foxglove WebSocket)")
    view.add_argument("--host", default=None, help="address to bind (default 127.0.0.1; 0.0.0.0 for other machines)")
    view.add_argument("--port", type=int, default=None, help="port (default 8765)")

    compare = sub.add_parser("compare", help="compare a simulator run and a robot run of the same goals")
    compare.add_argument("sim", type=Path, help="results JSON of the simulator run")
    compare.add_argument("real", type=Path, help="results JSON of the robot run (operator-confirmed success)")
    compare.add_argument("--out-dir", type=Path, default=None, help="write SR/SPL plots (SVG and PNG) here")

    report = sub.add_parser("report", help="write the HTML report of a results JSON written by goat-nav bench")
    report.add_argument("results", type=Path, help="results JSON (goat-nav bench --out)")
    report.add_argument("--out", type=Path, default=None, help="HTML file to write (default: next to the results)")

    gen = sub.add_parser("generate", help="generate procedural GOAT episodes and save them as GOAT-Bench JSON")
    _add_generation_args(gen)
    gen.add_argument("--out", type=Path, required=True, help="output file (.json or .json.gz)")

    render = sub.add_parser("render", help="write a top-down map and first-person views of one procedural home")
    render.add_argument("--seed", type=int, default=1000, help="seed of the home (default 1000)")
    render.add_argument("--num-rooms", type=int, default=None, help="rooms of the home (default: the generator's)")
    render.add_argument("--views", type=_positive_int, default=6, help="first-person views to write (default 6)")
    render.add_argument("--out", type=Path, required=True, help="folder to write the PNG files and credits to")
    _add_homes_args(render)
    return parser


def _check_bench_args(args: argparse.Namespace) -> None:
    """Combinations of ``goat-nav bench`` flags that cannot run, refused before any episode is generated."""
    if (args.suite != "goat" or args.ros) and (
            (args.perception != "ground_truth" and (args.suite != "findingdory" or args.ros))
            or (args.matcher, args.image_matcher) != ("structured", "sift")):
        raise GoatError("--perception/--matcher/--image-matcher other than the defaults run with "
                        "the in-process GOAT suite only (goat-nav bench without --ros or --suite; --perception "
                        "also with --suite findingdory, for its memory) for now")
    if args.ros and args.embodiment != "official":
        raise GoatError(f"--embodiment {args.embodiment} is not passed to the ROS graph's simulator (its sim_bridge "
                        "runs GOAT-Bench's camera without sliding): run it in process, without --ros")
    own_localizer = args.matcher == "cow"  # CoW's OWL / CLIP relevance instead of ground truth
    if args.agent != "goat" and (args.suite != "goat" or args.ros or args.image_matcher != "sift"
                                 or (not own_localizer and (args.perception != "ground_truth"
                                                            or args.matcher != "structured"
                                                            or args.image_without_category))):
        raise GoatError(f"--agent {args.agent} runs the in-process GOAT suite (no --suite, --ros or "
                        "--image-matcher) with ground-truth perception, or with CoW's own localizer (--matcher cow "
                        "and its models); with ground truth its localizer needs the image goal's category (no "
                        "--image-without-category)")
    if args.agent_config is not None and args.suite == "findingdory":
        raise GoatError("--agent-config sets the GOAT agent, which --suite findingdory does not run (its navigator "
                        "has settings of its own)")
    if args.perception_errors != "off" and (args.suite != "goat" or args.perception != "ground_truth"):
        raise GoatError("--perception-errors models a detector over ground truth in the GOAT suite (goat-nav bench "
                        "without --suite or --perception; in process or --ros)")
    if args.evidence == "on" and args.suite != "goat":
        raise GoatError("--evidence on configures the GOAT agent (goat-nav bench without --suite)")
    if args.live is not None and (args.suite != "goat" or args.ros):
        raise GoatError("--live serves the in-process GOAT suite (goat-nav bench without --ros or --suite); "
                        "for a ROS graph run 'goat-nav view' next to it")
    check_realism_args(args)
    parallel_config(args)  # Ray missing, --ros or --live with workers, --resume without --out


def _run_bench(args: argparse.Namespace) -> int:
    if args.ros:
        from goat_nav.ros_bench import run_ros_bench

        return run_ros_bench(args)
    from goat_nav.bench_cmd import run_bench

    return run_bench(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    # The results' meta records how the run was started (docs/results.md renders its rows from it).
    args.command_line = shlex.join(["goat-nav", *(sys.argv[1:] if argv is None else argv)])
    try:
        if args.command == "bench":
            _check_bench_args(args)
            from goat_nav.bench_outputs import claimed_outputs

            with claimed_outputs(args):  # before any episode: bad paths and a taken --out fail at once
                return _run_bench(args)
        if args.command == "launch":
            from goat_nav.launcher import run_launch

            return run_launch(args)
        if args.command in ("goal", "view"):  # ROS 2 clients of a running graph
            from goat_nav.goal_cmd import run_goal
            from goat_nav.launcher import run_view

            return {"goal": run_goal, "view": run_view}[args.command](args)
        if args.command == "report":
            from goat_nav.report_cmd import run_report

            return run_report(args)
        if args.command == "compare":
            from goat_nav.compare import run_compare

            return run_compare(args)
        if args.command == "generate":
            from goat_nav.bench_cmd import run_generate

            return run_generate(args)
        if args.command == "render":
            from goat_nav.render_cmd import run_render

            return run_render(args)
    except GoatError as exc:
        print(f"goat-nav {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"goat-nav {args.command}: interrupted at {time.strftime('%H:%M:%S')}", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
