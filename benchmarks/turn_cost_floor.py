"""How much of the stretch profile's SPL gap the base's drift during turns in place sets, from two runs' files.

    python benchmarks/turn_cost_floor.py runs/ideal_1000.json runs/s_1000.json

Both files are ``bench_realism.py --out`` of the same episodes: the first of the ``ideal`` setting, the second of
``stretch``. Under the stretch profile a 30 deg turn in place also moves the base (PyRobot's LoCoBot noise; about
3 cm a turn at the profile's x0.5), and GOAT-Bench's path length counts it. The script prints, with SPL averaged
as GOAT-Bench does (per episode, then over episodes):

- both runs' SPL, their gap, and turns in place per subtask;
- the stretch run's SPL with the path its turns walked taken out (what the gap would be if turns moved nothing);
- the ideal run's SPL with each of its turns charged the stretch run's mean path per turn: what the ideal agent's
  own actions would lose to that drift alone, whatever else the profile does (docs/realism.md, "Stop 44").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

Cost = dict[str, Any]


def load_costs(path: Path) -> list[Cost]:
    """The per-subtask costs of the one setting in a ``bench_realism.py --out`` file."""
    try:
        data = json.loads(path.read_text())
        rows = data["rows"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SystemExit(f"{path}: not a bench_realism.py --out file ({err})") from None
    if len(rows) != 1 or not rows[0].get("costs"):
        raise SystemExit(f"{path}: expected one setting with per-subtask costs, found {len(rows)} setting(s)")
    costs: list[Cost] = rows[0]["costs"]
    return costs


def subtask_spl(cost: Cost, extra_path_m: float = 0.0) -> float:
    """GOAT-Bench's SPL of one subtask, its path lengthened by ``extra_path_m`` (negative: shortened)."""
    if not cost["success"]:
        return 0.0
    geodesic = float(cost["geodesic_m"])
    path = float(cost["path_m"]) + extra_path_m
    return 1.0 if geodesic <= 0.0 else geodesic / max(geodesic, path)


def mean_spl(costs: list[Cost], spl: Callable[[Cost], float]) -> float:
    """Per episode, then over episodes, as bench_realism.py and GOAT-Bench average."""
    by_episode: dict[str, list[float]] = defaultdict(list)
    for cost in costs:
        by_episode[str(cost["episode_id"])].append(spl(cost))
    return statistics.fmean(statistics.fmean(v) for v in by_episode.values())


def turns(cost: Cost) -> int:
    return int(sum(cost.get("turns", {}).values()))


def turn_path_m(cost: Cost) -> float:
    return float(sum(cost.get("turn_m", {}).values()))


def floor(ideal: list[Cost], stretch: list[Cost]) -> dict[str, float]:
    """The numbers the script prints (see the module's docstring)."""
    total_turns = sum(turns(c) for c in stretch)
    per_turn_m = sum(turn_path_m(c) for c in stretch) / total_turns if total_turns else 0.0
    ideal_spl = mean_spl(ideal, subtask_spl)
    stretch_spl = mean_spl(stretch, subtask_spl)
    still_spl = mean_spl(stretch, lambda c: subtask_spl(c, -turn_path_m(c)))
    charged_spl = mean_spl(ideal, lambda c: subtask_spl(c, per_turn_m * turns(c)))
    return {
        "ideal_spl": ideal_spl, "stretch_spl": stretch_spl, "gap": ideal_spl - stretch_spl,
        "ideal_turns_per_subtask": statistics.fmean(turns(c) for c in ideal),
        "stretch_turns_per_subtask": statistics.fmean(turns(c) for c in stretch),
        "path_per_turn_m": per_turn_m,
        "stretch_spl_turns_still": still_spl, "gap_turns_still": ideal_spl - still_spl,
        "ideal_spl_turns_charged": charged_spl, "ideal_loss_turns_charged": ideal_spl - charged_spl,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ideal", type=Path, help="bench_realism.py --out of the ideal setting")
    parser.add_argument("stretch", type=Path, help="bench_realism.py --out of the stretch setting, same episodes")
    args = parser.parse_args()
    n = floor(load_costs(args.ideal), load_costs(args.stretch))
    print(f"ideal SPL {n['ideal_spl']:.3f}, stretch {n['stretch_spl']:.3f}: gap {n['gap']:.3f}; turns in place a "
          f"subtask: ideal {n['ideal_turns_per_subtask']:.1f}, stretch {n['stretch_turns_per_subtask']:.1f}")
    print(f"stretch with its turns' path taken out: SPL {n['stretch_spl_turns_still']:.3f}, gap "
          f"{n['gap_turns_still']:.3f}")
    print(f"ideal's actions, each turn charged the stretch run's {100 * n['path_per_turn_m']:.1f} cm: SPL "
          f"{n['ideal_spl_turns_charged']:.3f} (loses {n['ideal_loss_turns_charged']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
