"""WordNet nouns (goat_core.matching.lexicon) and how category resolution uses them.

A small database in WordNet 3.0's file format is written to a temporary folder for the reader's own tests; the
resolution tests use the real database from Debian's wordnet-base (installed by scripts/setup.sh) and skip without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from goat_core.errors import GoatError
from goat_core.matching.category import CategoryMatcher, CategoryResolver, vocabulary_resolver
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.lexicon import (
    DEFAULT_WORDNET_DIR,
    WORDNET_DIR_ENV,
    WordNetNouns,
    default_lexicon,
    lemma_of,
    load_wordnet,
)
from goat_core.types import Goal, GoalModality, Instance

# (name, lemmas, hypernym names): seat <- chair <- armchair = easy chair; armchair <- recliner; sofa = couch
SYNSETS: Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]] = (
    ("seat", ("seat",), ()),
    ("chair", ("chair",), ("seat",)),
    ("armchair", ("armchair", "easy_chair"), ("chair",)),
    ("recliner", ("recliner", "reclining_chair"), ("armchair",)),
    ("sofa", ("sofa", "couch", "lounge"), ("seat",)),
    ("couch2", ("couch(p)",), ()),  # a rarer sense of "couch" (a lair), with a syntactic marker on its lemma
)


def write_wordnet(root: Path, synsets: Sequence[tuple[str, tuple[str, ...], tuple[str, ...]]] = SYNSETS) -> None:
    """index.noun and data.noun in WordNet 3.0's format; offsets are the lines' byte offsets in data.noun."""
    header = "  1 This is a licence header line, as the real files have.\n"
    lines: dict[str, str] = {}
    offsets: dict[str, int] = {}
    pos = len(header)
    for name, lemmas, hypernyms in synsets:  # every line has the same shape whatever the offsets: 8-digit fields
        offsets[name] = pos
        pos += len(_data_line(0, lemmas, [0] * len(hypernyms)))
    body = ""
    for name, lemmas, hypernyms in synsets:
        line = _data_line(offsets[name], lemmas, [offsets[h] for h in hypernyms])
        lines[name] = line
        body += line
    (root / "data.noun").write_text(header + body, encoding="utf-8")
    senses: dict[str, list[int]] = {}
    for name, lemmas, _ in synsets:
        for lemma in lemmas:
            senses.setdefault(lemma.split("(")[0].lower(), []).append(offsets[name])
    index = header + "".join(f"{lemma} n {len(offs)} 1 @ {len(offs)} 0 {' '.join(f'{o:08d}' for o in offs)}  \n"
                             for lemma, offs in sorted(senses.items()))
    (root / "index.noun").write_text(index, encoding="utf-8")


def _data_line(offset: int, lemmas: Sequence[str], hypernyms: Sequence[int]) -> str:
    words = " ".join(f"{lemma} 0" for lemma in lemmas)
    pointers = " ".join(f"@ {h:08d} n 0000" for h in hypernyms)
    return f"{offset:08d} 06 n {len(lemmas):02x} {words} {len(hypernyms):03d} {pointers} | a gloss; \"an example\"\n"


def test_lemma_spelling() -> None:
    assert lemma_of("Tea Light") == "tea_light" and lemma_of("chest-of drawers") == "chest_of_drawers"


def test_synonyms_and_kinds_are_found_by_their_hypernym_steps(tmp_path: Path) -> None:
    write_wordnet(tmp_path)
    wn = WordNetNouns(tmp_path)
    links = wn.links("recliner", ["chair", "armchair", "sofa", "table"])
    assert [(k.label, k.distance) for k in links] == [("armchair", 1), ("chair", 2)]
    assert [(k.label, k.distance) for k in wn.links("reclining chair", ["recliner", "seat"], max_up=3)] == [
        ("recliner", 0), ("seat", 3)]
    assert [k.label for k in wn.links("easy chair", ["armchair"])] == ["armchair"]
    # "couch" has two senses; the sofa one comes first and its lemma "sofa" is a synonym (distance 0, sense 0)
    couch = wn.links("couch", ["sofa", "seat"])
    assert [(k.label, k.distance, k.sense) for k in couch] == [("sofa", 0, 0), ("seat", 1, 0)]
    assert wn.links("recliner", ["chair"], max_up=1) == []
    assert wn.links("spaceship", ["chair"]) == [] and wn.senses("spaceship") == ()
    assert wn.synset(wn.senses("couch")[1]).lemmas == ("couch",)  # the marker "(p)" is dropped


def test_a_missing_or_malformed_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GoatError, match="index.noun.*wordnet-base"):
        WordNetNouns(tmp_path)
    write_wordnet(tmp_path)
    data = tmp_path / "data.noun"
    data.write_text(data.read_text(encoding="utf-8").replace(" 06 n 02 armchair", " 06 n zz armchair"),
                    encoding="utf-8")
    with pytest.raises(GoatError, match="data.noun"):
        WordNetNouns(tmp_path).links("recliner", ["armchair"])
    (tmp_path / "index.noun").write_text("sofa n two 1 @ 1 0 00000001\n", encoding="utf-8")
    with pytest.raises(GoatError, match="malformed line in .*index.noun"):
        WordNetNouns(tmp_path)


def test_the_lexicon_is_chosen_by_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORDNET_DIR_ENV, "")
    assert default_lexicon() is None
    write_wordnet(tmp_path)
    monkeypatch.setenv(WORDNET_DIR_ENV, str(tmp_path))
    lexicon = default_lexicon()
    assert lexicon is not None and lexicon.root == tmp_path
    monkeypatch.setenv(WORDNET_DIR_ENV, str(tmp_path / "absent"))
    with pytest.raises(GoatError, match="absent"):
        default_lexicon()


def test_resolution_prefers_a_wordnet_link_to_the_nearest_embedding(tmp_path: Path) -> None:
    """With the small database: "recliner" goes to "armchair" (one step) though MiniLM puts it nearer "chair";
    an exact label still wins and a phrase WordNet lacks is left to the embeddings."""
    write_wordnet(tmp_path)
    labels = ["chair", "armchair", "table", "sofa"]
    embedder = SentenceEmbedder()
    plain = CategoryResolver(embedder, labels)
    assert plain.resolve("recliner").category == "chair"
    lexical = CategoryResolver(embedder, labels, load_wordnet(tmp_path))
    r = lexical.resolve("recliner")
    assert (r.category, r.wordnet_steps, r.exact) == ("armchair", 1, False) and r.similarity >= 0.85
    assert lexical.resolve("recliners").category == "armchair"  # via the singular
    assert lexical.resolve("Chairs").exact
    assert lexical.resolve("dining table").wordnet_steps is None


def test_with_no_instance_of_the_resolved_label_a_wordnet_kind_comes_before_the_nearest_embedding(
        tmp_path: Path) -> None:
    """Large-furnished 1000-3/8 (stop 39): "footstool" resolves to "ottoman" (a WordNet synonym); with no ottoman
    remembered, the fallback took the shoes MiniLM puts nearest to the word, 12.5 m from the goal, a stool. WordNet
    names a footstool a kind of stool: the stool is the better guess, still not a confident one."""
    write_wordnet(tmp_path, SYNSETS + (("stool", ("stool",), ("seat",)),
                                       ("ottoman", ("ottoman", "footstool", "hassock"), ("stool",))))
    labels = ["ottoman", "stool", "shoes", "bed"]
    embedder = SentenceEmbedder()
    resolver = CategoryResolver(embedder, labels, load_wordnet(tmp_path))
    assert resolver.rank("footstool")[0][0] == "shoes"  # the embeddings' nearest label
    matcher = CategoryMatcher(embedder)
    matcher.resolvers[tuple(labels)] = resolver
    matcher.set_goal(Goal(GoalModality.CATEGORY, category="footstool"), labels)
    assert matcher.resolution is not None and matcher.resolution.category == "ottoman"
    assert [label for label, _ in matcher.ranking][:2] == ["stool", "shoes"]
    points = np.array([[0.0, 0.0, 0.2], [0.1, 0.0, 0.2]])
    instances = {1: Instance(1, "shoes", points, num_observations=5), 2: Instance(2, "stool", points + 3.0)}
    result = matcher.match(instances)
    assert result.instance_id == 2 and not result.confident


@pytest.mark.skipif(not (DEFAULT_WORDNET_DIR / "index.noun").is_file(),
                    reason="Debian's wordnet-base is not installed (scripts/setup.sh installs it when root)")
def test_the_simulator_goal_synonyms_that_embeddings_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORDNET_DIR_ENV, raising=False)
    from sim_bridge.embedded.catalogue import CATALOGUE  # the labels only; its synonym lists are not read

    labels = [c.name for c in CATALOGUE]
    resolver = vocabulary_resolver(SentenceEmbedder(), labels, {})
    assert resolver.lexicon is not None
    for phrase, label in (("recliner", "armchair"), ("hassock", "ottoman"), ("icebox", "refrigerator"),
                          ("armoire", "wardrobe"), ("dustbin", "trash can"), ("urn", "vase"), ("bureau", "dresser")):
        r = resolver.resolve(phrase)
        assert (phrase, r.category) == (phrase, label) and r.wordnet_steps is not None and r.similarity >= 0.75
    for label in labels:  # every label still resolves to itself
        assert resolver.resolve(label).category == label
