"""Two FindingDory results files side by side on the episodes both finished (issue 28: old protocol vs official).

    python benchmarks/compare_findingdory.py OLD.json OFFICIAL.json

For each file: its protocol, HL-SR, LL-SR, HL-SPL, LL-SPL, DTG-SR and SC-SR over the tasks of the common
episodes (a run stopped early, or one that skipped a home, is compared where both have tasks), and the failed
tasks split by where they failed: the high level (its frames fail the distance check: ``hl_distance``, or the
coverage/heading check: ``hl_view``), a high-level answer error (``error``), the low level out of actions
(``ll_budget``), or the low level's STOP refused by the verifier (``ll_stop_refused``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from goat_suites.common.suite_metrics import FindingDoryRecord, findingdory_stats
from goat_suites.findingdory.results import read_results


def failure(record: FindingDoryRecord, task: Mapping[str, Any]) -> Optional[str]:
    """Where a task failed (None: it succeeded end to end)."""
    if record.ll_success:
        return None
    if task.get("error"):
        return "error"
    if not record.hl_success:
        return "hl_distance" if not record.hl_dtg_success else "hl_view"
    if int(task["stops"]) < len(task["valid_targets"]):
        return "ll_budget"
    return "ll_stop_refused"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs=2, type=Path, help="two results files of goat-nav bench --suite findingdory")
    args = parser.parse_args(argv)
    runs = [read_results(path) for path in args.files]
    common = set.intersection(*({r.episode_id for r in run.records} for run in runs))
    if not common:
        print("error: the two files have no episode in common", file=sys.stderr)
        return 2
    print(f"{len(common)} common episodes: {', '.join(sorted(common))}")
    for path, run in zip(args.files, runs, strict=True):
        pairs = [(r, t) for r, t in zip(run.records, run.tasks, strict=True) if r.episode_id in common]
        s = findingdory_stats([r for r, _ in pairs])
        failures = Counter(f for f in (failure(r, t) for r, t in pairs) if f is not None)
        hl_spl = "n/a" if s.hl_spl is None else f"{s.hl_spl:.3f}"
        print(f"{path}: protocol {run.meta.get('protocol', '(not named: written before protocols)')}\n"
              f"  {s.count} tasks: HL-SR {s.hl_sr:.3f}, LL-SR {s.ll_sr:.3f}, HL-SPL {hl_spl}, LL-SPL {s.ll_spl:.3f}, "
              f"DTG-SR {s.dtg_sr:.3f}, SC-SR {s.sc_sr:.3f}; failures: "
              + (", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
