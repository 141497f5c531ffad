"""Paraphrased language goals for the noise-robustness study (GOAT-Bench evaluates goals restated in other words).

A paraphrase keeps what the description says — the object, its colour and material, its relation to another
object, its room — and changes how it says it: a relation phrase becomes a synonym ("on" -> "on top of", "near"
-> "next to"), the room clause may move to the front ("in the kitchen, the red mug ..."), and an instruction verb
may lead ("find the ...", "go to the ..."). The rules act on words, not on a parse, so any English description
can be paraphrased; the result is drawn from a seed, so the same seed gives the same text.
"""

from __future__ import annotations

import re
from typing import Union

import numpy as np

# Relation phrase -> phrases of the same meaning (the first is the phrase itself, so it may stay).
_RELATION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "on": ("on", "on top of", "resting on"),
    "near": ("near", "next to", "close to", "beside"),
    "beside": ("beside", "next to", "near"),
    "next to": ("next to", "beside", "near"),
    "under": ("under", "beneath", "underneath"),
    "above": ("above", "over"),
    "inside": ("inside", "in"),
}
_LEADS = ("", "find ", "go to ", "look for ", "navigate to ", "take me to ")
_ROOM_CLAUSE = re.compile(r"\s+in the ([a-z ]+?)\s*$")


def paraphrase_description(text: str, seed: Union[int, np.random.Generator]) -> str:
    """The description in other words, meaning kept (see the module docstring)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    words = text.strip()
    lowered = words.lower()
    for phrase in sorted(_RELATION_SYNONYMS, key=len, reverse=True):
        pattern = re.compile(rf"\b{re.escape(phrase)} the\b")
        if pattern.search(lowered):
            options = _RELATION_SYNONYMS[phrase]
            choice = options[int(rng.integers(len(options)))]
            lowered = pattern.sub(f"{choice} the", lowered, count=1)
            break
    room = _ROOM_CLAUSE.search(lowered)
    if room is not None and rng.random() < 0.5:
        lowered = f"in the {room.group(1)}, {lowered[:room.start()].strip()}"
    lead = _LEADS[int(rng.integers(len(_LEADS)))]
    return f"{lead}{lowered}"
