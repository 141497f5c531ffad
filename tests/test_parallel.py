"""`goat-nav bench --workers N` / `--ray-address`: the same numbers as a serial run, resume, killed workers.

`--workers 2` forks the command's workers (goat_suites.common.process_pool); the rest runs on real Ray: a Ray cluster
started for this module with `ray start` (goat_suites.common.ray_cluster.LocalCluster), shared by the tests that need
one. A
worker is killed for real: the worker of these tests sends itself SIGKILL on its first attempt(s) of one episode,
so that Ray sees a worker process die. Each test compares with one serial run of the same two short episodes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest
from rosbags.rosbag2 import Reader

from goat_core.matching.matcher import MatcherConfig
from goat_nav.bench_cmd import agent_config_from_args, prepare_run
from goat_nav.cli import build_parser, main
from goat_ros.record import RunRecorder
from goat_suites.common.episode_files import save_goat_dataset
from goat_suites.common.episode_worker import GoatWorkerFactory, episode_units
from goat_suites.common.parallel import WORKER_LOST, ParallelConfig, WorkUnit, run_units
from goat_suites.common.results import read_results_json, summarise, write_results_json
from goat_suites.common.resume import PLAN_META_KEY
from goat_suites.common.suite import GoatResults
from goat_suites.common.trajectories import read_trajectories, trajectories_path, write_trajectories
from goat_suites.findingdory import results as findingdory_results
from goat_suites.goat.generator import EpisodeGenConfig, generate_dataset
from sim_bridge.embedded.home import HomeConfig

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="Ray is not installed (pip install -e '.[cluster]'; setup.sh --test installs it)"),
]

SEED = 4100
BUDGET = 12  # actions per subtask: short episodes, a few seconds each


@pytest.fixture(scope="module", autouse=True)
def ray_token_auth() -> Iterator[None]:
    """Token authentication on in this process before Ray is imported (Ray reads the mode once, at import), as
    on the nodes of the cluster below; a local runtime of Ray 2.60 turns it on by itself anyway."""
    before = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "token"
    yield
    if before is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = before


@pytest.fixture(scope="module")
def episodes_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("episodes") / "episodes.json.gz"
    save_goat_dataset(generate_dataset(2, SEED, HomeConfig(num_rooms=3), EpisodeGenConfig()), path)
    return path


def _bench(episodes_file: Path, out: Path, *extra: str) -> int:
    return main(["bench", "--episodes-file", str(episodes_file), "--max-actions", str(BUDGET), "--quiet",
                 "--out", str(out), *extra])


@pytest.fixture(scope="module")
def serial(episodes_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(results, bag) of the serial run (one worker, in process, no Ray)."""
    root = tmp_path_factory.mktemp("serial")
    assert _bench(episodes_file, root / "results.json", "--record", str(root / "run")) == 0
    return root / "results.json", root / "run"


@pytest.fixture(scope="module")
def cluster(ray_token_auth: None) -> Iterator[Any]:
    """A one-node Ray cluster with 2 CPUs started with `ray start --head`, stopped after the module."""
    from goat_suites.common.ray_cluster import LocalCluster

    with LocalCluster((2,)) as c:
        yield c


def _subtasks(path: Path) -> list[dict[str, Any]]:
    return [r.to_json() for r in read_results_json(path).records]


def _assert_same_numbers(path: Path, reference: Path) -> None:
    """Every record (actions included) and the summary equal, in the same (episode) order."""
    ours, theirs = read_results_json(path), read_results_json(reference)
    assert [r.to_json() for r in ours.records] == [r.to_json() for r in theirs.records]
    assert ours.summary == theirs.summary
    assert ours.meta[PLAN_META_KEY] == theirs.meta[PLAN_META_KEY]


def _bag_messages(bag: Path) -> list[tuple[str, int, bytes]]:
    with Reader(bag) as reader:
        return [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]


def test_two_workers_give_the_serial_numbers_records_and_bag(
        episodes_file: Path, serial: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, bag = serial
    out, report = tmp_path / "results.json", tmp_path / "report.html"
    code = main(["bench", "--episodes-file", str(episodes_file), "--max-actions", str(BUDGET), "--out", str(out),
                 "--workers", "2", "--record", str(tmp_path / "run"), "--report", str(report)])  # not --quiet
    err = capsys.readouterr().err
    assert code == 0, err
    # One bar over both workers: the whole plan, SR/SPL so far and episodes per minute; then the workers' line.
    final_bar = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("episodes:")][-1]
    assert "2/2" in final_bar and "SR=" in final_bar and "SPL=" in final_bar and "ep/min=" in final_bar, final_bar
    assert "workers: 2 processes on 1 node(s) of a pool of forked processes" in err
    _assert_same_numbers(out, results)
    assert sum(r["num_actions"] for r in _subtasks(out)) > 20  # the episodes really moved
    # The bag of the workers' fragments, clocks shifted, is the serial run's bag message for message.
    assert _bag_messages(tmp_path / "run") == _bag_messages(bag)
    # Trajectories and report cover both episodes.
    assert [t.episode_id for t in read_trajectories(trajectories_path(out))] == \
        [t.episode_id for t in read_trajectories(trajectories_path(results))]
    assert report.read_text().count('class="episode"') == 2
    import ray

    assert not ray.is_initialized()  # no Ray runtime was started (or left running)


def _partial_copy(results: Path, out: Path, keep_episodes: int, tamper: bool) -> list[dict[str, Any]]:
    """What an interrupted run leaves: the results and trajectories of the first ``keep_episodes`` episodes.
    ``tamper``: add 1 m to their path lengths, so that a resumed run shows whether it kept them or ran them."""
    stored = read_results_json(results)
    keys = stored.meta[PLAN_META_KEY][:keep_episodes]
    kept = [r for r in stored.records if f"{r.scene_id}/{r.episode_id}" in keys]
    if tamper:
        kept = [dataclasses.replace(r, path_length_m=r.path_length_m + 1.0) for r in kept]
    meta = dict(stored.meta)
    meta["trajectories_file"] = trajectories_path(out).name
    trajectories = read_trajectories(trajectories_path(results))[:keep_episodes]
    write_trajectories(trajectories_path(out), trajectories)
    write_results_json(out, kept, summarise(kept), meta)
    return [r.to_json() for r in kept]


def test_resume_keeps_finished_episodes_and_runs_the_rest_on_the_cluster(
        episodes_file: Path, serial: tuple[Path, Path], cluster: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    results, _ = serial
    out = tmp_path / "results.json"
    kept = _partial_copy(results, out, keep_episodes=1, tamper=True)
    code = _bench(episodes_file, out, "--resume", "--ray-address", cluster.address)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "1 of 2 episodes are in" in err
    final = _subtasks(out)
    assert final[: len(kept)] == kept  # episode 0 was kept as it was (tampered), not run again
    assert final[len(kept):] == _subtasks(results)[len(kept):]  # episode 1 ran, as in the serial run
    assert len(read_trajectories(trajectories_path(out))) == 2


@pytest.mark.parametrize("extra, named", [(("--episodes", "1"), "plans 2 episodes, this command 1"),
                                          (("--max-actions", "13"), "run_config")])
def test_resume_refuses_a_command_that_plans_another_run(episodes_file: Path, serial: tuple[Path, Path],
                                                         tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         extra: tuple[str, ...], named: str) -> None:
    out = tmp_path / "results.json"
    _partial_copy(serial[0], out, keep_episodes=1, tamper=False)
    before = out.read_bytes()
    code = main(["bench", "--episodes-file", str(episodes_file), "--max-actions", str(BUDGET), "--quiet",
                 "--out", str(out), "--resume", *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and named in err
    assert out.read_bytes() == before  # nothing lost


# --------------------------------------------------------------------------------------- killed workers


@dataclasses.dataclass(frozen=True)
class KillingWorkers:
    """The GOAT workers, except that a worker starting episode ``victim`` kills its own process (SIGKILL, as the
    kernel's OOM killer would) while ``marker_dir`` holds fewer than ``deaths`` markers of earlier attempts."""

    inner: GoatWorkerFactory
    victim: str
    marker_dir: str
    deaths: int

    def __call__(self) -> Any:
        return _KillingWorker(self, self.inner())


class _KillingWorker:
    def __init__(self, spec: KillingWorkers, inner: Any) -> None:
        self.spec = spec
        self.inner = inner

    def run_unit(self, unit: WorkUnit, recorder: Optional[RunRecorder], emit: Callable[[str], None]) -> Any:
        markers = Path(self.spec.marker_dir)
        if unit.key == self.spec.victim and len(list(markers.iterdir())) < self.spec.deaths:
            (markers / f"death-{os.getpid()}").write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.run_unit(unit, recorder, emit)

    def close(self) -> None:
        self.inner.close()


def _run_with_killer(episodes_file: Path, out: Path, cluster: Any, deaths: int, tmp_path: Path) -> Any:
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    # The run `goat-nav bench` would make of these flags (its meta too, so that --resume accepts the file).
    args = build_parser().parse_args(["bench", "--episodes-file", str(episodes_file), "--max-actions", str(BUDGET),
                                      "--out", str(out)])
    episodes, run_config, meta = prepare_run(args, "in_process")
    units = episode_units(episodes)
    meta[PLAN_META_KEY] = [u.key for u in units]
    sink = GoatResults(out, "goat", meta, lambda _episode, record: record, None)
    markers = tmp_path / "markers"
    markers.mkdir()
    inner = GoatWorkerFactory(run_config, agent_config_from_args(args), MatcherConfig())
    workers = KillingWorkers(inner, units[1].key, str(markers), deaths)
    stats = run_units(units, workers, sink, ParallelConfig(workers=2, ray_address=cluster.address), quiet=True)
    assert len(list(markers.iterdir())) == deaths  # the worker really died that often
    return units, stats


def test_a_killed_worker_costs_its_episode_one_retry(episodes_file: Path, serial: tuple[Path, Path], cluster: Any,
                                                     tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    units, stats = _run_with_killer(episodes_file, out, cluster, deaths=1, tmp_path=tmp_path)
    assert stats.worker_deaths == 1 and stats.retried == [units[1].key] and stats.lost == []
    assert _subtasks(out) == _subtasks(serial[0])  # the retried episode scored as in the serial run


def test_a_worker_dying_twice_records_an_error_and_resume_runs_the_episode(
        episodes_file: Path, serial: tuple[Path, Path], cluster: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    units, stats = _run_with_killer(episodes_file, out, cluster, deaths=2, tmp_path=tmp_path)
    assert stats.worker_deaths == 2 and stats.lost == [units[1].key]
    records = _subtasks(out)
    reference = _subtasks(serial[0])
    first = [r for r in records if r["episode_id"] == units[0].payload.episode_id]
    lost = [r for r in records if r["episode_id"] == units[1].payload.episode_id]
    assert first == reference[: len(first)]
    assert len(lost) == len(units[1].payload.tasks)
    assert all(r["stop_reason"] == "error" and r["error"].startswith(WORKER_LOST) and not r["success"]
               and r["failure"] == "error" for r in lost)  # the failure taxonomy's class for it
    assert json.loads(out.read_text())["summary"]["failures"]["error"] == len(lost)
    json.loads(out.read_text())  # a complete file, never a truncated one
    # --resume runs the lost episode again (on the cluster) and the file becomes the serial run's.
    code = _bench(episodes_file, out, "--resume", "--ray-address", cluster.address)
    assert code == 0, capsys.readouterr().err
    assert _subtasks(out) == reference


# --------------------------------------------------------------------------------------- every suite, perception

SUITE_RUNS = {
    "goat": ["--episodes", "2", "--seed", "11", "--num-rooms", "3", "--max-actions", "4"],  # generated by workers
    "langmap": ["--suite", "langmap", "--episodes", "2", "--seed", "3000", "--num-rooms", "3", "--max-actions", "4"],
    "pasture": ["--suite", "pasture", "--episodes", "1", "--seed", "3000", "--num-rooms", "3", "--max-actions", "4"],
    "owlvit": ["--episodes", "1", "--seed", "11", "--num-rooms", "3", "--max-actions", "6", "--perception", "owlvit",
               "--model-dir", "{model}"],
}


def _without_elapsed(path: Path) -> dict[str, Any]:
    """The results file without what differs between runs of the same episodes: their time and command line."""
    data = json.loads(path.read_text())
    data["meta"].pop("elapsed_s")
    data["meta"].pop("command")
    return dict(data)


@pytest.mark.parametrize("name", list(SUITE_RUNS))
def test_every_suite_and_a_model_backend_give_the_serial_numbers_on_the_cluster(
        name: str, cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = ""
    if name == "owlvit":
        pytest.importorskip("transformers", reason="needs the openvocab extra (pip install -e '.[openvocab]')")
        from goat_core.perception.tiny_models import save_tiny_model

        model = str(save_tiny_model(tmp_path / "owlvit", "owlvit", seed=0))
    runs = {}
    for how, extra in (("serial", []), ("cluster", ["--workers", "2", "--ray-address", cluster.address])):
        root = tmp_path / how
        root.mkdir()
        argv = [a.format(tmp=root, model=model) for a in SUITE_RUNS[name]]
        code = main(["bench", *argv, "--quiet", "--out", str(root / "results.json"), *extra])
        assert code == 0, capsys.readouterr().err
        runs[how] = root
    serial_run, cluster_run = (_without_elapsed(runs[h] / "results.json") for h in ("serial", "cluster"))
    assert cluster_run == serial_run  # records, summary and the suite's tables (meta) alike
    assert serial_run.get("subtasks") or serial_run.get("tasks")
    if (runs["serial"] / "run").exists():
        assert _bag_messages(runs["cluster"] / "run") == _bag_messages(runs["serial"] / "run")


# --------------------------------------------------------------------------------------- FindingDory, memory selector

FINDINGDORY_RUN = ["bench", "--suite", "findingdory", "--episodes", "2", "--seed", "3000", "--num-rooms", "3",
                   "--max-actions", "10", "--quiet"]


def _findingdory_partial_copy(results: Path, out: Path) -> list[dict[str, Any]]:
    """What an interrupted FindingDory run leaves: results, trajectories and frames of its first episode, the kept
    task rows' path lengths 1 m longer (a resumed run shows whether it kept them or ran them again)."""
    stored = findingdory_results.read_results(results)
    first = stored.records[0].episode_id
    kept = [(r, dict(t, path_length_m=t["path_length_m"] + 1.0))
            for r, t in zip(stored.records, stored.tasks, strict=True) if r.episode_id == first]
    meta = dict(stored.meta)
    frames = findingdory_results.read_frames(results.parent / meta["frames_file"])
    findingdory_results.write_frames(out.parent / meta["frames_file"], {first: frames[first]})
    write_trajectories(out.parent / meta["trajectories_file"],
                       [t for t in read_trajectories(trajectories_path(results)) if t.episode_id.startswith(first)])
    findingdory_results.write_results(out, [r for r, _ in kept], [t for _, t in kept], meta)
    return [t for _, t in kept]


def test_findingdory_with_the_memory_selector_gives_the_serial_run_on_two_workers_and_resumed(
        cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each worker builds its own memory selector from the run's policy choice; two episodes on two workers, and a
    run resumed after its first episode, give the serial run's tasks, frames (thumbnails) and bag."""
    runs = {}
    for how, extra in (("serial", []), ("cluster", ["--workers", "2", "--ray-address", cluster.address])):
        root = tmp_path / how
        root.mkdir()
        code = main([*FINDINGDORY_RUN, "--out", str(root / "results.json"), "--record", str(root / "run"), *extra])
        assert code == 0, capsys.readouterr().err
        runs[how] = root
    serial_run, cluster_run = (_without_elapsed(runs[h] / "results.json") for h in ("serial", "cluster"))
    assert serial_run["meta"]["high_level"]["selector"] == "memory"
    assert {t["episode_id"] for t in serial_run["tasks"]} == {"3000-0", "3000-1"}
    assert cluster_run == serial_run
    frames = {h: findingdory_results.read_frames(runs[h] / "results.frames.json.gz") for h in runs}
    assert frames["cluster"] == frames["serial"] and all(frames["serial"].values())
    assert _bag_messages(runs["cluster"] / "run") == _bag_messages(runs["serial"] / "run")

    out = tmp_path / "resumed" / "results.json"
    out.parent.mkdir()
    kept = _findingdory_partial_copy(runs["serial"] / "results.json", out)
    code = main([*FINDINGDORY_RUN, "--out", str(out), "--resume", "--ray-address", cluster.address])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "1 of 2 episodes are in" in err
    tasks = json.loads(out.read_text())["tasks"]
    assert tasks[: len(kept)] == kept  # episode 0 kept as it was written, not run again
    assert tasks[len(kept):] == serial_run["tasks"][len(kept):]  # episode 1 ran, as in the serial run
    assert findingdory_results.read_frames(out.parent / "results.frames.json.gz") == frames["serial"]
    assert len(read_trajectories(trajectories_path(out))) == len(serial_run["tasks"])
