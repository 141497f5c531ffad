"""Category goals: resolve the goal's words to a perception label, then pick the remembered instances of it.

The perception backend has a fixed label set (``vocabulary``); a goal may use a synonym ("sofa" for "couch")
or a plural. An exact (plural-insensitive) match wins; then a label WordNet names as the phrase's synonym or as a
kind it belongs to (``goat_core.matching.lexicon``: "recliner" is a kind of "armchair", "hassock" an "ottoman"),
the fewest hypernym steps away, ties going to the higher sentence-embedding similarity; otherwise the label with
the highest sentence-embedding cosine similarity is taken. Sentence embeddings alone miss rare synonyms
("recliner" comes closer to "chair" than to "armchair"; on the simulator's 133 goal synonyms they resolve 94
right, with WordNet 105). When memory holds no instance of the resolved label, the matcher offers, not
confidently, the instances of the most similar label that memory does hold: once the home is explored without
finding the resolved label, that is the best remaining guess, better than giving up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from goat_core.errors import GoatError, InvalidGoalError
from goat_core.matching.base import NO_MATCH, MatchResult
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.lexicon import WordNetNouns, default_lexicon
from goat_core.types import Goal, GoalModality, Instance

_IRREGULAR_SINGULARS: Mapping[str, str] = {
    "shelves": "shelf", "knives": "knife", "leaves": "leaf", "people": "person", "feet": "foot",
    "mice": "mouse", "children": "child", "scarves": "scarf", "loaves": "loaf",
}


def singular(word: str) -> str:
    """A simple English singular of one lower-case word ("benches" -> "bench", "glasses" -> "glass").

    Applied to both the goal and the vocabulary, so the occasional wrong stem ("clothes" -> "clothe") still
    compares equal on both sides.
    """
    if word in _IRREGULAR_SINGULARS:
        return _IRREGULAR_SINGULARS[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def words_of(text: str) -> list[str]:
    """Lower-case word tokens; underscores and hyphens separate words ("tv_monitor" -> ["tv", "monitor"])."""
    return re.findall(r"[a-z0-9]+", text.lower())


def label_key(text: str) -> tuple[str, ...]:
    """Plural-insensitive comparison key of a label or phrase."""
    return tuple(singular(w) for w in words_of(text))


@dataclass(frozen=True)
class CategoryResolution:
    """Which perception label a goal phrase refers to."""

    phrase: str
    category: str  # a label of the vocabulary, exactly as the vocabulary spells it
    # Cosine similarity of phrase and label; 1.0 for an exact match; for a WordNet link at least
    # LEXICAL_SIMILARITY[steps] (a synonym 0.95, a kind one step up 0.85, two steps 0.75).
    similarity: float
    exact: bool
    wordnet_steps: Optional[int] = None  # hypernym steps of the WordNet link that chose the label, if one did


# How well a WordNet link ties a phrase to a label, on the scale of the embeddings' cosine similarity: a synonym
# (same synset) or a direct kind is as sure as a close embedding match and clears every confidence threshold.
LEXICAL_SIMILARITY: tuple[float, ...] = (0.95, 0.85, 0.75)


class CategoryResolver:
    """Maps phrases to the labels of one perception vocabulary."""

    def __init__(self, embedder: SentenceEmbedder, vocabulary: Sequence[str],
                 lexicon: Optional[WordNetNouns] = None) -> None:
        labels = [str(v) for v in vocabulary if words_of(str(v))]
        if not labels:
            raise GoatError(f"perception vocabulary has no usable labels: {list(vocabulary)!r}")
        self.embedder = embedder
        self.lexicon = lexicon
        self.labels: tuple[str, ...] = tuple(dict.fromkeys(labels))
        self._by_key: dict[tuple[str, ...], str] = {}
        for label in self.labels:
            self._by_key.setdefault(label_key(label), label)
        self._label_vectors = embedder.encode([" ".join(words_of(label)) for label in self.labels])

    @property
    def keys(self) -> Mapping[tuple[str, ...], str]:
        """Plural-insensitive key -> label, for longest-match scanning of free text."""
        return self._by_key

    def exact(self, phrase: str) -> Optional[str]:
        """The label equal to the phrase up to case, separators and plurals, or None."""
        return self._by_key.get(label_key(phrase))

    def rank(self, phrase: str) -> list[tuple[str, float]]:
        """Every label with its cosine similarity to the phrase, most similar first."""
        text = " ".join(words_of(phrase))
        if not text:
            raise InvalidGoalError(f"cannot resolve a category from {phrase!r}: it has no words")
        sims = self._label_vectors @ self.embedder.encode_one(text)
        order = sorted(range(len(self.labels)), key=lambda i: (-float(sims[i]), self.labels[i]))
        return [(self.labels[i], float(sims[i])) for i in order]

    def resolve(self, phrase: str) -> CategoryResolution:
        """Exact label if there is one, else the closest WordNet link, else the most similar label by embedding."""
        label = self.exact(phrase)
        if label is not None:
            return CategoryResolution(phrase=phrase, category=label, similarity=1.0, exact=True)
        ranked = self.rank(phrase)
        links = self.links(phrase)
        if links:
            steps = min(links.values())
            cosine = dict(ranked)
            best = max((lb for lb, d in links.items() if d == steps), key=lambda lb: (cosine[lb], lb))
            floor = LEXICAL_SIMILARITY[min(steps, len(LEXICAL_SIMILARITY) - 1)]
            return CategoryResolution(phrase=phrase, category=best, similarity=max(cosine[best], floor), exact=False,
                                      wordnet_steps=steps)
        best, sim = ranked[0]
        return CategoryResolution(phrase=phrase, category=best, similarity=sim, exact=False)

    def links(self, phrase: str) -> dict[str, int]:
        """Labels WordNet ties the phrase (or its singular) to (a synonym: 0, a kind of it: 1, ...), with their
        hypernym steps; {} without a lexicon."""
        if self.lexicon is None:
            return {}
        for form in dict.fromkeys((" ".join(words_of(phrase)), " ".join(label_key(phrase)))):
            links = self.lexicon.links(form, self.labels, max_up=len(LEXICAL_SIMILARITY) - 1)
            if links:
                return {link.label: link.distance for link in links}
        return {}


@dataclass(frozen=True)
class ScoredInstance:
    """One candidate instance with its matcher score (higher is better, comparable within a goal)."""

    instance_id: int
    score: float


def runner_up(ranked: Sequence[ScoredInstance], instances: Mapping[int, Instance],
              duplicate_radius_m: float) -> Optional[ScoredInstance]:
    """The best candidate after the first that is not a likely twin of the first.

    The instance memory can split one object into two instances of its category; such a twin (same
    category, centroid within ``duplicate_radius_m`` in xy) scores like the original and must not make the
    matcher doubt its answer. Objects of other categories never count as twins: a speaker standing on a
    nightstand is a real rival for an image goal.
    """
    if not ranked:
        return None
    best = instances[ranked[0].instance_id]
    best_xy = best.centroid_m[:2]
    for cand in ranked[1:]:
        other = instances[cand.instance_id]
        twin = (other.category == best.category
                and float(np.linalg.norm(other.centroid_m[:2] - best_xy)) <= duplicate_radius_m)
        if not twin:
            return cand
    return None


def vocabulary_resolver(embedder: SentenceEmbedder, vocabulary: Sequence[str],
                        cache: dict[tuple[str, ...], CategoryResolver]) -> CategoryResolver:
    """A resolver for ``vocabulary``, built once per distinct vocabulary (label embeddings are the cost), with the
    process's WordNet lexicon (``goat_core.matching.lexicon.default_lexicon``)."""
    key = tuple(str(v) for v in vocabulary)
    if key not in cache:
        cache[key] = CategoryResolver(embedder, key, default_lexicon())
    return cache[key]


@dataclass(frozen=True)
class CategoryMatcherConfig:
    """Thresholds of the category matcher."""

    # Below this cosine similarity the goal names nothing the detector knows; go there, but keep exploring.
    # Synonyms of MiniLM score ~0.6-0.9 against their label; unrelated household objects ~0.2-0.45.
    min_similarity: float = 0.5


class CategoryMatcher:
    """GoalMatcher for object-category goals."""

    def __init__(self, embedder: SentenceEmbedder,
                 config: CategoryMatcherConfig = CategoryMatcherConfig()) -> None:
        self.embedder = embedder
        self.config = config
        self.resolution: Optional[CategoryResolution] = None
        # Every label with its similarity: the WordNet-linked ones first (fewest steps), then the most similar first.
        self.ranking: tuple[tuple[str, float], ...] = ()
        # One resolver per perception vocabulary, shared with whoever else resolves phrases against it.
        self.resolvers: dict[tuple[str, ...], CategoryResolver] = {}

    def set_goal(self, goal: Goal, vocabulary: Sequence[str]) -> None:
        if goal.modality is not GoalModality.CATEGORY or goal.category is None:
            raise InvalidGoalError(f"CategoryMatcher needs an object-category goal, got {goal.describe()!r}")
        resolver = vocabulary_resolver(self.embedder, vocabulary, self.resolvers)
        self.resolution = resolver.resolve(goal.category)
        exact = ((self.resolution.category, 1.0),) if self.resolution.exact else ()
        # Labels WordNet ties the words to come before labels only the embeddings find near: "footstool" is an
        # ottoman (synonym) and a kind of stool; with no ottoman remembered a stool is the next guess, not the
        # shoes its embedding comes nearest to (large-furnished 1000-3/8 stopped at shoes).
        links = resolver.links(goal.category) if not self.resolution.exact else {}
        cosine = resolver.rank(goal.category)
        linked = sorted(((label, max(sim, LEXICAL_SIMILARITY[min(links[label], len(LEXICAL_SIMILARITY) - 1)]))
                         for label, sim in cosine if label in links), key=lambda ls: (links[ls[0]], -ls[1], ls[0]))
        self.ranking = exact + tuple((label, sim) for label, sim in linked + [ls for ls in cosine if ls[0] not in links]
                                     if label != self.resolution.category)

    @property
    def goal_note(self) -> Optional[str]:
        """A warning when the goal's category is no label the detector knows (GoalNoter); None otherwise."""
        r = self.resolution
        if r is None or r.exact or r.similarity >= self.config.min_similarity:
            return None
        return (f"category goal {r.phrase!r} is not a label the detector knows (closest: {r.category!r}, similarity "
                f"{r.similarity:.2f} < {self.config.min_similarity}); the robot explores for it and may end at a "
                f"{r.category} or the most similar label it has seen, never confidently")

    def candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """Instances of the resolved label, most observed (then largest) first; score = label similarity."""
        if self.resolution is None:
            raise GoatError("CategoryMatcher.candidates() called before set_goal()")
        label = self.resolution.category
        found = [inst for inst in instances.values() if inst.category == label]
        found.sort(key=lambda i: (-i.num_observations, -len(i.points_xyz_m), i.instance_id))
        return [ScoredInstance(i.instance_id, self.resolution.similarity) for i in found]

    def nearest_label_candidates(self, instances: Mapping[int, Instance]) -> list[ScoredInstance]:
        """With no instance of the resolved label: the instances of the most similar label memory holds."""
        present = {inst.category for inst in instances.values()}
        for label, similarity in self.ranking:
            if label in present:
                found = sorted((i for i in instances.values() if i.category == label),
                               key=lambda i: (-i.num_observations, -len(i.points_xyz_m), i.instance_id))
                return [ScoredInstance(i.instance_id, similarity) for i in found]
        return []

    def match(self, instances: Mapping[int, Instance]) -> MatchResult:
        ranked = self.candidates(instances)
        if not ranked:
            fallback = self.nearest_label_candidates(instances)
            if not fallback:
                return NO_MATCH
            return MatchResult(instance_id=fallback[0].instance_id, score=fallback[0].score, confident=False)
        assert self.resolution is not None
        confident = self.resolution.similarity >= self.config.min_similarity
        return MatchResult(instance_id=ranked[0].instance_id, score=ranked[0].score, confident=confident)
