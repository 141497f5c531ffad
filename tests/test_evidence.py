"""Evidence over views in the instance memory: trust after repeated detections, confusions outvoted by later
looks, phantoms forgotten when views that should show them do not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goat_core.mapping.evidence import EvidenceConfig, InstanceEvidence
from goat_core.mapping.instance_memory import InstanceMemory, InstanceMemoryConfig
from goat_core.types import CameraIntrinsics, Detection, Observation, Pose2D

K = CameraIntrinsics.from_hfov(160, 120, math.radians(42.0))
ORIGIN = Pose2D(0.0, 0.0, 0.0)
BOX = (40, 80, 60, 100)  # v0, v1, u0, u1: a 40 x 40 pixel object


def _obs(step: int, object_depth_m: float = 2.0, pose: Pose2D = ORIGIN) -> Observation:
    """A wall 3 m ahead; in front of it, where BOX is, a surface at ``object_depth_m`` (0: nothing there)."""
    depth = np.full((K.height, K.width), 3.0, np.float32)
    if object_depth_m > 0:
        v0, v1, u0, u1 = BOX
        depth[v0:v1, u0:u1] = object_depth_m
    return Observation(rgb=np.full((K.height, K.width, 3), 90, np.uint8), depth_m=depth, pose=pose,
                       camera_tilt_rad=0.0, camera_height_m=1.31, intrinsics=K, step=step)


def _det(category: str, score: float, key: int = 5) -> Detection:
    mask = np.zeros((K.height, K.width), bool)
    v0, v1, u0, u1 = BOX
    mask[v0:v1, u0:u1] = True
    return Detection(instance_key=key, category=category, mask=mask, score=score, bbox_xyxy=(u0, v0, u1, v1))


def _memory(**evidence: object) -> InstanceMemory:
    return InstanceMemory(InstanceMemoryConfig(evidence=EvidenceConfig(enabled=True, **evidence)))  # type: ignore[arg-type]


@pytest.mark.parametrize("persistent_keys", [True, False])
def test_a_phantom_that_is_not_seen_again_is_dropped(persistent_keys: bool) -> None:
    memory = _memory(forget_after_unseen=3)
    memory.update([_det("chair", 0.5)], _obs(0), persistent_keys)
    assert len(memory.candidates) == 1 and memory.instances == {}  # one weak look: kept, not trusted
    for step in (1, 2):
        memory.update([], _obs(step), persistent_keys)
        assert len(memory.candidates) == 1
    memory.update([], _obs(3), persistent_keys)
    assert memory.candidates == {} and memory.instances == {}


def test_an_instance_out_of_view_or_hidden_is_not_forgotten() -> None:
    memory = _memory(forget_after_unseen=1)
    memory.update([_det("chair", 0.9)], _obs(0), True)
    memory.update([], _obs(1, pose=Pose2D(0.0, 0.0, math.pi)), True)  # looking the other way
    behind = _obs(2)
    behind.depth_m[:] = 1.0  # something nearer covers the whole view
    memory.update([], behind, True)
    far = _obs(3, pose=Pose2D(-4.0, 0.0, 0.0))  # 6 m away: too small and far for a miss to mean anything
    far.depth_m[:] = 7.0
    memory.update([], far, True)
    assert len(memory.candidates) == 1


def test_a_real_object_missed_once_is_kept_and_trusted_after_two_looks() -> None:
    memory = _memory(forget_after_unseen=2)
    memory.update([_det("chair", 0.8)], _obs(0), True)
    memory.update([], _obs(1), True)  # missed once
    touched = memory.update([_det("chair", 0.8)], _obs(2), True)
    assert list(memory.instances) == touched == [0]
    assert memory.instances[0].category == "chair"
    memory.update([], _obs(3), True)
    assert 0 in memory.instances  # one miss in a row is not enough


@pytest.mark.parametrize("persistent_keys", [True, False])
def test_a_confusion_is_resolved_by_a_second_look(persistent_keys: bool) -> None:
    memory = _memory()
    memory.update([_det("armchair", 0.55)], _obs(0), persistent_keys)
    assert memory.candidates[0].category == "armchair" and memory.instances == {}
    memory.update([_det("chair", 0.8, key=9 if not persistent_keys else 5)], _obs(1), persistent_keys)
    assert len(memory.candidates) == 1  # the same object, not a second one
    assert memory.instances[0].category == "chair"
    assert memory.evidence[0].votes == pytest.approx({"armchair": 0.55, "chair": 0.8})


def test_evidence_off_keeps_the_memory_as_it_was() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    assert memory.instances is memory.candidates
    memory.update([_det("chair", 0.3)], _obs(0), True)
    for step in range(1, 6):
        memory.update([], _obs(step), True)
    assert memory.instances[0].category == "chair" and memory.evidence == {}


def test_fused_confidence_is_a_noisy_or_of_the_winning_category() -> None:
    ev = InstanceEvidence()
    for category, score in (("cup", 0.5), ("mug", 0.4), ("cup", 0.5)):
        ev.add(category, score)
    assert ev.category() == "cup" and ev.confidence() == pytest.approx(0.75)
    assert ev.trusted(EvidenceConfig(min_detections=3, min_confidence=0.7))
    assert not ev.trusted(EvidenceConfig(min_detections=4, min_confidence=0.7))


def test_bad_evidence_config_names_the_value() -> None:
    with pytest.raises(ValueError, match="min_detections"):
        EvidenceConfig(min_detections=0)
    with pytest.raises(ValueError, match="visible_fraction"):
        EvidenceConfig(visible_fraction=1.5)


def test_a_mask_that_bleeds_onto_the_wall_is_not_smeared_there() -> None:
    mask = np.zeros((K.height, K.width), bool)
    v0, v1, u0, u1 = BOX
    mask[v0 - 4:v1 + 4, u0 - 4:u1 + 4] = True  # dilated by 4 px: a rim on the wall 1 m behind the object
    bled = Detection(instance_key=5, category="chair", mask=mask, score=0.9)
    for evidence, farthest_m in ((True, 2.0), (False, 3.0)):
        memory = InstanceMemory(InstanceMemoryConfig(evidence=EvidenceConfig(enabled=evidence)))
        memory.update([bled], _obs(0), True)
        x_m = memory.candidates[0].points_xyz_m[:, 0]
        assert x_m.max() == pytest.approx(farthest_m, abs=0.1)  # the object's face is 2 m ahead, the wall 3 m


def _box_det(category: str, key: int, box: tuple[int, int, int, int], score: float = 0.9) -> Detection:
    mask = np.zeros((K.height, K.width), bool)
    v0, v1, u0, u1 = box
    mask[v0:v1, u0:u1] = True
    return Detection(instance_key=key, category=category, mask=mask, score=score, bbox_xyxy=(u0, v0, u1, v1))


def _two_objects(step: int) -> Observation:
    """Two objects 2 m ahead, one left of the image centre and one right, about 0.5 m apart."""
    depth = np.full((K.height, K.width), 3.0, np.float32)
    depth[40:80, 20:50] = 2.0
    depth[40:80, 110:140] = 2.0
    return Observation(rgb=np.full((K.height, K.width, 3), 90, np.uint8), depth_m=depth, pose=ORIGIN,
                       camera_tilt_rad=0.0, camera_height_m=1.31, intrinsics=K, step=step)


LEFT, RIGHT = (40, 80, 20, 50), (40, 80, 110, 140)


@pytest.mark.parametrize("tracker_gap_m, expected", [(0.25, 2), (0.0, 1)])
def test_a_tracker_merge_of_two_objects_does_not_make_them_one_instance(tracker_gap_m: float, expected: int) -> None:
    memory = _memory(tracker_gap_m=tracker_gap_m)
    for step in range(3):
        memory.update([_box_det("chair", 1, LEFT)], _two_objects(step), True)
    # The tracker now gives the right-hand chair the left one's id (a merge), and keeps doing so.
    for step in range(3, 6):
        memory.update([_box_det("chair", 1, LEFT), _box_det("chair", 1, RIGHT)], _two_objects(step), True)
    assert len(memory.instances) == expected  # without the check (0) the two chairs are one smeared instance
    if expected == 2:
        centres = sorted(float(inst.centroid_m[1]) for inst in memory.instances.values())
        assert centres[1] - centres[0] > 0.4  # one on each side, neither smeared across both


@pytest.mark.parametrize("tracker_gap_m, expected", [(0.25, 6), (0.0, 3)])
def test_a_tracker_split_of_one_object_stays_one_instance(tracker_gap_m: float, expected: int) -> None:
    memory = _memory(tracker_gap_m=tracker_gap_m)
    for step in range(3):
        memory.update([_box_det("chair", 1, LEFT)], _two_objects(step), True)
    for step in range(3, 6):  # the tracker gives the same chair a new id from here on (a split)
        memory.update([_box_det("chair", 2, LEFT)], _two_objects(step), True)
    # Trusting keys (0), the new id is a new instance and the old one, no longer detected, is forgotten: the
    # chair's first three looks are lost. Checked against geometry, all six looks are one instance's.
    assert len(memory.candidates) == 1
    assert next(iter(memory.evidence.values())).detections == expected


@pytest.mark.parametrize("per_detection, kept_after", [(1.0, 5), (0.0, 2)])
def test_an_instance_detected_often_needs_as_many_misses_in_a_row_to_be_forgotten(per_detection: float,
                                                                                  kept_after: int) -> None:
    """Six detections of a small object a detector misses one frame in two: three misses in a row are no proof
    that it is not there (0 per detection: the old rule, three misses forget it)."""
    memory = _memory(forget_after_unseen=3, forget_unseen_per_detection=per_detection)
    for step in range(6):
        memory.update([_det("clock", 0.8)], _obs(step), True)
    misses = 0
    while memory.candidates:
        memory.update([], _obs(6 + misses), True)
        misses += 1
    assert misses == kept_after + 1
    assert _memory(forget_after_unseen=3).config.evidence.forget_unseen_per_detection == 1.0  # the default


def test_a_negative_forget_rate_names_the_value() -> None:
    with pytest.raises(ValueError, match="forget_unseen_per_detection must be >= 0, got -1.0"):
        EvidenceConfig(forget_unseen_per_detection=-1.0)


def test_relaxed_trust_shows_untrusted_candidates_until_it_ends() -> None:
    memory = _memory()
    memory.update([_det("bowl", 0.2)], _obs(0), True)  # one weak look: remembered, not trusted
    assert memory.instances == {} and len(memory.candidates) == 1
    assert memory.update([_det("bowl", 0.2)], _obs(1), True) == []  # a detection of an untrusted instance
    memory.relax_trust(True)
    assert list(memory.instances) == [0]
    assert memory.update([_det("bowl", 0.2)], _obs(2), True) == [0]  # its detections count as seen now
    memory.relax_trust(False)
    assert memory.instances == {}  # three looks of 0.2 fuse to 0.49, under the 0.6 trust needs
    memory.clear()
    assert not memory.trust_all


def test_relaxed_trust_changes_nothing_with_evidence_off() -> None:
    memory = InstanceMemory(InstanceMemoryConfig())
    memory.update([_det("bowl", 0.5)], _obs(0), True)
    memory.relax_trust(True)
    assert not memory.trust_all and memory.instances is memory.candidates and list(memory.instances) == [0]


def test_a_forgotten_instance_is_recalled_with_its_evidence_and_kept_for_the_subtask() -> None:
    """The agent's recall before giving up (InstanceMemory.recall): what forgetting took out comes back with its
    votes, is not forgotten again until trust is restored (the next subtask), and an episode's clear ends it."""
    memory = _memory(forget_after_unseen=3)
    memory.update([_det("candle", 0.75)], _obs(0), True)
    for step in (1, 2, 3):
        memory.update([], _obs(step), True)
    assert memory.candidates == {} and [i.category for i in memory.forgotten.values()] == ["candle"]
    (mem_id,) = memory.forgotten
    assert memory.recall([mem_id, mem_id + 7]) == [mem_id]  # an id never forgotten is ignored
    assert list(memory.candidates) == [mem_id] and memory.forgotten == {} and memory.recalled == {mem_id}
    ev = memory.evidence[mem_id]
    assert ev.votes == {"candle": 0.75} and ev.detections == 1 and ev.unseen_in_a_row == 0
    assert memory.instances == {}  # recalled is not trusted: one look is still one look
    for step in range(4, 10):  # recalled: the misses that forgot it do not forget it again in this subtask
        memory.update([], _obs(step), True)
    assert list(memory.candidates) == [mem_id]
    memory.relax_trust(False)  # the next subtask: forgetting applies again
    memory.update([], _obs(10), True)
    assert memory.candidates == {} and list(memory.forgotten) == [mem_id]
    memory.clear()
    assert memory.forgotten == {} and memory.recall([mem_id]) == []


def test_forgotten_instances_are_kept_up_to_a_bound_oldest_dropped_first() -> None:
    memory = _memory(forget_after_unseen=1, max_forgotten=2)
    for step in range(3):  # three phantoms, each forgotten by the next view
        memory.update([_det("chair", 0.5, key=step)], _obs(2 * step), True)
        memory.update([], _obs(2 * step + 1), True)
    assert list(memory.forgotten) == [1, 2]  # the first phantom (id 0) was dropped
    with pytest.raises(ValueError, match="max_forgotten must be >= 0, got -1"):
        EvidenceConfig(max_forgotten=-1)
