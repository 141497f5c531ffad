"""The HTML report: stored trajectories, charts per modality / level / subtask index, and a headless render."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Optional

import cv2
import numpy as np
import pytest

from goat_nav.cli import main
from goat_suites.common.episode_files import save_goat_dataset
from goat_suites.common.episodes import GoatDataset
from goat_suites.common.report import render_html_report, write_html_report
from goat_suites.common.results import (
    InvalidResultError,
    SubtaskRecord,
    read_results_json,
    summarise,
    write_results_json,
)
from goat_suites.common.runner import Trajectory
from goat_suites.common.trajectories import (
    TRAJECTORIES_META_KEY,
    read_trajectories,
    trajectories_path,
    write_trajectories,
)
from goat_suites.goat.generator import generate_dataset
from goat_suites.langmap.parts import LANGMAP
from sim_bridge.embedded.home import HomeConfig

# ------------------------------------------------------------------------------------------- a tiny run


@pytest.fixture(scope="module")
def run_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(results.json, report.html) of `goat-nav bench --out --report`: one small home, three subtasks."""
    root = tmp_path_factory.mktemp("run")
    episode = generate_dataset(1, seed=5, home_config=HomeConfig(num_rooms=3)).episodes[0]
    episodes = root / "one.json.gz"
    save_goat_dataset(GoatDataset(episodes=(dataclasses.replace(episode, tasks=episode.tasks[:3]),)), episodes)
    results, report = root / "results.json", root / "report.html"
    assert main(["bench", "--episodes-file", str(episodes), "--max-actions", "8", "--quiet", "--out", str(results),
                 "--report", str(report)]) == 0
    return results, report


@pytest.mark.slow
def test_goat_nav_report_reproduces_the_bench_report(run_files: tuple[Path, Path], tmp_path: Path) -> None:
    results, bench_report = run_files
    meta = read_results_json(results).meta
    assert meta[TRAJECTORIES_META_KEY] == "results.trajectories.json.gz"
    assert (results.parent / meta[TRAJECTORIES_META_KEY]).is_file()
    again = tmp_path / "again.html"
    assert main(["report", str(results), "--out", str(again)]) == 0
    # The same page but for what only the run itself can draw: the goal views, rendered from its episodes, which
    # a results file does not hold.
    from_run = bench_report.read_text()
    assert from_run.count('<div class="goal-views">') == 1
    assert again.read_text() == re.sub(r'<div class="goal-views">.*?</div>', "", from_run, flags=re.S)
    page = again.read_text()
    assert page.count('<img class="map"') == 1 and page.count("data:image/png;base64,") == 1
    assert 'src="http' not in page and "<script" not in page  # self-contained


def test_stored_trajectory_matches_the_run(run_files: tuple[Path, Path]) -> None:
    results, _ = run_files
    records = read_results_json(results).records
    (traj,) = read_trajectories(trajectories_path(results))
    assert (traj.episode_id, traj.scene_id) == (records[0].episode_id, records[0].scene_id)
    assert len(traj.subtask_starts) == len(traj.goal_positions_xy_m) == len(records) == 3
    assert traj.navigable is not None and traj.navigable.dtype == bool and 0.1 < traj.navigable.mean() < 0.9
    path_m = sum(float(np.hypot(b[0] - a[0], b[1] - a[1]))
                 for a, b in zip(traj.positions_xy_m[:-1], traj.positions_xy_m[1:], strict=True))
    assert path_m == pytest.approx(sum(r.path_length_m for r in records), abs=1e-3)


# ------------------------------------------------------------------------------------ synthetic inputs


def _record(index: int, modality: str, success: bool, spl: float, level: Optional[str] = None,
            episode_id: str = "e1") -> SubtaskRecord:
    return SubtaskRecord(episode_id=episode_id, index=index, modality=modality, success=success, spl=spl,
                         path_length_m=2.0, geodesic_m=1.5, num_actions=9, stop_reason="stop" if success else "budget",
                         distance_to_goal_m=0.2, scene_id="s1", level=level)


def _trajectory(episode_id: str = "e1") -> Trajectory:
    grid = np.zeros((40, 60), dtype=bool)
    grid[5:35, 5:55] = True
    return Trajectory(episode_id, "s1", positions_xy_m=[(1.0, 1.0), (1.25, 1.0), (1.5, 1.123456789), (2.0, 1.5)],
                      subtask_starts=[0, 2], goal_positions_xy_m=[[(1.5, 1.2)], [(2.2, 1.4), (0.7, 1.6)]],
                      navigable=grid, grid_origin_xy_m=(-0.5, 0.25), grid_resolution_m=0.05)


def test_trajectories_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.trajectories.json.gz"
    write_trajectories(path, [_trajectory("e1"), _trajectory("e2")])
    raw = json.loads(gzip.decompress(path.read_bytes()))
    assert list(raw["grids"]) == ["s1"]  # one grid per scene
    back = read_trajectories(path)
    assert [t.episode_id for t in back] == ["e1", "e2"]
    original = _trajectory()
    assert back[0].navigable is not None and np.array_equal(back[0].navigable, original.navigable)
    assert back[0].grid_origin_xy_m == original.grid_origin_xy_m and back[0].grid_resolution_m == 0.05
    assert np.allclose(back[0].positions_xy_m, original.positions_xy_m, atol=1e-4)
    assert back[0].subtask_starts == [0, 2] and len(back[0].goal_positions_xy_m[1]) == 2


def test_trajectories_path_sits_next_to_the_results() -> None:
    assert trajectories_path(Path("out/run.json")) == Path("out/run.trajectories.json.gz")
    assert trajectories_path(Path("out/run")) == Path("out/run.trajectories.json.gz")


@pytest.mark.parametrize("content, message", [
    ({"format": "something.else", "version": 1}, "not a goat_nav trajectories file"),
    ({"format": "goat_nav.trajectories", "version": 7, "grids": {}, "episodes": []}, "version 7 is not supported"),
    ({"format": "goat_nav.trajectories", "version": 1, "grids": {}, "episodes": [{"episode_id": "e"}]},
     "missing fields"),
    ({"format": "goat_nav.trajectories", "version": 1, "grids": {}, "episodes": [
        {"episode_id": "e", "scene_id": "s", "positions_xy_m": [[0, 0]], "subtask_starts": [3],
         "goal_positions_xy_m": [[]]}]}, "subtask_starts must be indices"),
    ({"format": "goat_nav.trajectories", "version": 1, "episodes": [],
      "grids": {"s": {"shape": [2, 2], "origin_xy_m": [0, 0], "resolution_m": 0.05, "navigable_png": "AAAA"}}},
     "navigable_png"),
])
def test_a_bad_trajectories_file_is_named(tmp_path: Path, content: dict, message: str) -> None:
    path = tmp_path / "bad.trajectories.json.gz"
    path.write_bytes(gzip.compress(json.dumps(content).encode()))
    with pytest.raises(InvalidResultError, match=message) as info:
        read_trajectories(path)
    assert str(path) in str(info.value)


def _results_file(tmp_path: Path, records: list[SubtaskRecord], meta: dict) -> Path:
    path = tmp_path / "results.json"
    write_results_json(path, records, summarise(records), meta)
    return path


def test_a_results_file_without_trajectories_reports_without_maps(tmp_path: Path) -> None:
    results = _results_file(tmp_path, [_record(0, "object", True, 0.5), _record(1, "image", False, 0.0)], {})
    assert main(["report", str(results)]) == 0
    page = results.with_suffix(".html").read_text()
    assert "<img" not in page and "No map" in page and "Episode e1" in page


def test_the_failure_table_links_each_failure_to_its_episode(tmp_path: Path) -> None:
    gave_up = dataclasses.replace(_record(1, "image", False, 0.0, episode_id="e2"), stop_reason="stop",
                                  failure="gave_up", stop_detail="nothing left to explore; recoveries tried: all")
    records = [_record(0, "object", True, 0.5), _record(1, "image", False, 0.0), gave_up]
    results = _results_file(tmp_path, records, {})
    assert main(["report", str(results)]) == 0
    page = results.with_suffix(".html").read_text()
    table = page[page.index('<table id="failures">'):]
    table = table[:table.index("</table>")]
    links = re.findall(r'href="#([^"]+)"', table)
    assert len(links) == 2 and all(f'id="{anchor}"' in page for anchor in links)
    assert "gave_up" in table and "budget" in table and "recoveries tried: all" in table
    classes = page[page.index('<table id="failure-classes">'):]
    assert re.search(r"<td>gave_up</td><td>1</td>", classes) and re.search(r"<td>budget</td><td>1</td>", classes)


def test_a_missing_trajectories_file_warns_and_reports_without_maps(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    results = _results_file(tmp_path, [_record(0, "object", True, 0.5)], {TRAJECTORIES_META_KEY: "gone.json.gz"})
    assert main(["report", str(results), "--out", str(tmp_path / "r.html")]) == 0
    assert "gone.json.gz" in capsys.readouterr().err and "No map" in (tmp_path / "r.html").read_text()


def test_a_foreign_trajectories_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.json.gz").write_bytes(gzip.compress(b'{"format": "other"}'))
    results = _results_file(tmp_path, [_record(0, "object", True, 0.5)], {TRAJECTORIES_META_KEY: "t.json.gz"})
    assert main(["report", str(results)]) == 2
    err = capsys.readouterr().err
    assert "t.json.gz" in err and "not a goat_nav trajectories file" in err


def test_a_foreign_results_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"rows": []}')
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "expected an object with summary, subtasks and meta" in err


# ------------------------------------------------------------------------------------------------ charts


def _table_rows(page: str, table_id: str) -> list[list[str]]:
    match = re.search(rf'<table id="{table_id}">.*?<tbody>(.*?)</tbody>', page)
    assert match, table_id
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", match.group(1))]


def test_levels_get_a_chart_and_a_table_in_langmap_order() -> None:
    records = [_record(0, "object", True, 0.5, "instance"), _record(1, "object", False, 0.0, "object"),
               _record(2, "description", True, 1.0, "room"), _record(3, "description", True, 0.25, "scene")]
    page = render_html_report(records, summarise(records), {}, [], parts=LANGMAP)
    assert _table_rows(page, "by-level") == [["scene", "0.500", "0.125", "2"], ["room", "1.000", "1.000", "1"],
                                             ["instance", "1.000", "0.500", "1"]]
    assert 'class="chart by-level"' in page and "<th>level</th>" in page


@pytest.mark.parametrize("suite, sections", [("langmap", True), ("goat", False), (None, False)])
def test_the_report_command_adds_the_sections_of_the_suite_its_results_name(tmp_path: Path, suite: Optional[str],
                                                                            sections: bool) -> None:
    """LangMap's level chart and table come from its parts (goat_suites.registry), chosen by the results' meta
    suite; the shared report page has none of its own."""
    records = [_record(0, "object", True, 0.5, "instance"), _record(1, "object", False, 0.0, "room")]
    results = _results_file(tmp_path, records, {} if suite is None else {"suite": suite})
    assert main(["report", str(results)]) == 0
    page = results.with_suffix(".html").read_text()
    assert ('class="chart by-level"' in page) is sections and ("<th>level</th>" in page) is sections


def test_no_level_section_without_levels() -> None:
    records = [_record(0, "object", True, 0.5), _record(1, "image", False, 0.0)]
    page = render_html_report(records, summarise(records), {}, [])
    assert "by-level" not in page and "<th>level</th>" not in page


def test_sr_and_spl_against_subtask_index() -> None:
    records = [_record(0, "object", True, 0.5, episode_id="a"), _record(0, "object", False, 0.0, episode_id="b"),
               _record(1, "image", True, 1.0, episode_id="a"), _record(1, "image", True, 0.5, episode_id="b")]
    page = render_html_report(records, summarise(records), {}, [])
    chart = re.search(r'<figure class="chart by-subtask-index">.*?</figure>', page)
    assert chart is not None
    titles = re.findall(r"<title>(.*?)</title>", chart.group(0))
    assert titles == ["subtask 0 SR 0.500 (n=2)", "subtask 1 SR 1.000 (n=2)", "subtask 0 SPL 0.250 (n=2)",
                      "subtask 1 SPL 0.750 (n=2)"]
    assert chart.group(0).count("<polyline") == 2
    assert _table_rows(page, "by-subtask-index") == [["0", "0.500", "0.250", "2"], ["1", "1.000", "0.750", "2"]]
    assert _table_rows(page, "by-modality") == [["object", "0.500", "0.250", "2"], ["image", "1.000", "0.750", "2"]]


def test_each_episode_gets_its_own_map() -> None:
    records = [_record(0, "object", True, 0.5, episode_id="e1"), _record(0, "image", False, 0.0, episode_id="e2")]
    page = render_html_report(records, summarise(records), {}, [_trajectory("e2"), _trajectory("e1")])
    assert page.count('<img class="map"') == 2
    assert page.index("Episode e1") < page.index("Episode e2")  # in the order of the records


def test_level_is_optional_in_the_results_json(tmp_path: Path) -> None:
    plain, leveled = _record(0, "object", True, 0.5), _record(1, "object", True, 0.5, "object")
    assert "level" not in plain.to_json()  # files without levels look as they did
    assert leveled.level == "scene" and leveled.to_json()["level"] == "scene"
    results = _results_file(tmp_path, [plain, leveled], {})
    assert [r.level for r in read_results_json(results).records] == [None, "scene"]
    with pytest.raises(InvalidResultError, match="unknown LangMap level 'floor'"):
        _record(0, "object", True, 0.5, "floor")


# ------------------------------------------------------------------------------------- headless Chromium

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

# Added to a copy of the page: when the page has loaded, note how many images decoded and the SVG sizes.
_PROBE = """<script>window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0; });
  document.body.setAttribute('data-images', ok.length + '/' + imgs.length);
  var svgs = Array.prototype.slice.call(document.querySelectorAll('svg'));
  document.body.setAttribute('data-svgs', svgs.map(function (s) {
    var r = s.getBoundingClientRect(); return Math.round(r.width) + 'x' + Math.round(r.height); }).join(','));
});</script>"""


def _chromium() -> str:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path is not None:
            return path
    pytest.skip(f"no headless Chromium on PATH (looked for {', '.join(CHROMIUM_NAMES)}); "
                "install it with: apt-get install -y --no-install-recommends chromium")


def _chromium_run(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Own profile folder: Chromium refuses a profile another instance holds (other test runs, a desktop browser).
    return subprocess.run([binary, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                           "--no-first-run", f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_report_renders_in_headless_chromium(run_files: tuple[Path, Path], tmp_path: Path) -> None:
    binary = _chromium()
    _, report = run_files
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace("</body>", _PROBE + "</body>"))
    dom = _chromium_run(binary, tmp_path / "profile", "--dump-dom", probe.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", dom.stdout)
    assert body is not None, dom.stdout[:500]
    # The map and the goal views of the run (one per image goal, one per goal instance) all decoded.
    assert 'data-images="4/4"' in body.group(1), body.group(1)
    sizes = re.search(r'data-svgs="([^"]*)"', body.group(1))
    assert sizes is not None and len(sizes.group(1).split(",")) == 2  # modality and subtask-index charts
    assert all(int(w) > 100 and int(h) > 100 for w, h in (s.split("x") for s in sizes.group(1).split(",")))
    for table_id in ("overall", "by-modality", "by-subtask-index"):
        assert f'<table id="{table_id}">' in dom.stdout

    shot = tmp_path / "report.png"
    result = _chromium_run(binary, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1800",
                           report.as_uri())
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    image = cv2.imread(str(shot))
    assert image is not None and image.shape == (1800, 1280, 3)
    not_white = (image < 245).any(axis=2).mean()
    assert not_white > 0.02, f"the page looks blank ({not_white:.1%} of pixels drawn)"
    sr_blue = np.abs(image.astype(int) - (216, 125, 59)).max(axis=2) < 12  # #3b7dd8 in BGR: the SR series
    assert sr_blue.sum() > 100, "no SR series drawn"
    map_dark = (np.abs(image.astype(int) - 90).max(axis=2) < 3).sum()  # not-navigable cells of the map
    assert map_dark > 5000, "no top-down map drawn"


def test_write_html_report_replaces_the_file_atomically(tmp_path: Path) -> None:
    records = [_record(0, "object", True, 0.5)]
    path = tmp_path / "sub" / "r.html"
    write_html_report(path, records, summarise(records), {}, [_trajectory()])
    assert path.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.html"]
