"""Free-text goals, parsed: "the red mug on the wooden table in the kitchen" as a target, its colour and material,
a room, and a relation to an anchor object (:mod:`goat_core.matching.description` scores instances against it).

Parsing is a small rule-based chunker (no parser model is shipped here): the text is scanned left to right
for the longest known phrase at each word (room types, perception labels, relation phrases, colour and
material words; plurals folded). The target is the first label mentioned; when the words before the first
relation name no label ("the sofa near the tv" with no "sofa" label) the first noun chunk is resolved by
sentence-embedding similarity instead. The first relation after the target whose following words name an
object gives the relation and its anchor; "in" followed by a room type is a room, not a relation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Optional, Sequence

from goat_core.errors import InvalidGoalError
from goat_core.matching.attributes import normalise_colour_name
from goat_core.matching.category import CategoryResolution, CategoryResolver, label_key, singular
from goat_core.matching.rooms import ROOM_SYNONYMS
from goat_core.vocabulary import MATERIALS, ROOM_TYPES


class Relation(str, Enum):
    """Spatial relation of the target to the anchor object."""

    ON = "on"
    UNDER = "under"
    NEAR = "near"
    IN = "in"
    ABOVE = "above"
    BELOW = "below"


# View-dependent phrases ("to the left of", "in front of", "behind") cannot be checked without the speaker's
# viewpoint, so they are read as "near".
_RELATION_PHRASES: Mapping[tuple[str, ...], Relation] = {
    ("on",): Relation.ON, ("on", "top", "of"): Relation.ON, ("atop",): Relation.ON, ("upon",): Relation.ON,
    ("onto",): Relation.ON, ("resting", "on"): Relation.ON,
    ("under",): Relation.UNDER, ("underneath",): Relation.UNDER, ("beneath",): Relation.UNDER,
    ("near",): Relation.NEAR, ("next", "to"): Relation.NEAR, ("beside",): Relation.NEAR,
    ("besides",): Relation.NEAR, ("by",): Relation.NEAR, ("close", "to"): Relation.NEAR,
    ("adjacent", "to"): Relation.NEAR, ("nearby",): Relation.NEAR, ("alongside",): Relation.NEAR,
    ("in", "front", "of"): Relation.NEAR, ("behind",): Relation.NEAR, ("across", "from"): Relation.NEAR,
    ("to", "the", "left", "of"): Relation.NEAR, ("to", "the", "right", "of"): Relation.NEAR,
    ("left", "of"): Relation.NEAR, ("right", "of"): Relation.NEAR, ("between",): Relation.NEAR,
    ("in",): Relation.IN, ("inside",): Relation.IN, ("within",): Relation.IN, ("inside", "of"): Relation.IN,
    ("above",): Relation.ABOVE, ("over",): Relation.ABOVE,
    ("below",): Relation.BELOW,
}

# Relation phrases that put the target where it can be out of sight: inside, under or behind the anchor. For
# these the anchor is also a place to look, so the matcher can offer it when the target itself is not seen
# (PASTURE's hidden objects, CoW: "remote control inside the bookshelf"). "below", "above", "on" and "near"
# leave the target in the open.
_HIDING_PHRASES = frozenset({
    ("in",), ("inside",), ("within",), ("inside", "of"), ("under",), ("underneath",), ("beneath",), ("behind",),
})

_MATERIAL_WORDS: Mapping[str, str] = {
    **{m: m for m in MATERIALS}, "wood": "wooden", "metallic": "metal", "steel": "metal", "iron": "metal",
    "cloth": "fabric", "porcelain": "ceramic",
}

# Words that never head a noun chunk: articles, pronouns, auxiliaries, linking verbs and size words.
_STOPWORDS = frozenset("""
a an the this that these those it its it's he she his her they their them my your our you i we me there here
is are was were be been being has have had do does can could will would should may might must
and or but nor so with without which who whom whose where when while what as of for to at from into
located placed positioned situated sitting standing hanging lying found seen look find go see sits stands
also just very quite some any one two three other another each every both all
small large big huge tiny tall short little long wide round square rectangular
""".split())

_SENTENCE_END = frozenset(".;:!?")


class _Kind(Enum):
    ROOM = "room"
    CATEGORY = "category"
    RELATION = "relation"
    COLOUR = "colour"
    MATERIAL = "material"
    BOUNDARY = "boundary"


@dataclass(frozen=True)
class _Span:
    kind: _Kind
    value: str
    start: int  # token index, inclusive
    end: int  # token index, exclusive


@dataclass(frozen=True)
class ObjectMention:
    """An object the description names, resolved to a perception label."""

    category: str  # vocabulary label
    phrase: str  # the words of the text that name it
    similarity: float  # 1.0 for a literal (plural-insensitive) mention, else embedding cosine
    colour: Optional[str] = None  # a name of goat_core.vocabulary.COLOURS
    material: Optional[str] = None  # a name of goat_core.vocabulary.MATERIALS (parsed, not yet observable)


@dataclass(frozen=True)
class ParsedDescription:
    """The constraints a description puts on its target."""

    text: str
    target: ObjectMention
    room: Optional[str] = None  # a name of goat_core.vocabulary.ROOM_TYPES
    relation: Optional[Relation] = None
    anchor: Optional[ObjectMention] = None  # the object of the relation; None when no relation was found
    hiding: bool = False  # the relation's words can hide the target in or behind the anchor ("inside", "under")


def _room_keys() -> dict[tuple[str, ...], str]:
    keys = {label_key(r): r for r in ROOM_TYPES}
    keys.update({label_key(s): r for s, r in ROOM_SYNONYMS.items()})
    return keys


class DescriptionParser:
    """Rule-based parser of object descriptions against one perception vocabulary."""

    def __init__(self, resolver: CategoryResolver, anchor_min_similarity: float) -> None:
        self.resolver = resolver
        self.anchor_min_similarity = anchor_min_similarity
        self._room_keys = _room_keys()
        self._max_phrase_words = max(len(k) for k in [*self._room_keys, *resolver.keys, *_RELATION_PHRASES])

    def parse(self, text: str) -> ParsedDescription:
        lowered = text.lower()
        matches = list(re.finditer(r"[a-z0-9]+|[.,;:!?]", lowered))
        tokens = [m.group() for m in matches]
        if not any(t[0].isalnum() for t in tokens):
            raise InvalidGoalError(f"description has no words: {text!r}")
        # Words of a hyphenated compound ("built-in", "walk-in") are never relation phrases.
        hyphenated = {i for i, m in enumerate(matches)
                      if lowered[max(m.start() - 1, 0)] == "-" or lowered[m.end():m.end() + 1] == "-"}
        spans = self._scan(tokens, hyphenated)
        target, target_span = self._target(tokens, spans)
        relation, anchor, hiding = self._relation(tokens, spans, target_span.end if target_span else 0)
        room = next((s.value for s in spans if s.kind is _Kind.ROOM), None)
        return ParsedDescription(text=text, target=target, room=room, relation=relation, anchor=anchor,
                                 hiding=hiding)

    def _longest_at(self, tokens: Sequence[str], keys: Sequence[str], hyphenated: set[int],
                    i: int) -> Optional[_Span]:
        """The longest room / label / relation phrase starting at token i (rooms win ties, then labels)."""
        for n in range(min(self._max_phrase_words, len(tokens) - i), 0, -1):
            words, stems = tuple(tokens[i:i + n]), tuple(keys[i:i + n])
            if stems in self._room_keys:
                return _Span(_Kind.ROOM, self._room_keys[stems], i, i + n)
            if stems in self.resolver.keys:
                return _Span(_Kind.CATEGORY, self.resolver.keys[stems], i, i + n)
            if words in _RELATION_PHRASES and hyphenated.isdisjoint(range(i, i + n)):
                return _Span(_Kind.RELATION, _RELATION_PHRASES[words].value, i, i + n)
        return None

    def _scan(self, tokens: Sequence[str], hyphenated: set[int]) -> list[_Span]:
        keys = [singular(t) for t in tokens]
        spans: list[_Span] = []
        i = 0
        while i < len(tokens):
            word = tokens[i]
            colour = normalise_colour_name(word)
            following = self._longest_at(tokens, keys, hyphenated, i + 1) if i + 1 < len(tokens) else None
            # A material or colour word right before a label modifies it ("glass table", "white cabinet")
            # even when the word is a label itself.
            modifies_next = following is not None and following.kind is _Kind.CATEGORY
            phrase = None if (modifies_next and (word in _MATERIAL_WORDS or colour)) else \
                self._longest_at(tokens, keys, hyphenated, i)
            if phrase is not None:
                spans.append(phrase)
                i = phrase.end
                continue
            if word in _SENTENCE_END:
                spans.append(_Span(_Kind.BOUNDARY, word, i, i + 1))
            elif colour is not None:
                spans.append(_Span(_Kind.COLOUR, colour, i, i + 1))
            elif word in _MATERIAL_WORDS:
                spans.append(_Span(_Kind.MATERIAL, _MATERIAL_WORDS[word], i, i + 1))
            i += 1
        return spans

    def _noun_chunk(self, tokens: Sequence[str], spans: Sequence[_Span], start: int, end: int) -> str:
        """The first run of content words in tokens[start:end] (no stopwords, descriptors or rooms)."""
        taken = {t for s in spans if s.kind is not _Kind.CATEGORY for t in range(s.start, s.end)}
        run: list[str] = []
        for i in range(start, end):
            content = tokens[i][0].isalnum() and tokens[i] not in _STOPWORDS and i not in taken
            if content:
                run.append(tokens[i])
            elif run:
                break
        return " ".join(run)

    def _target(self, tokens: Sequence[str], spans: Sequence[_Span]) -> tuple[ObjectMention, Optional[_Span]]:
        first_label = next((s for s in spans if s.kind is _Kind.CATEGORY), None)
        stop = next((s for s in spans if s.kind in (_Kind.RELATION, _Kind.BOUNDARY)
                     and not self._names_room(spans, s)), None)
        stop_at = stop.start if stop is not None else len(tokens)
        if first_label is not None and first_label.start < stop_at:
            return self._mention(tokens, spans, first_label, 0), first_label
        # The words before the first relation name something the vocabulary lacks: resolve them by meaning,
        # even weakly (the matcher will not be confident), rather than take the anchor for the target.
        chunk = self._noun_chunk(tokens, spans, 0, stop_at)
        if chunk:
            return self._fallback_mention(self.resolver.resolve(chunk), spans, 0, stop_at), None
        if first_label is not None:
            return self._mention(tokens, spans, first_label, 0), first_label
        chunk = self._noun_chunk(tokens, spans, 0, len(tokens)) or " ".join(tokens)
        return self._fallback_mention(self.resolver.resolve(chunk), spans, 0, len(tokens)), None

    @staticmethod
    def _names_room(spans: Sequence[_Span], relation: _Span) -> bool:
        """True for "in the kitchen": an "in" whose next span is a room type."""
        if relation.kind is not _Kind.RELATION or relation.value != Relation.IN.value:
            return False
        after = next((s for s in spans if s.start >= relation.end), None)
        return after is not None and after.kind is _Kind.ROOM

    def _relation(self, tokens: Sequence[str], spans: Sequence[_Span],
                  after: int) -> tuple[Optional[Relation], Optional[ObjectMention], bool]:
        """The first relation after the target that names an anchor, the anchor, and whether it hides."""
        for idx, span in enumerate(spans):
            if span.kind is not _Kind.RELATION or span.start < after or self._names_room(spans, span):
                continue
            end = next((s.start for s in spans[idx + 1:] if s.kind in (_Kind.RELATION, _Kind.BOUNDARY)),
                       len(tokens))
            hiding = tuple(tokens[span.start:span.end]) in _HIDING_PHRASES
            label = next((s for s in spans[idx + 1:] if s.kind is _Kind.CATEGORY and s.start < end), None)
            if label is not None:
                return Relation(span.value), self._mention(tokens, spans, label, span.end), hiding
            chunk = self._noun_chunk(tokens, spans, span.end, end)
            if chunk:
                resolution = self.resolver.resolve(chunk)
                if resolution.similarity >= self.anchor_min_similarity:
                    return Relation(span.value), self._fallback_mention(resolution, spans, span.end, end), hiding
        return None, None, False

    def _mention(self, tokens: Sequence[str], spans: Sequence[_Span], label: _Span,
                 segment_start: int) -> ObjectMention:
        """A literal label mention with the colour and material words that describe it."""
        before = [s for s in spans if segment_start <= s.start < label.start]
        # Descriptors between the label and the previous noun or relation belong to the label...
        cut = max((s.end for s in before if s.kind not in (_Kind.COLOUR, _Kind.MATERIAL)),
                  default=segment_start)
        before = [s for s in before if s.start >= cut]
        # ...else the first ones after it up to the next object, relation or sentence end ("bag with a black
        # colour").
        after: list[_Span] = []
        for s in spans:
            if s.start < label.end:
                continue
            if s.kind not in (_Kind.COLOUR, _Kind.MATERIAL):
                break
            after.append(s)
        return ObjectMention(category=label.value, phrase=" ".join(tokens[label.start:label.end]),
                             similarity=1.0, colour=_pick(before, after, _Kind.COLOUR),
                             material=_pick(before, after, _Kind.MATERIAL))

    @staticmethod
    def _fallback_mention(resolution: CategoryResolution, spans: Sequence[_Span], start: int,
                          end: int) -> ObjectMention:
        inside = [s for s in spans if start <= s.start < end]
        return ObjectMention(category=resolution.category, phrase=resolution.phrase,
                             similarity=resolution.similarity, colour=_pick(inside, [], _Kind.COLOUR),
                             material=_pick(inside, [], _Kind.MATERIAL))


def _pick(before: Sequence[_Span], after: Sequence[_Span], kind: _Kind) -> Optional[str]:
    """The descriptor of ``kind`` closest before the noun, else the first after it."""
    prior = [s.value for s in before if s.kind is kind]
    if prior:
        return prior[-1]
    return next((s.value for s in after if s.kind is kind), None)
