"""Goal verification at arrival (goat_core.agent.verification): looks that confirm the target before STOP, and
looks that say "not here" and set it aside; off with evidence off (ground truth keeps its STOP at first sight)."""

from __future__ import annotations

import dataclasses

import pytest
from test_agent import CategoryMatcher
from test_evidence import _det, _obs

from goat_core.agent import AgentConfig
from goat_core.agent.context import AgentContext
from goat_core.agent.verification import ArrivalCheck
from goat_core.mapping.evidence import EvidenceConfig
from goat_core.perception.gt import GroundTruthPerception
from goat_core.types import DiscreteAction


def _context(enabled: bool = True, **evidence: object) -> AgentContext:
    config = AgentConfig()
    ev = EvidenceConfig(enabled=enabled, **evidence)  # type: ignore[arg-type]
    config = dataclasses.replace(config, memory=dataclasses.replace(config.memory, evidence=ev))
    return AgentContext(config, GroundTruthPerception(["chair", "armchair"], min_pixels=5), CategoryMatcher())


def _look(ctx: AgentContext, step: int, category: str, score: float = 0.9) -> None:
    ctx.memory.update([_det(category, score)], _obs(step), True)


def test_a_target_is_stopped_at_after_two_agreeing_looks() -> None:
    ctx = _context()
    check = ArrivalCheck(ctx)
    for step in range(3):  # seen on the way: trusted as a chair
        _look(ctx, step, "chair")
    inst = next(iter(ctx.memory.instances.values()))
    _look(ctx, 3, "chair")
    assert check.step(inst) in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)  # one look: another
    _look(ctx, 4, "chair")
    assert check.step(inst) is DiscreteAction.STOP
    assert check.looks(inst.instance_id) == [True, True] and not ctx.set_aside


def test_a_confusion_is_found_out_at_arrival_and_set_aside() -> None:
    """An armchair the detector called a chair twice on the way (trusted as a chair); the looks at arrival say
    armchair until the votes turn: not here."""
    ctx = _context()
    check = ArrivalCheck(ctx)
    for step in range(2):
        _look(ctx, step, "chair", score=0.7)
    inst = next(iter(ctx.memory.instances.values()))
    assert inst.category == "chair"
    _look(ctx, 2, "armchair")
    assert check.step(inst) in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)  # votes: chair 1.4, 0.9
    _look(ctx, 3, "armchair")
    assert check.step(inst) is None  # votes 1.4 / 1.8: not here
    assert inst.instance_id in ctx.set_aside and inst.category == "armchair"


def test_looks_that_disagree_do_not_outweigh_many_views() -> None:
    """A real chair seen as a chair many times is not sent away by two confused looks at arrival: STOP after
    the agreeing looks it needs, or after verify_max_looks looks."""
    ctx = _context(verify_looks=2, verify_max_looks=4)
    check = ArrivalCheck(ctx)
    for step in range(6):
        _look(ctx, step, "chair")
    inst = next(iter(ctx.memory.instances.values()))
    verdicts = []
    for step, name in zip(range(6, 10), ["armchair", "armchair", "chair", "armchair"], strict=True):
        _look(ctx, step, name)
        verdicts.append(check.step(inst))
    assert verdicts[:3] == [DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT, DiscreteAction.TURN_LEFT]
    assert verdicts[3] is DiscreteAction.STOP and not ctx.set_aside
    assert check.looks(inst.instance_id) == [False, False, True, False]


def test_the_check_is_off_without_evidence() -> None:
    assert not ArrivalCheck(_context(enabled=False)).active
    assert ArrivalCheck(_context()).active


def test_bad_look_counts_name_the_value() -> None:
    with pytest.raises(ValueError, match="verify_max_looks"):
        EvidenceConfig(verify_looks=3, verify_max_looks=2)
    with pytest.raises(ValueError, match="verify_looks"):
        EvidenceConfig(verify_looks=-1)


def test_no_looks_means_stop_at_first_sight_as_before() -> None:
    ctx = _context(verify_looks=0, verify_max_looks=0)
    check = ArrivalCheck(ctx)
    for step in range(2):
        _look(ctx, step, "chair")
    inst = next(iter(ctx.memory.instances.values()))
    assert check.step(inst) is DiscreteAction.STOP
    assert check.missed(inst) is None  # a miss: another goal spot at once


def test_a_miss_at_the_goal_spot_is_looked_past_before_the_spot_is_given_up() -> None:
    ctx = _context(verify_looks=2)
    check = ArrivalCheck(ctx)
    for step in range(3):
        _look(ctx, step, "chair")
    inst = next(iter(ctx.memory.instances.values()))
    assert check.missed(inst) in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)
    assert check.missed(inst) in (DiscreteAction.TURN_LEFT, DiscreteAction.TURN_RIGHT)
    assert check.missed(inst) is None  # a third miss: something hides it from here
    assert not ctx.set_aside
