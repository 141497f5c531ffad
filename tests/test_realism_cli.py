"""The --realism flags: profile and knobs, refused combinations, results meta, the report and goat-nav compare."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from goat_core.errors import GoatError
from goat_core.types import GoalModality
from goat_nav.cli import _check_bench_args, build_parser
from goat_nav.compare import run_compare
from goat_suites.common.realism import AgentSenses, localiser_for, realism_from_args, realism_line, realism_meta
from goat_suites.common.report import render_html_report
from goat_suites.common.results import SubtaskRecord, Summary, read_results_json, summarise, write_results_json
from sim_bridge.embedded.realism import RealismConfig


def _bench(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["bench", *argv])


def test_default_is_ideal_and_changes_nothing() -> None:
    config = realism_from_args(_bench())
    assert config.is_ideal and config == RealismConfig(seed=1000)
    assert localiser_for(config) is None
    assert realism_line({"realism": realism_meta(config)}) == "ideal"
    assert realism_line({}) == "ideal"  # files written before realism existed


def test_stretch_profile_and_knobs() -> None:
    config = realism_from_args(_bench("--realism", "stretch", "--seed", "5", "--odom-drift", "2",
                                      "--depth-model", "redwood"))
    assert (config.profile, config.depth_noise, config.motion_noise, config.odom_drift, config.seed) == (
        "stretch", 1.0, 0.5, 2.0, 5)
    assert config.depth_model == "redwood" and config.localiser
    localiser = localiser_for(config)
    assert localiser is not None and localiser.register and localiser.filter_depth_images
    off = realism_from_args(_bench("--realism", "stretch", "--no-localiser"))
    loc = localiser_for(off)
    assert loc is not None and not loc.register  # depth is still filtered
    only_depth = realism_from_args(_bench("--depth-noise", "0.5"))
    assert only_depth.profile == "custom" and not only_depth.pose_drifts
    meta = realism_meta(config)
    assert meta["odom_drift"] == 2.0 and "stretch" in meta["describe"]
    json.dumps(meta)  # storable in a results file


def test_bad_multiplier_names_the_value(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _bench("--motion-noise", "-1")
    assert "'-1'" in capsys.readouterr().err


def test_realism_runs_in_the_goat_suite_only() -> None:
    with pytest.raises(GoatError, match="realism"):
        _check_bench_args(_bench("--realism", "stretch", "--suite", "langmap"))
    _check_bench_args(_bench("--suite", "langmap"))  # ideal is fine everywhere
    _check_bench_args(_bench("--ros"))


def test_ros_takes_named_profiles_only() -> None:
    """The simulator bridge takes a profile's name, so --ros refuses a knob that changes the profile."""
    _check_bench_args(_bench("--realism", "stretch", "--ros"))
    _check_bench_args(_bench("--realism", "stretch", "--ros", "--no-localiser"))
    _check_bench_args(_bench("--realism", "stretch", "--ros", "--depth-noise", "1"))  # the profile's own value
    for knob in (["--depth-noise", "2"], ["--depth-model", "redwood"], ["--odom-drift", "0.5"]):
        with pytest.raises(GoatError, match="simulator bridge cannot be given"):
            _check_bench_args(_bench("--realism", "stretch", "--ros", *knob))
    with pytest.raises(GoatError, match="--ros runs a realism profile"):
        _check_bench_args(_bench("--ros", "--odom-drift", "1"))  # a custom profile on top of ideal


def test_agent_senses_pass_ideal_observations_through() -> None:
    senses = AgentSenses(RealismConfig())
    assert senses.localiser is None
    marker = object()
    assert senses.see(marker, None) is marker  # type: ignore[arg-type]
    assert senses.log.truth == []


def _results(path: Path, realism: RealismConfig) -> Path:
    record = SubtaskRecord(episode_id="e", scene_id="s", index=0, modality=GoalModality.CATEGORY, success=True,
                           spl=0.5, path_length_m=2.0, geodesic_m=1.0, num_actions=9, stop_reason="stop",
                           distance_to_goal_m=0.1)
    write_results_json(path, [record], summarise([record]), {"realism": realism_meta(realism)})
    return path


def test_compare_and_report_name_the_realism(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = _results(tmp_path / "sim.json", realism_from_args(_bench("--realism", "stretch")))
    real = _results(tmp_path / "real.json", RealismConfig())
    run_compare(argparse.Namespace(sim=sim, real=real, out_dir=None))
    out = capsys.readouterr().out
    assert "realism: stretch (depth d435 x1" in out and "realism: ideal" in out
    results = read_results_json(sim)
    page = render_html_report(results.records, results.summary, results.meta, [])
    assert "stretch (depth d435" in page
    assert isinstance(results.summary, Summary)
