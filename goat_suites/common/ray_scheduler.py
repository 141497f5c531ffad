"""Workers as Ray actors: on a Ray cluster (``--ray-address``), or on a local Ray runtime (GPU runs).

Ray is an optional dependency (``pip install -e ".[cluster]"``), imported only when a run asks for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Iterator, Optional

from goat_core.errors import ConfigError, GoatError
from goat_suites.common.work_units import Scheduler, UnitRunner, WorkerDied, WorkerFactory

if TYPE_CHECKING:
    from goat_suites.common.work_units import ParallelConfig

INSTALL_HINT = 'pip install -e ".[cluster]"'  # the extra that installs Ray (pyproject.toml)


def import_ray() -> Any:
    """The ray module, or ConfigError with the install command."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"parallel runs need Ray ({exc}); install it with: {INSTALL_HINT}") from None
    return ray


@contextlib.contextmanager
def ray_runtime(config: ParallelConfig) -> Iterator[tuple[Any, int]]:
    """(ray, number of workers) on a runtime for the run.

    A Ray already initialised in this process (a Python caller's) is used as it is and left running. Without
    ``ray_address`` a new local runtime (never another one of this machine) with ``workers`` CPUs, workers as nice
    as this process, no dashboard, worker logs kept out of this terminal and a temporary folder of its own is
    started, and stopped (folder removed) afterwards. With ``ray_address`` this
    process connects to the cluster as its driver and disconnects afterwards; the cluster keeps running.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray, config.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        return
    temp_dir: Optional[str] = None
    if config.ray_address is None:
        # Short path: Ray's socket names must fit in 107 bytes.
        temp_dir = tempfile.mkdtemp(prefix="goat-ray-", dir="/tmp" if os.path.isdir("/tmp") else None)
        # Workers as nice as this command: Ray's default (15 above the raylet) would put them behind every other
        # job of a shared machine, and `nice goat-nav bench` should apply to the whole run.
        init: dict[str, Any] = dict(address="local", num_cpus=config.workers or 1, include_dashboard=False,
                                    _temp_dir=temp_dir, _system_config={"worker_niceness": 0})
    else:
        from goat_suites.common.ray_cluster import check_gcs_reachable

        check_gcs_reachable(config.ray_address)  # Ray would retry a dead address for minutes, printing warnings
        init = dict(address=config.ray_address)
    try:
        ray.init(log_to_driver=False, logging_level=logging.WARNING, **init)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
        where = "a local Ray runtime" if config.ray_address is None else f"the Ray cluster at {config.ray_address!r}"
        raise ConfigError(f"cannot start or reach {where}: {exc}") from None
    try:
        # A local runtime has exactly the workers' CPUs; a cluster gives one worker per CPU unless told otherwise.
        workers = config.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        yield ray, workers
    finally:
        ray.shutdown()
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)


class UnitActor(UnitRunner):
    """The Ray actor of one worker (wrapped with ``ray.remote`` by the scheduler): a UnitRunner that names its node."""

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


def short_error(exc: BaseException) -> str:
    """The last meaningful line of a Ray error (its messages run over many lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]


class RayScheduler(Scheduler):
    """One actor per worker (one CPU each, its share of the GPUs with ``gpu``)."""

    def __init__(self, ray: Any, factory: WorkerFactory, workers: int, gpu: bool) -> None:
        self.ray = ray
        options: dict[str, Any] = dict(num_cpus=1, max_restarts=0, max_task_retries=0)
        if gpu:
            gpus = float(ray.cluster_resources().get("GPU", 0.0))
            if gpus <= 0.0:
                raise ConfigError("--device cuda with workers: the Ray runtime has no GPU")
            options["num_gpus"] = min(1.0, gpus / workers)  # each worker's share; Ray sets CUDA_VISIBLE_DEVICES
        self._actor_class = ray.remote(**options)(UnitActor)
        self._factory_ref = ray.put(factory)  # shipped once, not once per worker
        self._warm_ups: list[Any] = []
        super().__init__(workers)

    def _new_worker(self) -> Any:
        actor = self._actor_class.remote(self._factory_ref)
        self._warm_ups.append(actor.warm_up.remote())
        return actor

    def _share(self, value: Any) -> Any:
        return self.ray.put(value)

    def _submit(self, worker: Any, method: str, *args: Any) -> Any:
        return getattr(worker, method).remote(*args)

    def _wait(self, calls: list[Any]) -> Any:
        (ref,), _ = self.ray.wait(calls, num_returns=1)
        return ref

    def _result(self, call: Any) -> Any:
        ray = self.ray
        try:
            return ray.get(call)
        except ray.exceptions.RayActorError as exc:
            if getattr(exc, "actor_init_failed", False):
                raise GoatError(f"a Ray worker could not start (is goat_nav installed on every node? "
                                f"docs/cluster.md): {short_error(exc)}") from None
            raise WorkerDied(short_error(exc)) from None
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, GoatError):
                raise cause from None  # a suite's own error reads as in a serial run
            raise

    def _discard(self, worker: Any) -> None:
        self.ray.kill(worker)

    def close(self) -> None:
        ray = self.ray
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get([actor.close.remote() for actor in self.idle], timeout=60)
        with contextlib.suppress(ray.exceptions.RayError):  # seen, so that Ray does not report them unhandled
            ray.get(self._warm_ups, timeout=1)
        for actor in self.idle:
            ray.kill(actor)
        self.idle = []
