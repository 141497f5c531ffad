"""Parallel and cluster evaluation (issue 12): serial vs ``--workers 2`` vs a two-node Ray cluster on this machine.

    python benchmarks/bench_parallel.py --episodes 8 --seed 5000 --repeats 3

Each repeat runs the same ``goat-nav bench`` command three times as a child process and times it from start to
exit (episode generation, Ray start-up and shut-down included):

1. serial: one worker in the command's process (no Ray);
2. ``--workers 2``: two worker processes forked from the command's own (no Ray);
3. ``--ray-address``: a cluster of two Ray nodes of one CPU each, started on this machine before the repeats with
   ``ray start --head --num-cpus 1`` and ``ray start --address ... --num-cpus 1`` (goat_suites.common.ray_cluster), each
   node
   with its own temporary folder and ports, stopped at the end.

Printed: the wall times and their medians, for each parallel run where its time went (start-up, each
worker's build of its simulator and agent, episodes per worker, worker-seconds idle at the end while the last
episodes finish: the workers take the episodes with the most estimated actions first, each worker's CPU time, the
episodes' CPU time per worker against what the estimates said, the makespan in CPU seconds beside an even split
and beside the best that longest-first reaches knowing every episode's CPU time, the estimate's rank correlation
with the episodes' CPU time, and each episode's estimate, CPU time and worker), the speed-up of each parallel run
over the serial one (targets: >= 1.6x for ``--workers 2`` on 4 episodes, >= 1.85x on 8, on a 2-core machine),
the peak memory of the serial process and of each worker process (the command's ``workers:`` line), the load
average before each run (other jobs on the machine slow the runs down), and whether every run gave the serial
run's records (they must: SR/SPL and actions do not depend on the workers), and the CPU time on each run's
longest path (the driver's own and its busiest worker's), which estimates the wall time on a quiet machine
when the machine is shared.

For each run with workers, where the time outside the episodes went (from the command's ``timeline:`` line,
goat_suites.common.parallel.describe_clock; times in seconds since the command started, CPU seconds, which
other jobs do not stretch): when the pool opened and what the driver had spent by then (Python, imports,
settings), when what the workers share was loaded (the WordNet lexicon, before the fork), each worker's build,
the generation, the run's start and each worker's first episode (one may start before the generation ends: a
worker with no episode left to generate runs the longest one generated so far); each worker's CPU time outside
its episodes (build, generation, the rest: fork, results to the driver, closing); the driver's CPU time before,
during and after the run (results files, progress, closing the workers, summary and exit); the last episodes'
ends, the workers' close and the command's exit; and the wall time against the busiest worker's CPU time:
before it started, its own work, the time in between (waiting, and on a loaded machine the other jobs), and
from its last episode to the exit.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from goat_suites.common.ray_cluster import LocalCluster
from goat_suites.common.work_units import longest_first_makespan

GOAT_NAV = str(Path(sys.executable).parent / "goat-nav")


@dataclass
class Run:
    how: str
    wall_s: float
    load_1min: float
    peak_mb: list[float] = field(default_factory=list)  # per worker process
    nodes: int = 1  # Ray nodes the workers ran on
    subtasks: list[Any] = field(default_factory=list)
    sr: float = 0.0
    spl: float = 0.0
    startup_s: float = 0.0  # workers (and a Ray runtime) started (the command's workers line)
    builds_s: list[float] = field(default_factory=list)  # each worker's build (simulator, agent)
    per_worker: list[int] = field(default_factory=list)  # episodes each worker ran
    idle_at_end_s: float = 0.0  # worker-seconds waiting for the last episodes of the others
    cpu_s: float = 0.0  # CPU time (user + system) of the command and every process it waited for (its workers)
    worker_cpu_s: list[float] = field(default_factory=list)  # each worker's own CPU time
    episode_cpu_s: list[float] = field(default_factory=list)  # each worker's CPU time on its episodes
    estimated_s: list[float] = field(default_factory=list)  # what the estimates said that would be
    rank_correlation: float = float("nan")  # the episodes' estimates vs their CPU time
    episodes: list[tuple[float, float, int]] = field(default_factory=list)  # (estimate, CPU s, worker), plan order
    started_at: float = 0.0  # time.monotonic() as the command started (the processes of a machine share it)
    timeline: dict[str, list[float]] = field(default_factory=dict)  # the command's timeline line, parsed

    @property
    def busy_path_cpu_s(self) -> float:
        """The CPU time on the longest path of the run: the driver's own (everything but its workers') and the
        busiest worker's. On a machine with a core for each process that is about the wall time, whatever other
        jobs the machine runs now (a load-independent estimate; it counts no waiting, and a process that used
        several threads at once counts them all)."""
        if not self.worker_cpu_s:
            return self.cpu_s
        return self.cpu_s - sum(self.worker_cpu_s) + max(self.worker_cpu_s)


def _bench(args: argparse.Namespace, out: Path, extra: list[str], env: Optional[dict[str, str]] = None) -> Run:
    cmd = [GOAT_NAV, "bench", "--homes", "small", "--episodes", str(args.episodes), "--seed", str(args.seed),
           "--quiet", "--out", str(out), *extra]  # the small homes: the speed-ups of issue 31 are measured on them
    if args.max_actions is not None:
        cmd += ["--max-actions", str(args.max_actions)]
    load = os.getloadavg()[0]
    log = out.with_suffix(".log")
    started = time.monotonic()  # the command's timeline stamps are time.monotonic() of its processes
    with open(log, "w") as stream:
        child = subprocess.Popen(cmd, stdout=stream, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory (ru_maxrss, kB)
    wall_s = time.monotonic() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    output = log.read_text()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({child.returncode}):\n{output[-3000:]}")
    run = Run(how="serial" if not extra else " ".join(extra), wall_s=wall_s, load_1min=load,
              cpu_s=usage.ru_utime + usage.ru_stime, started_at=started, timeline=_parse_timeline(output))
    workers = re.search(r"on (\d+) node\(s\) .*peak memory per worker \[([0-9., ]*)\] MB", output)
    if workers:
        run.nodes = int(workers.group(1))
        run.peak_mb = [float(x) for x in workers.group(2).split(",") if x.strip()]
    else:  # serial: the command's own process is the worker
        run.peak_mb = [usage.ru_maxrss / 1024.0]
    time_line = re.search(r"start-up ([0-9.]+) s, worker builds \[([0-9., ]*)\] s, episodes per worker "
                          r"\[([0-9, ]*)\], idle at the end ([0-9.]+) worker-s", output)
    if time_line:
        run.startup_s = float(time_line.group(1))
        run.builds_s = [float(x) for x in time_line.group(2).split(",") if x.strip()]
        run.per_worker = [int(x) for x in time_line.group(3).split(",") if x.strip()]
        run.idle_at_end_s = float(time_line.group(4))
    cpu_line = re.search(r"CPU per worker \[([0-9., ]*)\] s", output)
    if cpu_line:
        run.worker_cpu_s = [float(x) for x in cpu_line.group(1).split(",") if x.strip()]
    _parse_balance(run, output)
    data = json.loads(out.read_text())
    run.subtasks = data["subtasks"]
    run.sr, run.spl = data["summary"]["success_rate"], data["summary"]["spl"]
    return run


def _parse_balance(run: Run, output: str) -> None:
    """The episodes' part of the command's workers line (goat_suites.common.parallel.describe)."""
    split = re.search(r"episodes' CPU per worker \[([0-9., ]*)\] s, estimated \[([0-9., ]*)\] s; estimate vs "
                      r"episode CPU: rank correlation ([-0-9.na]+)", output)
    if split:
        run.episode_cpu_s = [float(x) for x in split.group(1).split(",") if x.strip()]
        run.estimated_s = [float(x) for x in split.group(2).split(",") if x.strip()]
        run.rank_correlation = float(split.group(3))
    listed = re.search(r"per episode \(plan order\) estimate/CPU s/worker \[([0-9./, -]*)\]", output)
    if listed:
        for item in listed.group(1).split(","):
            cost, cpu, worker = item.strip().split("/")
            run.episodes.append((float(cost), float(cpu), int(worker)))


WORKERS_CPU = "workers' CPU"
# The fields of the command's timeline line (goat_suites.common.parallel.describe_clock): label -> values.
_TIMELINE_FIELDS = ("pool opened at monotonic", "the driver at", "shared loaded", "workers started",
                    "generation started", "generation ended", "run started", "workers built", "first episodes",
                    "last episodes ended", "run ended", "workers closed", WORKERS_CPU, "build", "generation",
                    "episodes", "the rest", "loading what the workers share", "to the run", "during the episodes",
                    "results files", "progress", "closing the workers")


def _parse_timeline(output: str) -> dict[str, list[float]]:
    line = next((x for x in output.splitlines() if x.startswith("timeline: ")), "")[len("timeline: "):]
    found: dict[str, list[float]] = {}
    for label in _TIMELINE_FIELDS:
        match = re.search(rf"(?:^|[:;,(] ?){re.escape(label)} (\[[-0-9., ]*\]|[-0-9.]+)", line)
        if match:
            found[label] = [float(x) for x in match.group(1).strip("[]").split(",") if x.strip()]
    return found


def _print_timeline(run: Run) -> None:
    """Where the time outside the workers' episodes went: event times (s since the command started) and CPU time
    (which other jobs on the machine do not stretch)."""
    t = run.timeline
    if "pool opened at monotonic" not in t or WORKERS_CPU not in t:
        return
    opened = t["pool opened at monotonic"][0] - run.started_at  # the command's start -> its pool

    def at(label: str) -> str:
        return " / ".join(f"{opened + v:.2f}" for v in t.get(label, [])) or "-"

    def cpus(label: str) -> str:
        return " / ".join(f"{v:.2f}" for v in t.get(label, [])) or "-"

    workers_cpu = t[WORKERS_CPU]
    driver_before = t["the driver at"][0]
    driver_pool = sum(t.get(k, [0.0])[0] for k in ("loading what the workers share", "to the run",
                                                    "during the episodes", "closing the workers"))
    driver_after = run.cpu_s - sum(workers_cpu) - driver_before - driver_pool  # summary, report, exit
    driver_all = driver_before + driver_pool + driver_after
    print(f"          before the episodes (s since the command started): pool opened {opened:.2f} (driver CPU "
          f"{driver_before:.2f} s: Python, imports, settings), what the workers share loaded {at('shared loaded')}, "
          f"workers built {at('workers built')}, generation {at('generation started')} to {at('generation ended')}, "
          f"run started {at('run started')}, first episodes {at('first episodes')}", flush=True)
    print(f"          workers' CPU {cpus(WORKERS_CPU)} s, outside their episodes: build {cpus('build')}, "
          f"generation {cpus('generation')}, the rest (fork, results to the driver, closing) {cpus('the rest')} s",
          flush=True)
    print(f"          driver CPU {driver_all:.2f} s: before the pool {driver_before:.2f}, loading what the workers "
          f"share {cpus('loading what the workers share')}, to the run {cpus('to the run')}, during the episodes "
          f"{cpus('during the episodes')} (results files {cpus('results files')}, progress {cpus('progress')}), "
          f"closing the workers {cpus('closing the workers')}, after the pool (summary, exit) {driver_after:.2f}",
          flush=True)
    print(f"          after the last episodes (ended {at('last episodes ended')}): run ended {at('run ended')}, "
          f"workers closed {at('workers closed')}, command exited {run.wall_s:.2f}", flush=True)
    lasts = t.get("last episodes ended", [])
    busiest = max(range(len(workers_cpu)), key=lambda i: workers_cpu[i])
    if busiest < len(lasts) and all(k in t for k in ("build", "generation", "episodes")):
        started = opened + t.get("workers started", [0.0])[0]
        worked = t["build"][busiest] + t["generation"][busiest] + t["episodes"][busiest]
        tail = run.wall_s - (opened + lasts[busiest])
        gap = run.wall_s - started - worked - tail
        print(f"          wall {run.wall_s:.2f} s against the busiest worker's CPU {workers_cpu[busiest]:.2f} s: "
              f"{started:.2f} s before it started, {worked:.2f} s of its build, generation and episodes, {gap:.2f} s "
              f"between them (waiting for the driver and the other worker, sending results; on a loaded machine "
              f"the other jobs), {tail:.2f} s from its last episode's end to the command's exit", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-actions", type=int, default=None, help="budget per subtask (default: 500)")
    parser.add_argument("--skip-cluster", action="store_true", help="only serial and --workers 2")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}", flush=True)
    root = Path(tempfile.mkdtemp(prefix="bench-parallel-"))
    runs: list[Run] = []
    cluster: Optional[LocalCluster] = None
    try:
        if not args.skip_cluster:
            started = time.monotonic()
            cluster = LocalCluster((1, 1)).start()
            print(f"two-node cluster at {cluster.address} up in {time.monotonic() - started:.1f} s", flush=True)
        for repeat in range(args.repeats):
            plans: list[tuple[list[str], Optional[dict[str, str]]]] = [([], None), (["--workers", "2"], None)]
            if cluster is not None:
                plans.append((["--ray-address", cluster.address], cluster.driver_env))
            for k, (extra, env) in enumerate(plans):
                run = _bench(args, root / f"r{repeat}-{k}.json", extra, env)
                runs.append(run)
                print(f"repeat {repeat}: {run.how:<32} {run.wall_s:7.1f} s  load {run.load_1min:5.2f}  "
                      f"{len(run.peak_mb)} worker(s) on {run.nodes} node(s), peak "
                      f"{', '.join(f'{m:.0f}' for m in run.peak_mb)} MB  SR {run.sr:.3f} SPL {run.spl:.3f}",
                      flush=True)
                if run.builds_s:
                    print(f"          where the time went: start-up {run.startup_s:.1f} s, worker builds "
                          f"{', '.join(f'{b:.1f}' for b in run.builds_s)} s, episodes per worker "
                          f"{run.per_worker}, idle at the end {run.idle_at_end_s:.1f} worker-s, CPU per worker "
                          f"{', '.join(f'{c:.1f}' for c in run.worker_cpu_s)} s", flush=True)
                if run.episode_cpu_s:
                    _print_balance(run)
                _print_timeline(run)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    _report(runs)
    return 0


def _print_balance(run: Run) -> None:
    """Per episode CPU time against its estimate, and the split of the episodes' CPU time between the workers."""
    total = sum(run.episode_cpu_s)
    best = longest_first_makespan([cpu for _, cpu, _ in run.episodes], len(run.episode_cpu_s)) \
        if run.episodes else float("nan")
    print(f"          episodes' CPU per worker {', '.join(f'{c:.1f}' for c in run.episode_cpu_s)} s (the estimates "
          f"said {', '.join(f'{c:.1f}' for c in run.estimated_s)} s); makespan {max(run.episode_cpu_s):.1f} "
          f"CPU-s, even split {total / len(run.episode_cpu_s):.1f}, longest first with exact costs {best:.1f}; "
          f"estimate vs CPU rank correlation {run.rank_correlation:.2f}", flush=True)
    if run.episodes:
        print("          per episode (plan order), estimate / CPU s / worker: "
              + ", ".join(f"{cost:.0f}/{cpu:.1f}/{worker}" for cost, cpu, worker in run.episodes), flush=True)


def _report(runs: list[Run]) -> None:
    serial = [r for r in runs if r.how == "serial"]
    reference = serial[0].subtasks
    same = all(r.subtasks == reference for r in runs)
    base = statistics.median(r.wall_s for r in serial)
    print(f"\n{'run':<34}{'median s':>10}{'speed-up':>10}{'runs':>6}  peak MB per worker (max over runs)")
    for how in dict.fromkeys(r.how for r in runs):
        group = [r for r in runs if r.how == how]
        median = statistics.median(r.wall_s for r in group)
        peaks = [max(r.peak_mb[i] for r in group if i < len(r.peak_mb)) for i in range(max(len(r.peak_mb)
                                                                                             for r in group))]
        print(f"{how:<34}{median:>10.1f}{base / median:>9.2f}x{len(group):>6}  "
              f"{', '.join(f'{p:.0f}' for p in peaks)}")
    episodes = len({(r["scene_id"], r["episode_id"]) for r in reference})
    actions = sum(r["num_actions"] for r in reference)
    print(f"per episode (serial): {base / episodes:.1f} s, {actions / episodes:.0f} actions "
          f"({1000.0 * base / max(actions, 1):.0f} ms per action, generation and start-up included)")
    print(f"load average (1 min) before the runs: {', '.join(f'{r.load_1min:.2f}' for r in runs)}")
    # On a shared machine the wall times measure the other jobs too; CPU time does not.
    serial_cpu = statistics.median(r.busy_path_cpu_s for r in serial)
    print("\nCPU time on the longest path (load-independent estimate of a quiet machine's wall time):")
    for how in dict.fromkeys(r.how for r in runs):
        group = [r for r in runs if r.how == how]
        path = statistics.median(r.busy_path_cpu_s for r in group)
        total = statistics.median(r.cpu_s for r in group)
        print(f"{how:<34}{path:>10.1f}{serial_cpu / path:>9.2f}x  (CPU of all processes {total:.1f} s)")
    print(f"every run gave the serial run's records (actions, SR, SPL): {'yes' if same else 'NO'}")


if __name__ == "__main__":
    sys.exit(main())
