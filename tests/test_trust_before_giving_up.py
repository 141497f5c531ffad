"""The agent's last resort with evidence over views (EvidenceConfig.trust_all_before_giving_up): with nothing left
to explore and no trusted match, it trusts every instance memory still holds and walks to the goal it saw with low
scores, instead of giving up; with the setting off it gives up as before, and with evidence off (every detection
trusted at once) the setting is never read."""

from __future__ import annotations

import dataclasses

import pytest
from test_agent import Box, BoxWorld, CategoryMatcher, distance_to_box, room, run

from goat_core.agent import Agent, AgentConfig
from goat_core.mapping.evidence import EvidenceConfig
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import Detection, DiscreteAction, Goal, GoalModality, Observation

SOFA = Box((0.6, 0.6, 0), (1.3, 1.3, 0.8), 9, "sofa")
SOFA_SCORE = 0.1  # a detector unsure of this sofa: 1 - 0.9^n >= 0.99 needs 44 detections


class UnsureDetector:
    """Ground truth whose every detection scores SOFA_SCORE: the sofa is seen often but never trusted."""

    persistent_keys = True

    def __init__(self) -> None:
        self._gt = GroundTruthPerception(["chair", "table", "sofa"], min_pixels=5)

    @property
    def labels(self) -> list[str]:
        return list(self._gt.labels)

    def detect(self, obs: Observation) -> list[Detection]:
        return [dataclasses.replace(d, score=SOFA_SCORE) for d in self._gt.detect(obs)]


def _agent(enabled: bool, last_resort: bool) -> Agent:
    config = AgentConfig()
    evidence = EvidenceConfig(enabled=enabled, min_confidence=0.99, trust_all_before_giving_up=last_resort)
    config = dataclasses.replace(config, memory=dataclasses.replace(config.memory, evidence=evidence))
    return Agent(config, UnsureDetector(), CategoryMatcher())


@pytest.mark.parametrize("last_resort", [True, False])
def test_a_goal_seen_but_never_trusted_is_walked_to_before_giving_up(last_resort: bool) -> None:
    world = BoxWorld(room(-1.5, 1.5, -1.5, 1.5) + [SOFA])
    agent = _agent(True, last_resort)
    result = run(world, agent, "sofa")
    assert result.actions[-1] is DiscreteAction.STOP
    stop = agent.last_stop
    assert stop is not None
    if last_resort:
        assert not stop.gave_up and stop.category == "sofa"
        assert distance_to_box(world.pose, SOFA) <= AgentConfig().stop_radius_m
        assert agent.memory.trust_all  # for the rest of this subtask ...
        agent.start_subtask(Goal(GoalModality.CATEGORY, category="sofa"))
        assert not agent.memory.trust_all and agent.memory.instances == {}  # ... and no longer
    else:
        assert stop.gave_up and "recoveries tried" in stop.reason
        assert len(agent.memory.candidates) == 1 and agent.memory.instances == {}


def test_the_last_resort_is_off_without_evidence() -> None:
    """Evidence off (ground truth): every detection is trusted at once, the setting is never read."""
    for last_resort in (True, False):
        world = BoxWorld(room(-1.5, 1.5, -1.5, 1.5) + [SOFA])
        agent = _agent(False, last_resort)
        result = run(world, agent, "sofa")
        assert agent.last_stop is not None and not agent.last_stop.gave_up
        assert "recover" not in result.modes and not agent.memory.trust_all

