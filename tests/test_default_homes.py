"""The default homes (issue 33): `goat-nav bench` of the GOAT suite and `goat-nav generate` run the large furnished
homes; the small homes stay available by name (--homes small), and the other suites, `render`, a run that sets
--num-rooms and the same-actions baselines keep them."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from goat_core.errors import ConfigError
from goat_nav.cli import build_parser
from goat_suites.common.run_args import GOAT_DEFAULT_HOMES, home_config_from_args, homes_from_args
from sim_bridge.embedded.home import HomeConfig, home_config_for

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("argv", "kind"), [
    (["bench"], "large-furnished"),
    (["bench", "--agent", "cow"], "large-furnished"),
    (["bench", "--ros"], "large-furnished"),
    (["generate", "--out", "e.json"], "large-furnished"),  # the episodes `bench --episodes-file` replays
    (["bench", "--homes", "small"], "small"),
    (["bench", "--homes", "primitive"], "small"),
    (["bench", "--homes", "furnished"], "furnished"),
    (["bench", "--homes", "large"], "large"),
    (["generate", "--homes", "small", "--out", "e.json"], "small"),
    (["bench", "--suite", "langmap"], "small"),  # the other suites keep their homes
    (["bench", "--suite", "pasture"], "small"),
    (["bench", "--suite", "findingdory"], "small"),
    (["render", "--out", "home"], "small"),
])
def test_each_command_runs_its_default_homes_and_the_named_ones(argv: list[str], kind: str) -> None:
    args = build_parser().parse_args(argv)
    assert home_config_from_args(args) == home_config_for(kind)


def test_the_goat_default_is_the_large_furnished_homes() -> None:
    assert GOAT_DEFAULT_HOMES == "large-furnished"
    config = home_config_from_args(build_parser().parse_args(["bench"]))
    assert (config.layout, config.furniture) == ("large", "furnished")


def test_num_rooms_sets_a_small_home_and_with_large_homes_is_refused() -> None:
    args = build_parser().parse_args(["bench", "--num-rooms", "3"])
    assert homes_from_args(args) == "small" and home_config_from_args(args) == HomeConfig(num_rooms=3)
    with pytest.raises(ConfigError, match="--num-rooms 3"):
        home_config_from_args(build_parser().parse_args(["bench", "--homes", "large", "--num-rooms", "3"]))


def test_a_namespace_without_the_flag_gets_the_small_homes() -> None:
    """A suite's own namespace (no command, no --homes) keeps HomeConfig(), as before the switch."""
    assert home_config_from_args(argparse.Namespace()) == HomeConfig()


def test_the_help_says_what_the_default_is(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Default: large-furnished for the GOAT suite of bench and for generate unless --num-rooms is given, " \
           "small otherwise" in text


def test_the_same_actions_check_stays_on_the_homes_of_its_baselines() -> None:
    """benchmarks/check_same_actions.py's default homes are the small ones its committed baselines record."""
    spec = importlib.util.spec_from_file_location("check_same_actions", ROOT / "benchmarks" / "check_same_actions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert home_config_for(module.BASELINE_HOMES) == HomeConfig()
    for path in sorted((ROOT / "benchmarks" / "baselines").glob("same_actions_seed*.json")):
        assert json.loads(path.read_text())["homes"] == module.BASELINE_HOMES, path
