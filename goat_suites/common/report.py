"""A self-contained HTML report of a benchmark run: metric tables, charts and a top-down map per episode.

The page of every suite that replays GoatEpisodes: GOAT (SR / SPL by modality and subtask index), LangMap (also by
level, by description style and SeqSR@n: goat_suites.langmap.report) and PASTURE (also by split:
goat_suites.pasture.report), each handing in its own charts and tables through its parts (goat_suites.common.parts).
FindingDory's results file is its own, and so is its page
(goat_suites.findingdory.report). The tables, charts and maps are goat_suites.common.report_charts; the maps are
drawn from the stored trajectories (goat_suites.common.trajectories), so ``goat-nav report results.json``
(goat_nav.report_cmd) and ``goat-nav bench --report`` write byte-identical pages for one run.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from goat_suites.common.home_stats import describe_homes
from goat_suites.common.outputs import partial_run_note
from goat_suites.common.parts import EPISODE_SCHEMA, SuiteParts
from goat_suites.common.realism import realism_line
from goat_suites.common.report_charts import (
    _bar_chart,
    _line_chart,
    _Markup,
    _png_data_uri,
    _stats_table,
    _table,
    render_topdown,
)
from goat_suites.common.results import (
    SubtaskRecord,
    Summary,
    atomic_write_bytes,
)
from goat_suites.common.runner import Trajectory
from goat_suites.common.trajectories import trajectories_from_json, trajectories_to_json

_STYLE = """body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}
th{background:#f0f0f0}img.map{max-width:100%;border:1px solid #ccc;display:block;margin:0.5em 0}
section.episode{margin:2em 0;border-top:1px solid #ccc}figure.chart{display:inline-block;margin:0.5em 1em 0.5em 0}
figcaption{font-size:0.9em;margin-bottom:0.3em}p.note{color:#666}
div.goal-views{display:flex;flex-wrap:wrap;gap:0.5em}figure.goal-view{margin:0;width:120px;font-size:0.8em}"""

_LEGEND = ("<p class=\"note\">Maps: light grey is navigable, dark grey is not; the line is the path; dots mark "
           "subtask starts (the ringed one the episode start), stars reached goals and crosses missed goals, "
           "numbered by subtask; blue object, green description, red image goals.</p>")


def _episode_keys(records: Sequence[SubtaskRecord]) -> list[tuple[Optional[str], str]]:
    """(scene_id, episode_id) of each episode, in order of first appearance."""
    return list(dict.fromkeys((r.scene_id, r.episode_id) for r in records))


def _find_trajectory(trajectories: Sequence[Trajectory], scene_id: Optional[str],
                     episode_id: str) -> Optional[Trajectory]:
    for t in trajectories:
        if t.episode_id == episode_id and (scene_id is None or t.scene_id == scene_id):
            return t
    return None


def _episode_section(scene_id: Optional[str], episode_id: str, records: Sequence[SubtaskRecord],
                     trajectory: Optional[Trajectory], with_levels: bool, extra: str = "") -> str:
    rows = [[r.index, r.modality.value] + ([r.level or ""] if with_levels else [])
            + ["yes" if r.success else "no", f"{r.spl:.2f}", f"{r.path_length_m:.1f}",
               "" if r.geodesic_m is None else f"{r.geodesic_m:.1f}", r.num_actions, r.stop_reason, r.failure or ""]
            for r in records]
    header = ["#", "modality"] + (["level"] if with_levels else []) + ["success", "SPL", "path m", "geodesic m",
                                                                        "actions", "end", "failure"]
    if trajectory is not None and trajectory.navigable is not None:
        picture = (f'<img class="map" alt="top-down map of episode {html.escape(episode_id)}" '
                   f'src="{_png_data_uri(render_topdown(trajectory, records))}">')
    else:
        picture = ('<p class="note">No map: the results hold no trajectory for this episode (run with '
                   '<code>goat-nav bench --out</code> to store them).</p>')
    scene = scene_id if scene_id is not None else (trajectory.scene_id if trajectory is not None else "?")
    return (f'<section class="episode" id="{_episode_anchor(scene_id, episode_id)}">'
            f"<h3>Episode {html.escape(episode_id)} ({html.escape(scene)})</h3>{picture}{_table(rows, header)}"
            f"{extra}</section>")


def _episode_anchor(scene_id: Optional[str], episode_id: str) -> str:
    """The HTML id of an episode's section (letters, digits, '-' and '_' only)."""
    return "episode-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{scene_id or ''}-{episode_id}").strip("-")


def _failure_section(records: Sequence[SubtaskRecord], summary: Summary) -> str:
    """How the failed subtasks split by class, then each one with a link to its episode's map."""
    failed = [r for r in records if not r.success]
    if not failed:
        return ""
    counts = [[name, n] for name, n in summary.failures.items()]
    if summary.unclassified_failures:
        counts.append(["unclassified (older file)", summary.unclassified_failures])
    def link(r: SubtaskRecord) -> _Markup:
        return _Markup(f'<a href="#{_episode_anchor(r.scene_id, r.episode_id)}">{html.escape(r.episode_id)}</a>')

    rows = [[link(r), r.index, r.modality.value, r.failure or "?",
             "" if r.distance_to_goal_m is None else f"{r.distance_to_goal_m:.2f}", r.num_actions,
             r.stop_detail or r.error or ""] for r in failed]
    header = ["episode", "#", "modality", "failure", "distance to goal m", "actions", "the agent's account"]
    return (f"<h2>Failures ({len(failed)} of {len(records)} subtasks)</h2>"
            f"{_table(counts, ['class', 'subtasks'], 'failure-classes')}"
            f"{_table(rows, header, 'failures')}")


def render_html_report(records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                       trajectories: Sequence[Trajectory],
                       episode_extras: Optional[Mapping[tuple[Optional[str], str], str]] = None,
                       sections: Sequence[str] = (), parts: SuiteParts = EPISODE_SCHEMA) -> str:
    """The report page of a run of the suite whose ``parts`` add its charts and tables. Trajectories are drawn
    from their stored form (see the module docstring).

    ``episode_extras``: HTML added to an episode's section by (scene_id, episode_id) (goal views,
    goat_suites.goat.report_views); ``sections``: HTML sections before the run settings (model credits).
    """
    stored = trajectories_from_json(trajectories_to_json(trajectories))
    own = parts.report_section(records, meta)
    by_index = dict(sorted(summary.by_subtask_index.items()))
    overall_rows: list[list[Any]] = [["SR", f"{summary.success_rate:.3f}"], ["SPL", f"{summary.spl:.3f}"],
                                      ["subtasks", summary.num_subtasks], ["episodes", summary.num_episodes]]
    scene_ids = [r.scene_id for r in records if r.scene_id is not None]
    if scene_ids:  # the homes the episodes ran in, as --homes names them (large-furnished, small, ...)
        overall_rows.append(["homes", describe_homes(scene_ids)])
    overall_rows.append(["realism", realism_line(meta)])  # ideal, or the simulated Stretch's noise (docs/realism.md)
    overall_rows += [[f"ended by {k}", v] for k, v in summary.stop_reasons.items()]
    overall = _table(overall_rows, ["metric", "value"], "overall")
    charts = [_bar_chart("By modality", dict(summary.by_modality), "by-modality"), *own.charts,
              _line_chart("By subtask index", by_index, "by-subtask-index")]
    tables = [_stats_table("By modality", "modality", summary.by_modality, "by-modality"), *own.tables]
    tables.append(_stats_table("By subtask index", "subtask index", by_index, "by-subtask-index"))
    episodes = [_episode_section(scene, ep, [r for r in records if (r.scene_id, r.episode_id) == (scene, ep)],
                                 _find_trajectory(stored, scene, ep), own.level_column,
                                 (episode_extras or {}).get((scene, ep), ""))
                for scene, ep in _episode_keys(records)]
    run = html.escape(json.dumps(dict(meta), indent=2, default=str))
    partial = partial_run_note(meta, len(records))
    title = "goat_nav benchmark report" + ("" if partial is None else f" ({html.escape(partial)})")
    # The protocol the numbers were scored under: "custom (...)" names every deviation (docs/protocols.md)
    protocol = (f'<p class="protocol">protocol: <b>{html.escape(str(meta["protocol"]))}</b></p>'
                if "protocol" in meta else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{_STYLE}</style></head>
<body><h1>{title}</h1>
{protocol}<h2>Overall</h2>{overall}
<div class="charts">{"".join(charts)}</div>
{"".join(tables)}
{_failure_section(records, summary)}
<h2>Episodes</h2>{_LEGEND}{"".join(episodes)}
{"".join(sections)}
<h2>Run</h2><pre>{run}</pre>
</body></html>
"""


def write_html_report(path: Path, records: Sequence[SubtaskRecord], summary: Summary, meta: Mapping[str, Any],
                      trajectories: Sequence[Trajectory],
                      episode_extras: Optional[Mapping[tuple[Optional[str], str], str]] = None,
                      sections: Sequence[str] = (), parts: SuiteParts = EPISODE_SCHEMA) -> None:
    """Write the report page atomically (extras and parts: see :func:`render_html_report`)."""
    page = render_html_report(records, summary, meta, trajectories, episode_extras, sections, parts)
    atomic_write_bytes(path, page.encode("utf-8"))
