"""The agent under the simulated Stretch's senses and body: ideal vs stretch, and a sweep of each model's strength.

    python benchmarks/bench_realism.py --episodes 4 --seed 1000                      # ideal vs stretch
    python benchmarks/bench_realism.py --episodes 3 --sweep depth_noise,odom_drift   # x 0, 0.5, 1, 2 each
    python benchmarks/bench_realism.py --episodes 3 --settings stretch,stretch-nolocaliser
    python benchmarks/bench_realism.py --episodes 20 --seed 1000 --settings stretch --diagnose  # each failed stop
    python benchmarks/bench_realism.py --episodes 20 --seed 1000 --settings ideal --out runs/ideal.json
    python benchmarks/bench_realism.py --episodes 20 --seed 1000 --settings stretch --decompose runs/ideal.json

Runs the same procedural GOAT episodes (ground-truth semantics) under each setting and prints SR, SPL, collisions
per 100 m walked, and the pose error of what the agent acted on against the simulator's truth (median and 95th
percentile over all actions, metres and degrees; and the median at the end of each subtask) and the failure
classes. Settings: ``ideal``, ``stretch`` and ``stretch-nolocaliser`` (the drifting odometry taken as the pose),
and with ``--sweep`` one knob of the stretch profile at a time on top of ``ideal`` (docs/realism.md).

``--decompose`` (or ``ideal`` among the settings) splits each setting's SPL gap to the ideal run, subtask by subtask
on the same subtasks, into (a) subtasks only one of the runs failed, (b) path walked by turns in place outside
look-arounds, (c) the rest of the extra path (forward moves: detours, replans, the approach by sight) and (d) path
walked by the look-arounds' turns (docs/realism.md, "Stop 40").
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
from tqdm import tqdm

from goat_core.agent import AgentConfig
from goat_core.agent.config_file import load_agent_config
from goat_core.control.lattice import STATS as LATTICE_STATS
from goat_core.geometry import wrap_angle_rad
from goat_core.localisation.localiser import Localiser, LocaliserConfig
from goat_core.mapping.instance_memory import nearest_distance_2d_m
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.matcher import MatcherConfig
from goat_core.types import DiscreteAction, Observation
from goat_suites.common.episodes import GoatEpisode
from goat_suites.common.realism import AgentSenses, PoseLog
from goat_suites.common.results import SubtaskRecord, summarise
from goat_suites.common.runner import EpisodeRunner, RunConfig, SubtaskTrace
from goat_suites.common.success import SuccessRegion
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from goat_suites.langmap.loader import scored_goals
from sim_bridge.embedded.home import FURNITURE_KINDS, HomeConfig
from sim_bridge.embedded.realism import RealismConfig, realism_profile
from sim_bridge.embedded.sim import SimConfig

KNOBS = ("depth_noise", "motion_noise", "odom_drift")
TURNS = (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)


@dataclass
class SubtaskCost:
    """Where one subtask's path went: the simulator's true base motion per action, by what the agent was doing.

    Kinds: the agent's mode, with ``goto`` split into ``goto-path`` (following a planned path to an instance) and
    ``goto-spot`` (at the goal spot: the approach by sight, facing the target, the looks before STOP).
    """

    key: str  # episode_id/index
    episode_id: str
    success: bool
    spl: float
    path_m: float  # as GOAT-Bench scores it (the record's)
    geodesic_m: float
    collisions: int = 0
    turn_m: dict[str, float] = field(default_factory=dict)  # path walked by turns in place, per kind
    forward_m: dict[str, float] = field(default_factory=dict)  # path walked by forward moves, per kind
    turns: dict[str, int] = field(default_factory=dict)  # turns in place, per kind
    forwards: dict[str, int] = field(default_factory=dict)  # forward moves, per kind


@dataclass
class SettingResult:
    name: str
    realism: str
    success_rate: float
    spl: float
    subtasks: int
    collisions_per_100m: float
    pose_error_m: tuple[float, float]  # median, p95 over every action
    pose_error_deg: tuple[float, float]
    end_error_median_m: float
    # At the end of each subtask (medians of absolute values, and the p95 of the distance): the position error
    # along and across the robot's true heading, and the heading error
    end_error_p95_m: float
    end_along_m: float
    end_across_m: float
    end_heading_deg: float
    turn_path_share: float  # of the path walked, the share walked by turns in place (motion noise)
    scan_turn_path_share: float  # ... of which by the look-arounds' turns (the agent's mode "scan")
    turns_per_subtask: float  # turns in place per subtask, all modes
    turns_by_mode: dict[str, float]  # ... per agent mode (the mode that chose the turn)
    reversals_per_subtask: float  # turns right after the opposite turn, per subtask
    end_turns_per_subtask: float  # turns after a subtask's last forward move (facing the goal before STOP)
    elapsed_s: float
    failures: dict[str, int]  # failed subtasks per class (goat_suites.common.failures), classes with none left out
    costs: list[SubtaskCost] = field(default_factory=list)  # per subtask, in run order


def _setting(name: str, seed: int) -> RealismConfig:
    if name == "stretch-nolocaliser":
        return realism_profile("stretch", localiser=False, seed=seed)
    if "=" in name:  # knob=multiplier on top of ideal, localiser on
        knob, value = name.split("=")
        return realism_profile("ideal", seed=seed, **{knob: float(value)})
    return realism_profile(name, seed=seed)


def _episode_pose_text(log: PoseLog, first_frame: int) -> str:
    """The pose error of an episode's frames (those from ``first_frame`` on): median / p95 in metres and degrees;
    empty where the setting keeps no log (ideal)."""
    pos, yaw = log.errors()
    pos, deg = pos[first_frame:], np.degrees(yaw[first_frame:])
    if pos.size == 0:
        return ""
    return (f"; pose error {_pct(pos, 50):.3f}/{_pct(pos, 95):.3f} m, {_pct(deg, 50):.2f}/{_pct(deg, 95):.2f} deg "
            "(median/p95)")


def _stop_report(runner: EpisodeRunner, episode: GoatEpisode, trace: SubtaskTrace) -> str:
    """One line on a failed subtask's stop: the true and the believed distance to the nearest success view point,
    the pose error there, the distance to the target instance the agent believed and the true one, and what the
    agent did last."""
    record = trace.record
    sim = runner._sim
    log = runner.senses.log
    if sim is None:
        return f"{episode.episode_id}/{record.index}: no simulator"
    # ideal keeps no log: the agent's pose is the truth
    belief, truth = (log.belief[-1], log.truth[-1]) if log.truth else (sim.episode_pose(), sim.episode_pose())
    start = sim.episode_start_world
    c, s = math.cos(start.yaw_rad), math.sin(start.yaw_rad)
    believed_world = np.array([start.x_m + c * belief.x_m - s * belief.y_m,
                               start.y_m + s * belief.x_m + c * belief.y_m])
    region = SuccessRegion(sim.navgrid, scored_goals(episode, record.index, episode.tasks[record.index]),
                           runner.run_config.success_metric)
    agent_state = runner.agent.debug_state()
    target_id = agent_state.target_instance_id
    target = runner.agent.memory.instances.get(target_id) if target_id is not None else None
    inst_text = "-"
    if target is not None:
        believed_m = nearest_distance_2d_m(target, belief.x_m, belief.y_m)
        inst_text = (f"{target.category}#{target.instance_id} believed {believed_m:.2f} m, from the true pose "
                     f"{nearest_distance_2d_m(target, truth.x_m, truth.y_m):.2f} m")
    last = " ".join(a.name[:4] for a in (record.actions or ())[-8:])
    true_m = record.distance_to_goal_m
    return (f"{episode.episode_id}/{record.index} {record.modality.value} {record.failure}: view point "
            f"{'inf' if true_m is None else f'{true_m:.2f}'} m true, {region.distance_m(believed_world):.2f} m "
            f"believed;"
            f" pose error {math.hypot(belief.x_m - truth.x_m, belief.y_m - truth.y_m):.2f} m "
            f"{math.degrees(wrap_angle_rad(belief.yaw_rad - truth.yaw_rad)):+.1f} deg; target {inst_text}; "
            f"{record.num_actions} actions, last: {last}; {record.stop_detail or record.stop_reason}")


def _kind(runner: EpisodeRunner) -> str:
    """What the agent was doing when it chose its last action (SubtaskCost's kinds)."""
    debug = runner.agent.debug_state()
    if debug.mode == "goto":
        return "goto-path" if debug.target_xy_m is not None else "goto-spot"
    return debug.mode


def _run(name: str, realism: RealismConfig, episodes: list[GoatEpisode], max_actions: Optional[int],
         embedder: SentenceEmbedder, diagnose: bool = False,
         on_episode: Optional[Callable[[list[SubtaskCost]], None]] = None,
         agent_config: Optional[AgentConfig] = None,
         localiser_config: Optional[LocaliserConfig] = None) -> SettingResult:
    started = time.monotonic()
    records: list[SubtaskRecord] = []
    costs: list[SubtaskCost] = []
    collisions = 0
    turned_m = 0.0  # the path walked by turns in place (motion noise moves the base on a turn)
    scan_turned_m = 0.0  # ... by the turns of look-arounds
    turns = 0
    last: Optional[tuple[DiscreteAction, np.ndarray, str, str]] = None  # previous action, where from, mode, kind
    turns_by_mode: dict[str, int] = {}  # turns in place per agent mode
    reversals = 0  # a turn against the previous action's turn (left then right): dithering about a heading
    current = SubtaskCost("", "", False, 0.0, 0.0, 0.0)  # the subtask running now

    def settle(here: np.ndarray) -> None:
        """Book the previous action's true motion, now that it has happened."""
        nonlocal turned_m, scan_turned_m, turns
        if last is None:
            return
        moved_m = float(np.linalg.norm(here - last[1]))
        kind = last[3]
        if last[0] in TURNS:
            turned_m += moved_m
            turns += 1
            if last[2] == "scan":
                scan_turned_m += moved_m
            turns_by_mode[last[2]] = turns_by_mode.get(last[2], 0) + 1
            current.turn_m[kind] = current.turn_m.get(kind, 0.0) + moved_m
            current.turns[kind] = current.turns.get(kind, 0) + 1
        elif last[0] is DiscreteAction.MOVE_FORWARD:
            current.forward_m[kind] = current.forward_m.get(kind, 0.0) + moved_m
            current.forwards[kind] = current.forwards.get(kind, 0) + 1

    # GOAT-Bench's budget (5000 actions per episode) unless --max-actions asks for one per subtask
    run_config = RunConfig() if max_actions is None else RunConfig(max_actions_per_subtask=max_actions)
    with EpisodeRunner(run_config, agent_config or AgentConfig(), MatcherConfig(), SimConfig(realism=realism),
                       embedder=embedder) as runner:
        _use_localiser(runner.senses, localiser_config)
        def on_step(obs: Observation, action: DiscreteAction) -> None:
            nonlocal collisions, last, reversals
            collisions += int(obs.collided)
            current.collisions += int(obs.collided)
            assert runner._sim is not None
            here = runner._sim.base_pose_world.xy()
            settle(here)
            if last is not None and last[0] in TURNS and {action, last[0]} == set(TURNS):
                reversals += 1
            last = (action, here, runner.agent.debug_state().mode, _kind(runner))

        for episode in tqdm(episodes, desc=name, unit="ep", file=sys.stderr):
            last = None

            def on_subtask(trace: SubtaskTrace, episode: GoatEpisode = episode) -> None:
                nonlocal current, last
                assert runner._sim is not None
                settle(runner._sim.base_pose_world.xy())  # the subtask's last action
                last = None
                r = trace.record
                current.key, current.episode_id = f"{r.episode_id}/{r.index}", r.episode_id
                current.success, current.spl, current.path_m = r.success, r.spl, r.path_length_m
                current.geodesic_m = r.geodesic_m or 0.0
                costs.append(current)
                current = SubtaskCost("", "", False, 0.0, 0.0, 0.0)
                if diagnose and not r.success:
                    print(_stop_report(runner, episode, trace), flush=True)

            first_frame = len(runner.senses.log.truth)
            recs, _ = runner.run_episode(episode, on_step=on_step, on_subtask=on_subtask)
            records.extend(recs)
            so_far = summarise(records)
            print(f"{name} {episode.episode_id}: {sum(r.success for r in recs)}/{len(recs)} subtasks; so far SR "
                  f"{so_far.success_rate:.3f} SPL {so_far.spl:.3f} over {so_far.num_subtasks}"
                  + _episode_pose_text(runner.senses.log, first_frame)
                  + (f"; {LATTICE_STATS.text()}" if LATTICE_STATS.plans else ""), flush=True)
            if on_episode is not None:
                on_episode(costs)
        log = runner.senses.log
        pos, yaw = log.errors()
        ends = [i for i in log.subtask_end if i >= 0]
        along, across = _along_across(log, ends)
    summary = summarise(records)
    walked_m = sum(r.path_length_m for r in records)
    deg = np.degrees(yaw)
    return SettingResult(
        name=name, realism=realism.describe(), success_rate=summary.success_rate, spl=summary.spl,
        subtasks=summary.num_subtasks, collisions_per_100m=100.0 * collisions / max(walked_m, 1e-9),
        pose_error_m=(_pct(pos, 50), _pct(pos, 95)), pose_error_deg=(_pct(deg, 50), _pct(deg, 95)),
        end_error_median_m=statistics.median(pos[ends]) if ends and len(pos) else 0.0,
        end_error_p95_m=_pct(pos[ends], 95) if ends and len(pos) else 0.0,
        end_along_m=_pct(np.abs(along), 50), end_across_m=_pct(np.abs(across), 50),
        end_heading_deg=_pct(deg[ends], 50) if ends and len(deg) else 0.0,
        turn_path_share=turned_m / max(walked_m, 1e-9), scan_turn_path_share=scan_turned_m / max(walked_m, 1e-9),
        turns_per_subtask=turns / max(summary.num_subtasks, 1),
        turns_by_mode={k: v / max(summary.num_subtasks, 1) for k, v in sorted(turns_by_mode.items())},
        reversals_per_subtask=reversals / max(summary.num_subtasks, 1),
        end_turns_per_subtask=sum(_end_turns(r.actions or ()) for r in records) / max(summary.num_subtasks, 1),
        elapsed_s=time.monotonic() - started, failures={k: v for k, v in summary.failures.items() if v},
        costs=costs)


def _along_across(log: PoseLog, ends: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The position errors (belief - truth) of log entries ``ends`` along and across the true heading."""
    if not log.truth:
        return np.zeros(0), np.zeros(0)
    along, across = [], []
    for i in ends:
        b, t = log.belief[i], log.truth[i]
        dx, dy = b.x_m - t.x_m, b.y_m - t.y_m
        c, s = math.cos(t.yaw_rad), math.sin(t.yaw_rad)
        along.append(c * dx + s * dy)
        across.append(-s * dx + c * dy)
    return np.array(along), np.array(across)


def _spl(success: bool, geodesic_m: float, path_m: float) -> float:
    """Anderson et al.'s SPL of one subtask."""
    return float(success) * geodesic_m / max(geodesic_m, path_m, 1e-9)


def decompose(ideal: list[SubtaskCost], other: list[SubtaskCost]) -> dict[str, float]:
    """The SPL gap ideal - other split into shares that sum to it, averaged as GOAT-Bench averages SPL (per
    episode, then over episodes), over the subtasks both runs have.

    Per subtask: (a) ``failures``: the ideal SPL of a subtask only ``other`` failed (negative where only ideal
    failed); for subtasks both succeeded, the SPL lost to the turns' path, L / max(L, P - T) - L / max(L, P), is
    shared between (b) ``turns`` (outside look-arounds) and (d) ``lookaround_turns`` in proportion to their path,
    and (c) ``forward`` is the rest, ideal SPL - L / max(L, P - T): the extra path of forward moves (and a
    different start, where the last subtask ended elsewhere).
    """
    mine = {c.key: c for c in other}
    episodes: dict[str, list[dict[str, float]]] = {}
    for ref in ideal:
        c = mine.get(ref.key)
        if c is None:
            continue
        share = {"failures": 0.0, "turns": 0.0, "forward": 0.0, "lookaround_turns": 0.0}
        if ref.success != c.success:
            share["failures"] = ref.spl - c.spl
        elif c.success:
            turn_m = sum(c.turn_m.values())
            scan_m = c.turn_m.get("scan", 0.0)
            no_turns = _spl(True, c.geodesic_m, c.path_m - turn_m)
            lost = no_turns - c.spl
            if turn_m > 0.0:
                share["turns"] = lost * (turn_m - scan_m) / turn_m
                share["lookaround_turns"] = lost * scan_m / turn_m
            share["forward"] = ref.spl - no_turns
        episodes.setdefault(ref.episode_id, []).append(share)
    out = {k: 0.0 for k in ("failures", "turns", "forward", "lookaround_turns")}
    for shares in episodes.values():
        for k in out:
            out[k] += sum(s[k] for s in shares) / len(shares) / len(episodes)
    out["gap"] = sum(out.values())
    return out


def _per_subtask(costs: list[SubtaskCost], keys: set[str], table: str) -> dict[str, float]:
    """Per subtask of ``keys``, a SubtaskCost table (turn_m, forward_m, turns, forwards) summed over kinds,
    per kind."""
    chosen = [c for c in costs if c.key in keys]
    out: dict[str, float] = {}
    for c in chosen:
        for k, v in getattr(c, table).items():
            out[k] = out.get(k, 0.0) + v / max(len(chosen), 1)
    return dict(sorted(out.items()))


def _decomposition_text(name: str, ideal: list[SubtaskCost], other: list[SubtaskCost]) -> str:
    shares = decompose(ideal, other)
    both = {c.key for c in ideal if c.success} & {c.key for c in other if c.success}
    lines = [f"{name}: SPL gap to ideal {shares['gap']:+.3f} (same subtasks, per episode then over episodes) = "
             f"(a) failures {shares['failures']:+.3f}, (b) turns in place outside look-arounds "
             f"{shares['turns']:+.3f}, (c) extra forward path {shares['forward']:+.3f}, (d) look-around turns "
             f"{shares['lookaround_turns']:+.3f}"]
    for label, costs in (("ideal", ideal), (name, other)):
        lines.append(f"  {label}, per subtask both succeeded ({len(both)}): "
                     + "; ".join(f"{table} " + " ".join(f"{k} {v:.2f}" for k, v in
                                                          _per_subtask(costs, both, table).items())
                                 for table in ("forward_m", "forwards", "turn_m", "turns"))
                     + f"; collisions {sum(c.collisions for c in costs if c.key in both) / max(len(both), 1):.2f}")
    return "\n".join(lines)


def _load_costs(path: Path, name: str) -> list[SubtaskCost]:
    """The per-subtask costs of setting ``name`` in an earlier --out file."""
    rows = [row for row in json.loads(path.read_text())["rows"] if row["name"] == name and "costs" in row]
    if not rows:
        raise SystemExit(f"--decompose: {path} has no setting {name!r} with per-subtask costs")
    return [SubtaskCost(**c) for c in rows[0]["costs"]]


def _end_turns(actions: tuple[DiscreteAction, ...]) -> int:
    """Turns in place after the last forward move."""
    last = max((i for i, a in enumerate(actions) if a is DiscreteAction.MOVE_FORWARD), default=-1)
    return sum(a in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT) for a in actions[last + 1:])


def _pct(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else 0.0


def _table(results: list[SettingResult]) -> str:
    lines = [f"{'setting':<24}{'SR':>7}{'SPL':>7}{'n':>5}{'coll/100m':>11}{'pose m med/p95':>17}"
             f"{'pose deg med/p95':>18}{'end m med':>11}{'turn path':>10}{'of it scan':>11}{'turns/sub':>10}{'s':>7}"
             f"  failures"]
    for r in results:
        lines.append(f"{r.name:<24}{r.success_rate:>7.3f}{r.spl:>7.3f}{r.subtasks:>5d}{r.collisions_per_100m:>11.1f}"
                     f"{r.pose_error_m[0]:>9.3f}/{r.pose_error_m[1]:<7.3f}{r.pose_error_deg[0]:>9.2f}/"
                     f"{r.pose_error_deg[1]:<8.2f}{r.end_error_median_m:>11.3f}{r.turn_path_share:>10.1%}"
                     f"{r.scan_turn_path_share:>11.1%}{r.turns_per_subtask:>10.1f}"
                     f"{r.elapsed_s:>7.0f}  "
                     + (" ".join(f"{k} {v}" for k, v in r.failures.items()) or "-"))
    return "\n".join(lines)


def _use_localiser(senses: AgentSenses, config: Optional[LocaliserConfig]) -> None:
    """The senses' localiser (if the setting has one) with ``config`` (--localiser) in place of the defaults."""
    if config is not None and senses.localiser is not None:
        made = senses.localiser
        senses.localiser = Localiser(config, register=made.register, filter_depth_images=made.filter_depth_images)


def _localiser_arg(parser: argparse.ArgumentParser, fields: Optional[list[str]]) -> Optional[LocaliserConfig]:
    if fields is None:
        return None
    try:
        config = localiser_config_from(fields)
    except ValueError as e:
        parser.error(str(e))
    print(f"localiser: {' '.join(fields)} (LocaliserConfig's defaults otherwise)")
    return config


def localiser_config_from(fields: list[str]) -> LocaliserConfig:
    """A LocaliserConfig with the ``name=value`` fields given (booleans true/false, numbers as the default's type)."""
    defaults = LocaliserConfig()
    changed: dict[str, Any] = {}
    for text in fields:
        name, _, value = text.partition("=")
        if not value or not hasattr(defaults, name) or name == "filter":
            raise ValueError(f"--localiser expects LocaliserConfig field=value, got {text!r}")
        default = getattr(defaults, name)
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"--localiser {name} is true or false, got {value!r}")
            changed[name] = value.lower() in ("true", "1")
        else:
            changed[name] = type(default)(value)
    return LocaliserConfig(**changed)


def _print_lattice_stats(name: str) -> None:
    """The lattice plans' counts and search time so far (AgentConfig.approximate_lattice_drive), if any ran."""
    if LATTICE_STATS.plans:
        print(f"{name}: {LATTICE_STATS.text()}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--settings", default="ideal,stretch",
                        help="comma-separated: ideal, stretch, stretch-nolocaliser, KNOB=X (default ideal,stretch)")
    parser.add_argument("--sweep", default="", help=f"comma-separated knobs of {KNOBS} to sweep over --multipliers")
    parser.add_argument("--multipliers", default="0.5,1,2", help="the sweep's multipliers (0 is the ideal run)")
    parser.add_argument("--max-actions", type=int, default=None,
                        help="action budget per subtask (default: GOAT-Bench's 5000 per episode, as goat-nav bench)")
    # The small primitive homes, where the realism rows of docs/results.md come from (not the CLI's default homes)
    parser.add_argument("--homes", choices=FURNITURE_KINDS, default="primitive")
    parser.add_argument("--diagnose", action="store_true",
                        help="print each failed subtask's stop: true and believed distance, pose error, last actions")
    parser.add_argument("--first-episode", type=int, default=0, help="skip the seed's episodes before this one")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the table and each subtask's costs as JSON (after every episode)")
    parser.add_argument("--decompose", type=Path, default=None,
                        help="an earlier --out of the ideal setting on the same episodes: split each setting's SPL "
                             "gap to it (with ideal among --settings, that run is used)")
    parser.add_argument("--agent-config", type=Path, default=None,
                        help="an agent settings file (config/agent.yaml's form; only what it changes) instead of "
                             "AgentConfig's defaults")
    parser.add_argument("--localiser", nargs="+", default=None, metavar="FIELD=VALUE",
                        help="LocaliserConfig fields instead of their defaults, e.g. register_turns_closures=3 "
                             "(the stretch settings' localiser; ideal has none)")
    args = parser.parse_args()
    agent_config = None if args.agent_config is None else load_agent_config(args.agent_config)
    localiser_config = _localiser_arg(parser, args.localiser)

    names = [n.strip() for n in args.settings.split(",") if n.strip()]
    for knob in (k.strip() for k in args.sweep.split(",") if k.strip()):
        if knob not in KNOBS:
            parser.error(f"--sweep knobs must be among {KNOBS}, got {knob!r}")
        names += [f"{knob}={float(m):g}" for m in args.multipliers.split(",") if float(m) > 0.0]
    ideal_costs: Optional[list[SubtaskCost]] = None
    if args.decompose is not None:
        ideal_costs = _load_costs(args.decompose, "ideal")
    episodes = list(generate_dataset(args.episodes, args.seed, HomeConfig(furniture=args.homes),
                                     EpisodeGenConfig()).episodes)[args.first_episode:]
    embedder = SentenceEmbedder()
    print(f"{args.episodes} episodes, seed {args.seed}, {args.homes} homes, budget "
          f"{'5000 actions per episode' if args.max_actions is None else f'{args.max_actions} actions per subtask'}")
    results: list[SettingResult] = []

    def write(partial: Optional[tuple[str, list[SubtaskCost]]] = None) -> None:
        if args.out is None:
            return
        rows: list[dict[str, Any]] = [asdict(r) for r in results]
        if partial is not None:  # the setting running now, so far
            rows.append({"name": partial[0], "costs": [asdict(c) for c in partial[1]]})
        args.out.write_text(json.dumps({"episodes": args.episodes, "seed": args.seed, "rows": rows}, indent=1))

    for name in names:  # each row as soon as it is measured (long runs on a shared machine)
        def progress(costs: list[SubtaskCost], name: str = name) -> None:
            write((name, costs))

        results.append(_run(name, _setting(name, args.seed), episodes, args.max_actions, embedder, args.diagnose,
                            on_episode=progress, agent_config=agent_config,
                            localiser_config=localiser_config))
        write()
        print(_table(results).splitlines()[-1] if len(results) > 1 else _table(results), flush=True)
        _print_lattice_stats(name)
        if args.diagnose:
            r = results[-1]
            print(f"{r.name} turns per subtask by mode: "
                  + " ".join(f"{k} {v:.1f}" for k, v in r.turns_by_mode.items())
                  + f"; reversals (a turn right after the opposite one) {r.reversals_per_subtask:.1f}; turns after "
                  f"the last forward move {r.end_turns_per_subtask:.1f}; end of subtask: position error p95 "
                  f"{r.end_error_p95_m:.3f} m, |along| {r.end_along_m:.3f} m, |across| {r.end_across_m:.3f} m, "
                  f"|heading| {r.end_heading_deg:.2f} deg (medians)", flush=True)
        if name == "ideal":
            ideal_costs = results[-1].costs
        elif ideal_costs is not None:
            print(_decomposition_text(name, ideal_costs, results[-1].costs), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
