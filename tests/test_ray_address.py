"""`--ray-address` of a cluster that is not there: one line naming the address and what to check, in seconds.

Before this check Ray retried the address for minutes, printing "Failed to connect to GCS" warnings (issue 31).
The command runs as a user runs it (a child process), so Ray's own output would show on its stderr."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goat_core.errors import ConfigError
from goat_suites.common.ray_cluster import check_gcs_reachable, gcs_host_port

GOAT_NAV = str(Path(sys.executable).parent / "goat-nav")


def _closed_port() -> int:
    """A port of this machine that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray (pip install -e '.[cluster]')")
def test_an_unreachable_cluster_fails_before_any_episode_in_one_line() -> None:
    address = f"127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    try:
        done = subprocess.run([GOAT_NAV, "bench", "--episodes", "1", "--ray-address", address, "--quiet"],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"--ray-address {address} had not failed after 60 s")
    elapsed_s = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-2000:]
    assert elapsed_s < 30.0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr[-2000:]  # no Ray warnings, no traceback
    assert address in lines[0] and "ray status" in lines[0] and "port" in lines[0]
    assert "generating episodes" not in done.stderr


def test_a_listening_port_passes_and_a_closed_one_names_the_address() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        check_gcs_reachable(f"127.0.0.1:{server.getsockname()[1]}", timeout_s=2.0)
    address = f"127.0.0.1:{_closed_port()}"
    with pytest.raises(ConfigError, match=address.replace(".", r"\.")):
        check_gcs_reachable(address, timeout_s=2.0)


@pytest.mark.parametrize("address, expected", [
    ("auto", None), ("10.0.0.5:6379", ("10.0.0.5", 6379)), ("ray://head:10001", ("head", 10001)),
    ("[::1]:6379", ("::1", 6379)),
])
def test_addresses_are_read_as_host_and_port(address: str, expected: object) -> None:
    assert gcs_host_port(address) == expected


@pytest.mark.parametrize("address", ["head", "head:", "head:port", "head:70000", ":6379"])
def test_a_malformed_address_is_refused_naming_it(address: str) -> None:
    with pytest.raises(ConfigError, match="--ray-address must be"):
        gcs_host_port(address)
