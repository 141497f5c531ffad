"""Running nodes: one entry point for ``ros2 run`` executables and for the launcher's single process.

Written for both Humble and Jazzy (no ``with rclpy.init()``, which Humble lacks).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional, Sequence

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

HANDLER_POLL_S = 0.005


def run_nodes(factories: Sequence[Callable[[], Any]], args: Optional[list[str]] = None) -> None:
    """Init rclpy, build the nodes, spin them in one executor until Ctrl-C or shutdown, then clean up.

    Every callback of goat_ros nodes returns quickly or is a coroutine, so one thread serves them all.
    """
    rclpy.init(args=args)
    nodes: list[Any] = []
    executor = SingleThreadedExecutor()
    try:
        for factory in factories:
            node = factory()
            nodes.append(node)
            executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RuntimeError:
        # Ctrl-C makes rclpy's signal handler shut the context down while the executor may be taking a message;
        # the take then fails on an invalidated handle. That is an ordinary stop, anything else is not.
        if rclpy.ok():
            raise
    finally:
        for node in reversed(nodes):
            close = getattr(node, "close", None)
            if close is not None:
                close()
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()


def stop_threaded_executor(executor: Any, spinner: Optional[threading.Thread] = None,
                           timeout_s: float = 5.0) -> list[BaseException]:
    """Stop a MultiThreadedExecutor so that no callback outlives its nodes; call it BEFORE destroying them.

    rclpy's ``shutdown`` (Jazzy) only stops the spin loop: callbacks already handed to its thread pool keep running,
    and one that touches a node destroyed meanwhile (a publish, a take) fails with "cannot use Destroyable because
    destruction was requested", which no one retrieves, so Python prints "The following exception was never
    retrieved" when the executor is collected, often at interpreter exit. Here: shut down, wait for the thread that
    spins (``spinner``, if any), then for every callback handed out (at most ``timeout_s`` in all), and retrieve
    their exceptions. Returns those exceptions (each is also logged).
    """
    deadline = time.monotonic() + timeout_s
    executor.shutdown()
    if spinner is not None:
        spinner.join(max(0.0, deadline - time.monotonic()))
    handlers = list(getattr(executor, "_futures", ()))  # rclpy's MultiThreadedExecutor: the callbacks handed out
    while not all(h.done() for h in handlers) and time.monotonic() < deadline:
        time.sleep(HANDLER_POLL_S)
    errors = [exc for exc in (h.exception() for h in handlers if h.done()) if exc is not None]
    logger = rclpy.logging.get_logger("goat_ros.spin")
    for exc in errors:
        logger.error(f"a callback failed while the executor stopped: {exc!r}")
    unfinished = sum(not h.done() for h in handlers)
    if unfinished:
        logger.warning(f"{unfinished} callback(s) still running {timeout_s} s after the executor was shut down")
    return errors
