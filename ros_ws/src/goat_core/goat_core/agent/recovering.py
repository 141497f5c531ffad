"""Running the recoveries of ``goat_core.control.recovery``: their effect on the map, their queued steps, and the
decision the changed map or planner allows afterwards."""

from __future__ import annotations

from typing import Optional

from goat_core.agent.approach import Approach
from goat_core.agent.context import AgentContext
from goat_core.agent.exploration import explore_step
from goat_core.types import DiscreteAction, Observation


class Recovering:
    """The agent's side of the recovery ladder (``AgentContext.recovery``)."""

    def __init__(self, ctx: AgentContext, approach: Approach) -> None:
        self._ctx = ctx
        self._approach = approach

    def recover(self, obs: Observation, before_fallback: bool = False) -> Optional[DiscreteAction]:
        """Start the next recoveries until one gives an action (a queued turn, or a decision the changed map or
        planner now allows); None when all were tried (``before_fallback``: all that come before settling for
        an unconfident match)."""
        ctx = self._ctx
        if ctx.grid.collision.any() and ctx.recovery.clear_again():
            # Marks made since clear_collisions ran seal the way again: clear them once more before the rest.
            ctx.grid.clear_collisions()
            ctx.set_aside.clear()
            ctx.motion.clear_stuck()
            action = self._decide_again(obs)
            if action is not None:
                return action
        while True:
            name = ctx.recovery.start_next(before_fallback)
            if name is None:
                return None
            if name == "clear_collisions":
                ctx.grid.clear_collisions()
            elif name == "explore_again":
                ctx.explorer.reset()
            ctx.set_aside.clear()
            ctx.motion.clear_stuck()
            step = self.step(obs)
            if step is not None:
                return step
            action = self._decide_again(obs)
            if action is not None:
                return action

    def step(self, obs: Observation) -> Optional[DiscreteAction]:
        """The next queued step of a recovery under way; a forward step the map says is blocked ends it."""
        ctx = self._ctx
        step = ctx.recovery.next_step()
        if step is DiscreteAction.MOVE_FORWARD:
            fld = ctx.field(obs.pose, None)
            if not fld.forward_free(obs.pose.yaw_rad, ctx.config.actions.forward_m):
                ctx.recovery.abort()
                return None
        return None if step is None else ctx.emit(step, "recover")

    def _decide_again(self, obs: Observation) -> Optional[DiscreteAction]:
        """After an instant recovery: a confident match or a frontier that is reachable now, else None."""
        match, inst = self._ctx.match()
        include = inst.points_xyz_m[:, :2] if inst is not None else None
        fld = self._ctx.field(obs.pose, include)
        if inst is not None and match.confident:
            action = self._approach.goto(inst, fld, obs, match)
            if action is not None:
                return action
        return explore_step(self._ctx, fld, obs, match)
