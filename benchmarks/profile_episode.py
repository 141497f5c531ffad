"""Where an episode's CPU goes: the parts of generating and running procedural GOAT episodes, as a table.

    python benchmarks/profile_episode.py [--homes large-furnished] [--seed 1000] [--episodes 1] [--first 0]
    python benchmarks/profile_episode.py ... --cprofile [--out runs/episode.prof]   # cProfile's view instead
    python benchmarks/profile_episode.py --load runs/episode.prof                   # the tables of a saved profile

Runs what ``goat-nav bench --homes H --workers 1`` runs for episodes ``--first`` .. ``--first + --episodes - 1`` of
the seed (episode generation, the home's simulator, every subtask, scoring; the default agent, ground-truth
perception) and prints the CPU time (the process's, llvmpipe's render threads included) of each part.

By default the parts are timed by wrapping their entry points (a few thousand calls an episode, so the timing adds
nothing to speak of); each part's time excludes the parts it calls (the simulator's step without the frame it
renders, the agent without its mapping), so the rows add up to the episode. It then prints the frames by the
mesh triangles culling left them to draw, in quarters (a frame's CPU follows what it draws). ``--cprofile`` runs
cProfile instead and prints the cumulative time of the entry points and the agent's own time by module (library
code charged to its project caller); cProfile multiplies the cost of Python calls several times over (a home's
generation, all Python, 6x) and hardly that of C code (rendering, FMM), so its shares are skewed toward Python code.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import pstats
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from goat_core.agent import AgentConfig
from goat_core.matching.matcher import MatcherConfig
from goat_suites.common.episodes import GoatDataset
from goat_suites.common.runner import EpisodeRunner, RunConfig
from goat_suites.goat.generator import episode_config_for, generate_dataset
from sim_bridge.embedded.home import HOME_KINDS, home_config_for

Key = tuple[str, int, str]

# (phase, file suffix, function name): entry points whose calls do not nest in each other's (the simulator's step
# is counted without the observation it renders)
PHASES: tuple[tuple[str, str, str], ...] = (
    ("episode generation (homes, view points, goals)", "goat_suites/goat/generator.py", "generate_dataset"),
    ("home and simulator build for the run", "sim_bridge/embedded/sim.py", "__init__"),
    ("rendering: observe()", "sim_bridge/embedded/sim.py", "observe"),
    ("simulator step without rendering", "sim_bridge/embedded/sim.py", "step"),
    ("agent act() (perception, mapping, memory, frontiers, planning)", "goat_core/agent/dispatcher.py", "act"),
    ("evaluator: goal distance fields (FMM)", "sim_bridge/embedded/geodesic.py", "_march"),
    ("goal pictures of image goals", "sim_bridge/embedded/subtask_env.py", "goal_picture"),
    ("subtask plans (goal wording, places)", "goat_suites/common/subtask_plan.py", "plan_subtask"),
    ("scoring the subtasks", "goat_suites/common/runner.py", "_score"),
)
# (part, module, owner name, attribute): the entry points the default mode times, nested parts first found
TIMED: tuple[tuple[str, str, str, str], ...] = (
    ("home and simulator build for the run", "goat_suites.common.runner", "EpisodeRunner", "_sim_for"),
    ("rendering RGB + depth + segmentation", "sim_bridge.embedded.world", "Renderer", "render"),
    ("simulator step (motion, collisions)", "sim_bridge.embedded.sim", "EmbeddedSim", "step"),
    ("evaluator: goal distance fields (FMM)", "sim_bridge.embedded.geodesic", "GoalDistance", "__init__"),
    ("agent: the rest of act()", "goat_core.agent.dispatcher", "Agent", "act"),
    ("agent: occupancy grid update", "goat_core.mapping.occupancy", "OccupancyGrid", "update"),
    ("agent: ground-truth perception", "goat_core.perception.gt", "GroundTruthPerception", "detect"),
    ("agent: instance memory update", "goat_core.mapping.instance_memory", "InstanceMemory", "update"),
    ("agent: planning fields (inflation, FMM)", "goat_core.control.planner", "FieldCache", "build"),
    # a field's FMM runs when its distances are first read, whole or as far as a goal cell needs (stop 43)
    ("agent: planning fields' FMM marches", "goat_core.control.planner", "FieldDistances", "full"),
    ("agent: planning fields' FMM marches", "goat_core.control.planner", "FieldDistances", "within"),
    ("agent: frontiers", "goat_core.control.frontier", "FrontierExplorer", "candidates"),
    ("agent: goal matching", "goat_core.agent.context", "AgentContext", "match"),
    ("agent: goal set-up (matcher)", "goat_core.agent.dispatcher", "Agent", "start_subtask"),
)
PROJECT = ("goat_core/", "goat_suites/", "sim_bridge/", "goat_nav/")


class _Timers:
    """Exclusive CPU time per part: a part's time stops while a nested timed part runs."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[str] = []
        self._since = 0.0
        self._undo: list[tuple[object, str, object]] = []

    def _switch(self, label: Optional[str]) -> None:
        now = time.process_time()
        if self._stack:
            self.seconds[self._stack[-1]] += now - self._since
        self._since = now
        if label is None:
            self._stack.pop()
        else:
            self._stack.append(label)

    def wrap(self, label: str, module: str, owner: str, name: str) -> None:
        target = getattr(importlib.import_module(module), owner)
        original = getattr(target, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.calls[label] += 1
            self._switch(label)
            try:
                return original(*args, **kwargs)
            finally:
                self._switch(None)

        self._undo.append((target, name, original))
        setattr(target, name, timed)

    def start(self, label: str) -> None:
        self._switch(label)

    def stop(self) -> None:
        self._switch(None)

    def unwrap(self) -> None:
        for target, name, original in reversed(self._undo):
            setattr(target, name, original)


def _generate(args: argparse.Namespace) -> tuple[GoatDataset, float]:
    """The episodes of the seed up to the last one run, and the CPU seconds their generation took."""
    home_config = home_config_for(args.homes)
    cpu0 = time.process_time()
    dataset = generate_dataset(args.first + args.episodes, args.seed, home_config, episode_config_for(home_config))
    return dataset, time.process_time() - cpu0


def _run(args: argparse.Namespace, dataset: GoatDataset) -> int:
    """Run the episodes from ``--first`` on; the actions they took."""
    actions = 0
    with EpisodeRunner(RunConfig(), AgentConfig(), MatcherConfig()) as runner:
        for episode in dataset.episodes[args.first:]:
            records, _ = runner.run_episode(episode)
            actions += sum(r.num_actions for r in records)
    return actions


REST = "the rest (runner, agent set-up, scoring)"


def _timed_run(args: argparse.Namespace) -> None:
    dataset, generation_s = _generate(args)
    timers = _Timers()
    for label, module, owner, name in TIMED:
        timers.wrap(label, module, owner, name)
    where = _count_camera_places()
    frames = _FrameCosts()
    cpu0 = time.process_time()
    timers.start(REST)
    try:
        actions = _run(args, dataset)
    finally:
        timers.stop()
        frames.undo()
        timers.unwrap()
        where.undo()
    run_s = time.process_time() - cpu0
    print(f"{args.homes}, seed {args.seed}, episodes {args.first}..{args.first + args.episodes - 1}: {actions} "
          f"actions; generating {args.first + args.episodes} episode(s) {generation_s:.1f} s CPU, running "
          f"{run_s:.1f} s CPU ({1000 * run_s / max(actions, 1):.1f} ms per action)")
    print(f"{'part of the run (CPU, exclusive)':<50}{'s':>8}{'share':>8}{'calls':>8}{'ms/call':>9}")
    for label, seconds in sorted(timers.seconds.items(), key=lambda kv: -kv[1]):
        calls = timers.calls.get(label, 0)
        per = f"{1000 * seconds / calls:>9.2f}" if calls else f"{'':>9}"
        print(f"{label:<50}{seconds:>8.1f}{100 * seconds / run_s:>7.1f}%{calls:>8}{per}")
    frames.print()
    if where.frames:
        print(f"room culling (large homes): {where.frames} frames, {where.door_gap} with the camera in a door gap "
              f"({100 * where.door_gap / where.frames:.1f} %), {where.outside} outside every room and door gap")


class _FrameCosts:
    """Each rendered frame's CPU (the process's) with the geoms and mesh triangles it drew: frames cost what they
    draw, so the quarters of the frames by triangles say which views are the expensive ones."""

    def __init__(self) -> None:
        from sim_bridge.embedded import world

        self._class = world.Renderer
        self._original = original = world.Renderer.render
        self.rows: list[tuple[float, int, int, float]] = []  # CPU ms, geoms, mesh triangles, camera tilt (rad)
        rows = self.rows

        def counted(renderer: Any, eye: Any, yaw: float, tilt: float) -> Any:
            cpu = time.process_time()
            view = original(renderer, eye, yaw, tilt)
            ms = 1000.0 * (time.process_time() - cpu)
            model, drawn = renderer.model, renderer._visible  # the geoms the frame's culling left to draw
            if drawn.shape == (model.ngeom,):
                meshes = model.geom_dataid[drawn & (model.geom_type == 7)]  # mjGEOM_MESH
                rows.append((ms, int(drawn.sum()), int(model.mesh_facenum[meshes].sum()), float(tilt)))
            return view

        world.Renderer.render = counted

    def undo(self) -> None:
        self._class.render = self._original  # type: ignore[method-assign]

    def print(self) -> None:
        if not self.rows:
            return
        rows = sorted(self.rows, key=lambda r: r[2])
        tilts = Counter(round(r[3], 2) for r in rows).most_common(1)[0]
        print(f"frames by mesh triangles drawn ({len(rows)} frames; {tilts[1]} at tilt {tilts[0]:.2f} rad): "
              f"CPU ms median [geoms, triangles] of each quarter")
        for q in range(4):
            part = rows[q * len(rows) // 4:(q + 1) * len(rows) // 4]
            if part:
                mid = part[len(part) // 2]
                print(f"  quarter {q + 1}: {statistics.median(r[0] for r in part):6.1f} ms  [{mid[1]} geoms, "
                      f"{part[0][2]}-{part[-1][2]} triangles]")


@dataclass
class _CameraPlaces:
    """Frames room culling saw, by where the camera stood."""

    frames: int = 0
    door_gap: int = 0  # in no room, within a wall's thickness of one: chains start from the rooms the door joins
    outside: int = 0  # in no room and near none: everything drawn
    undo: Callable[[], None] = lambda: None


def _count_camera_places() -> _CameraPlaces:
    """Count the frames of large homes by where the camera stands (``undo`` puts the original method back)."""
    from sim_bridge.embedded import world

    zones_class = world._RoomZones
    original = zones_class.visible_geoms
    places = _CameraPlaces()

    def counted(zones: Any, eye: Any, rotation: Any, in_frustum: Any) -> Any:
        visible = original(zones, eye, rotation, in_frustum)
        places.frames += 1
        if zones._home.room_at((float(eye[0]), float(eye[1]))) is None:
            if visible.all():
                places.outside += 1
            else:
                places.door_gap += 1
        return visible

    zones_class.visible_geoms = counted
    places.undo = lambda: setattr(zones_class, "visible_geoms", original)
    return places


def _is_project(key: Key) -> bool:
    return any(part in key[0] for part in PROJECT)


def _module(key: Key) -> str:
    path = key[0].replace("\\", "/")
    for part in PROJECT:
        if part in path:
            return part + path.split(part, 1)[1]
    return path


def _keys(stats: dict[Key, Any], file_suffix: str, name: str) -> set[Key]:
    return {k for k in stats if k[0].replace("\\", "/").endswith(file_suffix) and k[2] == name}


def _cumulative(stats: dict[Key, Any], file_suffix: str, name: str) -> float:
    """Cumulative time of the function, less what it spent in the observations it rendered (``observe``)."""
    keys = _keys(stats, file_suffix, name)
    observe = _keys(stats, "sim_bridge/embedded/sim.py", "observe")
    nested = sum(v[4][k][3] for o in observe - keys for k in keys for v in [stats[o]] if k in v[4])
    return sum(stats[k][3] for k in keys) - nested


def _own_time_by_module(stats: dict[Key, Any], inside: set[Key]) -> dict[str, float]:
    """Own time of the functions in ``inside`` by project module, library time charged to its project callers
    (split by the time each caller spent in it)."""
    owners: dict[Key, dict[Key, float]] = {}  # function -> {project function: share of its own time}

    def owners_of(key: Key) -> dict[Key, float]:
        if _is_project(key):
            return {key: 1.0}
        if key in owners:
            return owners[key]
        owners[key] = {}  # a cycle through library code charges nothing further up
        callers = {c: v for c, v in stats[key][4].items() if c in stats}
        column = 2 if sum(v[2] for v in callers.values()) > 0 else 3  # own time from each caller, else cumulative
        total = sum(v[column] for v in callers.values())
        out: dict[Key, float] = defaultdict(float)
        for caller, v in callers.items():
            if total > 0:
                for owner, share in owners_of(caller).items():
                    out[owner] += share * v[column] / total
        owners[key] = dict(out)
        return owners[key]

    charged: dict[str, float] = defaultdict(float)
    for key, value in stats.items():
        for owner, share in owners_of(key).items():
            if owner in inside:
                charged[_module(owner)] += value[2] * share
    return charged


def _callees_of(stats: dict[Key, Any], roots: set[Key]) -> set[Key]:
    """Every project function called from ``roots`` through project functions, the roots included."""
    children: dict[Key, list[Key]] = defaultdict(list)
    for key, value in stats.items():
        for caller in value[4]:
            children[caller].append(key)
    seen, todo = set(roots), list(roots)
    while todo:
        for child in children[todo.pop()]:
            if child not in seen and _is_project(child):
                seen.add(child)
                todo.append(child)
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homes", choices=HOME_KINDS, default="large-furnished")
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="index of the first episode of the seed to run")
    parser.add_argument("--cprofile", action="store_true", help="run under cProfile (see above)")
    parser.add_argument("--out", type=Path, default=None, help="with --cprofile: write the raw profile here")
    parser.add_argument("--load", type=Path, default=None, help="print the tables of a profile --out wrote")
    args = parser.parse_args()
    if args.load is not None:
        print_tables(pstats.Stats(str(args.load)).stats)  # type: ignore[attr-defined]
        return 0
    if args.episodes < 1 or args.first < 0:
        parser.error(f"--episodes must be >= 1 and --first >= 0, got {args.episodes} and {args.first}")
    if not args.cprofile:
        _timed_run(args)
        return 0
    profile = cProfile.Profile(time.process_time)  # CPU of the whole process: llvmpipe's render threads too
    cpu0 = time.process_time()
    profile.enable()
    dataset, _ = _generate(args)
    actions = _run(args, dataset)
    profile.disable()
    cpu = time.process_time() - cpu0
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        profile.dump_stats(str(args.out))
    print(f"{args.homes}, seed {args.seed}, episodes {args.first}..{args.first + args.episodes - 1} "
          f"(generated {args.first + args.episodes}): {actions} actions, {cpu:.1f} s CPU under the profiler")
    print_tables(pstats.Stats(profile).stats)  # type: ignore[attr-defined]
    return 0


def print_tables(stats: dict[Key, Any]) -> None:
    """The phase table and the agent's act() by module."""
    total = sum(v[2] for v in stats.values())
    print(f"{'phase':<66}{'s':>8}{'share':>8}")
    rest = total
    for label, suffix, name in PHASES:
        seconds = _cumulative(stats, suffix, name)
        rest -= seconds
        print(f"{label:<66}{seconds:>8.1f}{100 * seconds / total:>7.1f}%")
    print(f"{'the rest (imports, the runner, records)':<66}{rest:>8.1f}{100 * rest / total:>7.1f}%")
    print(f"{'all (profiled)':<66}{total:>8.1f}{100.0:>7.1f}%")
    acts = _keys(stats, "goat_core/agent/dispatcher.py", "act")
    inside = _callees_of(stats, acts)
    by_module = _own_time_by_module(stats, inside)
    act_total = sum(by_module.values())
    print(f"\nagent act() by module (own time, library calls charged to their caller): {act_total:.1f} s")
    for module, seconds in sorted(by_module.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {module:<64}{seconds:>8.1f}{100 * seconds / total:>7.1f}% of all")


if __name__ == "__main__":
    sys.exit(main())
