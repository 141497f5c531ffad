"""MuJoCo assets of converted furniture models, the scene lighting, and what a model looks like to the camera.

Shared by the home's world (``world``) and by the conversion of a model (``furniture_library``), which names a
model's colour from pictures of it under the very lighting of the homes: the colour the agent's camera sees,
not the average over faces no camera sees (bottoms, backs, insides).
"""

from __future__ import annotations

import math
import os

os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, as in world.py

from typing import Sequence  # noqa: E402

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from sim_bridge.embedded.mesh_part import MeshPart  # noqa: E402

# Lighting: a strong ambient term plus a headlight, so a surface facing the camera shows its reference
# colour (ambient + diffuse = 1), and a weak light from above for shape cues.
HEADLIGHT_AMBIENT = 0.7
HEADLIGHT_DIFFUSE = 0.3
TOP_LIGHT_DIFFUSE = 0.15
COLOUR_VIEW_PX = 96  # side of the pictures a model's colour is taken from
COLOUR_VIEW_AZIMUTHS = 8  # pictures around the model
COLOUR_VIEW_ELEVATION_DEG = -25.0  # looking down at it, as a head camera at 1.31 m does at most furniture


def add_parts(spec: mujoco.MjSpec, parts: Sequence[MeshPart], prefix: str, added: set[str]) -> list[str]:
    """Add one mesh and material (and texture) per part, named ``<prefix>/<k>``, unless ``added`` has them."""
    names = []
    for k, part in enumerate(parts):
        name = f"{prefix}/{k}"
        names.append(name)
        if name in added:
            continue
        added.add(name)
        mesh = spec.add_mesh(name=name)
        mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # open surfaces: no volume to speak of
        mesh.uservert = part.vertices_m.ravel().tolist()
        mesh.userface = part.faces.ravel().tolist()
        material = spec.add_material(name=name)
        material.specular, material.shininess, material.reflectance = 0.0, 0.0, 0.0
        if part.texcoords is not None and part.texture_png is not None:
            mesh.usertexcoord = part.texcoords.ravel().tolist()
            spec.assets[f"{name}.png"] = part.texture_png
            spec.add_texture(name=name, type=mujoco.mjtTexture.mjTEXTURE_2D, file=f"{name}.png")
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = name
            material.rgba = [1.0, 1.0, 1.0, 1.0]
        else:
            material.rgba = [c / 255.0 for c in part.rgb] + [1.0]
    return names


def lighting_xml() -> str:
    """The <visual> headlight of the homes (the top light is a worldbody element: :func:`top_light_xml`)."""
    amb, dif = HEADLIGHT_AMBIENT, HEADLIGHT_DIFFUSE
    return f'<headlight ambient="{amb} {amb} {amb}" diffuse="{dif} {dif} {dif}" specular="0 0 0" active="1"/>'


def top_light_xml() -> str:
    top = TOP_LIGHT_DIFFUSE
    return (f'<light directional="true" castshadow="false" pos="0 0 5" dir="0 0 -1" diffuse="{top} {top} {top}" '
            'specular="0 0 0" ambient="0 0 0"/>')


def camera_pixels(parts: Sequence[MeshPart], size_m: Sequence[float]) -> np.ndarray:
    """(N, 3) uint8 colours of the model's pixels in pictures from around it, lit as in the homes."""
    px = COLOUR_VIEW_PX
    spec = mujoco.MjSpec.from_string(
        f'<mujoco><visual><global offwidth="{px}" offheight="{px}"/><quality shadowsize="0"/>{lighting_xml()}'
        f"</visual><worldbody>{top_light_xml()}</worldbody></mujoco>")
    body = spec.worldbody.add_body(name="model")
    for name in add_parts(spec, parts, "m", set()):
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=name, material=name, contype=0, conaffinity=0)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    camera = mujoco.MjvCamera()
    camera.lookat[:] = (0.0, 0.0, size_m[2] / 2.0)
    camera.distance = 1.6 * max(size_m) + 0.1
    camera.elevation = COLOUR_VIEW_ELEVATION_DEG
    pixels = []
    with mujoco.Renderer(model, px, px) as renderer:
        for k in range(COLOUR_VIEW_AZIMUTHS):
            camera.azimuth = 360.0 * k / COLOUR_VIEW_AZIMUTHS
            renderer.update_scene(data, camera)
            rgb = renderer.render()
            renderer.enable_segmentation_rendering()
            renderer.update_scene(data, camera)
            seen = renderer.render()[..., 0] >= 0
            renderer.disable_segmentation_rendering()
            pixels.append(rgb[seen])
    out = np.concatenate(pixels)
    step = max(1, math.ceil(len(out) / 8000))
    return np.ascontiguousarray(out[::step])
