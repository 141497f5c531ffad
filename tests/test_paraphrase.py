"""Paraphrased description goals keep their meaning for the description parser and change their words."""

from __future__ import annotations

import pytest

from goat_core.matching.description import DescriptionMatcher
from goat_core.matching.embeddings import SentenceEmbedder
from goat_suites.common.paraphrase import paraphrase_description
from goat_suites.goat.generator import describe_object
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.home import generate_home


@pytest.fixture(scope="module")
def parser():
    matcher = DescriptionMatcher(SentenceEmbedder())
    return matcher.parser([spec.name for spec in CATALOGUE])


def _descriptions() -> list[str]:
    texts = []
    for seed in (3, 8):
        home = generate_home(seed)
        texts += [t for t in (describe_object(o, home) for o in home.objects) if t is not None]
    return texts


def _meaning(parsed) -> tuple:
    relation = None if parsed.relation is None else parsed.relation.value
    anchor = None if parsed.anchor is None else parsed.anchor.category
    return (parsed.target.category, parsed.target.colour, parsed.room, relation, anchor)


def test_paraphrases_keep_what_the_parser_reads(parser) -> None:
    texts = _descriptions()
    assert len(texts) > 20 and any(" on the " in t or " near the " in t for t in texts)
    changed = 0
    for i, text in enumerate(texts):
        other = paraphrase_description(text, i)
        changed += other != text
        assert _meaning(parser.parse(other)) == _meaning(parser.parse(text)), (text, other)
    assert changed >= 0.6 * len(texts)  # most texts are restated


def test_the_same_seed_gives_the_same_paraphrase() -> None:
    text = "the red ceramic mug on the table in the kitchen"
    assert paraphrase_description(text, 5) == paraphrase_description(text, 5)
    assert len({paraphrase_description(text, s) for s in range(30)}) > 5
