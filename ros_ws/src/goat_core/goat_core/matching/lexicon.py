"""Nouns of WordNet: which detector label a goal word names when sentence embeddings cannot tell.

Sentence embeddings place rare synonyms near words that look or sound alike ("settee" closer to "wardrobe" than to
"couch", "recliner" closer to "chair" than to "armchair"). WordNet (Princeton University, version 3.0; Miller,
CACM 1995) lists nouns that mean the same thing as one synset and links each synset to the more general one it is a
kind of (its hypernyms). Debian's ``wordnet-base`` package installs the database files in ``/usr/share/wordnet``;
this module reads the two it needs, ``index.noun`` (lemma -> synsets, most frequent sense first) and ``data.noun``
(a synset's lemmas and pointers, one line per synset at the byte offset that names it). No model is downloaded.

``WordNetNouns.links`` answers, for a phrase and a set of labels, which labels are the phrase's own synonyms
(distance 0) or the kinds it belongs to (distance 1, 2, ... hypernym steps), over the phrase's first few senses.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from goat_core.errors import GoatError

DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
WORDNET_DIR_ENV = "GOAT_WORDNET_DIR"
_LOG = logging.getLogger(__name__)
_HYPERNYM_POINTERS = frozenset({"@", "@i"})  # hypernym, instance hypernym


@dataclass(frozen=True)
class Synset:
    """One noun synset: its lemmas (lower case, words joined by '_') and the offsets of its hypernyms."""

    offset: int
    lemmas: tuple[str, ...]
    hypernyms: tuple[int, ...]


@dataclass(frozen=True)
class LexicalLink:
    """A label the phrase names: ``distance`` hypernym steps up from the phrase's sense number ``sense`` (0 = most
    frequent sense); distance 0 is a synonym."""

    label: str
    distance: int
    sense: int


def lemma_of(phrase: str) -> str:
    """WordNet's spelling of a phrase: lower case, words joined by underscores ("Tea Light" -> "tea_light")."""
    return "_".join(phrase.lower().replace("-", " ").split())


class WordNetNouns:
    """Read-only access to the noun part of a WordNet 3.0 database directory."""

    def __init__(self, root: Path) -> None:
        root = Path(root)
        index, data = root / "index.noun", root / "data.noun"
        for path in (index, data):
            if not path.is_file():
                raise GoatError(f"WordNet database file {path} not found: install Debian's wordnet-base package "
                                f"(apt-get install wordnet-base) or point the lexicon at a WordNet 3.0 'dict' folder")
        self.root = root
        self._senses: dict[str, tuple[int, ...]] = {}
        with index.open("r", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" "):  # the licence header
                    continue
                self._senses[line.split(" ", 1)[0]] = _index_offsets(line, index)
        self._data_path = data
        self._cache: dict[int, Synset] = {}

    def senses(self, phrase: str) -> tuple[int, ...]:
        """Synset offsets of a noun phrase, most frequent sense first; () when WordNet lacks it."""
        return self._senses.get(lemma_of(phrase), ())

    def synset(self, offset: int) -> Synset:
        """The synset at a byte offset of data.noun."""
        cached = self._cache.get(offset)
        if cached is not None:
            return cached
        with self._data_path.open("rb") as f:
            f.seek(offset)
            line = f.readline().decode("utf-8", errors="replace")
        synset = _parse_synset(line, offset, self._data_path)
        self._cache[offset] = synset
        return synset

    def links(self, phrase: str, labels: Iterable[str], max_senses: int = 3, max_up: int = 2) -> list[LexicalLink]:
        """Labels that are the phrase's synonyms or the kinds it is (up to ``max_up`` hypernym steps) in one of its
        first ``max_senses`` senses; per label the closest link, closest (then most frequent sense) first."""
        by_lemma: dict[str, str] = {}
        for name in labels:
            by_lemma.setdefault(lemma_of(name), name)
        best: dict[str, LexicalLink] = {}
        for sense, offset in enumerate(self.senses(phrase)[:max_senses]):
            level, seen = [offset], {offset}
            for distance in range(max_up + 1):
                nxt: list[int] = []
                for off in level:
                    synset = self.synset(off)
                    for lemma in synset.lemmas:
                        label = by_lemma.get(lemma)
                        if label is None:
                            continue
                        old = best.get(label)
                        if old is None or (distance, sense) < (old.distance, old.sense):
                            best[label] = LexicalLink(label, distance, sense)
                    nxt.extend(h for h in synset.hypernyms if h not in seen)
                    seen.update(synset.hypernyms)
                level = nxt
        return sorted(best.values(), key=lambda k: (k.distance, k.sense, k.label))


def _index_offsets(line: str, path: Path) -> tuple[int, ...]:
    """The synset offsets of one index.noun line: lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt
    offset..."""
    parts = line.split()
    try:
        synset_cnt, p_cnt = int(parts[2]), int(parts[3])
        first = 4 + p_cnt + 2
        offsets = tuple(int(p) for p in parts[first:first + synset_cnt])
    except (IndexError, ValueError) as exc:
        raise GoatError(f"malformed line in {path}: {line[:80]!r}") from exc
    if len(offsets) != synset_cnt:
        raise GoatError(f"malformed line in {path}: {line[:80]!r} lists fewer synsets than it counts")
    return offsets


def _parse_synset(line: str, offset: int, path: Path) -> Synset:
    """One data.noun line: offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [ptr off pos st]... | gloss"""
    parts = line.split(" | ", 1)[0].split()
    try:
        if int(parts[0]) != offset:
            raise ValueError("offset mismatch")
        w_cnt = int(parts[3], 16)
        lemmas = tuple(_plain_lemma(parts[4 + 2 * k]) for k in range(w_cnt))
        p_at = 4 + 2 * w_cnt
        p_cnt = int(parts[p_at])
        hypernyms = tuple(int(parts[p_at + 2 + 4 * k]) for k in range(p_cnt)
                          if parts[p_at + 1 + 4 * k] in _HYPERNYM_POINTERS and parts[p_at + 3 + 4 * k] == "n")
    except (IndexError, ValueError) as exc:
        raise GoatError(f"no noun synset at byte offset {offset} of {path}: {line[:80]!r}") from exc
    return Synset(offset, lemmas, hypernyms)


def _plain_lemma(word: str) -> str:
    """A data.noun word without its syntactic marker ("armchair", "sofa(a)" -> "sofa"), lower case."""
    return word.split("(", 1)[0].lower()


@functools.lru_cache(maxsize=4)
def load_wordnet(root: Path = DEFAULT_WORDNET_DIR) -> WordNetNouns:
    """The WordNet nouns under ``root``, read once per process (index.noun is ~5 MB)."""
    return WordNetNouns(root)


def default_lexicon() -> Optional[WordNetNouns]:
    """The WordNet nouns goal phrases are resolved with: from ``$GOAT_WORDNET_DIR`` when set (set it empty to
    resolve with sentence embeddings only), else from Debian's ``/usr/share/wordnet``. When that default folder is
    missing, a warning says so once and None is returned; a folder the user named that is missing or malformed is
    an error."""
    named = os.environ.get(WORDNET_DIR_ENV)
    if named is not None:
        return load_wordnet(Path(named)) if named.strip() else None
    if not (DEFAULT_WORDNET_DIR / "index.noun").is_file():
        _warn_missing_once()
        return None
    return load_wordnet(DEFAULT_WORDNET_DIR)


def lexicon_in_use() -> Optional[str]:
    """What goal phrases are resolved with, for a results file's meta: the WordNet folder, or None (embeddings
    alone)."""
    lexicon = default_lexicon()
    return None if lexicon is None else str(lexicon.root)


@functools.lru_cache(maxsize=1)
def _warn_missing_once() -> None:
    _LOG.warning("WordNet not found in %s (Debian package wordnet-base): goal words are resolved to detector labels "
                 "by sentence embeddings alone, which miss rare synonyms; install it or set %s",
                 DEFAULT_WORDNET_DIR, WORDNET_DIR_ENV)
