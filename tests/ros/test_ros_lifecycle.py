"""The stretch driver and the controller are lifecycle nodes; the lifecycle manager configures and activates them,
pauses them (the robot refuses actions, a goal ends as an error, nothing restarts) and resumes them (real nodes,
the stand-in robot, one executor as ``goat-nav launch`` runs them)."""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from goat_core.types import DiscreteAction  # noqa: E402
from goat_interfaces.action import ExecuteAction  # noqa: E402
from goat_interfaces.msg import Goal as GoalMsg  # noqa: E402
from goat_interfaces.msg import SubtaskOutcome  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import LIFECYCLE_MANAGER, NODES, managed_overrides, params_args, repo_config_dir  # noqa: E402
from goat_ros.lifecycle import ACTIVE, INACTIVE  # noqa: E402
from goat_stretch.driver import MonotonicClock  # noqa: E402
from goat_stretch.standin import StandinRobot  # noqa: E402


def _node(name: str, overrides: dict[str, Any], **kwargs: Any) -> Any:
    spec = NODES[name]
    return spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides), **kwargs)


@pytest.fixture()
def graph(ros: None) -> Iterator[tuple[SingleThreadedExecutor, dict[str, Any], StandinRobot]]:
    robot = StandinRobot(clock=MonotonicClock())
    robot.startup()
    overrides = managed_overrides("stretch", {"stretch_driver": {"robot_backend": "standin", "publish_state": False}})
    nodes: dict[str, Any] = {"stretch_driver": _node("stretch_driver", overrides["stretch_driver"], robot=robot),
                             "controller": _node("controller", overrides["controller"]),
                             "tester": Node("lifecycle_tester")}
    executor = SingleThreadedExecutor()
    for node in nodes.values():
        executor.add_node(node)
    try:
        yield executor, nodes, robot
    finally:
        executor.shutdown()
        for node in nodes.values():
            getattr(node, "close", lambda: None)()
            node.destroy_node()


def _call(executor: SingleThreadedExecutor, future: Any, what: str, timeout_s: float = 30.0) -> Any:
    spin_until(executor, future.done, timeout_s, what)
    return future.result()


def _act(executor: SingleThreadedExecutor, client: ActionClient) -> Any:
    handle = _call(executor, client.send_goal_async(ExecuteAction.Goal(action=int(DiscreteAction.TURN_LEFT))),
                   "the goal's answer")
    return _call(executor, handle.get_result_async(), "the action's result").result


def test_the_manager_starts_pauses_and_resumes_the_driver_and_the_controller(
        graph: tuple[SingleThreadedExecutor, dict[str, Any], StandinRobot]) -> None:
    executor, nodes, robot = graph
    driver, controller, tester = nodes["stretch_driver"], nodes["controller"], nodes["tester"]
    # autostart false: unconfigured, the robot untouched, no action server, no agent
    assert not driver.active and driver._executor is None and controller.agent is None
    client = ActionClient(tester, ExecuteAction, topics.EXECUTE_ACTION)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    assert not client.server_is_ready()

    manager = _node(LIFECYCLE_MANAGER, managed_overrides("stretch", {})[LIFECYCLE_MANAGER])
    nodes["manager"] = manager
    executor.add_node(manager)
    spin_until(executor, lambda: manager.started, 120.0, "the lifecycle manager's start-up")
    assert manager.states == {"stretch_driver": ACTIVE, "controller": ACTIVE}
    assert driver.active and controller.active and controller.agent is not None
    agent = controller.agent
    spin_until(executor, client.server_is_ready, 10.0, "the driver's action server")
    assert _act(executor, client).success

    outcomes: list[SubtaskOutcome] = []
    tester.create_subscription(SubtaskOutcome, topics.OUTCOME, outcomes.append, 10)
    goals = tester.create_publisher(GoalMsg, topics.GOAL, 10)
    pause, resume, status = (tester.create_client(Trigger, f"/{LIFECYCLE_MANAGER}/{s}")
                             for s in ("pause", "resume", "status"))
    paused = _call(executor, pause.call_async(Trigger.Request()), "~/pause")
    assert paused.success, paused.message
    assert manager.states == {"stretch_driver": INACTIVE, "controller": INACTIVE}
    assert not _call(executor, status.call_async(Trigger.Request()), "~/status").success
    refused = _act(executor, client)  # the same action server, now refusing
    assert not refused.success and "inactive" in refused.message
    assert not robot.stopped  # paused, not released: stretch_body keeps running
    spin_until(executor, lambda: goals.get_subscription_count() > 0, 10.0, "the controller's goal subscription")
    goals.publish(GoalMsg(episode_id="e", subtask_index=0, modality="object", category="chair"))
    spin_until(executor, lambda: controller._held_goal is not None, 10.0, "the goal to reach the paused controller")
    assert controller._s.subtask is None and not outcomes  # held, not started, not dropped

    resumed = _call(executor, resume.call_async(Trigger.Request()), "~/resume")
    assert resumed.success, resumed.message
    assert _call(executor, status.call_async(Trigger.Request()), "~/status").success
    # The held goal started at activation (the subtask runs, or ended for a reason other than the pause)
    assert controller._held_goal is None
    assert (controller._s.subtask is not None and controller._s.subtask.goal.episode_id == "e") or outcomes
    assert not any("paused" in o.error for o in outcomes)
    controller._finish(SubtaskOutcome.ERROR, "test over")  # no agent actions interleaved with the driver check
    assert _act(executor, client).success  # serving again, without a restart
    assert controller.agent is agent  # its map and memory kept across the pause


def test_a_driver_that_cannot_configure_fails_the_start_up_naming_it(ros: None) -> None:
    overrides = managed_overrides("stretch", {"stretch_driver": {"robot_backend": "standin"}})
    driver = _node("stretch_driver", overrides["stretch_driver"], robot=StandinRobot(homed=False))
    manager = _node(LIFECYCLE_MANAGER, {"node_names": "stretch_driver"})
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    executor.add_node(manager)
    try:
        with pytest.raises(Exception, match="configure 'stretch_driver' failed; the node is unconfigured"):
            spin_until(executor, lambda: manager.started, 30.0, "the start-up")
        assert "not homed" in str(driver.start_error)
    finally:
        executor.shutdown()
        driver.destroy_node()
        manager.destroy_node()
