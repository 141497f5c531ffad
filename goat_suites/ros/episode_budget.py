"""The action budget the episode player hands out, goal by goal (no rclpy: the player node holds one per episode).

GOAT-Bench's official budget is per *episode*: 5000 actions shared by its subtasks, STOP included, with no cap
per subtask (``config/tasks/goat_stretch_hm3d.yaml`` l.31 ``max_episode_steps: 5000``; goat_suites.common.protocols
``GOAT_BENCH``). A subtask that runs long eats the actions of the ones after it, and a subtask that finds the
episode spent gets no action at all: it is still scored, where the robot stands, as a failure by budget. This is
what the in-process runner does (``goat_suites.common.runner.EpisodeRunner.run_episode``); the player does the same by
sending each goal the actions still left (``Goal.max_actions``) and, once none are left, reporting the subtask
as ended by budget without sending its goal. A per-subtask cap (the GOAT-Bench README's 500 per subtask, every
subtask starting afresh) stays available as a named deviation: ``max_actions_per_subtask`` with
``max_actions_per_episode`` 0.
"""

from __future__ import annotations

from typing import Optional

from goat_core.errors import ConfigError
from goat_suites.common.protocols import Budget


def budget_from_params(max_actions_per_episode: int, max_actions_per_subtask: int) -> Budget:
    """The budget of the player's parameters, where 0 means no cap at that level; ConfigError naming the
    parameters if both are 0 (nothing would ever end a subtask that never STOPs) or one is negative."""
    values = {"max_actions_per_episode": max_actions_per_episode, "max_actions_per_subtask": max_actions_per_subtask}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"episode_player {name} must be an integer >= 0 (0: no cap), got {value!r}")
    if max_actions_per_episode == 0 and max_actions_per_subtask == 0:
        raise ConfigError("episode_player needs max_actions_per_episode or max_actions_per_subtask above 0 "
                          "(got 0 and 0: no budget at all)")
    return Budget(max_actions_per_episode or None, max_actions_per_subtask or None)


class EpisodeActions:
    """Actions taken so far in one episode, and what the next subtask may take."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.used = 0

    def next_subtask(self) -> int:
        """Actions the next subtask may take; 0: the episode budget is spent (the subtask ends by budget
        unstarted). Never 0 otherwise, so it can go into ``Goal.max_actions``, where 0 would mean no limit."""
        return self.budget.subtask_budget(self.used)

    def add(self, num_actions: Optional[int]) -> None:
        """A subtask ended after ``num_actions`` actions (STOP included; None: no result came, nothing counted)."""
        if num_actions is None:
            return
        if num_actions < 0:
            raise ConfigError(f"a subtask cannot take {num_actions} actions")
        self.used += int(num_actions)
