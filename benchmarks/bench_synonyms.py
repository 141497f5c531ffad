"""How goal words resolve to detector labels: sentence embeddings alone vs with WordNet.

The words are the synonyms the embedded simulator's episode generator may name a category goal with (its
catalogue); the labels are the ground-truth label set. The agent never reads the catalogue's synonyms; this script
grades its resolver against them.

    python benchmarks/bench_synonyms.py [--all]

prints the words either resolver gets wrong (``--all``: every word), then how many each resolves right and the
time per resolution.
"""

from __future__ import annotations

import argparse
import time

from goat_core.matching.category import CategoryResolver
from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.matching.lexicon import default_lexicon
from goat_suites.goat.generator import usable_synonyms
from sim_bridge.embedded.catalogue import CATALOGUE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="print every word, not only the ones resolved wrong")
    args = parser.parse_args()
    lexicon = default_lexicon()
    if lexicon is None:
        raise SystemExit("WordNet not found: install Debian's wordnet-base or set GOAT_WORDNET_DIR")
    labels = [c.name for c in CATALOGUE]
    embedder = SentenceEmbedder()
    plain, lexical = CategoryResolver(embedder, labels), CategoryResolver(embedder, labels, lexicon)
    words = [(w, c.name) for c in CATALOGUE for w in usable_synonyms(c.name)]
    right = {"embeddings": 0, "wordnet": 0}
    seconds = {"embeddings": 0.0, "wordnet": 0.0}
    print(f"{'word':24} {'label':18} {'embeddings':28} {'with WordNet':28}")
    for word, label in words:
        row = []
        for name, resolver in (("embeddings", plain), ("wordnet", lexical)):
            t0 = time.perf_counter()
            r = resolver.resolve(word)
            seconds[name] += time.perf_counter() - t0
            right[name] += r.category == label
            how = f"{r.similarity:.2f}" + (f" wn{r.wordnet_steps}" if r.wordnet_steps is not None else "")
            row.append(("  " if r.category == label else "x ") + f"{r.category} ({how})")
        if args.all or any(cell.startswith("x") for cell in row):
            print(f"{word:24} {label:18} {row[0]:28} {row[1]:28}")
    n = len(words)
    print(f"\n{n} words, {len(labels)} labels, WordNet at {lexicon.root}")
    for name in ("embeddings", "wordnet"):
        print(f"{name:11}: {right[name]:3d} right ({right[name] / n:.0%}), {1e3 * seconds[name] / n:.2f} ms per word")


if __name__ == "__main__":
    main()
