"""The experience video, the memory built from its frames, and the rule-based selector over that memory, on a
short real simulated experience (a 3-room home, two pick-and-place moves, rendered by the embedded simulator).

The simulator's log is used here only to check the memory against (which object moved, where, when); the
memory itself is built from the video: RGB-D frames, poses, clock, gripper state, and the segmentation of
ground-truth perception (or, for the "frames alone" tests, the same masks with their identities taken away)."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pytest
import yaml

from goat_core.errors import ConfigError, InvalidObservationError
from goat_core.perception.gt import GroundTruthPerception, GroundTruthWithoutIds
from goat_core.types import CameraIntrinsics, Observation, Pose2D
from goat_ros.record import RecordError
from goat_suites.findingdory.experience_memory import (
    CategoryHistogramEmbedder,
    ExperienceMemory,
    build_experience_memory,
)
from goat_suites.findingdory.experience_video import (
    ExperienceVideo,
    Proprioception,
    VideoEncoding,
    encode_frame,
    subsample_indices,
)
from goat_suites.findingdory.generator import (
    Experience,
    FindingDoryGenConfig,
    TaskJudge,
    collect_experience,
    findingdory_sim_config,
)
from goat_suites.findingdory.memory import MemorySelector, memory_log
from goat_suites.findingdory.policy import EpisodeExperience
from goat_suites.findingdory.run import high_level_outcome
from goat_suites.findingdory.selector import Selection
from goat_suites.findingdory.tasks import FindingDoryTask, Subgoal
from sim_bridge.embedded.catalogue import CATALOGUE
from sim_bridge.embedded.home import HomeConfig, generate_home
from sim_bridge.embedded.sim import EmbeddedSim

HOME_SEED = 11  # a 3-room home where the oracle makes both moves
LABELS = [spec.name for spec in CATALOGUE]


class Day:
    def __init__(self, sim: EmbeddedSim, experience: Experience, memory: ExperienceMemory) -> None:
        self.sim, self.experience, self.memory = sim, experience, memory
        assert experience.video is not None
        self.video: ExperienceVideo = experience.video
        self.judge = TaskJudge(sim, experience.start_world)

    def episode_xy(self, world_xyz: Sequence[float]) -> np.ndarray:
        s = self.experience.start_world
        dx, dy = world_xyz[0] - s.x_m, world_xyz[1] - s.y_m
        c, sn = math.cos(s.yaw_rad), math.sin(s.yaw_rad)
        return np.array([c * dx + sn * dy, -sn * dx + c * dy])

    def instance(self, object_id: str) -> int:
        return next(o.instance_id for o in self.sim.home.objects if o.object_id == object_id)

    def track_of(self, object_id: str) -> str:
        key = self.instance(object_id)
        return next(t for t, track in self.memory.tracks.items() if track.key == key)


@pytest.fixture(scope="module")
def day() -> Iterator[Day]:
    config = FindingDoryGenConfig(interactions=(2, 2))
    # The robot's own head camera (360 x 640, HFOV 42), whose view reaches above its 1.31 m height, where the room
    # segmentation looks for walls. FindingDory's official camera (480 x 640, HFOV 43, 30 deg down) never does:
    # with it the rooms merge (docs/protocols.md, FindingDory; left to do in the memory).
    robot_camera = dataclasses.replace(findingdory_sim_config(), width_px=360, hfov_deg=42.0)
    with EmbeddedSim(generate_home(HOME_SEED, HomeConfig(num_rooms=3)), robot_camera) as sim:
        experience = collect_experience(sim, np.random.default_rng(HOME_SEED), config, video=VideoEncoding())
        assert experience.video is not None
        memory = build_experience_memory(experience.video, GroundTruthPerception(LABELS),
                                         embedder=CategoryHistogramEmbedder(LABELS))
        yield Day(sim, experience, memory)


# ----------------------------------------------------------------------------------------------- the video


def test_the_video_holds_what_a_robot_records(day: Day) -> None:
    video, log = day.video, day.experience.log
    assert len(video) == len(log.frames)
    assert [f.time_s for f in video.frames] == [f.time_s for f in log.frames]
    # The gripper holds from the first frame after a pick to the last frame before the place.
    holding = [f.proprioception.holding for f in video.frames]
    for move in day.experience.moves:
        assert not holding[move.pick_frame] and holding[move.pick_frame + 1]
        assert holding[move.place_frame - 1] and not holding[move.place_frame]
    assert sum(holding) == sum(m.place_frame - m.pick_frame - 1 for m in day.experience.moves)
    frame = video.frames[len(video) // 2]
    obs = frame.observation(video.annotation)
    height, width = day.sim.config.height_px, day.sim.config.width_px  # FindingDory's camera: 640 x 480
    assert obs.rgb.shape == (height, width, 3) and obs.depth_m.dtype == np.float32
    assert obs.segmentation is not None and set(obs.instance_categories) == set(np.unique(obs.segmentation)) - {-1}
    # Compressed: JPEG colour, 16-bit PNG depth and segmentation; far smaller than the arrays.
    raw = len(video) * height * width * (3 + 4 + 4)
    assert video.size_bytes() < raw / 15


def test_depth_and_segmentation_survive_encoding() -> None:
    intr = CameraIntrinsics.from_hfov(32, 24, math.radians(60.0))
    rng = np.random.default_rng(0)
    depth = rng.uniform(0.3, 8.0, size=(24, 32)).astype(np.float32)
    depth[0, :4] = 0.0  # no return
    seg = rng.integers(-1, 300, size=(24, 32)).astype(np.int32)
    obs = Observation(rgb=rng.integers(0, 255, size=(24, 32, 3), dtype=np.uint8), depth_m=depth,
                      pose=Pose2D(1.0, 2.0, 0.3), camera_tilt_rad=-0.5, camera_height_m=1.31, intrinsics=intr,
                      segmentation=seg)
    frame = encode_frame(obs, 0, 100.0, Proprioception(True, True))
    assert np.abs(frame.depth_m() - depth).max() <= 0.0005 + 1e-6 and np.all(frame.depth_m()[0, :4] == 0.0)
    back = frame.segmentation()
    assert back is not None and np.array_equal(back, seg)
    assert encode_frame(obs, 0, 100.0, Proprioception(False, False),
                        VideoEncoding(with_segmentation=False)).segmentation() is None
    with pytest.raises(ConfigError, match="holding an object needs a closed gripper"):
        Proprioception(gripper_closed=False, holding=True)
    with pytest.raises(InvalidObservationError, match="annotation does not describe"):
        frame.observation({})


@pytest.mark.parametrize(("count", "budget", "expected"), [
    (10, 96, tuple(range(10))), (100, 5, (0, 25, 50, 74, 99)), (7, 1, (0,)), (400, 96, None)])
def test_subsampling_spreads_the_budget_evenly(count: int, budget: int, expected: tuple[int, ...] | None) -> None:
    got = subsample_indices(count, budget)
    if expected is not None:
        assert got == expected
    assert len(got) == min(count, budget) and len(set(got)) == len(got) and got[0] == 0
    assert got[-1] == count - 1 or budget == 1
    assert max(np.diff(got, prepend=0)) <= math.ceil((count - 1) / max(budget - 1, 1)) + 1


# ----------------------------------------------------------------------------------------------- the memory


def test_tracks_follow_each_moved_object(day: Day) -> None:
    memory, moves = day.memory, day.experience.moves
    assert sorted(memory.moved()) == sorted(day.track_of(m.object_id) for m in moves)
    for move in moves:
        track = memory.tracks[day.track_of(move.object_id)]
        first, last = track.places[0], track.places[-1]
        now = next(o for o in day.sim.current_objects() if o.object_id == move.object_id)
        before = next(o for o in day.sim.home.objects if o.object_id == move.object_id)
        assert np.linalg.norm(last.centroid_m[:2] - day.episode_xy(now.position_m)) < 0.12
        assert np.linalg.norm(first.centroid_m[:2] - day.episode_xy(before.position_m)) < 0.12
        # Gone from where it stood from the first frame after the grasp; seen again from the place frame on.
        assert first.gone_frame == move.pick_frame + 1 and first.last_frame == move.pick_frame
        assert last.first_frame == move.place_frame
        # What it stood on, before and after, from geometry alone.
        assert first.support == day.track_of(move.source_id) and last.support == day.track_of(move.dest_id)
    # Where and when: every sighting is a frame whose segmentation shows the object.
    track = memory.tracks[day.track_of(moves[0].object_id)]
    log = day.experience.log
    pixels = day.sim.config.height_px * day.sim.config.width_px
    assert [s.frame for s in track.sightings] == [f.index for f in log.frames
                                                  if f.coverage_of(moves[0].object_id) * pixels >= 50]


def test_interactions_are_inferred_from_the_gripper_and_the_frames(day: Day) -> None:
    truth = [(i.kind, f.index, day.track_of(i.object_id), day.track_of(i.receptacle_id))
             for f, i in day.experience.log.events()]
    inferred = [(i.kind, i.frame, i.track_id, i.receptacle_id) for i in day.memory.interactions]
    assert inferred == truth and not day.memory.notes
    assert [i.time_s for i in day.memory.interactions] == [day.video.frames[i.frame].time_s
                                                           for i in day.memory.interactions]


def test_rooms_and_visits_match_the_floor_plan(day: Day) -> None:
    log, memory = day.experience.log, day.memory
    pairs = Counter((f.room_id, memory.frame_rooms[f.index]) for f in log.frames if f.room_id is not None)
    label_of = {}
    for (true, label), _ in pairs.most_common():
        label_of.setdefault(true, label)
    assert len(set(label_of.values())) == len(label_of)  # one label per room, no two rooms merged
    agree = sum(n for (true, label), n in pairs.items() if label_of[true] == label)
    # The rest stand in doorways: without sliding the walker turns in place where its next step is not clear,
    # doorways included (10 of this experience's 122 frames; 0.95 held with sliding).
    assert agree >= 0.9 * sum(pairs.values())
    true_order = list(dict.fromkeys(f.room_id for f in log.frames if f.room_id is not None))
    assert memory.rooms_in_order() == [label_of[r] for r in true_order]
    visits = memory.room_visits()
    assert visits[0].first_frame == 0 and all(v.start_s <= v.end_s for v in visits)
    assert all(a.room != b.room for a, b in zip(visits, visits[1:], strict=False))


def test_frames_are_retrievable_by_what_they_show(day: Day) -> None:
    category = day.memory.tracks[day.track_of(day.experience.moves[0].dest_id)].category
    hits = day.memory.retrieve_text(category, k=5)
    assert len(hits) == 5 and hits[0][1] > 0.5
    for frame, _ in hits:
        assert any(day.memory.tracks[t].category == category for t, _, _ in day.memory.frame_sightings[frame])
    with pytest.raises(ConfigError, match="not one of the"):
        day.memory.retrieve_text("spaceship")


def test_the_memory_answers_as_the_log_does(day: Day) -> None:
    """The perceived log differs from the simulator's in names only: same events, supports and frames shown."""
    perceived, log = memory_log(day.memory), day.experience.log
    name = {o: day.track_of(o) for o in log.objects}
    assert [(f.index, i.kind, i.object_id, i.receptacle_id) for f, i in perceived.events()] == \
        [(f.index, i.kind, name[i.object_id], name[i.receptacle_id]) for f, i in log.events()]
    for ours, theirs in zip(perceived.frames, log.frames, strict=True):
        shown = {(name[s.object_id], None if s.support_id is None else name[s.support_id]) for s in theirs.seen}
        assert {(s.object_id, s.support_id) for s in ours.seen if s.coverage >= 0.001} == shown, ours.index
    info = perceived.objects[name[day.experience.moves[0].object_id]]
    truth = day.sim.home.object(day.experience.moves[0].object_id)
    assert (info.category, info.colour, info.material) == (truth.category, truth.colour, truth.material)


# ------------------------------------------------------------------------------------ from the frames alone


def _first_pick_task(day: Day) -> FindingDoryTask:
    move = day.experience.moves[0]
    return FindingDoryTask("task_1", "interaction_order", "order_pick", "Navigate to the object you picked up first.",
                           (Subgoal("object", frozenset({move.object_id})),))


def test_a_moved_object_is_found_at_its_new_place_from_frames_alone(day: Day) -> None:
    """No instance ids: the masks come numbered per frame. The gripper closing tells that something was taken, the
    frames which object vanished; the gripper opening, what appeared; geometry, where it stands now."""
    selector = MemorySelector(GroundTruthWithoutIds(LABELS), "ground_truth masks, per-frame keys")
    selector.begin_episode(EpisodeExperience(video=day.video, log=day.experience.log))
    memory = selector.memory
    assert memory is not None and all(t.key is None for t in memory.tracks.values())
    assert [(i.kind, i.frame) for i in memory.interactions] == [(i.kind, f.index)
                                                                for f, i in day.experience.log.events()]
    move = day.experience.moves[0]
    picked = memory.interactions[0].track_id
    assert picked is not None and memory.interactions[1].track_id == picked  # the same object put down
    now = next(o for o in day.sim.current_objects() if o.object_id == move.object_id)
    assert np.linalg.norm(memory.current_place(picked).centroid_m[:2] - day.episode_xy(now.position_m)) < 0.12
    task = _first_pick_task(day)
    selection = selector.select(task.lang)
    assert selection.frame_indices[0] >= move.place_frame  # a view of where it stands now, not where it stood
    assert high_level_outcome(day.judge, task, selection, day.experience.log).success


def test_a_stale_view_would_fail(day: Day) -> None:
    """The check above could fail: the best view of the object before its move is judged wrong."""
    move = day.experience.moves[0]
    track = day.memory.tracks[day.track_of(move.object_id)]
    before = max(track.frames_at(0), key=lambda s: s.coverage).frame
    task = _first_pick_task(day)
    stale = Selection((before,), (track.track_id,), ())
    assert not high_level_outcome(day.judge, task, stale, day.experience.log).success


def test_building_needs_what_the_perception_needs(day: Day) -> None:
    bare = ExperienceVideo(tuple(dataclasses.replace(f, segmentation_png=None) for f in day.video.frames[:3]))
    with pytest.raises(ConfigError, match="needs a video recorded with segmentation"):
        build_experience_memory(bare, GroundTruthPerception(LABELS))
    with pytest.raises(ConfigError, match="empty experience video"):
        build_experience_memory(ExperienceVideo(()), GroundTruthPerception(LABELS))


# ----------------------------------------------------------------------------------------------- as a bag


def test_the_experience_bag_holds_the_video_and_gives_the_same_memory(day: Day, tmp_path: Path) -> None:
    from goat_ros.record import check_bag_path
    from goat_suites.findingdory import experience_bag as bag

    folder = bag.write_experience_bag(tmp_path / "day", day.video, {"episode_id": "e"})
    info = yaml.safe_load((folder / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]}
    assert counts[bag.RGB_COMPRESSED_TOPIC] == counts[bag.DEPTH_COMPRESSED_TOPIC] == len(day.video)
    assert counts[bag.SEGMENTATION_TOPIC] == counts[bag.GRIPPER_HOLDING_TOPIC] == len(day.video)
    size = sum(f.stat().st_size for f in folder.iterdir())
    assert size < 80_000 * len(day.video)  # compressed images: ~55 kB a frame, raw ones were ~570 kB
    back = bag.read_experience_bag(folder)
    assert len(back) == len(day.video) and back.annotation == dict(day.video.annotation)
    for ours, theirs in zip(back.frames, day.video.frames, strict=True):
        assert (ours.rgb_jpeg, ours.depth_png, ours.segmentation_png) == \
            (theirs.rgb_jpeg, theirs.depth_png, theirs.segmentation_png)
        assert ours.time_s == pytest.approx(theirs.time_s, abs=1e-9) and ours.proprioception == theirs.proprioception
        assert (ours.pose.x_m, ours.pose.y_m, ours.camera_tilt_rad) == pytest.approx(
            (theirs.pose.x_m, theirs.pose.y_m, theirs.camera_tilt_rad), abs=1e-9)
        assert math.cos(ours.pose.yaw_rad - theirs.pose.yaw_rad) == pytest.approx(1.0)
        assert (ours.intrinsics.width, ours.intrinsics.fx, ours.intrinsics.cy) == \
            (theirs.intrinsics.width, theirs.intrinsics.fx, theirs.intrinsics.cy)
    again = build_experience_memory(back, GroundTruthPerception(LABELS))
    assert [(i.kind, i.frame, i.track_id, i.receptacle_id) for i in again.interactions] == \
        [(i.kind, i.frame, i.track_id, i.receptacle_id) for i in day.memory.interactions]
    assert again.frame_rooms == day.memory.frame_rooms
    with pytest.raises(RecordError, match="already exists"):
        check_bag_path(folder)
    with pytest.raises(RecordError, match="cannot read experience bag"):
        bag.read_experience_bag(tmp_path / "nothing")


# ------------------------------------------------------------------------------------- open-vocabulary memory


@pytest.mark.slow
def test_the_memory_runs_an_open_vocabulary_detector_and_clip(day: Day, tmp_path: Path) -> None:
    """The detector + CLIP path on tiny random models (real architectures, meaningless outputs): the memory is
    built from RGB-D alone (no segmentation recorded), tracks are associated geometrically and every frame gets
    a CLIP embedding."""
    pytest.importorskip("torch", reason="the openvocab extra is not installed (pip install -e '.[openvocab]')")
    pytest.importorskip("transformers", reason="the openvocab extra is not installed")
    from goat_core.perception.factory import PerceptionConfig
    from goat_core.perception.tiny_models import save_tiny_model
    from goat_suites.findingdory.args import PolicyChoice, build_policy

    owl, clip = save_tiny_model(tmp_path / "owl", "owlvit"), save_tiny_model(tmp_path / "clip", "clip")
    choice = PolicyChoice(perception=PerceptionConfig(backend="owlvit", model_dir=str(owl)), clip_model_dir=str(clip))
    assert choice.video_encoding() == VideoEncoding(with_segmentation=False)
    frames = tuple(dataclasses.replace(f, segmentation_png=None) for f in day.video.frames[:12])
    policy = build_policy(choice)
    assert isinstance(policy, MemorySelector)
    policy.begin_episode(EpisodeExperience(video=ExperienceVideo(frames), log=day.experience.log))
    memory = policy.memory
    assert memory is not None and memory.embeddings.shape[0] == 12 and memory.embeddings.shape[1] > 1
    assert np.allclose(np.linalg.norm(memory.embeddings, axis=1), 1.0, atol=1e-4)
    assert all(track.key is None for track in memory.tracks.values())
    assert memory.retrieve_text("a mug", k=3)[0][0] in range(12)
    assert policy.describe() == {"selector": "memory", "perception": "owlvit", "frame_embedding": "clip",
                                 "reads": "a memory built from the experience video's frames and proprioception"}
