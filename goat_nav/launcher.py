"""`goat-nav launch sim|bench|stretch`: run a bringup's node set without ``ros2 launch``.

The node list and the params YAMLs are the ones the launch files use (``goat_ros.graph`` and ``config/``). By
default every node runs in this process on one executor; ``--isolated`` starts one process per node, as
``ros2 launch`` would. ``--record PATH`` adds the recorder node (rosbag2 MCAP bag PATH/, see docs/ros.md). Needs
ROS 2 (``bash scripts/setup_ros.sh``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from goat_core.errors import GoatError
from goat_ros.record import check_bag_path


def parse_overrides(items: list[str]) -> dict[str, dict[str, Any]]:
    """``node.param=value`` strings -> {node: {param: value}}, values parsed as YAML scalars."""
    import yaml

    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        node, dot, param = key.partition(".")
        if not sep or not dot or not node or not param:
            raise GoatError(f"--param must look like node.param=value, got {item!r}")
        out.setdefault(node, {})[param] = yaml.safe_load(value)
    return out


def _require_ros() -> None:
    try:
        import rclpy  # noqa: F401

        import goat_interfaces.msg  # noqa: F401
    except ImportError as exc:
        raise GoatError(f"ROS 2 is not available ({exc}); run 'bash scripts/setup_ros.sh' first") from None


def record_overrides(path: Path) -> dict[str, Any]:
    """The recorder's parameters for ``--record PATH``; RecordError naming the problem if no bag can be made there.

    Checked here, before any node starts; the path is made absolute for nodes started in other processes.
    """
    check_bag_path(path)
    return {"bag_path": str(Path(path).absolute())}


def describe_exit(returncode: int) -> str:
    """How a node process ended, as a log line says it: ``exited with code 3``, ``was killed by SIGKILL``."""
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


def _run_isolated(bringup: str, overrides: dict[str, dict[str, Any]], record: bool) -> int:
    """One process per node; every node runs until Ctrl-C, so a node that ends before it is a fault.

    Then the launcher names the node and how it ended, stops the others (SIGINT, then SIGKILL after 10 s) and
    exits 1, as nav2's lifecycle manager brings a bringup down when a bond breaks.
    """
    from goat_ros.graph import (
        NODES,
        bringup_nodes,
        bringup_overrides,
        managed_overrides,
        params_args,
        repo_config_dir,
        shm_shortfall,
    )

    overrides = managed_overrides(bringup, bringup_overrides(bringup, overrides))  # the lifecycle manager starts them
    names = bringup_nodes(bringup, record, managed=True)
    shortfall = shm_shortfall(os.environ, len(names))
    if shortfall is not None:
        print(f"goat-nav launch: warning: {shortfall}", file=sys.stderr)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for name in names:
        spec = NODES[name]
        module = spec.node_class.split(":")[0]
        cmd = [sys.executable, "-m", module, *params_args(spec, repo_config_dir(), overrides.get(name, {}))]
        procs[name] = subprocess.Popen(cmd, env=os.environ.copy())
    died: list[str] = []
    try:
        while not died:
            died = [name for name, p in procs.items() if p.poll() is not None]
            if not died:
                time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    for name in died:
        print(f"goat-nav launch: node {name!r} (pid {procs[name].pid}) {describe_exit(procs[name].returncode)}; "
              "stopped the other nodes", file=sys.stderr)
    if died:
        return 1
    return max(max(p.returncode, 0) for p in procs.values())


def run_launch(args: argparse.Namespace) -> int:
    record = args.record is not None
    recorder = record_overrides(args.record) if record else {}  # a bad path fails before ROS is even loaded
    _require_ros()
    from goat_ros.graph import RECORDER, dds_environment, node_factories, repo_config_dir
    from goat_ros.spin import run_nodes

    # Before any participant exists; node processes inherit it (why: config/fastdds.xml).
    os.environ.update(dds_environment(repo_config_dir(), os.environ))

    overrides = parse_overrides(args.param or [])
    if record:
        overrides.setdefault(RECORDER, {}).update(recorder)
    if args.episodes_file is not None:
        for node in ("episode_player", "evaluator"):
            overrides.setdefault(node, {})["episodes_file"] = str(args.episodes_file)
    if args.bringup == "bench" and not overrides.get("episode_player", {}).get("episodes_file"):
        raise GoatError("goat-nav launch bench needs --episodes-file (write one with 'goat-nav generate')")
    # The Stretch driver blocks in its action callback while the base moves; one process per node keeps the
    # controller and perception responsive meanwhile (ros2 launch also runs them apart).
    if args.isolated or args.bringup == "stretch":
        return _run_isolated(args.bringup, overrides, record)
    run_nodes(node_factories(args.bringup, overrides, record=record, managed=True))
    return 0


def run_view(args: argparse.Namespace) -> int:
    """`goat-nav view`: the live_view node alone, next to a running graph (same ROS_DOMAIN_ID)."""
    _require_ros()
    from goat_ros.graph import NODES, dds_environment, params_args, repo_config_dir
    from goat_ros.spin import run_nodes

    os.environ.update(dds_environment(repo_config_dir(), os.environ))  # it takes the camera images too
    spec = NODES["live_view"]
    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    cli_args = params_args(spec, repo_config_dir(), overrides)
    run_nodes([lambda: spec.load_class()(cli_args=cli_args)])
    return 0
