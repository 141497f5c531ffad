"""The agent's settings file (``config/agent.yaml``): read into an ``AgentConfig``, and written from one.

The file holds one mapping, ``agent:``, with AgentConfig's fields and a nested mapping per sub-config
(``occupancy:``, ``memory:``, ``planner:``, ``frontier:``, ``recovery:``, ``actions:``). A file may state only
the settings it changes: what it leaves out keeps the dataclass default, the one place each default is defined.
``goat-nav bench --agent-config FILE`` and the controller node's ``agent_config`` parameter read it.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any, Mapping

from goat_core.agent.config import AgentConfig
from goat_core.errors import ConfigError

ROOT_KEY = "agent"


def load_agent_config(path: str | Path) -> AgentConfig:
    """The AgentConfig a settings file describes; ConfigError names a missing file, an unknown key or a bad
    value."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"agent settings file {str(path)!r} does not exist")
    import yaml  # PyYAML loads with a settings file (a run on the defaults reads none)

    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"agent settings file {str(path)!r} is not valid YAML: {exc}") from exc
    return agent_config_from_mapping(data, str(path))


def agent_config_from_mapping(data: Any, source: str = "agent settings") -> AgentConfig:
    """The AgentConfig of a parsed settings file (``{"agent": {...}}``); ``source`` names it in errors."""
    if not isinstance(data, Mapping) or set(data) != {ROOT_KEY} or not isinstance(data[ROOT_KEY], Mapping):
        raise ConfigError(f"{source}: expected one mapping '{ROOT_KEY}:' at the top, got {_show(data)}")
    config = _build(AgentConfig, data[ROOT_KEY], f"{source}: {ROOT_KEY}")
    assert isinstance(config, AgentConfig)
    return config


def agent_config_to_yaml(config: AgentConfig | None = None) -> str:
    """The settings file of ``config`` (None: the defaults, what config/agent.yaml holds)."""
    import yaml

    plain = _plain(config if config is not None else AgentConfig())
    return yaml.safe_dump({ROOT_KEY: plain}, sort_keys=False, default_flow_style=False)


def _build(cls: type, values: Mapping[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            raise ConfigError(f"{where}.{key}: no such setting (known: {', '.join(sorted(fields))})")
        kind = hints[key]
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}.{key}: expected a mapping of {kind.__name__} settings, got {_show(value)}")
            kwargs[key] = _build(kind, value, f"{where}.{key}")
        else:
            kwargs[key] = _scalar(kind, value, f"{where}.{key}")
    try:
        return cls(**kwargs)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _scalar(kind: Any, value: Any, where: str) -> Any:
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ConfigError(f"{where}: expected {getattr(kind, '__name__', kind)}, got {_show(value)}")


def _plain(config: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        out[f.name] = _plain(value) if dataclasses.is_dataclass(value) else value
    return out


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"
