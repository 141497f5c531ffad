"""The files a benchmark run writes, checked before the run and owned by it while it runs.

A run that can only fail to write after its episodes lost them: :func:`check_output_file` says at once what is
wrong with a path (a folder, a file standing where a folder should be, no write permission).
:class:`ResultsClaim` makes a results file belong to one run: an existing file (a finished or partial earlier
run) is kept unless the caller forces a replacement, and a second run on the same file fails at once instead of
both overwriting each other. The claim is an exclusive ``flock`` on ``<file>.lock``, which the kernel drops when
the process ends, however it ends. While the run goes on, the file's meta says how much of the run it holds
(:func:`run_progress`), so an interrupted run's file reads as partial (:func:`partial_run_note`).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Mapping, Optional, Sequence, Union

from goat_core.errors import GoatError
from goat_suites.common.episodes import GoatEpisode

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


def lock_path(results_path: PathLike) -> Path:
    """The lock file of a results file: ``<name>.lock`` beside it."""
    p = Path(results_path)
    return p.with_name(p.name + ".lock")


class ResultsClaim:
    """A run's hold on its results file, from before its first episode until it ends (a context manager).

    ``replace``: an existing results file may be overwritten (``--force``); without it an existing file is an
    OutputPathError. A file that another live run holds is an OutputPathError either way.
    """

    def __init__(self, path: PathLike, what: str = "--out", replace: bool = False) -> None:
        self.path = check_output_file(path, what)
        self.what = what
        self.replace = replace
        self._lock: Optional[IO[str]] = None

    def __enter__(self) -> ResultsClaim:
        lock = lock_path(self.path)
        lock.parent.mkdir(parents=True, exist_ok=True)
        while True:
            handle = open(lock, "a+")  # noqa: SIM115 (held until __exit__)
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                handle.close()
                raise OutputPathError(f"{self.what} {self.path}: another run is writing it (pid {holder}, lock "
                                      f"{lock}); wait for it or choose another file") from None
            # A run that ended between our open and our lock may have removed the file: lock the current one.
            try:
                same = os.stat(lock).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()
        if self.path.exists() and not self.replace:
            lock.unlink(missing_ok=True)
            handle.close()
            raise OutputPathError(f"{self.what} {self.path}: a results file is already there (an earlier run); "
                                  "it is not overwritten: pass --force to replace it, or choose another file")
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._lock = handle
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if self._lock is None:
            return
        lock_path(self.path).unlink(missing_ok=True)  # while still held: no other run can hold this inode
        self._lock.close()
        self._lock = None


def run_progress(episodes: Sequence[GoatEpisode], num_records: int) -> dict[str, Any]:
    """The meta entries that say how much of its run a results file holds: the planned episodes and subtasks,
    and ``complete`` (every planned subtask has its record). Written with every rewrite of the file."""
    planned = sum(len(episode.tasks) for episode in episodes)
    return {"planned_episodes": len(episodes), "planned_subtasks": planned, "complete": num_records >= planned}


def episode_progress(planned_episodes: int, finished_episodes: int) -> dict[str, Any]:
    """:func:`run_progress` of a run whose plan counts episodes only (FindingDory: an episode's tasks are known
    once it ran): ``complete`` when every planned episode has finished."""
    return {"planned_episodes": planned_episodes, "finished_episodes": finished_episodes,
            "complete": finished_episodes >= planned_episodes}


def partial_run_note(meta: Mapping[str, Any], num_records: int) -> Optional[str]:
    """One line saying a results file is partial (``complete`` false); None for a complete run, and for files
    written before runs recorded their progress (nothing to say either way)."""
    if meta.get("complete") is not False:
        return None
    if "planned_subtasks" not in meta and "finished_episodes" in meta:  # episode_progress
        return (f"PARTIAL RUN: {meta['finished_episodes']} of {meta.get('planned_episodes', '?')} planned episodes "
                f"({num_records} records); the run did not finish")
    return (f"PARTIAL RUN: {num_records} of {meta.get('planned_subtasks', '?')} planned subtasks "
            f"({meta.get('planned_episodes', '?')} episodes planned); the run did not finish")
