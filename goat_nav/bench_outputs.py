"""The files of a ``goat-nav bench`` run, checked and claimed before its first episode (every suite, --ros too).

``--out`` (and the trajectories file beside it) and ``--report`` are checked up front, as ``--record`` is; the
results file is claimed for the run (goat_suites.common.outputs.ResultsClaim): an existing one is replaced only with
``--force`` (or continued with ``--resume``), and a second run on the same file fails at once.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Iterator

from goat_suites.common.outputs import ResultsClaim, check_output_file
from goat_suites.common.trajectories import trajectories_path


@contextlib.contextmanager
def claimed_outputs(args: argparse.Namespace) -> Iterator[None]:
    """Check the run's output paths and hold its results file while the body runs; OutputPathError if not."""
    if args.report is not None:
        check_output_file(args.report, "--report")
    if args.out is None:
        yield
        return
    check_output_file(trajectories_path(args.out), "--out (its trajectories file)")
    # --resume adds to the run the file holds rather than replacing it (goat_suites.common.resume checks it is the same
    # run).
    with ResultsClaim(args.out, "--out", replace=args.force or getattr(args, "resume", False)):
        yield
