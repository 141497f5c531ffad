"""Goal verification at arrival: a second opinion before STOP, when detections may be wrong.

With ground truth, the target in view at its goal spot is the goal, and the agent STOPs. A real detector confuses
look-alikes, sometimes persistently for one object, and its tracker may hand one object's id to another: the
instance memory's votes can then name an object as the goal that is not. With evidence over views on
(``EvidenceConfig.enabled``), the agent, once at the goal spot with the target in view, looks again before STOP:

* each look is one frame in which the target is detected; it agrees when the detection names the category the
  instance is remembered as (the one it was chosen for), disagrees otherwise;
* ``verify_looks`` agreeing looks, more than disagreeing ones: STOP;
* as many disagreeing looks, more than agreeing ones, or ``verify_max_looks`` looks without a verdict: "not here".
  The instance is set aside for the subtask and the agent moves on to the next candidate or explores; its
  votes keep every look, so memory names it by what the looks said;
* between looks the robot turns in place (away and back: the next frame is a fresh look), which costs actions
  but no path, so SPL does not pay for it;
* a frame in which the target should be in view and is not detected is a missed look: a detector misses what
  it found a step before, so up to ``verify_looks`` of them are looked past (a turn away and back) before the
  spot counts as one where something hides the target and another goal spot is tried (the walk costs path).

Off with evidence off: ground-truth runs take the same actions as before.
"""

from __future__ import annotations

from typing import Optional

from goat_core.agent.context import AgentContext
from goat_core.types import DiscreteAction, Instance


class ArrivalCheck:
    """The looks at each target since the subtask started, and the verdict they give."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx
        self._looks: dict[int, list[bool]] = {}  # per instance: agreeing (True) or disagreeing looks
        self._missed: dict[int, int] = {}  # per instance: looks that should have shown it and did not
        self._turns = 0  # look turns made this subtask (their direction alternates)

    def reset(self) -> None:
        self._looks.clear()
        self._missed.clear()
        self._turns = 0

    @property
    def active(self) -> bool:
        return self.ctx.config.memory.evidence.enabled

    def looks(self, instance_id: int) -> list[bool]:
        """The looks at ``instance_id`` so far in this subtask (True: agreed)."""
        return list(self._looks.get(instance_id, ()))

    def step(self, inst: Instance) -> Optional[DiscreteAction]:
        """The target is detected in this frame at its goal spot: STOP once the looks confirm it, a turn for
        another look while they do not yet, None when they say "not here" (the instance is then set aside)."""
        cfg = self.ctx.config.memory.evidence
        looks = self._looks.setdefault(inst.instance_id, [])
        named = self.ctx.memory.last_categories.get(inst.instance_id)
        if named is not None:
            looks.append(named == inst.category)
        agree = sum(looks)
        disagree = len(looks) - agree
        if agree >= cfg.verify_looks and agree > disagree:
            return DiscreteAction.STOP
        if (disagree >= cfg.verify_looks and disagree > agree) or len(looks) >= cfg.verify_max_looks:
            self.ctx.set_aside.add(inst.instance_id)
            return None
        return self._look_again()

    def missed(self, inst: Instance) -> Optional[DiscreteAction]:
        """The target should be in view at its goal spot and is not detected: a turn for another look while
        fewer than ``verify_looks`` looks have missed it, else None (the caller tries another goal spot)."""
        missed = self._missed.get(inst.instance_id, 0) + 1
        self._missed[inst.instance_id] = missed
        if missed > self.ctx.config.memory.evidence.verify_looks:
            return None
        return self._look_again()

    def _look_again(self) -> DiscreteAction:
        self._turns += 1
        return DiscreteAction.TURN_LEFT if self._turns % 2 else DiscreteAction.TURN_RIGHT
