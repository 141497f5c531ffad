"""Domain exceptions. Each names the bad value; nodes and the CLI decide what to do with them."""

from __future__ import annotations

from typing import Sequence


class GoatError(Exception):
    """Base class of every error raised on purpose by goat_nav."""


class ConfigError(GoatError, ValueError):
    """A setting is out of its range; the message names the setting and the value."""


class InvalidGoalError(GoatError, ValueError):
    """A goal cannot be acted on (unknown modality, empty text, bad image)."""


class InvalidObservationError(GoatError, ValueError):
    """An observation does not fit the camera it claims to come from."""


class EpisodeFormatError(GoatError, ValueError):
    """An episode file is malformed; the message names the file, the episode and the field."""


class SceneGenerationError(GoatError, ValueError):
    """A procedural scene or episode cannot be generated with the given settings."""


class UnreachableGoalError(GoatError):
    """A goal has no navigable view point reachable from the start."""


class ModelLoadError(GoatError):
    """A model folder is missing or incomplete."""


def require_positive(config: object, names: Sequence[str]) -> None:
    """ConfigError naming the first of the fields ``names`` of ``config`` (a settings dataclass) that is not > 0."""
    for name in names:
        value = getattr(config, name)
        if not value > 0:
            raise ConfigError(f"{type(config).__name__}.{name} must be positive, got {value!r}")


def require_at_least(config: object, minimum: int, names: Sequence[str]) -> None:
    """ConfigError naming the first of the fields ``names`` of ``config`` that is below ``minimum``."""
    for name in names:
        value = getattr(config, name)
        if value < minimum:
            raise ConfigError(f"{type(config).__name__}.{name} must be >= {minimum}, got {value!r}")
