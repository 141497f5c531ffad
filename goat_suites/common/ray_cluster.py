"""A Ray cluster of several nodes on this one machine, for trying the cluster path (tests, benchmarks).

Each node is a real ``ray start --block`` process (``--head`` for the first, ``--address`` for the others) with a
temporary folder and ports of its own, so that it meets no other Ray on the machine; :meth:`LocalCluster.stop`
ends the nodes it started (interrupt, then kill, of each node's own process group). Token authentication is on,
as on a real cluster (docs/cluster.md): every node and the driver use the token of ``~/.ray/auth_token``, which is
generated (``ray get-auth-token --generate``) when neither it nor ``RAY_AUTH_TOKEN``/``RAY_AUTH_TOKEN_PATH`` exists.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Optional, Sequence

from goat_core.errors import ConfigError

GCS_CONNECT_TIMEOUT_S = 5.0  # how long --ray-address's head may take to accept a TCP connection


def gcs_host_port(address: str) -> Optional[tuple[str, int]]:
    """(host, port) of a ``--ray-address``: ``host:port``, ``ray://host:port`` or ``[v6]:port``; None for ``auto``
    and ``local`` (Ray finds those itself). ConfigError for anything else, naming the value."""
    text = address.strip()
    if text in ("auto", "local"):
        return None
    if "://" in text:
        text = text.split("://", 1)[1]
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--ray-address must be 'auto' or host:port of the cluster's head, got {address!r}")
    return host, int(port)


def check_gcs_reachable(address: str, timeout_s: float = GCS_CONNECT_TIMEOUT_S) -> None:
    """ConfigError in one line, within about ``timeout_s``, when nothing accepts a TCP connection at the GCS
    address of ``address`` (a mistyped address, a cluster that is down, a closed port): Ray itself would retry for
    minutes and print its warnings meanwhile. ``auto``/``local`` are not checked here."""
    target = gcs_host_port(address)
    if target is None:
        return
    host, port = target
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except TimeoutError:
        why = f"no answer within {timeout_s:.0f} s"
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
    raise ConfigError(f"cannot reach the Ray cluster at {address!r} ({why}): check that the head is up "
                      f"(`ray status` on the head node), that {host} is its address and {port} its GCS port "
                      f"(`ray start --head --port {port}`), and that no firewall closes that port")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def _ray_command() -> str:
    ray = Path(sys.executable).parent / "ray"
    if not ray.exists():
        raise ConfigError(f"the ray command is not installed next to {sys.executable}: pip install -e \".[cluster]\"")
    return str(ray)


def _node_ip() -> str:
    """The address Ray gives this machine, asked in a child process: importing Ray here would fix this process's
    authentication mode before its caller could set RAY_AUTH_MODE (Ray reads it once, at import)."""
    result = subprocess.run([sys.executable, "-c", "import ray.util; print(ray.util.get_node_ip_address())"],
                            capture_output=True, text=True, timeout=120, check=True)
    return result.stdout.strip().splitlines()[-1]


def ensure_auth_token() -> None:
    """Make sure a Ray token exists where every node of this machine finds it (~/.ray/auth_token by default)."""
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return
    if (Path.home() / ".ray" / "auth_token").exists():
        return
    subprocess.run([_ray_command(), "get-auth-token", "--generate"], check=True, capture_output=True, timeout=60)


class LocalCluster:
    """``num_cpus[i]`` CPUs on node i (node 0 is the head); use as a context manager."""

    def __init__(self, num_cpus: Sequence[int] = (1, 1), start_timeout_s: float = 90.0) -> None:
        if not num_cpus or any(n < 1 for n in num_cpus):
            raise ConfigError(f"every node needs >= 1 CPU, got {list(num_cpus)}")
        self.num_cpus = list(num_cpus)
        self.start_timeout_s = start_timeout_s
        self.root: Optional[Path] = None
        self.port = 0
        self.node_ip = ""  # the address Ray gives this machine (ray.util.get_node_ip_address)
        self._nodes: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []

    @property
    def address(self) -> str:
        """What ``--ray-address`` takes: the head's GCS address."""
        return f"{self.node_ip}:{self.port}"

    @property
    def driver_env(self) -> dict[str, str]:
        """What a driver's environment needs to connect (token authentication on, the token found as the nodes
        find it); a Python driver must have it before it imports Ray."""
        return {"RAY_AUTH_MODE": "token"}

    @property
    def node_pids(self) -> list[int]:
        return [p.pid for p in self._nodes]

    def _start_node(self, index: int, env: dict[str, str]) -> None:
        assert self.root is not None
        temp_dir = self.root / f"n{index}"  # short: Ray's socket paths must fit in 107 bytes
        args = [_ray_command(), "start", "--block", "--num-cpus", str(self.num_cpus[index]),
                "--node-ip-address", self.node_ip, "--temp-dir", str(temp_dir), "--disable-usage-stats",
                "--dashboard-agent-listen-port", str(_free_port()), "--metrics-export-port", str(_free_port())]
        if index == 0:
            args += ["--head", "--port", str(self.port), "--include-dashboard", "false",
                     "--dashboard-port", str(_free_port())]
        else:
            args += ["--address", self.address]
        log = open(self.root / f"node{index}.log", "wb")  # noqa: SIM115 - kept open while the node runs
        self._logs.append(log)
        self._nodes.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True))

    def _wait_for_cpus(self) -> None:
        """Until the cluster offers every node's CPUs (``ray status`` through the head)."""
        deadline = time.monotonic() + self.start_timeout_s
        want = sum(self.num_cpus)
        status = ""
        while time.monotonic() < deadline:
            dead = [i for i, p in enumerate(self._nodes) if p.poll() is not None]
            if dead:
                raise ConfigError(f"Ray node {dead[0]} exited while starting; see {self.root}/node{dead[0]}.log")
            result = subprocess.run([_ray_command(), "status", "--address", self.address], capture_output=True,
                                    text=True, timeout=60, env={**os.environ, **self.driver_env})
            status = result.stdout
            if result.returncode == 0 and f"/{want}.0 CPU" in status:
                return
            time.sleep(1.0)
        raise ConfigError(f"the local Ray cluster did not offer {want} CPUs within {self.start_timeout_s:.0f} s: "
                          f"{status[-500:]} (node logs: {self.root})")

    def start(self) -> LocalCluster:
        ensure_auth_token()
        self.root = Path(tempfile.mkdtemp(prefix="goat-rc-", dir="/tmp" if os.path.isdir("/tmp") else None))
        self.port = _free_port()
        self.node_ip = _node_ip()
        # Workers as nice as the nodes (Ray's default puts them 15 lower), so that timings compare with a serial run.
        env = {**os.environ, **self.driver_env, "RAY_worker_niceness": "0"}
        try:
            self._start_node(0, env)
            for index in range(1, len(self.num_cpus)):
                self._start_node(index, env)
            self._wait_for_cpus()
        except BaseException:
            self.stop(keep_logs=True)
            raise
        return self

    def stop(self, timeout_s: float = 30.0, keep_logs: bool = False) -> None:
        """End every node this cluster started (its process group), then remove its folder (unless
        ``keep_logs``: the nodes' logs stay in :attr:`root`)."""
        for node in reversed(self._nodes):
            if node.poll() is None:
                os.killpg(node.pid, signal.SIGINT)  # ray start --block stops its processes on an interrupt
        deadline = time.monotonic() + timeout_s
        for node in reversed(self._nodes):
            try:
                node.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # whatever of the node's group is left (raylet workers), by the group this cluster made
                os.killpg(node.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            node.wait()
        self._nodes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self.root is not None and not keep_logs:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
