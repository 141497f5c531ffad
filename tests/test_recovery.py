"""The recovery ladder: order, queued steps, once per subtask."""

from __future__ import annotations

import pytest

from goat_core.control.recovery import BEFORE_FALLBACK, RECOVERIES, RecoveryConfig, RecoveryLadder
from goat_core.types import DiscreteAction

TURNS = 12  # a full circle of 30 deg turns


def test_recoveries_run_once_each_in_order_then_it_is_exhausted() -> None:
    ladder = RecoveryLadder(RecoveryConfig(back_up_steps=2), TURNS)
    started = []
    steps: dict[str, list[DiscreteAction]] = {}
    while (name := ladder.start_next()) is not None:
        started.append(name)
        steps[name] = []
        while (step := ladder.next_step()) is not None:
            steps[name].append(step)
    assert started == list(RECOVERIES) and ladder.exhausted
    assert steps["reobserve"] == [DiscreteAction.TURN_LEFT] * TURNS
    assert steps["back_up"] == [DiscreteAction.TURN_LEFT] * (TURNS // 2) + [DiscreteAction.MOVE_FORWARD] * 2
    assert steps["clear_collisions"] == steps["relax_inflation"] == steps["explore_again"] == []
    assert ladder.relaxed and "recoveries tried: clear_collisions, relax_inflation" in ladder.describe()
    ladder.reset()
    assert not ladder.relaxed and not ladder.exhausted and ladder.start_next() == "clear_collisions"


def test_abort_drops_the_queued_steps() -> None:
    ladder = RecoveryLadder(RecoveryConfig(), TURNS)
    for _ in range(3):
        ladder.start_next()  # ... reobserve
    assert ladder.next_step() is DiscreteAction.TURN_LEFT
    ladder.abort()
    assert ladder.next_step() is None


def test_disabled_recoveries_start_nothing() -> None:
    ladder = RecoveryLadder(RecoveryConfig(enabled=False), TURNS)
    assert ladder.exhausted and ladder.start_next() is None and ladder.describe() == "recoveries tried: none"


@pytest.mark.parametrize("kwargs", [{"relaxed_radius_slack_m": -0.01}, {"relaxed_radius_slack_m": 0.2},
                                    {"back_up_steps": -1}, {"max_collision_clears": 0}])
def test_bad_config_is_named(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        RecoveryConfig(**kwargs)  # type: ignore[arg-type]


def test_before_settling_for_an_unconfident_match_only_the_pathless_recoveries_run() -> None:
    ladder = RecoveryLadder(RecoveryConfig(), TURNS)
    names = []
    while (name := ladder.start_next(before_fallback=True)) is not None:
        names.append(name)
        while ladder.next_step() is not None:
            pass
    assert names == list(BEFORE_FALLBACK) and "back_up" not in names and not ladder.exhausted
    assert ladder.start_next() == "back_up"  # before giving up, the rest


def test_clear_collisions_runs_again_only_after_its_turn_and_a_bounded_number_of_times() -> None:
    ladder = RecoveryLadder(RecoveryConfig(max_collision_clears=3), TURNS)
    assert not ladder.clear_again()  # its turn on the ladder has not come yet
    assert ladder.start_next() == "clear_collisions"
    assert [ladder.clear_again() for _ in range(3)] == [True, True, False]  # 3 clearings in all
    ladder.reset()
    assert ladder.start_next() == "clear_collisions" and ladder.clear_again()  # a new subtask counts anew
