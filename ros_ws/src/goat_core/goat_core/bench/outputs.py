"""The files a benchmark run writes, checked before the run.

A run that can only fail to write after its episodes lost them: :func:`check_output_file` says at once what is
wrong with a path (a folder, a file standing where a folder should be, no write permission).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Union

from goat_core.errors import GoatError

PathLike = Union[str, "os.PathLike[str]"]


class OutputPathError(GoatError):
    """An output path cannot be written, or belongs to another run; the message names the path and why."""


def check_output_file(path: PathLike, what: str) -> Path:
    """``path`` as given if a file can be written there (its missing folders made on the way); OutputPathError
    naming ``what`` (the option, e.g. ``--out``) and the problem if not. Nothing is left behind."""
    target = Path(path)
    if target.is_dir():
        raise OutputPathError(f"{what} {target}: is a folder; name a file")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputPathError(f"{what} {target}: the file is not writable")
    ancestor = target.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputPathError(f"{what} {target}: {ancestor} is a file, not a folder")
    try:  # a real write: the answer the run would get (read-only mounts, ACLs), not just the permission bits
        with tempfile.NamedTemporaryFile(dir=ancestor, prefix=".goat_nav_write_check."):
            pass
    except OSError as exc:
        raise OutputPathError(f"{what} {target}: folder {ancestor} is not writable ({exc.strerror})") from None
    return target

