"""A multi-threaded executor stopped by ``goat_ros.spin.stop_threaded_executor`` leaves no callback running when
its nodes are destroyed: no "The following exception was never retrieved: cannot use Destroyable because
destruction was requested" after the run (the stray line a CI run printed after pytest's summary), and a callback
that failed while the executor stopped is returned, not lost.

With a plain ``executor.shutdown()`` in place of the helper, the first test fails: the timer's callback is still in
rclpy's thread pool when the node goes, its publish raises, and the unretrieved exception is printed at collection.
"""

from __future__ import annotations

import gc
import random
import threading
import time
from typing import Any, Callable

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from goat_ros.spin import stop_threaded_executor  # noqa: E402

CALLBACK_S = 0.3  # how long the callback in flight still runs after the stop begins


def _stop_during_a_callback(make_work: Callable[[Any], Callable[[], None]]) -> list[BaseException]:
    """Spin a node whose timer runs ``make_work(node)()`` CALLBACK_S after it fires; stop the executor while the
    first call runs, destroy the node, collect garbage. Returns what the helper returned."""
    rclpy.init(domain_id=random.SystemRandom().randint(1, 200))
    try:
        node = rclpy.create_node("threaded_shutdown_test")
        work = make_work(node)
        started = threading.Event()

        def tick() -> None:
            started.set()
            time.sleep(CALLBACK_S)
            work()

        node.create_timer(0.01, tick)
        executor = MultiThreadedExecutor(num_threads=2)
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()
        assert started.wait(10.0), "the timer's callback never ran"
        errors = stop_threaded_executor(executor, spinner)
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
    del executor, spinner
    gc.collect()
    return errors


def test_no_callback_outlives_its_node(capfd: pytest.CaptureFixture[str]) -> None:
    published: list[str] = []

    def publisher(node: Any) -> Callable[[], None]:
        pub = node.create_publisher(String, "/threaded_shutdown_test", 10)

        def publish() -> None:
            pub.publish(String(data="late"))
            published.append("late")
        return publish

    errors = _stop_during_a_callback(publisher)
    assert errors == []
    assert published == ["late"]  # the callback in flight finished on a live node
    assert "never retrieved" not in capfd.readouterr().err


def test_a_callback_that_fails_while_stopping_is_returned(capfd: pytest.CaptureFixture[str]) -> None:
    def failing(node: Any) -> Callable[[], None]:
        def fail() -> None:
            raise ValueError("a sensor callback failed")
        return fail

    errors = _stop_during_a_callback(failing)
    assert [str(e) for e in errors] == ["a sensor callback failed"]
    assert "never retrieved" not in capfd.readouterr().err
