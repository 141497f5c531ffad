"""`goat-nav bench --suite langmap`: LangMap / HieraNav 5-goal sequences on procedural homes, end to end.

``--episodes N`` sequences (``goat_suites.langmap.generator``), each in its own home drawn from ``--seed`` like
the GOAT episodes, alternate the concise and the detailed description style. Every sequence runs as one GOAT
episode with lifelong memory: scene-level goals are category goals, the other levels description goals given
the LangMap template text. Printed: SR and SPL per level (scene, room, region, instance) and overall, per style,
and SeqSR@1-5, the share of sequences whose first n goals all succeed (``goat_suites.common.suite_metrics``).

Results (``--out``): the records of ``goat-nav bench`` with their LangMap ``level``; ``meta["langmap"]`` holds
per subtask its sequence id, level, style and instruction, and the tables.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Optional, Sequence

from goat_core.errors import EpisodeFormatError
from goat_suites.common.episodes import GoatDataset, GoatEpisode
from goat_suites.common.metrics import group_by
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
from goat_suites.common.suite_metrics import (
    LANGMAP_LEVELS,
    LevelRecord,
    langmap_by_level,
    langmap_overall,
    seq_sr_table,
)
from goat_suites.langmap.generator import EXTRA_STYLE, LangMapGenConfig, generate_langmap_dataset
from goat_suites.langmap.loader import EXTRA_LEVELS, EXTRA_TEXTS
from goat_suites.langmap.parts import LANGMAP

SEQ_SR_MAX_N = 5  # LangMap reports SeqSR@1..5 of its 5-goal sequences


def task_info(episode: GoatEpisode, index: int) -> dict[str, Any]:
    """The LangMap fields of subtask ``index``: level, style, instruction (EpisodeFormatError if missing)."""
    level = (episode.extra.get(EXTRA_LEVELS) or {}).get(str(index))
    if level is None:
        raise EpisodeFormatError(f"episode {episode.episode_id}: subtask {index} has no LangMap level "
                                 f"(extra field {EXTRA_LEVELS!r}); is this a LangMap episode?")
    text = (episode.extra.get(EXTRA_TEXTS) or {}).get(str(index), "")
    return {"episode_id": episode.episode_id, "scene_id": episode.scene_id, "index": index,
            "sequence_id": episode.episode_id, "level": level, "style": episode.extra.get(EXTRA_STYLE),
            "instruction": f"Find the {text}"}


def level_records(records: Sequence[SubtaskRecord]) -> list[LevelRecord]:
    """The suite_metrics records of LangMap subgoals: each episode is one sequence, its index the position."""
    out = []
    for r in records:
        if r.level is None:
            raise EpisodeFormatError(f"episode {r.episode_id}: subtask {r.index} has no LangMap level")
        out.append(LevelRecord(level=r.level, success=r.success, spl=r.spl,
                               sequence_id=f"{r.scene_id}/{r.episode_id}", index=r.index))
    return out


@dataclasses.dataclass(frozen=True)
class LangMapTables:
    by_level: dict[str, GroupStats]
    overall: GroupStats
    by_style: dict[str, GroupStats]
    seq_sr: dict[int, float]
    num_sequences: int

    def to_json(self) -> dict[str, Any]:
        return {"by_level": {k: v.to_json() for k, v in self.by_level.items()}, "overall": self.overall.to_json(),
                "by_style": {k: v.to_json() for k, v in self.by_style.items()},
                "seq_sr": {str(n): v for n, v in self.seq_sr.items()}, "num_sequences": self.num_sequences}


def langmap_tables(records: Sequence[SubtaskRecord], styles: Sequence[str]) -> LangMapTables:
    """LangMap's tables of a run; ``styles[i]`` is the description style of ``records[i]``."""
    levels = level_records(records)
    by_style = group_by(list(zip(styles, levels, strict=True)), lambda pair: pair[0])
    return LangMapTables(
        by_level=langmap_by_level(levels), overall=langmap_overall(levels),
        by_style={style: langmap_overall(lv for _, lv in pairs) for style, pairs in sorted(by_style.items())},
        seq_sr=seq_sr_table(levels, SEQ_SR_MAX_N), num_sequences=len({lv.sequence_id for lv in levels}))


def format_tables(tables: LangMapTables) -> str:
    lines = ["LangMap (procedural homes): SR / SPL per goal level"]
    lines += stats_rows(tables.by_level, LANGMAP_LEVELS, tables.overall)
    lines += [f"{'style ' + style:<24}{g.success_rate:>7.3f}{g.spl:>7.3f}{g.count:>6d}"
              for style, g in tables.by_style.items()]
    lines.append(f"SeqSR over {tables.num_sequences} sequences: "
                 + "  ".join(f"@{n} {v:.3f}" for n, v in tables.seq_sr.items()))
    return "\n".join(lines)


def _generate(args: argparse.Namespace) -> GoatDataset:
    bar = generation_bar(args, "generating sequences", "ep")

    def advance(_episode: GoatEpisode) -> None:
        bar.update(1)

    dataset = generate_langmap_dataset(args.episodes, args.seed, home_config_from_args(args), LangMapGenConfig(),
                                       on_episode=advance)
    bar.close()
    return dataset


def run_suite(args: argparse.Namespace) -> int:
    return start_suite(args, LANGMAP, _run, max_units=args.episodes)


def _run(args: argparse.Namespace, run_config: RunConfig, pool: WorkerPool, started: float) -> int:
    if args.episodes_file is not None:
        episodes, source = load_episodes(args), str(args.episodes_file)
    else:
        episodes, source = _generate(args).episodes, f"procedural langmap seed={args.seed}"
    infos: dict[tuple[Optional[str], str, int], dict[str, Any]] = {
        (e.scene_id, e.episode_id, i): task_info(e, i) for e in episodes for i in range(len(e.tasks))}
    meta = base_meta(args, run_config, source)

    def info(record: SubtaskRecord) -> dict[str, Any]:
        return infos[(record.scene_id, record.episode_id, record.index)]

    def annotate(_episode: GoatEpisode, record: SubtaskRecord) -> SubtaskRecord:
        return dataclasses.replace(record, level=info(record)["level"])

    def suite_meta(records: Sequence[SubtaskRecord]) -> dict[str, Any]:
        tables = langmap_tables(records, [str(info(r)["style"]) for r in records])
        return {"subtasks": [info(r) for r in records], "tables": tables.to_json(),
                "generator": dataclasses.asdict(LangMapGenConfig())}

    run = run_episodes(args, episodes, pool, meta, LANGMAP, annotate, suite_meta)
    tables = langmap_tables(run.records, [str(info(r)["style"]) for r in run.records])
    return finish(args, run, meta, format_tables(tables), started, f"{len(episodes)} sequences",
                  LANGMAP)
