"""Goal verification at arrival: a second opinion before STOP, when detections may be wrong.

With ground truth, the target in view at its goal spot is the goal, and the agent STOPs. A real detector confuses
look-alikes, sometimes persistently for one object, and its tracker may hand one object's id to another: the
instance memory's votes can then name an object as the goal that is not. With evidence over views on
(``EvidenceConfig.enabled``), the agent, once at the goal spot with the target in view, looks again before STOP:

* each look is one frame in which the target is detected; its detection is one more vote in the instance's
  category votes (goat_core.mapping.evidence), and it agrees when it names the category the instance was
  remembered as at the first look;
* once the votes no longer name that category, it is "not here": the instance is set aside for the subtask and
  the agent moves on to the next candidate or explores (memory names it by its votes from then on). The verdict
  weighs every view, not the few looks at arrival alone: a detector that calls this chair an armchair in two
  frames out of five would otherwise send the robot away from a real chair one time in five;
* ``verify_looks`` agreeing looks with the votes still naming it, or ``verify_max_looks`` looks: STOP;
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
        self._named: dict[int, str] = {}  # per instance: its category at the first look
        self._missed: dict[int, int] = {}  # per instance: looks that should have shown it and did not
        self._turns = 0  # look turns made this subtask (their direction alternates)

    def reset(self) -> None:
        self._looks.clear()
        self._named.clear()
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
        another look while they do not yet, None when the votes say "not here" (the instance is then set aside).
        """
        cfg = self.ctx.config.memory.evidence
        named = self._named.setdefault(inst.instance_id, inst.category)
        looks = self._looks.setdefault(inst.instance_id, [])
        seen_as = self.ctx.memory.last_categories.get(inst.instance_id)
        if seen_as is not None:
            looks.append(seen_as == named)
        if inst.category != named:  # this frame's vote (inst.category is the votes' winner) turned it
            self.ctx.set_aside.add(inst.instance_id)
            return None
        if sum(looks) >= cfg.verify_looks or len(looks) >= cfg.verify_max_looks:
            return DiscreteAction.STOP
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
