"""config/agent.yaml, the agent's one settings file: it agrees with AgentConfig, and bad files are refused clearly."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest
import yaml

from goat_core.agent import AgentConfig
from goat_core.agent.config_file import agent_config_from_mapping, agent_config_to_yaml, load_agent_config
from goat_core.errors import ConfigError
from goat_nav.cli import build_parser
from goat_suites.common.suite import agent_config_from_args

CONFIG_DIR = Path(__file__).resolve().parents[1] / "config"


def _names(config: object, prefix: str = "") -> set[str]:
    out = set()
    for f in dataclasses.fields(config):  # type: ignore[arg-type]
        value = getattr(config, f.name)
        out |= _names(value, f"{prefix}{f.name}.") if dataclasses.is_dataclass(value) else {prefix + f.name}
    return out


def _flat(data: dict, prefix: str = "") -> set[str]:
    out = set()
    for key, value in data.items():
        out |= _flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key}
    return out


def test_the_shipped_file_states_every_setting_with_the_dataclass_default() -> None:
    text = (CONFIG_DIR / "agent.yaml").read_text()
    assert load_agent_config(CONFIG_DIR / "agent.yaml") == AgentConfig()
    # Every setting is in the file (none left to a default the file does not show), and nothing else is.
    assert _flat(yaml.safe_load(text)["agent"]) == _names(AgentConfig())
    assert yaml.safe_load(text) == yaml.safe_load(agent_config_to_yaml())


def test_the_no_memory_file_changes_memory_alone() -> None:
    assert load_agent_config(CONFIG_DIR / "agent_no_memory.yaml") == dataclasses.replace(AgentConfig(),
                                                                                           use_memory=False)


def test_the_cost_drive_file_switches_the_cost_based_path_follower_on_alone() -> None:
    assert load_agent_config(CONFIG_DIR / "agent_cost_drive.yaml") == dataclasses.replace(
        AgentConfig(), approximate_cost_drive=True)


def test_a_file_states_only_what_it_changes_and_ints_count_as_floats(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("agent:\n  stop_radius_m: 1\n  stuck_collisions: 5\n  planner:\n    lookahead_m: 1.5\n")
    config = load_agent_config(path)
    assert config.stop_radius_m == 1.0 and isinstance(config.stop_radius_m, float)
    assert config.stuck_collisions == 5 and config.planner.lookahead_m == 1.5
    assert dataclasses.replace(config, stop_radius_m=AgentConfig().stop_radius_m, stuck_collisions=3,
                               planner=AgentConfig().planner) == AgentConfig()


@pytest.mark.parametrize(("data", "named"), [
    ({"agent": {"stop_radius": 1.0}}, "agent.stop_radius: no such setting"),
    ({"agent": {"planner": {"lookahead": 1.0}}}, "agent.planner.lookahead: no such setting"),
    ({"agent": {"use_memory": "no"}}, "agent.use_memory: expected bool, got 'no'"),
    ({"agent": {"stuck_collisions": 2.5}}, "agent.stuck_collisions: expected int, got 2.5"),
    ({"agent": {"stuck_collisions": True}}, "agent.stuck_collisions: expected int, got True"),
    ({"agent": {"planner": 3}}, "agent.planner: expected a mapping of PlannerConfig settings"),
    ({"agent": {"stop_radius_m": -1.0}}, "AgentConfig.stop_radius_m must be positive, got -1.0"),
    ({"controller": {}}, "expected one mapping 'agent:' at the top"),
    (None, "expected one mapping 'agent:' at the top"),
])
def test_a_bad_setting_is_refused_by_name(data: object, named: str) -> None:
    with pytest.raises(ConfigError, match="^mine.yaml: .*" + named.replace("(", r"\(").replace(")", r"\)")):
        agent_config_from_mapping(data, "mine.yaml")


def test_a_missing_or_broken_file_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nowhere.yaml' does not exist"):
        load_agent_config(tmp_path / "nowhere.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("agent: [\n")
    with pytest.raises(ConfigError, match="broken.yaml' is not valid YAML"):
        load_agent_config(broken)


def test_the_bench_reads_the_file_and_no_memory_applies_on_top(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("agent:\n  stop_radius_m: 0.9\n")
    parse = build_parser().parse_args
    assert agent_config_from_args(parse(["bench"])) == AgentConfig()
    assert agent_config_from_args(parse(["bench", "--agent-config", str(path)])).stop_radius_m == 0.9
    both = agent_config_from_args(parse(["bench", "--agent-config", str(path), "--no-memory"]))
    assert (both.stop_radius_m, both.use_memory) == (0.9, False)
    no_memory = parse(["bench", "--agent-config", str(CONFIG_DIR / "agent_no_memory.yaml")])
    assert agent_config_from_args(no_memory) == agent_config_from_args(parse(["bench", "--no-memory"]))
    assert agent_config_from_args(argparse.Namespace()) == AgentConfig()  # a suite's own namespace


def test_findingdory_refuses_an_agent_settings_file() -> None:
    from goat_core.errors import GoatError
    from goat_nav.cli import _check_bench_args

    args = build_parser().parse_args(["bench", "--suite", "findingdory", "--agent-config", "config/agent.yaml"])
    with pytest.raises(GoatError, match="--agent-config sets the GOAT agent"):
        _check_bench_args(args)


def test_the_lattice_drive_file_switches_the_lattice_plan_on_alone() -> None:
    assert load_agent_config(CONFIG_DIR / "agent_lattice_drive.yaml") == dataclasses.replace(
        AgentConfig(), approximate_lattice_drive=True)
