"""``goat-nav bench --resume``: which episodes of a run's plan its results file already holds.

A results file names its run's plan in its meta (:data:`PLAN_META_KEY`: the episode keys in plan order,
``goat_suites.common.parallel.WorkUnit.key``). A resumed command must plan the same episodes with the same settings
(:data:`SETTINGS_KEYS` of the meta); otherwise it is refused, naming the first difference, and nothing runs. The
suites read their own files (the ``load`` of :func:`plan_run`); :class:`PlanResults` is what their result sinks
share.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

from goat_core.errors import ConfigError
from goat_suites.common.parallel import WorkUnit

COMMAND_META_KEY = "command"  # results meta: the command line of the run
PLAN_META_KEY = "episode_plan"  # results meta: the keys of every episode of the run, in plan order
# Meta entries that decide the numbers: a resumed command must have the same ones as the file.
SETTINGS_KEYS = ("suite", "run_config", "agent_config", "stack", "perception", "gen_config", "num_rooms",
                 "high_level", "video",  # FindingDory's high-level policy and its experience video
                 "lexicon")  # the WordNet folder goal words were resolved with (None: embeddings alone)


def _json(value: Any) -> Any:
    """``value`` as it reads back from a JSON file (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, default=str))


def check_same_run(path: Path, file_meta: Mapping[str, Any], plan: Sequence[str], meta: Mapping[str, Any]) -> None:
    """ConfigError naming the difference when ``path`` (meta ``file_meta``) is not the run this command plans."""
    planned = file_meta.get(PLAN_META_KEY)
    if not isinstance(planned, list):
        raise ConfigError(f"cannot resume {path}: it does not name its planned episodes (meta {PLAN_META_KEY!r}; "
                          "written by an older goat-nav?); run without --resume into another --out")
    if planned != list(plan):
        first = next((i for i, (a, b) in enumerate(zip(planned, plan, strict=False)) if a != b),
                     min(len(planned), len(plan)))
        theirs = planned[first] if first < len(planned) else "(none)"
        ours = plan[first] if first < len(plan) else "(none)"
        raise ConfigError(f"cannot resume {path}: it plans {len(planned)} episodes, this command {len(plan)}; "
                          f"episode {first} is {theirs!r} there and {ours!r} here (same --episodes, --seed, "
                          "--episodes-file and --suite as the first run)")
    for key in SETTINGS_KEYS:
        if key in file_meta or key in meta:
            theirs, ours = file_meta.get(key), _json(meta.get(key))
            if theirs != ours:
                raise ConfigError(f"cannot resume {path}: its {key} is {theirs!r}, this command's {ours!r} (resume "
                                  "with the flags of the first run)")


def record_command(args: argparse.Namespace, meta: dict[str, Any]) -> None:
    """``meta["command"]``: the command line that started the run (set by ``goat_nav.cli.main``; absent when the
    run was started from Python). It is not a setting: a resumed run records its own."""
    command = getattr(args, "command_line", None)
    if command is not None:
        meta[COMMAND_META_KEY] = command


def plan_run(args: argparse.Namespace, units: Sequence[WorkUnit], meta: dict[str, Any],
              load: Callable[[Sequence[WorkUnit]], set[str]]) -> list[WorkUnit]:
    """The plan goes into ``meta``; with ``--resume`` and an existing ``--out`` the finished episodes are loaded
    (``load``) and left out. Returns the units to run."""
    meta[PLAN_META_KEY] = [u.key for u in units]
    record_command(args, meta)
    if not getattr(args, "resume", False):
        return list(units)
    if not args.out.exists():
        print(f"--resume: {args.out} does not exist yet; starting the run", file=sys.stderr)
        return list(units)
    finished = load(units)
    todo = [u for u in units if u.key not in finished]
    print(f"--resume: {len(units) - len(todo)} of {len(units)} episodes are in {args.out}; running the other "
          f"{len(todo)}", file=sys.stderr)
    return todo


Finished = TypeVar("Finished")


class PlanResults(Generic[Finished]):
    """The driver's side of a run's plan, shared by the suites' result sinks
    (``goat_suites.common.parallel.ResultSink``):
    what each finished episode left, by plan index, and the run's time."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.done: dict[int, Finished] = {}
        self._started = time.monotonic()
        self._elapsed_before_s = 0.0  # a resumed run's earlier time

    def finished(self) -> list[Finished]:
        """The finished episodes in plan order."""
        return [self.done[i] for i in sorted(self.done)]

    def stamp_elapsed(self) -> None:
        """``meta["elapsed_s"]``: the run's time so far, the earlier runs of a resumed one included."""
        self.meta["elapsed_s"] = round(self._elapsed_before_s + time.monotonic() - self._started, 1)

    def resumed(self, file_meta: Mapping[str, Any]) -> None:
        """``--resume``: the earlier run time of the results file (meta ``file_meta``) counts in."""
        self._elapsed_before_s = float(file_meta.get("elapsed_s", 0.0))
