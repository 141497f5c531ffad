"""The Stretch agent in habitat_sim: configuration as plain data, and its translation to habitat_sim objects.

GOAT-Bench's Stretch (habitat-lab ``goat`` task config): base radius 0.17 m, height 1.41 m, one RGB-D head camera
at 1.31 m, 360 wide x 640 tall (portrait), HFOV 42 deg; discrete actions move_forward 0.25 m, turn 30 deg,
look 30 deg. Step sizes are parameters (FindingDory turns 10 deg).

habitat_sim API used by :func:`make_configuration` (habitat-sim >= 0.2): ``habitat_sim.SimulatorConfiguration``
(``scene_id``, ``scene_dataset_config_file``, ``enable_physics``, ``allow_sliding``, ``gpu_device_id``,
``random_seed``), ``habitat_sim.CameraSensorSpec`` (``uuid``, ``sensor_type`` = ``habitat_sim.SensorType.COLOR |
DEPTH | SEMANTIC``, ``sensor_subtype`` = ``habitat_sim.SensorSubType.PINHOLE``, ``resolution`` = [rows, columns],
``position`` in the agent frame, ``orientation`` = [pitch, yaw, roll] rad, ``hfov`` in degrees),
``habitat_sim.agent.AgentConfiguration`` (``height``, ``radius``, ``sensor_specifications``, ``action_space``),
``habitat_sim.agent.ActionSpec(name, habitat_sim.agent.ActuationSpec(amount=...))`` with amounts in metres for
move_forward and degrees for turn_*/look_* (look_* turn the sensors, not the body), and
``habitat_sim.Configuration(sim_cfg, [agent_cfg])``.

Frames: everything here is in Habitat's Y-up frame (the agent looks along -Z); :mod:`goat_core.frames` converts
to REP 103.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from goat_core.errors import GoatError
from goat_core.types import ActionSizes, CameraIntrinsics, DiscreteAction

CONDA_HINT = ("install habitat-sim with conda: conda create -n habitat python=3.9 && conda activate "
              "habitat && conda install habitat-sim withbullet headless -c conda-forge -c aihabitat")

# DiscreteAction -> the habitat_sim action name registered in the agent's action space (STOP is not a motion).
HABITAT_ACTIONS: dict[DiscreteAction, str] = {
    DiscreteAction.MOVE_FORWARD: "move_forward",
    DiscreteAction.TURN_LEFT: "turn_left",
    DiscreteAction.TURN_RIGHT: "turn_right",
    DiscreteAction.LOOK_UP: "look_up",
    DiscreteAction.LOOK_DOWN: "look_down",
}


class HabitatUnavailableError(GoatError, ImportError):
    """habitat_sim is not installed in this environment."""


@dataclass(frozen=True)
class HabitatConfig:
    """What a Habitat episode needs; every default is the GOAT-Bench Stretch's."""

    scene_id: str = ""  # scene file (.glb / .basis.glb) or a scene handle of the dataset
    scene_dataset_config_file: str = "default"  # e.g. data/scene_datasets/hm3d/hm3d_annotated_basis...json
    agent_radius_m: float = 0.17
    agent_height_m: float = 1.41
    image_width_px: int = 360
    image_height_px: int = 640
    hfov_deg: float = 42.0
    camera_height_m: float = 1.31
    sizes: ActionSizes = field(default_factory=ActionSizes)
    semantic_sensor: bool = True  # ground-truth instance ids, when the scene has semantic annotations
    # GOAT-Bench's and LangMap's task configs turn habitat-sim's sliding off (goat_stretch_hm3d.yaml l.78)
    allow_sliding: bool = False
    enable_physics: bool = False
    gpu_device_id: int = 0
    random_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("agent_radius_m", "agent_height_m", "camera_height_m"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"HabitatConfig.{name} must be a positive finite number, got {value!r}")
        if self.image_width_px <= 0 or self.image_height_px <= 0:
            raise ValueError(f"image size must be positive, got {self.image_width_px}x{self.image_height_px}")
        if not 0.0 < self.hfov_deg < 180.0:
            raise ValueError(f"hfov_deg must be in (0, 180), got {self.hfov_deg!r}")
        if self.camera_height_m > self.agent_height_m:
            raise ValueError(f"camera_height_m {self.camera_height_m!r} is above the agent height "
                             f"{self.agent_height_m!r}")

    @property
    def intrinsics(self) -> CameraIntrinsics:
        """habitat_sim's pinhole: square pixels, principal point at the centre, HFOV across the width."""
        return CameraIntrinsics.from_hfov(self.image_width_px, self.image_height_px, math.radians(self.hfov_deg))


@dataclass(frozen=True)
class SensorSpec:
    uuid: str
    kind: str  # color | depth | semantic
    resolution: tuple[int, int]  # (rows, columns), habitat_sim's order
    position: tuple[float, float, float]  # agent frame (Habitat Y-up), metres
    hfov_deg: float


@dataclass(frozen=True)
class AgentSpec:
    """The habitat_sim configuration as plain data: what :func:`make_configuration` hands to habitat_sim."""

    height_m: float
    radius_m: float
    sensors: tuple[SensorSpec, ...]
    actions: dict[str, float]  # habitat action name -> amount (metres for move_forward, degrees otherwise)
    simulator: dict[str, Any]  # SimulatorConfiguration attributes


def build_spec(config: HabitatConfig) -> AgentSpec:
    """The Stretch agent, its RGB-D(-S) head camera and action space for ``config``."""
    kinds = ["color", "depth"] + (["semantic"] if config.semantic_sensor else [])
    uuids = {"color": "rgb", "depth": "depth", "semantic": "semantic"}
    # The camera sits above the base centre; the agent frame is Y-up, so its height is the y coordinate.
    sensors = tuple(SensorSpec(uuid=uuids[k], kind=k, resolution=(config.image_height_px, config.image_width_px),
                               position=(0.0, config.camera_height_m, 0.0), hfov_deg=config.hfov_deg)
                    for k in kinds)
    sizes = config.sizes
    actions = {
        "move_forward": sizes.forward_m,
        "turn_left": math.degrees(sizes.turn_rad),
        "turn_right": math.degrees(sizes.turn_rad),
        "look_up": math.degrees(sizes.look_rad),
        "look_down": math.degrees(sizes.look_rad),
    }
    simulator = {
        "scene_id": config.scene_id,
        "scene_dataset_config_file": config.scene_dataset_config_file,
        "enable_physics": config.enable_physics,
        "allow_sliding": config.allow_sliding,
        "gpu_device_id": config.gpu_device_id,
        "random_seed": config.random_seed,
    }
    return AgentSpec(height_m=config.agent_height_m, radius_m=config.agent_radius_m, sensors=sensors,
                     actions=actions, simulator=simulator)


def import_habitat_sim() -> Any:
    """``habitat_sim``, or HabitatUnavailableError with the conda command."""
    try:
        import habitat_sim
    except ImportError as exc:
        raise HabitatUnavailableError(f"the habitat backend needs habitat_sim ({exc}); {CONDA_HINT}") from None
    return habitat_sim


def make_configuration(spec: AgentSpec, habitat_sim: Optional[Any] = None) -> Any:
    """A ``habitat_sim.Configuration`` from the plain spec (``habitat_sim`` may be passed in, e.g. a test double)."""
    hs = habitat_sim if habitat_sim is not None else import_habitat_sim()
    sim_cfg = hs.SimulatorConfiguration()
    for name, value in spec.simulator.items():
        setattr(sim_cfg, name, value)
    sensor_types = {"color": hs.SensorType.COLOR, "depth": hs.SensorType.DEPTH, "semantic": hs.SensorType.SEMANTIC}
    sensor_specs = []
    for s in spec.sensors:
        cam = hs.CameraSensorSpec()
        cam.uuid = s.uuid
        cam.sensor_type = sensor_types[s.kind]
        cam.sensor_subtype = hs.SensorSubType.PINHOLE
        cam.resolution = list(s.resolution)
        cam.position = list(s.position)
        cam.orientation = [0.0, 0.0, 0.0]
        cam.hfov = s.hfov_deg
        sensor_specs.append(cam)
    agent_cfg = hs.agent.AgentConfiguration()
    agent_cfg.height = spec.height_m
    agent_cfg.radius = spec.radius_m
    agent_cfg.sensor_specifications = sensor_specs
    agent_cfg.action_space = {name: hs.agent.ActionSpec(name, hs.agent.ActuationSpec(amount=amount))
                              for name, amount in spec.actions.items()}
    return hs.Configuration(sim_cfg, [agent_cfg])
