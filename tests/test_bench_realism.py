"""benchmarks/bench_realism.py's SPL gap decomposition (issue 29): its shares add up to the gap GOAT-Bench's
averaging gives, and each kind of extra path lands in its own share."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from goat_core.types import Pose2D
from goat_suites.common.realism import PoseLog

ROOT = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_realism", ROOT / "benchmarks" / "bench_realism.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_realism"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
Cost = BENCH.SubtaskCost


def _cost(key: str, success: bool, geodesic_m: float, path_m: float, turn_m: dict[str, float] | None = None
          ) -> Any:
    spl = BENCH._spl(success, geodesic_m, path_m)
    return Cost(key, key.split("/")[0], success, spl, path_m, geodesic_m, turn_m=turn_m or {})


def test_each_kind_of_extra_path_lands_in_its_own_share() -> None:
    ideal = [_cost("e-0/0", True, 4.0, 4.0), _cost("e-0/1", True, 2.0, 2.0), _cost("e-0/2", True, 3.0, 3.0),
             _cost("e-0/3", True, 5.0, 5.0)]
    other = [_cost("e-0/0", False, 4.0, 6.0),  # (a) a failure
             _cost("e-0/1", True, 2.0, 2.5, {"goto-path": 0.5}),  # (b) only turns' path
             _cost("e-0/2", True, 3.0, 4.0),  # (c) only forward path
             _cost("e-0/3", True, 5.0, 6.0, {"scan": 0.6, "explore": 0.4})]  # (b) and (d) from the turns
    shares = BENCH.decompose(ideal, other)
    assert shares["failures"] == pytest.approx(1.0 / 4)
    assert shares["forward"] == pytest.approx((1.0 - 3.0 / 4.0) / 4)
    lost_3 = 1.0 - 5.0 / 6.0
    assert shares["turns"] == pytest.approx(((1.0 - 2.0 / 2.5) + 0.4 * lost_3) / 4)
    assert shares["lookaround_turns"] == pytest.approx(0.6 * lost_3 / 4)
    gap = sum(i.spl for i in ideal) / 4 - sum(o.spl for o in other) / 4
    assert shares["gap"] == pytest.approx(gap)


def test_the_shares_average_per_episode_as_goat_bench_does() -> None:
    """Two episodes of 1 and 3 subtasks: the gap is the mean of the episodes' mean gaps, and a subtask only the
    other run succeeded counts against the failures' share."""
    ideal = [_cost("a-0/0", True, 2.0, 2.0), _cost("b-0/0", False, 2.0, 9.0), _cost("b-0/1", True, 1.0, 1.0),
             _cost("b-0/2", True, 1.0, 1.0)]
    other = [_cost("a-0/0", True, 2.0, 4.0), _cost("b-0/0", True, 2.0, 2.5), _cost("b-0/1", True, 1.0, 1.0),
             _cost("b-0/2", True, 1.0, 1.0)]
    shares = BENCH.decompose(ideal, other)
    assert shares["gap"] == pytest.approx(((1.0 - 0.5) + (0.0 - 0.8) / 3) / 2)
    assert shares["failures"] == pytest.approx(-0.8 / 3 / 2)


def test_the_end_of_subtask_error_splits_along_and_across_the_true_heading() -> None:
    log = PoseLog()
    log.add(Pose2D(1.0, 2.1, 0.0), Pose2D(1.0, 2.0, 1.5707963267948966))  # 0.1 m ahead of a robot facing +y
    log.add(Pose2D(0.0, 0.05, 0.0), Pose2D(0.0, 0.0, 0.0))  # 0.05 m to its left
    along, across = BENCH._along_across(log, [0, 1])
    assert along == pytest.approx([0.1, 0.0])
    assert across == pytest.approx([0.0, 0.05])


def test_localiser_flag_sets_the_fields_it_names_and_refuses_others() -> None:
    config = BENCH.localiser_config_from(["register_turns_closures=3", "keyframe_closure=true",
                                          "closure_base_rad=0.05"])
    assert (config.register_turns_closures, config.keyframe_closure, config.closure_base_rad) == (3, True, 0.05)
    assert config.max_range_m == BENCH.LocaliserConfig().max_range_m  # the rest keep their defaults
    for bad in (["no_such_field=1"], ["keyframe_closure=maybe"], ["register_turns_closures"]):
        with pytest.raises(ValueError):
            BENCH.localiser_config_from(bad)


def test_localiser_flag_reaches_the_stretch_settings_localiser_only() -> None:
    from goat_suites.common.realism import AgentSenses
    from sim_bridge.embedded.realism import RealismConfig, realism_profile

    config = BENCH.localiser_config_from(["turn_new_view_margin_rad=0.0175"])
    senses = AgentSenses(realism_profile("stretch", seed=1000))
    made = senses.localiser
    BENCH._use_localiser(senses, config)
    assert senses.localiser is not None and senses.localiser.config is config
    assert (senses.localiser.register, senses.localiser.filter_depth_images) == (made.register,
                                                                                  made.filter_depth_images)
    ideal = AgentSenses(RealismConfig())
    BENCH._use_localiser(ideal, config)
    assert ideal.localiser is None  # ideal has none, and gets none
