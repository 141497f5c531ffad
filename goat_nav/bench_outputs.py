"""The files of a ``goat-nav bench`` run, checked before its first episode (every suite, --ros too).

``--out`` (and the trajectories file beside it) and ``--report`` are checked up front, as ``--record`` is.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Iterator

from goat_core.bench.outputs import check_output_file
from goat_nav.report import trajectories_path


@contextlib.contextmanager
def claimed_outputs(args: argparse.Namespace) -> Iterator[None]:
    """Check the run's output paths before the body runs; OutputPathError if one cannot be written."""
    if args.report is not None:
        check_output_file(args.report, "--report")
    if args.out is not None:
        check_output_file(trajectories_path(args.out), "--out (its trajectories file)")
        check_output_file(args.out, "--out")
    yield
