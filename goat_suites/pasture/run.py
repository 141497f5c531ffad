"""`goat-nav bench --suite pasture`: CoW's PASTURE splits on procedural homes, end to end.

``--episodes N`` homes (the homes of ``--suite goat --seed S`` with PASTURE's hidden and uncommon objects added,
``goat_suites.pasture.generator``); each gives one target per split, and each target is a single-goal
episode with fresh memory: uncommon objects as category goals (their names are added to the ground-truth
perception's labels, as an open-vocabulary detector would know them), every other split as a description
goal. A split a home cannot offer is left out there. Printed: SR and SPL per split in PASTURE order
(``goat_suites.common.suite_metrics.pasture_by_category``) and over all episodes.

Results (``--out``): the records of ``goat-nav bench``; ``meta["pasture"]`` holds per episode its split, the
words given to the agent and, for hidden targets, the share of the hiding furniture's view points that see it.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Optional, Sequence

from goat_core.errors import EpisodeFormatError
from goat_suites.common.episodes import GoatDataset, GoatEpisode
from goat_suites.common.parallel import WorkerPool
from goat_suites.common.results import GroupStats, SubtaskRecord
from goat_suites.common.run_args import home_config_from_args
from goat_suites.common.runner import RunConfig
from goat_suites.common.suite import (
    base_meta,
    finish,
    generation_bar,
    load_episodes,
    run_episodes,
    start_suite,
    stats_rows,
)
from goat_suites.common.suite_metrics import PASTURE_CATEGORIES, PastureRecord, pasture_by_category
from goat_suites.pasture.generator import (
    EXTRA_CATEGORY,
    EXTRA_TEXT,
    EXTRA_VISIBLE_FRACTION,
    PastureGenConfig,
    generate_pasture_dataset,
)
from goat_suites.pasture.parts import PASTURE
from sim_bridge.embedded.catalogue import UNCOMMON_CATALOGUE
from sim_bridge.embedded.furniture_categories import UNCOMMON_MODEL_CATEGORIES


def episode_info(episode: GoatEpisode) -> dict[str, Any]:
    """The PASTURE fields of a single-goal episode (EpisodeFormatError when it is not one)."""
    split = episode.extra.get(EXTRA_CATEGORY)
    if split not in PASTURE_CATEGORIES or len(episode.tasks) != 1:
        raise EpisodeFormatError(f"episode {episode.episode_id}: not a single-goal PASTURE episode (extra field "
                                 f"{EXTRA_CATEGORY!r} is {split!r}, {len(episode.tasks)} tasks)")
    return {"episode_id": episode.episode_id, "scene_id": episode.scene_id, "category": split,
            "text": episode.extra.get(EXTRA_TEXT), "target_id": episode.tasks[0].object_id,
            "visible_fraction": episode.extra.get(EXTRA_VISIBLE_FRACTION)}


def pasture_records(records: Sequence[SubtaskRecord], splits: Sequence[str]) -> list[PastureRecord]:
    """suite_metrics records; ``splits[i]`` is the PASTURE split of ``records[i]``."""
    return [PastureRecord(episode_id=f"{r.scene_id}/{r.episode_id}", category=split, success=r.success, spl=r.spl)
            for r, split in zip(records, splits, strict=True)]


def pasture_tables(records: Sequence[PastureRecord]) -> tuple[dict[str, GroupStats], GroupStats]:
    """SR / SPL per split and over every episode."""
    by_split = pasture_by_category(records)
    count = len(records)
    overall = GroupStats(success_rate=sum(r.success for r in records) / count if count else 0.0,
                         spl=sum(r.spl for r in records) / count if count else 0.0, count=count)
    return by_split, overall


def format_table(by_split: dict[str, GroupStats], overall: GroupStats) -> str:
    lines = ["PASTURE (procedural homes): SR / SPL per split"]
    lines += stats_rows(by_split, PASTURE_CATEGORIES, overall)
    return "\n".join(lines)


def _generate(args: argparse.Namespace) -> GoatDataset:
    bar = generation_bar(args, "generating homes", "home")

    def advance(_episodes: Sequence[GoatEpisode]) -> None:
        bar.update(1)

    dataset = generate_pasture_dataset(args.episodes, args.seed, args.num_rooms, PastureGenConfig(),
                                       on_home=advance, furniture=home_config_from_args(args))
    bar.close()
    return dataset


def run_suite(args: argparse.Namespace) -> int:
    return start_suite(args, PASTURE, _run,
                       extra_labels=[spec.name for spec in UNCOMMON_CATALOGUE] + sorted(UNCOMMON_MODEL_CATEGORIES))


def _run(args: argparse.Namespace, run_config: RunConfig, pool: WorkerPool, started: float) -> int:
    if args.episodes_file is not None:
        episodes, source, what = load_episodes(args), str(args.episodes_file), ""
    else:
        episodes, source = _generate(args).episodes, f"procedural pasture seed={args.seed}"
        what = f" in {args.episodes} homes"
    infos: dict[tuple[Optional[str], str], dict[str, Any]] = {
        (e.scene_id, e.episode_id): episode_info(e) for e in episodes}
    meta = base_meta(args, run_config, source)

    def split(record: SubtaskRecord) -> str:
        return str(infos[(record.scene_id, record.episode_id)]["category"])

    def suite_meta(records: Sequence[SubtaskRecord]) -> dict[str, Any]:
        by_split, overall = pasture_tables(pasture_records(records, [split(r) for r in records]))
        return {"episodes": [infos[(r.scene_id, r.episode_id)] for r in records],
                "by_category": {k: v.to_json() for k, v in by_split.items()}, "overall": overall.to_json(),
                "generator": dataclasses.asdict(PastureGenConfig())}

    run = run_episodes(args, episodes, pool, meta, PASTURE, suite_meta=suite_meta)
    by_split, overall = pasture_tables(pasture_records(run.records, [split(r) for r in run.records]))
    return finish(args, run, meta, format_table(by_split, overall), started,
                  f"{len(episodes)} episodes{what}", PASTURE)
