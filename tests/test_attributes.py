"""Colour names from observed colours: colour science, shading tolerance, pattern marks, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from goat_core.errors import GoatError
from goat_core.matching.attributes import (
    ColourConfig,
    ColourNamer,
    instance_colour_scores,
    linear_to_lab,
    normalise_colour_name,
    srgb_to_linear,
)
from goat_core.types import Instance, InstanceView, Pose2D
from goat_core.vocabulary import COLOURS

CHROMATIC = [c for c in COLOURS if c not in ("white", "gray", "black")]


def linear_to_srgb(linear: np.ndarray) -> np.ndarray:
    """Inverse of the IEC 61966-2-1 transfer function, for rendering test colours."""
    c = np.clip(linear, 0.0, 1.0)
    return 255.0 * np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def shaded(name: str, brightness: float) -> np.ndarray:
    """The reference colour of ``name`` lit ``brightness`` times as strongly (in linear light)."""
    return np.asarray(linear_to_srgb(srgb_to_linear(np.array(COLOURS[name])) * brightness))


@pytest.fixture(scope="module")
def namer() -> ColourNamer:
    return ColourNamer()


@pytest.mark.parametrize(("srgb", "lab"), [
    ((255, 255, 255), (100.0, 0.0, 0.0)),
    ((0, 0, 0), (0.0, 0.0, 0.0)),
    ((255, 0, 0), (53.24, 80.09, 67.20)),  # published CIELAB of sRGB red (D65)
    ((0, 0, 255), (32.30, 79.19, -107.86)),
])
def test_lab_conversion_matches_published_values(srgb: tuple[int, int, int], lab: tuple[float, ...]) -> None:
    np.testing.assert_allclose(linear_to_lab(srgb_to_linear(np.array(srgb))), lab, atol=0.3)


@pytest.mark.parametrize("name", sorted(COLOURS))
def test_reference_colours_name_themselves(namer: ColourNamer, name: str) -> None:
    ranked = namer.rank(np.array(COLOURS[name]))
    assert ranked[0][0] == name
    assert namer.agreement(np.array(COLOURS[name]), name) == pytest.approx(1.0)


@pytest.mark.parametrize("name", CHROMATIC)
@pytest.mark.parametrize("brightness", [0.5, 0.7, 1.0, 1.2])
def test_chromatic_colours_survive_shading(namer: ColourNamer, name: str, brightness: float) -> None:
    assert namer.rank(shaded(name, brightness))[0][0] == name


@pytest.mark.parametrize(("name", "brightness"), [
    ("white", 0.6), ("white", 0.8), ("white", 1.2),
    ("gray", 0.5), ("gray", 0.8), ("gray", 1.3),
    ("black", 0.5), ("black", 1.3),
])
def test_achromatic_colours_are_told_apart_by_lightness(namer: ColourNamer, name: str,
                                                        brightness: float) -> None:
    assert namer.rank(shaded(name, brightness))[0][0] == name


@pytest.mark.parametrize(("name", "other"), [("red", "blue"), ("white", "black"), ("green", "pink"),
                                             ("yellow", "purple")])
def test_wrong_names_get_low_agreement(namer: ColourNamer, name: str, other: str) -> None:
    assert namer.agreement(shaded(name, 0.8), other) < 0.1
    assert namer.scores(shaded(name, 0.8))[name] == pytest.approx(1.0)


def _painted_view(name: str, seed: int, brightness: float) -> InstanceView:
    """An object painted ``name`` over most of its surface, with darker and lighter pattern marks."""
    rng = np.random.default_rng(seed)
    base = shaded(name, brightness)
    crop = np.tile(base, (60, 40, 1))
    marks = rng.random((60, 40)) < 0.25
    crop[marks] *= rng.choice([0.5, 1.4], size=(int(marks.sum()), 1))
    crop += rng.normal(0.0, 4.0, crop.shape)  # sensor noise
    mask = np.zeros((60, 40), bool)
    mask[5:55, 5:35] = True
    rgb = np.clip(crop, 0, 255).astype(np.uint8)
    rgb[~mask] = (0, 255, 0)  # background that must be ignored
    return InstanceView(rgb=rgb, mask=mask, pixel_count=int(mask.sum()), pose=Pose2D(0.0, 0.0, 0.0), step=0)


@pytest.mark.parametrize("name", sorted(COLOURS))
@pytest.mark.parametrize("seed", [0, 1])
def test_instance_colour_ignores_pattern_marks_and_background(namer: ColourNamer, name: str,
                                                              seed: int) -> None:
    inst = Instance(instance_id=1, category="mug", points_xyz_m=np.zeros((1, 3)),
                    views=[_painted_view(name, seed, 0.85)])
    scores = instance_colour_scores(namer, inst)
    assert scores is not None
    assert max(scores, key=lambda n: scores[n]) == name
    assert scores[name] == 1.0


@pytest.mark.parametrize(("paint", "trim_share", "expected"), [
    ("white", 0.4, "white"),  # the trims are named gray, the paint still wins the vote
    ("brown", 0.4, "brown"),
    ("yellow", 0.3, "yellow"),
])
def test_pixel_vote_survives_darker_trims(namer: ColourNamer, paint: str, trim_share: float,
                                          expected: str) -> None:
    rng = np.random.default_rng(3)
    n = 2000
    pixels = np.tile(shaded(paint, 0.8), (n, 1))
    trims = rng.random(n) < trim_share
    pixels[trims] = pixels[trims] * 0.6  # trims: the paint darkened, as the simulator draws legs and frames
    pixels += rng.normal(0.0, 3.0, pixels.shape)
    scores = namer.pixel_scores(np.clip(pixels, 0, 255).astype(np.uint8))
    assert max(scores, key=lambda c: scores[c]) == expected


def test_instance_colour_falls_back_to_mean_then_none(namer: ColourNamer) -> None:
    inst = Instance(instance_id=2, category="mug", points_xyz_m=np.zeros((1, 3)),
                    mean_rgb=np.array(COLOURS["blue"], dtype=float))
    assert instance_colour_scores(namer, inst) == namer.scores(np.array(COLOURS["blue"], dtype=float))
    inst.mean_rgb = None
    assert instance_colour_scores(namer, inst) is None


def test_instance_colour_rejects_mismatched_mask(namer: ColourNamer) -> None:
    view = _painted_view("red", 0, 1.0)
    view.mask = view.mask[:10]
    inst = Instance(instance_id=5, category="mug", points_xyz_m=np.zeros((1, 3)), views=[view])
    with pytest.raises(GoatError, match="instance 5"):
        instance_colour_scores(namer, inst)


@pytest.mark.parametrize("shape", [(0, 3), (5, 4), (5,)])
def test_pixel_scores_reject_bad_shapes(namer: ColourNamer, shape: tuple[int, ...]) -> None:
    with pytest.raises(GoatError, match="shape"):
        namer.pixel_scores(np.zeros(shape, np.uint8))


@pytest.mark.parametrize(("word", "expected"), [("Grey", "gray"), ("red", "red"), ("golden", "yellow"),
                                                ("table", None)])
def test_colour_word_normalisation(word: str, expected: str | None) -> None:
    assert normalise_colour_name(word) == expected


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), np.array([np.nan, 0.0, 0.0])])
def test_bad_colour_input_names_the_value(namer: ColourNamer, bad: np.ndarray) -> None:
    with pytest.raises(GoatError, match="sRGB triple"):
        namer.distances(bad)


def test_unknown_colour_name_is_rejected(namer: ColourNamer) -> None:
    with pytest.raises(GoatError, match="turquoise"):
        namer.agreement(np.array([10.0, 200.0, 200.0]), "turquoise")


@pytest.mark.parametrize("kwargs", [{"min_shading": 1.5}, {"max_shading": 0.9}, {"shading_steps": 1}, {"max_views": 0},
                                    {"agreement_scale_delta_e": 0.0}])
def test_config_validation(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ColourConfig(**kwargs)
