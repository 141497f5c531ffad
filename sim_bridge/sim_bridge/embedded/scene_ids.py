"""Scene ids of the embedded simulator's homes: a generated home's id carries everything needed to build it again.

``embedded/home_s<seed>_r<rooms>`` (small homes) or ``embedded/home_s<seed>_large`` (the large homes), followed by
the furniture tag (home.furniture_tag). The simulator backends read them to rebuild a home; the episode
generators (goat_suites) write them.
"""

from __future__ import annotations

import re

from goat_core.errors import SceneGenerationError
from sim_bridge.embedded.home import (
    FURNITURE_TAG_PATTERN,
    LARGE_HOME_FIELDS,
    HomeConfig,
    furniture_fields,
    furniture_tag,
    with_furniture_of,
)

SCENE_PREFIX = "embedded/home"
_SCENE_RE = re.compile(r"^embedded/home_s(?P<seed>-?\d+)(?:_r(?P<rooms>\d+)|(?P<large>_large))"
                       + FURNITURE_TAG_PATTERN + "$")


def scene_id_for(seed: int, home_config: HomeConfig) -> str:
    """The scene id of a generated home; it carries everything needed to generate it again."""
    if home_config.layout == "large":  # the large homes: one setting (home.LARGE_HOME_FIELDS)
        if home_config != with_furniture_of(home_config, **LARGE_HOME_FIELDS):
            raise SceneGenerationError("a large home's scene id holds only its furniture; the other settings must be "
                                       f"home.LARGE_HOME_FIELDS, got {home_config}")
        return f"{SCENE_PREFIX}_s{seed}_large{furniture_tag(home_config)}"
    if home_config != with_furniture_of(home_config, num_rooms=home_config.num_rooms):
        raise SceneGenerationError("only num_rooms and the furniture can differ from the default HomeConfig in a "
                                   f"scene id, got {home_config}")
    return f"{SCENE_PREFIX}_s{seed}_r{home_config.num_rooms}{furniture_tag(home_config)}"


def parse_scene_id(scene_id: str) -> tuple[int, HomeConfig]:
    """(seed, HomeConfig) of a scene id written by ``scene_id_for``."""
    match = _SCENE_RE.match(scene_id)
    if match is None:
        raise SceneGenerationError(
            f"scene id {scene_id!r} is not an embedded-simulator scene (expected '{SCENE_PREFIX}_s<seed>_r<rooms>' "
            "with '_primitive' or '_f<library>+<library>' after it for other furniture); scenes of other simulators "
            "need their backend")
    if match["large"]:
        return int(match["seed"]), HomeConfig(**{**LARGE_HOME_FIELDS,  # type: ignore[arg-type]
                                                 **furniture_fields(match["furniture"])})
    return int(match["seed"]), HomeConfig(num_rooms=int(match["rooms"]),
                                          **furniture_fields(match["furniture"]))  # type: ignore[arg-type]
