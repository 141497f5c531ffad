"""``goat-nav compare sim.json real.json``: the same goals in simulation and on the robot, side by side.

Both files are results JSONs (``goat_suites.common.results``; a robot run writes one through the evaluator, with
operator-confirmed success). Subtasks are paired by (scene, episode, subtask index). The command prints a
per-goal table (with the failure class of each failed goal), a per-modality table (SR and SPL in each run, and how
often the two runs agree on success) and the failure classes of both runs side by side, and writes bar charts of
SR and SPL per modality as SVG and PNG (OpenCV) into ``--out-dir``.
"""

from __future__ import annotations

import argparse
import html
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import cv2
import numpy as np

from goat_core.errors import GoatError
from goat_suites.common.failures import FAILURE_CLASSES
from goat_suites.common.metrics import group_by, mean_over
from goat_suites.common.realism import realism_line
from goat_suites.common.results import ResultsFile, SubtaskRecord, read_results_json

Key = tuple[Optional[str], str, int]  # (scene_id, episode_id, subtask index)


@dataclass(frozen=True)
class GoalPair:
    key: Key
    modality: str
    sim: Optional[SubtaskRecord]
    real: Optional[SubtaskRecord]

    @property
    def agree(self) -> Optional[bool]:
        """Both runs succeeded or both failed; None when one run lacks the goal."""
        if self.sim is None or self.real is None:
            return None
        return self.sim.success == self.real.success


@dataclass(frozen=True)
class ModalityRow:
    modality: str
    count: int  # goals present in both runs
    sim_sr: float
    sim_spl: float
    real_sr: float
    real_spl: float
    agreement: float  # fraction of paired goals with the same success


@dataclass(frozen=True)
class Comparison:
    pairs: tuple[GoalPair, ...]
    by_modality: tuple[ModalityRow, ...]  # the last row is "all"
    # (class, failed subtasks of that class in the sim run, in the real run), for every class; over all records
    failures: tuple[tuple[str, int, int], ...] = ()


def _key(r: SubtaskRecord) -> Key:
    return (r.scene_id, r.episode_id, r.index)


def compare(sim: ResultsFile, real: ResultsFile) -> Comparison:
    """Pair the subtasks of two runs and summarise the goals both ran."""
    sim_by = {_key(r): r for r in sim.records}
    real_by = {_key(r): r for r in real.records}
    keys = list(sim_by) + [k for k in real_by if k not in sim_by]
    pairs = []
    for k in keys:
        s, r = sim_by.get(k), real_by.get(k)
        if s is not None and r is not None and s.modality != r.modality:
            raise GoatError(f"goal {k} is a {s.modality.value} goal in the sim run but {r.modality.value} in the "
                            "real run: the two runs did not replay the same episodes")
        modality = (s or r).modality.value  # type: ignore[union-attr]
        pairs.append(GoalPair(key=k, modality=modality, sim=s, real=r))
    paired = [p for p in pairs if p.sim is not None and p.real is not None]
    if not paired:
        raise GoatError("the two results files have no goal in common (scene, episode and subtask index differ)")
    groups = group_by(paired, lambda p: p.modality)
    rows = [_row(name, group) for name, group in groups.items()] + [_row("all", paired)]
    classes = list(FAILURE_CLASSES)
    if sim.summary.unclassified_failures or real.summary.unclassified_failures:
        classes.append("unclassified")

    def count(run: ResultsFile, name: str) -> int:
        if name == "unclassified":
            return run.summary.unclassified_failures
        return run.summary.failures.get(name, 0)

    failures = tuple((name, count(sim, name), count(real, name)) for name in classes)
    return Comparison(pairs=tuple(pairs), by_modality=tuple(rows), failures=failures)


def _row(name: str, pairs: Sequence[GoalPair]) -> ModalityRow:
    sims = [p.sim for p in pairs if p.sim is not None]
    reals = [p.real for p in pairs if p.real is not None]
    return ModalityRow(modality=name, count=len(pairs),
                       sim_sr=mean_over(sims, lambda r: float(r.success)), sim_spl=mean_over(sims, lambda r: r.spl),
                       real_sr=mean_over(reals, lambda r: float(r.success)), real_spl=mean_over(reals, lambda r: r.spl),
                       agreement=mean_over(pairs, lambda p: float(bool(p.agree))))


# -------------------------------------------------------------------------------------------- tables


def _cell(r: Optional[SubtaskRecord]) -> str:
    if r is None:
        return f"{'-':>7} {'-':>5} {'-':>5} {'':<14}"
    return f"{'yes' if r.success else 'no':>7} {r.spl:5.2f} {r.num_actions:5d} {r.failure or '':<14}"


def format_tables(c: Comparison) -> str:
    lines = [f"{'episode':<24} {'#':>2} {'modality':<12} {'sim ok':>7} {'spl':>5} {'acts':>5} {'failure':<14} | "
             f"{'real ok':>7} {'spl':>5} {'acts':>5} {'failure':<14}  agree"]
    for p in c.pairs:
        scene, episode, index = p.key
        name = f"{scene}/{episode}" if scene else episode
        agree = "-" if p.agree is None else ("yes" if p.agree else "NO")
        lines.append(f"{name[-24:]:<24} {index:>2} {p.modality:<12} {_cell(p.sim)} | {_cell(p.real)}  {agree}")
    lines += ["", f"{'modality':<12} {'n':>4} {'sim SR':>7} {'sim SPL':>8} {'real SR':>8} {'real SPL':>9} "
                  f"{'agree':>6}"]
    for row in c.by_modality:
        lines.append(f"{row.modality:<12} {row.count:>4} {row.sim_sr:7.3f} {row.sim_spl:8.3f} {row.real_sr:8.3f} "
                     f"{row.real_spl:9.3f} {row.agreement:6.2f}")
    if c.failures:
        lines += ["", f"{'failure':<16} {'sim':>5} {'real':>5}"]
        lines += [f"{name:<16} {n_sim:>5} {n_real:>5}" for name, n_sim, n_real in c.failures]
    missing = [p for p in c.pairs if p.agree is None]
    if missing:
        lines.append(f"\n{len(missing)} goal(s) ran in only one of the two runs (not in the modality table)")
    return "\n".join(lines)


# -------------------------------------------------------------------------------------------- plots

SIM_BGR, REAL_BGR = (200, 120, 40), (40, 120, 220)  # blue-ish sim, orange-ish real (OpenCV is BGR)


def _hex(bgr: tuple[int, int, int]) -> str:
    b, g, r = bgr
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass(frozen=True)
class _Bar:
    x: int
    y: int
    w: int
    h: int
    bgr: tuple[int, int, int]


def _layout(rows: Sequence[ModalityRow], metric: str, width: int, height: int
            ) -> tuple[list[_Bar], list[tuple[int, str]], int, int]:
    """Bars (sim and real per modality), group labels (x centre, text), the plot's top and bottom y."""
    top, bottom, left = 40, height - 40, 50
    group_w = (width - left - 20) // max(1, len(rows))
    bar_w = max(4, group_w // 3)
    bars, labels = [], []
    for i, row in enumerate(rows):
        x0 = left + i * group_w + (group_w - 2 * bar_w) // 2
        for j, (value, bgr) in enumerate(((getattr(row, f"sim_{metric}"), SIM_BGR),
                                          (getattr(row, f"real_{metric}"), REAL_BGR))):
            h = int(round(float(np.clip(value, 0.0, 1.0)) * (bottom - top)))
            bars.append(_Bar(x0 + j * bar_w, bottom - h, bar_w - 2, h, bgr))
        labels.append((left + i * group_w + group_w // 2, f"{row.modality} (n={row.count})"))
    return bars, labels, top, bottom


def chart_svg(rows: Sequence[ModalityRow], metric: str, width: int = 640, height: int = 320) -> str:
    bars, labels, top, bottom = _layout(rows, metric, width, height)
    title = f"{metric.upper()} per modality: sim (blue) vs real (orange)"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
             f'<text x="{width // 2}" y="20" text-anchor="middle" font-size="14">{html.escape(title)}</text>',
             f'<line x1="50" y1="{bottom}" x2="{width - 20}" y2="{bottom}" stroke="black"/>',
             f'<text x="45" y="{top + 4}" text-anchor="end">1.0</text>',
             f'<text x="45" y="{bottom + 4}" text-anchor="end">0.0</text>']
    parts += [f'<rect x="{b.x}" y="{b.y}" width="{b.w}" height="{b.h}" fill="{_hex(b.bgr)}"/>' for b in bars]
    parts += [f'<text x="{x}" y="{bottom + 18}" text-anchor="middle">{html.escape(t)}</text>' for x, t in labels]
    return "\n".join(parts) + "\n</svg>\n"


def chart_png(rows: Sequence[ModalityRow], metric: str, width: int = 640, height: int = 320) -> np.ndarray:
    bars, labels, top, bottom = _layout(rows, metric, width, height)
    img = np.full((height, width, 3), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(img, f"{metric.upper()} per modality: sim (blue) vs real (orange)", (60, 22), font, 0.5, (0, 0, 0), 1,
                cv2.LINE_AA)
    cv2.line(img, (50, bottom), (width - 20, bottom), (0, 0, 0), 1)
    cv2.putText(img, "1.0", (18, top + 4), font, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(img, "0.0", (18, bottom + 4), font, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    for b in bars:
        if b.h > 0:
            cv2.rectangle(img, (b.x, b.y), (b.x + b.w, b.y + b.h), b.bgr, thickness=-1)
    for x, text in labels:
        (tw, _), _ = cv2.getTextSize(text, font, 0.4, 1)
        cv2.putText(img, text, (x - tw // 2, bottom + 18), font, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    return img


def write_plots(c: Comparison, out_dir: Path) -> list[Path]:
    """``sr_by_modality`` and ``spl_by_modality`` as .svg and .png in ``out_dir``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for metric in ("sr", "spl"):
        svg = out_dir / f"{metric}_by_modality.svg"
        svg.write_text(chart_svg(c.by_modality, metric), encoding="utf-8")
        png = out_dir / f"{metric}_by_modality.png"
        if not cv2.imwrite(str(png), chart_png(c.by_modality, metric)):
            raise GoatError(f"could not write {png}")
        written += [svg, png]
    return written


def run_compare(args: argparse.Namespace) -> int:
    """The CLI command: print the tables, write the plots."""
    sim, real = read_results_json(args.sim), read_results_json(args.real)
    comparison = compare(sim, real)
    # Each run's realism (goat_suites.common.realism): an ideal simulator run beside a robot run compares more than the
    # agent.
    print(f"sim:  {args.sim} (realism: {realism_line(sim.meta)})\nreal: {args.real} (realism: "
          f"{realism_line(real.meta)})\n")
    print(format_tables(comparison))
    if args.out_dir is not None:
        for path in write_plots(comparison, Path(args.out_dir)):
            print(f"wrote {path}")
    return 0
