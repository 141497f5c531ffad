"""The simulators behind the sim_bridge node, behind one small protocol. No ROS in this module.

The node needs four things of a simulator: place the robot at an episode start given as a REP 103 world pose,
apply one discrete action, observe without acting, and (for image goals) render the head camera from a world
pose. :class:`BridgeSim` is that protocol; ``EmbeddedSim`` and ``HabitatSim`` both implement it. A backend is a
:data:`SceneLoader`: it checks a scene id and returns the builder of that scene's simulator (two steps, so that a
bad id leaves the loaded scene alone); :func:`make_scene_loader` picks one by name.

Every backend raises :class:`goat_core.errors.GoatError` (or a subclass) for what a caller can report instead of
crashing: an unknown scene, an unreachable start pose, an operation the backend cannot do
(:class:`SimUnsupportedError`). habitat_sim is imported only when the habitat loader is made, so a missing
install is reported once, at start-up, by name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import Callable, Protocol, Sequence, Union

import numpy as np

from goat_core.errors import ConfigError, GoatError
from goat_core.types import DiscreteAction, Observation
from sim_bridge.embedded.home import generate_home
from sim_bridge.embedded.scene_ids import parse_scene_id
from sim_bridge.embedded.sim import EmbeddedSim, SimConfig
from sim_bridge.habitat import config as habitat_config
from sim_bridge.habitat.config import HabitatConfig
from sim_bridge.habitat.sim import HabitatSim

BACKENDS = ("embedded", "habitat")
HABITAT_DOCS = "docs/robot.md, section 'Simulating with Habitat first'"
SCENE_FILE_SUFFIXES = (".glb", ".gltf", ".ply", ".obj")  # what habitat_sim loads as a scene file


class SimUnsupportedError(GoatError, NotImplementedError):
    """The backend cannot do what was asked (e.g. render a view); the node answers the request with this."""


class BridgeSim(Protocol):
    """What the sim_bridge node needs of one loaded scene. Poses are REP 103: x, y in metres, yaw about +z."""

    def reset_world(self, start_xy_m: Union[Sequence[float], np.ndarray], start_yaw_rad: float) -> Observation:
        """Place the robot at a world pose, level the head, zero the step count; the episode frame starts here."""
        ...

    def step(self, action: DiscreteAction) -> Observation:
        """Apply one discrete action (one world update; STOP moves nothing) and observe."""
        ...

    def observe(self) -> Observation:
        """The current observation set, without acting."""
        ...

    def render_rgb(self, xy_m: Union[Sequence[float], np.ndarray], yaw_rad: float, tilt_rad: float) -> np.ndarray:
        """(H, W, 3) uint8 RGB of the head camera at a world base pose, robot unmoved; SimUnsupportedError if the
        backend cannot."""
        ...

    def close(self) -> None:
        ...


SceneBuilder = Callable[[], BridgeSim]
# Scene id -> the builder of its simulator; GoatError at once for an id it cannot load.
SceneLoader = Callable[[str], SceneBuilder]


@dataclass(frozen=True)
class HabitatSceneSettings:
    """Where the habitat backend finds scenes (the sim_bridge node's habitat_* parameters)."""

    scenes_dir: str = ""  # episode scene ids are relative to this folder (GOAT-Bench: data/scene_datasets)
    scene_dataset_config: str = "default"  # habitat_sim's scene_dataset_config_file
    gpu_device_id: int = 0
    semantic_sensor: bool = True  # ground-truth instance ids (the scene needs semantic annotations)


def resolve_habitat_scene(scene_id: str, scenes_dir: str) -> str:
    """The scene habitat_sim loads for an episode's ``scene_id``.

    Episode files store scene paths relative to the scene datasets folder ("hm3d/val/00800-TEEsavR23oF/
    TEEsavR23oF.basis.glb"); such a path is joined to ``scenes_dir``. An absolute path, one already under
    ``scenes_dir``, and an id without a scene file suffix (a scene handle of the dataset config) stay as given.
    """
    if not scene_id:
        raise GoatError("the habitat backend needs a scene id (a scene file or a scene of the dataset)")
    path = PurePath(scene_id)
    if (not scenes_dir or path.suffix.lower() not in SCENE_FILE_SUFFIXES or path.is_absolute()
            or path.is_relative_to(PurePath(scenes_dir))):
        return scene_id
    return str(PurePath(scenes_dir) / path)


def embedded_scene_loader(sim_config: SimConfig) -> SceneLoader:
    """Scene ids 'embedded/home_s<seed>_r<rooms>...' -> a procedurally generated home in the MuJoCo simulator."""
    def load(scene_id: str) -> SceneBuilder:
        seed, home_config = parse_scene_id(scene_id)
        return lambda: EmbeddedSim(generate_home(seed, home_config), sim_config)

    return load


def habitat_scene_loader(sim_config: SimConfig, settings: HabitatSceneSettings) -> SceneLoader:
    """Scene files of a Habitat scene dataset in habitat_sim, with the embodiment of ``sim_config``.

    habitat_sim is imported here, so a missing install fails when the loader is made (at node start-up) with
    HabitatUnavailableError naming the module and the install command, not at the first reset.
    """
    try:
        habitat_config.import_habitat_sim()
    except habitat_config.HabitatUnavailableError as exc:
        raise habitat_config.HabitatUnavailableError(
            f"sim_bridge backend 'habitat' cannot start: the Python module 'habitat_sim' is missing ({exc}); "
            f"see {HABITAT_DOCS}, or set backend: embedded") from None
    base = habitat_config_for(sim_config, settings)

    def load(scene_id: str) -> SceneBuilder:
        scene = resolve_habitat_scene(scene_id, settings.scenes_dir)
        # A scene handle of the dataset config has no file suffix; a missing scene file is named here, before
        # habitat_sim, which may abort the process on one.
        if PurePath(scene).suffix.lower() in SCENE_FILE_SUFFIXES and not Path(scene).is_file():
            raise GoatError(f"habitat scene file {scene} does not exist (scene id {scene_id!r}, habitat_scenes_dir "
                            f"{settings.scenes_dir!r})")
        return lambda: HabitatSim(replace(base, scene_id=scene))

    return load


def habitat_config_for(sim_config: SimConfig, settings: HabitatSceneSettings) -> HabitatConfig:
    """The HabitatConfig of the embodiment both backends share (image size, HFOV, camera height, radius, steps)."""
    return HabitatConfig(scene_dataset_config_file=settings.scene_dataset_config,
                         agent_radius_m=sim_config.robot_radius_m, image_width_px=sim_config.width_px,
                         image_height_px=sim_config.height_px, hfov_deg=sim_config.hfov_deg,
                         camera_height_m=sim_config.camera_height_m, sizes=sim_config.action_sizes,
                         allow_sliding=sim_config.allow_sliding, semantic_sensor=settings.semantic_sensor,
                         gpu_device_id=settings.gpu_device_id)


def make_scene_loader(backend: str, sim_config: SimConfig,
                      habitat: HabitatSceneSettings = HabitatSceneSettings()) -> SceneLoader:
    """The loader of backend ``embedded`` or ``habitat``; ConfigError naming the choices for any other name."""
    if backend == "embedded":
        return embedded_scene_loader(sim_config)
    if backend == "habitat":
        return habitat_scene_loader(sim_config, habitat)
    raise ConfigError(f"unknown sim_bridge backend {backend!r}; expected one of {', '.join(BACKENDS)}")
