"""Build goat_core/perception/data/confusions.json: the detector error model's look-alike table.

Run once after the simulator catalogue changes: ``python scripts/build_confusion_table.py``. The names of the
catalogue's categories are embedded with the shipped all-MiniLM-L6-v2 (goat_core.matching.embeddings); each
category's typical size is the middle of its size range (see goat_core.perception.confusions).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from goat_core.matching.embeddings import SentenceEmbedder
from goat_core.perception.confusions import LookAlikeRule, build_confusion_table
from sim_bridge.embedded.catalogue import CATALOGUE

OUT = Path(__file__).resolve().parents[1] / "ros_ws/src/goat_core/goat_core/perception/data/confusions.json"


def main() -> None:
    names = [spec.name for spec in CATALOGUE]
    sizes = [tuple((lo + hi) / 2 for lo, hi in zip(spec.size_min_m, spec.size_max_m, strict=True))
             for spec in CATALOGUE]
    rule = LookAlikeRule()
    table = build_confusion_table(names, SentenceEmbedder().encode(names), sizes, rule)
    doc = {"built_by": "scripts/build_confusion_table.py", "embedder": "all-MiniLM-L6-v2 (int8 ONNX)",
           "rule": dataclasses.asdict(rule), "table": table}
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(table)} of {len(names)} categories have look-alikes")


if __name__ == "__main__":
    main()
