"""The standalone instance_mapping and goal_matching nodes, started in process around the embedded sim bridge.

One scene: reset to an episode start, a goal of the new episode, then a full turn in place (11 TURN_LEFT). A
reference pipeline in the test process (ObservationSync + the core LifelongMapper + the core matcher, the same
code the nodes wrap) integrates the same observation sets, so the nodes' map, instances and rankings are
checked against the in-process core on identical inputs.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros  # noqa: E402

require_ros()

import rclpy  # noqa: E402
from nav_msgs.msg import OccupancyGrid, Odometry  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image, JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from goat_core.agent import AgentConfig  # noqa: E402
from goat_core.frames import habitat_quaternion_to_yaw, habitat_to_ros_position  # noqa: E402
from goat_core.mapping.lifelong import LifelongMapper  # noqa: E402
from goat_core.matching.matcher import MatcherConfig  # noqa: E402
from goat_core.matching.ranking import Ranking, rank_instances  # noqa: E402
from goat_core.matching.selection import StackConfig, build_stack  # noqa: E402
from goat_core.types import DiscreteAction, Goal, GoalModality  # noqa: E402
from goat_interfaces.action import ExecuteAction  # noqa: E402
from goat_interfaces.msg import Goal as GoalMsg  # noqa: E402
from goat_interfaces.msg import GoalMatches, InstanceLabels, InstanceMemory, Instances  # noqa: E402
from goat_interfaces.srv import ResetEpisode  # noqa: E402
from goat_ros import conversions as cv  # noqa: E402
from goat_ros import topics  # noqa: E402
from goat_ros.graph import NODES, params_args, repo_config_dir  # noqa: E402
from goat_ros.observation_sync import ObservationSync  # noqa: E402
from goat_suites.goat.generator import generate_dataset  # noqa: E402
from sim_bridge.embedded.catalogue import CATALOGUE  # noqa: E402

LABELS = [spec.name for spec in CATALOGUE]
RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
TURNS = 11  # with the reset's view, 12 views 30 deg apart: a full circle


@dataclass
class Graph:
    executor: SingleThreadedExecutor
    nodes: list[Any]
    tester: Node
    episode_id: str
    goals: Any  # Publisher of /goat/goal
    reference: LifelongMapper  # the in-process core mapper fed the same observation sets
    last_stamp_ns: int = 0  # of the last observation set
    maps: list[OccupancyGrid] = field(default_factory=list)
    summaries: list[Instances] = field(default_factory=list)
    memories: list[InstanceMemory] = field(default_factory=list)
    matches: list[GoalMatches] = field(default_factory=list)
    seen_categories: set[str] = field(default_factory=set)  # ground truth: every category labelled in a frame

    def spin_until(self, done: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
            self.executor.spin_once(timeout_sec=0.05)

    def ask(self, subtask_index: int, **fields: Any) -> GoalMatches:
        """Publish a goal of the scene's episode and return the goal_matching node's answer for it."""
        before = len(self.matches)
        self.goals.publish(GoalMsg(episode_id=self.episode_id, subtask_index=subtask_index, **fields))

        def answered() -> bool:
            return any(m.subtask_index == subtask_index for m in self.matches[before:])

        self.spin_until(answered, 20.0, f"the answer to goal {subtask_index}")
        return next(m for m in self.matches[before:] if m.subtask_index == subtask_index)


def _reference_ranking(graph: Graph, goal: Goal) -> Ranking:
    _, matcher = build_stack(StackConfig(), LABELS, MatcherConfig())
    matcher.set_goal(goal, LABELS)
    return rank_instances(matcher, graph.reference.memory.instances)  # type: ignore[arg-type]


class _Reference:
    """The test's own copy of the mapping stage: every complete set stamped at or after the reset."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.sync = ObservationSync(with_segmentation=True, camera_height_m=1.31)
        self.min_stamp_ns = 2 ** 62  # nothing counts before the reset
        self.anchor: Any = None
        for part, msg_type, topic in (
                ("rgb", Image, topics.RGB), ("depth", Image, topics.DEPTH), ("info", CameraInfo, topics.CAMERA_INFO),
                ("joints", JointState, topics.JOINT_STATES), ("odom", Odometry, topics.ODOM),
                ("segmentation", Image, topics.SEGMENTATION), ("labels", InstanceLabels, topics.INSTANCE_LABELS)):
            graph.tester.create_subscription(msg_type, topic, functools.partial(self.on_part, part), RELIABLE)

    def on_part(self, part: str, msg: Any) -> None:
        if part == "labels":
            self.graph.seen_categories.update(cv.msg_to_labels(msg).values())
        self.sync.add(part, cv.ns_from_time(msg.header.stamp), msg)
        self.integrate_new()

    def integrate_new(self) -> None:
        g, stamp_ns = self.graph, self.sync.latest_stamp_ns
        if stamp_ns < self.min_stamp_ns or stamp_ns == g.last_stamp_ns:
            return
        if self.anchor is None:
            self.anchor = self.sync.odom_pose()
        g.reference.integrate(self.sync.observation(None, self.anchor))
        g.last_stamp_ns = stamp_ns


def _memory_at(graph: Graph, stamp_ns: int) -> bool:
    return bool(graph.memories) and cv.ns_from_time(graph.memories[-1].header.stamp) == stamp_ns


@pytest.fixture(scope="module")
def graph() -> Iterator[Graph]:
    episode = generate_dataset(1, 4242).episodes[0]
    overrides: dict[str, dict[str, Any]] = {"instance_mapping": {"publish_period_s": 0.0}}
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    try:
        for name in ("sim_bridge", "instance_mapping", "goal_matching"):
            spec = NODES[name]
            nodes.append(spec.load_class()(cli_args=params_args(spec, repo_config_dir(), overrides.get(name, {}))))
            executor.add_node(nodes[-1])
        tester = Node("mapping_nodes_tester")
        executor.add_node(tester)
        agent = AgentConfig()
        perception, _ = build_stack(StackConfig(), LABELS)
        g = Graph(executor, nodes, tester, episode.episode_id,
                  tester.create_publisher(GoalMsg, topics.GOAL, 10),
                  LifelongMapper(perception, agent.occupancy, agent.memory, agent.robot_radius_m))
        tester.create_subscription(OccupancyGrid, topics.MAPPING_MAP, g.maps.append, LATCHED)
        tester.create_subscription(Instances, topics.MAPPING_INSTANCES, g.summaries.append, RELIABLE)
        tester.create_subscription(InstanceMemory, topics.MAPPING_MEMORY, g.memories.append, LATCHED)
        tester.create_subscription(GoalMatches, topics.GOAL_MATCHES, g.matches.append, RELIABLE)
        ref = _Reference(g)
        reset = tester.create_client(ResetEpisode, topics.RESET_EPISODE)
        act = ActionClient(tester, ExecuteAction, topics.EXECUTE_ACTION)
        g.spin_until(lambda: reset.service_is_ready() and act.server_is_ready()
                     and g.goals.get_subscription_count() >= 2 and bool(g.memories), 20.0, "the nodes")

        start = habitat_to_ros_position(episode.start_position)
        future = reset.call_async(ResetEpisode.Request(
            scene_id=episode.scene_id, start_x_m=float(start[0]), start_y_m=float(start[1]),
            start_yaw_rad=habitat_quaternion_to_yaw(episode.start_rotation)))
        g.spin_until(future.done, 30.0, "the reset")
        assert future.result().success, future.result().message
        stamp = future.result().observation_stamp
        ref.min_stamp_ns = cv.ns_from_time(stamp)
        ref.integrate_new()  # the reset's set may have come in before its reply
        # The episode's first goal (new episode: the mapping node starts a new map at the reset's stamp).
        first = GoalMsg(episode_id=g.episode_id, subtask_index=0, modality="object", category=LABELS[0])
        first.header.stamp = stamp
        g.goals.publish(first)
        g.spin_until(lambda: _memory_at(g, ref.min_stamp_ns) and g.memories[-1].generation == 1
                     and g.last_stamp_ns == ref.min_stamp_ns, 20.0, "the map of the reset's view")

        for k in range(TURNS):
            sent = act.send_goal_async(ExecuteAction.Goal(action=int(DiscreteAction.TURN_LEFT)))
            g.spin_until(sent.done, 10.0, f"action {k} accepted")
            result = sent.result().get_result_async()
            g.spin_until(result.done, 10.0, f"action {k} done")
            stamp_ns = cv.ns_from_time(result.result().result.observation_stamp)
            g.spin_until(lambda s=stamp_ns: _memory_at(g, s) and g.last_stamp_ns == s, 20.0,
                         f"the map after action {k}")
        yield g
    finally:
        for node in nodes:
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()


@pytest.mark.slow
def test_mapping_publishes_the_map_and_the_instances_seen(graph: Graph) -> None:
    memory = graph.memories[-1]
    assert (memory.generation, memory.frames) == (1, TURNS + 1)
    grid = np.frombuffer(bytes(graph.maps[-1].data), dtype=np.int8)
    assert np.count_nonzero(grid == 100) > 50 and np.count_nonzero(grid == 0) > 500, "no obstacles or free floor"
    assert cv.ns_from_time(graph.maps[-1].header.stamp) == graph.last_stamp_ns
    summary = {i.instance_id: i.category for i in graph.summaries[-1].instances}
    assert len(summary) >= 3
    assert set(summary.values()) <= graph.seen_categories
    # The same memory as the in-process core mapper fed the same sets, carried losslessly.
    reference = graph.reference.memory.instances
    assert summary == {k: v.category for k, v in reference.items()}
    rebuilt = cv.msg_to_instances(memory)
    for k, inst in reference.items():
        got = rebuilt[k]
        np.testing.assert_array_equal(got.points_xyz_m, inst.points_xyz_m)
        np.testing.assert_array_equal(got.mean_rgb, inst.mean_rgb)
        assert (got.num_observations, got.first_seen_step, got.last_seen_step) == \
            (inst.num_observations, inst.first_seen_step, inst.last_seen_step)
        assert [(v.step, v.pixel_count, v.pose) for v in got.views] == \
            [(v.step, v.pixel_count, v.pose) for v in inst.views]
        for a, b in zip(got.views, inst.views, strict=True):
            np.testing.assert_array_equal(a.rgb, b.rgb)
            np.testing.assert_array_equal(a.mask, b.mask)


def _most_seen_category(graph: Graph) -> str:
    inst = max(graph.reference.memory.instances.values(), key=lambda i: (i.num_observations, -i.instance_id))
    return inst.category


def _most_frequent_category(graph: Graph) -> str:
    """The category with the most instances (a scene usually holds two plates or chairs): ranking order counts."""
    categories = [i.category for i in graph.reference.memory.instances.values()]
    return max(sorted(set(categories)), key=categories.count)


@pytest.mark.parametrize("pick", [_most_seen_category, _most_frequent_category])
def test_a_category_goal_ranks_the_seen_object_first(graph: Graph, pick: Callable[[Graph], str]) -> None:
    category = pick(graph)
    answer = graph.ask(1, modality="object", category=category)
    assert answer.error == "" and answer.episode_id == graph.episode_id
    assert cv.ns_from_time(answer.header.stamp) == graph.last_stamp_ns
    assert answer.num_instances == len(graph.reference.memory.instances)
    assert answer.instance_ids, "no candidate for a category that was seen"
    assert answer.categories[0] == category
    assert answer.best_id == answer.instance_ids[0] and answer.confident
    expected = _reference_ranking(graph, Goal(GoalModality.CATEGORY, category=category))
    assert list(answer.instance_ids) == [c.instance_id for c in expected.ranked]
    assert list(answer.scores) == [c.score for c in expected.ranked]
    assert (answer.best_id, answer.confident) == (expected.match.instance_id, expected.match.confident)


@pytest.mark.parametrize(("fields", "message"), [
    ({"modality": "smell", "text": "coffee"}, "unknown goal modality"),
    ({"modality": "object", "category": ""}, "non-empty category"),
    ({"modality": "image", "image": Image(width=64, height=64, encoding="mono8", step=64, data=bytes(64 * 64))},
     "encoding"),
])
def test_a_bad_goal_is_answered_with_an_error_and_the_next_goal_runs(graph: Graph, fields: dict[str, Any],
                                                                     message: str) -> None:
    bad = graph.ask(2, **fields)
    assert message in bad.error and list(bad.instance_ids) == [] and bad.best_id == -1
    category = _most_seen_category(graph)
    good = graph.ask(3, modality="object", category=category)
    assert good.error == "" and good.categories and good.categories[0] == category


def test_the_reset_service_empties_the_memory_and_the_current_goal_is_matched_again(graph: Graph) -> None:
    client = graph.tester.create_client(Trigger, topics.MAPPING_RESET)
    graph.spin_until(client.service_is_ready, 10.0, "the reset service")
    before = len(graph.matches)
    future = client.call_async(Trigger.Request())
    graph.spin_until(future.done, 10.0, "the reset reply")
    assert future.result().success
    graph.spin_until(lambda: graph.memories[-1].generation == 2, 10.0, "an empty memory")
    assert list(graph.memories[-1].instances) == [] and graph.memories[-1].frames == 0
    graph.spin_until(lambda: any(m.memory_generation == 2 for m in graph.matches[before:]), 10.0, "a new answer")
    again = next(m for m in graph.matches[before:] if m.memory_generation == 2)
    assert again.num_instances == 0 and list(again.instance_ids) == [] and again.best_id == -1
