"""The controller's nav2 motion mode in a real rclpy graph (embedded sim_bridge + controller), Nav2 stood in for.

Nav2 and nav2_simple_commander are not installable here, so the controller gets a stand-in BasicNavigator
(tests/ros/nav2_standin.py) through its constructor: it records the goal pose and reports success or failure. The
simulated robot does not move under the stand-in, so a successful subtask ends where the handover happened.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, spin_until  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from nav2_standin import RELEASES, StandinNavigator, StandinTaskResult  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from goat_core.agent import AgentConfig  # noqa: E402
from goat_core.errors import ConfigError, GoatError  # noqa: E402
from goat_core.frames import habitat_quaternion_to_yaw, habitat_to_ros_position  # noqa: E402
from goat_core.matching.matcher import MatcherConfig  # noqa: E402
from goat_core.types import DiscreteAction, Pose2D  # noqa: E402
from goat_interfaces.msg import Goal, SubtaskOutcome  # noqa: E402
from goat_interfaces.srv import ResetEpisode  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.conversions import msg_to_pose2d, quaternion_to_yaw  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from goat_ros.nav2_mode import (  # noqa: E402
    Nav2GoalSender,
    Nav2Outcome,
    instance_footprint_m,
    occupancy_is_free,
    parse_initial_pose,
)
from goat_suites.common.runner import EpisodeRunner, RunConfig  # noqa: E402
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset  # noqa: E402
from sim_bridge.embedded.home import HomeConfig  # noqa: E402

NAV2 = {"motion_mode": "nav2", "nav2_standoff_m": 0.5, "nav2_initial_pose": "0.0 0.0 0.0"}  # amcl (the default)
# An object goal whose instance the agent sees during its first scan (checked by the success test).
EPISODE = generate_dataset(1, 0, HomeConfig(furniture="primitive"),
                           config=EpisodeGenConfig(min_subtasks=2, max_subtasks=3,
                                                   max_start_geodesic_m=5.0)).episodes[0]
TASK_INDEX = next(i for i, t in enumerate(EPISODE.tasks) if t.modality.value == "object")
BUDGET = 40



def _controller(overrides: dict[str, Any], navigator: Any = None) -> Any:
    spec = NODES["controller"]
    return spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides), nav2_navigator=navigator)


@dataclass
class Graph:
    executor: SingleThreadedExecutor
    controller: Any
    navigator: StandinNavigator
    tester: Node
    outcomes: list[SubtaskOutcome]

    def run_subtask(self, result: StandinTaskResult) -> SubtaskOutcome:
        """Reset the simulator to the episode start and run the object goal as a new episode's first subtask."""
        self.navigator.result = result
        reset = self.tester.create_client(ResetEpisode, topics.RESET_EPISODE)
        goals = self.tester.create_publisher(Goal, topics.GOAL, 10)
        spin_until(self.executor, lambda: reset.service_is_ready() and goals.get_subscription_count() > 0, 20.0,
                    "the graph to be discovered")
        start = habitat_to_ros_position(EPISODE.start_position)
        future = reset.call_async(ResetEpisode.Request(
            scene_id=EPISODE.scene_id, start_x_m=float(start[0]), start_y_m=float(start[1]),
            start_yaw_rad=habitat_quaternion_to_yaw(EPISODE.start_rotation)))
        spin_until(self.executor, future.done, 30.0, "the reset")
        assert future.result().success, future.result().message
        task = EPISODE.tasks[TASK_INDEX]
        goal = Goal(episode_id=f"{EPISODE.episode_id}-{result.name}", subtask_index=0, modality="object",
                    category=task.category, max_actions=BUDGET)
        goal.header.stamp = future.result().observation_stamp
        seen = len(self.outcomes)
        goals.publish(goal)
        spin_until(self.executor, lambda: len(self.outcomes) > seen, 40.0, "the subtask outcome")
        self.tester.destroy_client(reset)
        self.tester.destroy_publisher(goals)
        return self.outcomes[-1]


@pytest.fixture(scope="module")
def graph() -> Iterator[Graph]:
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    navigator = StandinNavigator()
    try:
        spec = NODES["sim_bridge"]
        nodes.append(spec.load_class()(cli_args=params_args(spec, repo_config_dir(), {})))
        nodes.append(_controller(NAV2, navigator))
        tester = Node("nav2_mode_tester")
        nodes.append(tester)
        for node in nodes:
            executor.add_node(node)
        outcomes: list[SubtaskOutcome] = []
        tester.create_subscription(SubtaskOutcome, topics.OUTCOME, outcomes.append, 10)
        yield Graph(executor, nodes[1], navigator, tester, outcomes)
    finally:
        for node in nodes:
            if hasattr(node, "close"):
                node.close()
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()


@dataclass
class _Runs:
    success: SubtaskOutcome
    handover_state: Any
    instance: Any
    is_free: Callable[[float, float], bool]
    goal: Pose2D


@pytest.fixture(scope="module")
def success_run(graph: Graph) -> _Runs:
    outcome = graph.run_subtask(StandinTaskResult.SUCCEEDED)
    # Nothing acted after the handover: the agent's state is the one the goal was computed from.
    agent = graph.controller.agent
    state = agent.debug_state()
    instance = agent.memory.instances.get(state.target_instance_id)
    is_free = occupancy_is_free(agent.occupancy, agent.config.robot_radius_m)
    sent = graph.navigator.sent()
    assert len(sent) == 1, f"expected one Nav2 goal, got {len(sent)}; outcome {outcome.stop_reason}"
    msg = sent[0]
    goal = Pose2D(msg.pose.position.x, msg.pose.position.y, quaternion_to_yaw(msg.pose.orientation))
    assert msg.header.frame_id == "odom"
    return _Runs(outcome, state, instance, is_free, goal)


@pytest.mark.slow
def test_the_approach_goes_to_nav2_and_its_success_ends_the_subtask_with_stop(success_run: _Runs) -> None:
    out = success_run.success
    assert out.stop_reason == SubtaskOutcome.STOP and not out.error
    assert out.actions[-1] == int(DiscreteAction.STOP) and DiscreteAction.MOVE_FORWARD not in out.actions[:13]
    assert len(out.poses) == len(out.actions) + 1  # the start, one per executed action, and where Nav2 ended
    # The simulated robot did not move under the stand-in: Nav2's end pose is the pose of the handover.
    assert msg_to_pose2d(out.poses[-1]) == msg_to_pose2d(out.poses[-2])
    state, inst, goal = success_run.handover_state, success_run.instance, success_run.goal
    assert state.mode == "goto" and state.match.confident and inst is not None
    assert inst.category == EPISODE.tasks[TASK_INDEX].category
    # The simulator re-anchors odom at each reset, so odom is the episode frame here.
    assert success_run.is_free(goal.x_m, goal.y_m), "the Nav2 goal is not free in the agent's inflated grid"
    centre = inst.centroid_m[:2]
    assert math.hypot(centre[0] - goal.x_m, centre[1] - goal.y_m) == pytest.approx(
        instance_footprint_m(inst) + NAV2["nav2_standoff_m"], abs=1e-6)
    facing = math.atan2(centre[1] - goal.y_m, centre[0] - goal.x_m)
    assert math.cos(goal.yaw_rad - facing) == pytest.approx(1.0, abs=1e-9)


@pytest.fixture(scope="module")
def discrete_reference() -> tuple[list[int], str]:
    """The actions and stop reason of the subtask run in process (discrete, no ROS)."""
    with EpisodeRunner(RunConfig(max_actions_per_subtask=BUDGET), AgentConfig(), MatcherConfig()) as runner:
        records, _ = runner.run_episode(dataclasses.replace(EPISODE, tasks=(EPISODE.tasks[TASK_INDEX],)))
    assert records[0].actions is not None
    return [int(a) for a in records[0].actions], records[0].stop_reason


@pytest.mark.slow
def test_a_nav2_failure_leaves_the_subtask_to_discrete_actions(graph: Graph, success_run: _Runs,
                                                               discrete_reference: tuple[list[int], str]) -> None:
    before = len(graph.navigator.sent())
    out = graph.run_subtask(StandinTaskResult.FAILED)
    assert len(graph.navigator.sent()) == before + 1  # one try, then discrete for the rest of the subtask
    assert out.stop_reason in (SubtaskOutcome.STOP, SubtaskOutcome.BUDGET) and not out.error
    handed_over_at = len(success_run.success.actions) - 1  # the success run's actions before its STOP
    # The same episode start and goal: the same steps up to the handover, then the step the agent had chosen and more.
    assert list(out.actions[:handed_over_at]) == list(success_run.success.actions[:handed_over_at])
    assert len(out.actions) > handed_over_at + 1
    # Falling back takes exactly the steps the discrete mode takes (the in-process run of the same subtask).
    assert (list(out.actions), out.stop_reason) == discrete_reference


@pytest.mark.slow
def test_no_free_approach_pose_leaves_the_subtask_to_discrete_actions(
        graph: Graph, discrete_reference: tuple[list[int], str]) -> None:
    # The approach circle lies outside the 40 m grid: every candidate pose is unknown space.
    navigator = StandinNavigator()
    controller = _controller({**NAV2, "nav2_standoff_m": 50.0}, navigator)
    graph.executor.remove_node(graph.controller)
    graph.executor.add_node(controller)
    try:
        out = dataclasses.replace(graph, controller=controller, navigator=navigator).run_subtask(
            StandinTaskResult.SUCCEEDED)
    finally:
        graph.executor.remove_node(controller)
        controller.close()
        controller.destroy_node()
        graph.executor.add_node(graph.controller)
    assert navigator.sent() == []
    assert (list(out.actions), out.stop_reason) == discrete_reference
    assert len(out.poses) == len(out.actions) + (0 if out.stop_reason == SubtaskOutcome.STOP else 1)


def test_unknown_motion_mode_is_refused_at_start_up(graph: Graph) -> None:
    with pytest.raises(ConfigError, match=r"motion_mode must be one of discrete, nav2, got 'teleport'"):
        _controller({"motion_mode": "teleport"})


def test_nav2_mode_without_nav2_simple_commander_is_refused_at_start_up(graph: Graph) -> None:
    try:
        import nav2_simple_commander  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("nav2_simple_commander is installed")
    with pytest.raises(GoatError, match="needs nav2_simple_commander"):
        _controller(NAV2)


# ------------------------------------------------------------------- the sender over the stand-in, without a graph


@pytest.mark.parametrize(("navigator", "outcome"), [
    (StandinNavigator(StandinTaskResult.SUCCEEDED), Nav2Outcome.SUCCEEDED),
    (StandinNavigator(StandinTaskResult.FAILED), Nav2Outcome.FAILED),
    (StandinNavigator(StandinTaskResult.SUCCEEDED, accept=False), Nav2Outcome.REJECTED),
])
def test_go_to_reports_nav2s_result(navigator: StandinNavigator, outcome: Nav2Outcome) -> None:
    sender = Nav2GoalSender("odom", navigator)
    assert sender.go_to(Pose2D(1.0, 2.0, math.pi / 2)) is outcome
    goal = navigator.goals[-1]
    assert goal.header.frame_id == "odom" and (goal.pose.position.x, goal.pose.position.y) == (1.0, 2.0)
    assert quaternion_to_yaw(goal.pose.orientation) == pytest.approx(math.pi / 2)
    assert navigator.cancelled == 0


@pytest.mark.parametrize("release", RELEASES)
def test_a_rejected_goal_is_rejected_on_every_release(release: str) -> None:
    # humble and jazzy's goToPose return False for a rejected goal, kilted's None.
    sender = Nav2GoalSender("odom", StandinNavigator(accept=False, release=release))
    assert sender.go_to(Pose2D(1.0, 0.0, 0.0)) is Nav2Outcome.REJECTED


@pytest.mark.parametrize("release", RELEASES)
def test_amcl_is_set_to_the_robots_pose_not_the_map_origin(release: str) -> None:
    navigator = StandinNavigator(release=release)
    Nav2GoalSender("odom", navigator, localizer="amcl", initial_pose=Pose2D(2.0, -1.0, 0.5)).wait_until_active()
    assert navigator.published_initial_poses and None not in navigator.published_initial_poses  # never the origin
    for pose in navigator.published_initial_poses:
        assert pose.header.frame_id == "map" and (pose.pose.position.x, pose.pose.position.y) == (2.0, -1.0)
        assert quaternion_to_yaw(pose.pose.orientation) == pytest.approx(0.5)
    without = StandinNavigator(release=release)
    with pytest.raises(GoatError, match="nav2_initial_pose"):
        Nav2GoalSender("odom", without, localizer="amcl").wait_until_active()
    assert without.published_initial_poses == [] and without.localizer is None  # refused before waiting


@pytest.mark.parametrize("release", RELEASES)
def test_robot_localization_is_not_waited_for_on_any_release(release: str) -> None:
    navigator = StandinNavigator(release=release)
    sender = Nav2GoalSender("odom", navigator, localizer="robot_localization")
    sender.wait_until_active()  # humble's own wait for robot_localization/get_state would never return
    assert sender.ready and "robot_localization" not in navigator.lifecycle_waits
    assert navigator.published_initial_poses == []


@pytest.mark.parametrize(("text", "expected"), [("", None), ("1 2 0.5", Pose2D(1.0, 2.0, 0.5)),
                                                ("1.5, -2, 3", Pose2D(1.5, -2.0, 3.0))])
def test_the_initial_pose_parameter_is_parsed(text: str, expected: Pose2D | None) -> None:
    assert parse_initial_pose(text) == expected


@pytest.mark.parametrize("text", ["1 2", "a b c", "1 2 nan"])
def test_a_bad_initial_pose_parameter_is_refused_naming_it(text: str) -> None:
    with pytest.raises(GoatError, match=re.escape(repr(text))):
        parse_initial_pose(text)


def test_go_to_cancels_after_the_timeout_and_when_asked() -> None:
    navigator = StandinNavigator(polls=10**9)
    sender = Nav2GoalSender("map", navigator)
    assert sender.go_to(Pose2D(0.0, 0.0, 0.0), timeout_s=0.05) is Nav2Outcome.TIMED_OUT
    cancel = threading.Event()
    cancel.set()
    assert sender.go_to(Pose2D(0.0, 0.0, 0.0), timeout_s=60.0, cancel=cancel) is Nav2Outcome.CANCELLED
    assert navigator.cancelled == 2


def test_the_worker_waits_for_nav2_then_drives_and_reports() -> None:
    navigator = StandinNavigator()
    sender = Nav2GoalSender("odom", navigator, localizer="slam_toolbox")
    ready = threading.Event()
    errors: list[str] = []

    def on_ready(error: str) -> None:
        errors.append(error)
        ready.set()

    sender.start_waiting_until_active(on_ready)
    assert ready.wait(5.0) and errors == [""] and navigator.localizer == "slam_toolbox"
    _wait(lambda: sender.ready and not sender.busy)
    done = threading.Event()
    reports: list[tuple[Nav2Outcome, str]] = []

    def on_done(outcome: Nav2Outcome, detail: str) -> None:
        reports.append((outcome, detail))
        done.set()

    sender.start(Pose2D(1.0, 0.0, 0.0), 5.0, on_done)
    with pytest.raises(RuntimeError, match="one navigator call at a time"):
        sender.start(Pose2D(2.0, 0.0, 0.0), 5.0, lambda outcome, detail: None)
    assert done.wait(5.0) and reports == [(Nav2Outcome.SUCCEEDED, "")]
    sender.close()
    assert not sender.busy


def _wait(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


# ------------------------------------------- amcl without nav2_initial_pose: the pose localisation reports (ROS graph)


@pytest.mark.parametrize("release", RELEASES)
def test_amcl_is_set_to_the_pose_localisation_reports_on_every_release(release: str) -> None:
    navigator = StandinNavigator(release=release)
    sender = Nav2GoalSender("odom", navigator, localizer="amcl",
                            current_pose=lambda: ("nav2_map", Pose2D(3.0, -2.0, -0.4)))
    sender.wait_until_active()
    assert sender.ready and navigator.published_initial_poses and None not in navigator.published_initial_poses
    for pose in navigator.published_initial_poses:  # AMCL stays where it localised the robot, in its own frame
        assert pose.header.frame_id == "nav2_map" and (pose.pose.position.x, pose.pose.position.y) == (3.0, -2.0)
        assert quaternion_to_yaw(pose.pose.orientation) == pytest.approx(-0.4)


def _started_sender(node: Node, navigator: StandinNavigator, executor: SingleThreadedExecutor,
                    wait_s: float) -> list[str]:
    """build_sender as the controller calls it (no nav2_initial_pose, amcl); its wait for Nav2 started; the
    executor spun until the wait reports (the error text, "" once active)."""
    from goat_ros.nav2_start import build_sender
    from goat_ros.params import ControllerParams

    sender = build_sender(node, ControllerParams(motion_mode="nav2"), navigator, localisation_wait_s=wait_s)
    reports: list[str] = []
    sender.start_waiting_until_active(reports.append)
    spin_until(executor, lambda: bool(reports), wait_s + 10.0, "the Nav2 start to report")
    sender.close()
    return reports


@pytest.fixture()
def localisation_graph(ros: None) -> Iterator[tuple[SingleThreadedExecutor, Node, Node]]:
    executor = SingleThreadedExecutor()
    controller, localiser = Node("nav2_start_controller"), Node("nav2_start_localiser")
    executor.add_node(controller)
    executor.add_node(localiser)
    try:
        yield executor, controller, localiser
    finally:
        executor.shutdown()
        controller.destroy_node()
        localiser.destroy_node()


def test_amcls_last_published_pose_becomes_its_initial_pose(
        localisation_graph: tuple[SingleThreadedExecutor, Node, Node]) -> None:
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from goat_ros.conversions import yaw_to_quaternion

    executor, controller, localiser = localisation_graph
    # As AMCL publishes it: transient local, so a subscriber that comes later still gets the last estimate.
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    amcl = localiser.create_publisher(PoseWithCovarianceStamped, "/amcl_pose", qos)
    msg = PoseWithCovarianceStamped()
    msg.header.frame_id = "nav2_map"
    msg.pose.pose.position.x, msg.pose.pose.position.y = 4.0, 1.5
    msg.pose.pose.orientation = yaw_to_quaternion(2.0)
    amcl.publish(msg)  # before the controller subscribes
    navigator = StandinNavigator()
    assert _started_sender(controller, navigator, executor, wait_s=10.0) == [""]
    sent = navigator.published_initial_poses
    assert sent and all(p.header.frame_id == "nav2_map" and (p.pose.position.x, p.pose.position.y) == (4.0, 1.5)
                        for p in sent)
    assert quaternion_to_yaw(sent[-1].pose.orientation) == pytest.approx(2.0)


def test_without_amcl_pose_the_localisers_tf_chain_gives_the_initial_pose(
        localisation_graph: tuple[SingleThreadedExecutor, Node, Node]) -> None:
    from tf2_msgs.msg import TFMessage

    from goat_ros.conversions import header, transform, yaw_to_quaternion

    executor, controller, localiser = localisation_graph
    tf = localiser.create_publisher(TFMessage, topics.TF, 100)
    stamp = localiser.get_clock().now().nanoseconds
    chain = TFMessage(transforms=[transform(header(stamp, "nav2_map"), "odom", (1.0, 0.0, 0.0), yaw_to_quaternion(0.0)),
                                  transform(header(stamp, "odom"), "base_link", (0.5, 0.25, 0.0),
                                            yaw_to_quaternion(0.3))])
    localiser.create_timer(0.05, lambda: tf.publish(chain))  # as AMCL and the driver keep publishing
    navigator = StandinNavigator()
    assert _started_sender(controller, navigator, executor, wait_s=10.0) == [""]
    pose = navigator.published_initial_poses[-1]
    assert pose.header.frame_id == "nav2_map" and (pose.pose.position.x, pose.pose.position.y) == (1.5, 0.25)
    assert quaternion_to_yaw(pose.pose.orientation) == pytest.approx(0.3)


def test_with_no_localisation_the_nav2_mode_is_refused_naming_the_parameter(
        localisation_graph: tuple[SingleThreadedExecutor, Node, Node]) -> None:
    executor, controller, _ = localisation_graph
    navigator = StandinNavigator()
    reports = _started_sender(controller, navigator, executor, wait_s=0.5)
    assert len(reports) == 1 and "controller.nav2_initial_pose" in reports[0] and "/amcl_pose" in reports[0]
    assert navigator.published_initial_poses == [] and navigator.localizer is None  # AMCL left alone
