"""benchmarks/turn_cost_floor.py: the share of the stretch profile's SPL gap that the base's drift in turns sets
(issue 29), on costs whose SPLs are worked out by hand."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("turn_cost_floor", ROOT / "benchmarks" / "turn_cost_floor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["turn_cost_floor"] = module
    spec.loader.exec_module(module)
    return module


FLOOR = _script()


def _cost(episode: str, path_m: float, turns: int, turn_m: float, success: bool = True) -> dict[str, Any]:
    return {"key": f"{episode}/0", "episode_id": episode, "success": success, "geodesic_m": 4.0, "path_m": path_m,
            "turns": {"goto-path": turns}, "turn_m": {"goto-path": turn_m} if turn_m else {}}


def test_the_floor_takes_out_and_charges_the_turns_path() -> None:
    ideal = [_cost("e0", 4.0, 10, 0.0), _cost("e1", 5.0, 0, 0.0)]
    # e0: 4 m of forward path plus 10 turns that walked 0.4 m; e1: failed
    stretch = [_cost("e0", 4.4, 10, 0.4), _cost("e1", 6.0, 10, 0.4, success=False)]
    n = FLOOR.floor(ideal, stretch)
    assert n["ideal_spl"] == pytest.approx((1.0 + 0.8) / 2)
    assert n["stretch_spl"] == pytest.approx((4.0 / 4.4 + 0.0) / 2)
    assert n["stretch_spl_turns_still"] == pytest.approx(0.5)  # e0 back to 4 m of path
    assert n["path_per_turn_m"] == pytest.approx(0.04)
    # ideal's e0 charged 10 turns x 4 cm: 4.4 m; e1 has no turns
    assert n["ideal_spl_turns_charged"] == pytest.approx((4.0 / 4.4 + 0.8) / 2)
    assert n["ideal_loss_turns_charged"] == pytest.approx(1.0 / 2 - 4.0 / 4.4 / 2)
    assert n["ideal_turns_per_subtask"] == 5.0 and n["stretch_turns_per_subtask"] == 10.0


def test_spl_is_averaged_per_episode_first() -> None:
    costs = [_cost("e0", 8.0, 0, 0.0), _cost("e0", 8.0, 0, 0.0), _cost("e0", 8.0, 0, 0.0), _cost("e1", 4.0, 0, 0.0)]
    assert FLOOR.mean_spl(costs, FLOOR.subtask_spl) == pytest.approx((0.5 + 1.0) / 2)


def test_a_file_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": [{"name": "ideal"}, {"name": "stretch"}]}))
    with pytest.raises(SystemExit, match="bad.json"):
        FLOOR.load_costs(bad)
    with pytest.raises(SystemExit, match="missing.json"):
        FLOOR.load_costs(tmp_path / "missing.json")
