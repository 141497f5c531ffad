"""A queryable memory of an experience video, built from its frames alone.

What goes in: the video (:mod:`goat_suites.findingdory.experience_video`: RGB-D frames, camera poses, clock,
proprioception) and a perception backend (ground-truth segmentation, or an open-vocabulary detector). What the
simulator's structured log knows about picks, places, supports and rooms is not used: it is scoring data.

What comes out (:class:`ExperienceMemory`):

* object tracks (:mod:`goat_suites.findingdory.object_tracks`): where and when each object was seen, the places it
  stood at, when a place was found empty (a disappearance) and where the object was seen again (a move);
* what each small object stood on: the floor-standing track with the most surface points right under its
  footprint, at the height of its base (``support_gap_m``);
* interactions, inferred from proprioception plus perception. A *pick*: the gripper closed on something between
  two frames, and the object that was in view before and is gone after, where it should still be visible, is
  what it took (largest in the image first); it is logged on the last frame before the grasp, as the picked
  object's last view where it stood. A *place*: the gripper opened between two frames; the carried object is
  the one that appears in the first frame after it (with persistent keys: the carried key; with a detector: a
  detection no mask of its category overlapped in the frame before, the robot standing still, nearest the image
  centre), logged on that frame. The receptacle of each is the support of
  the place the object left or reached; where no support was found under the object, the furniture that covers
  most of the frame of the pick (the first frame showing the object at the place it reached), noted as a guess;
* rooms (:mod:`goat_suites.findingdory.room_segments`) and the room of every frame, hence the rooms visited, in order,
  with their times;
* one embedding per frame for retrieval (a coverage-weighted histogram of the categories in view, or CLIP's
  image embedding when a CLIP model is given).

``goat_suites.findingdory.memory`` writes the memory in the form of the structured log (objects named by
track ids, rooms by room labels), so that the rule-based selector answers from what the robot perceived with the
same rules it applies to the oracle's log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping, Optional, Protocol, Sequence

import numpy as np

from goat_core.errors import ConfigError, GoatError
from goat_core.geometry import wrap_angle_rad
from goat_core.perception.base import PerceptionBackend
from goat_core.types import Detection, Observation, Pose2D
from goat_suites.findingdory.experience_video import ExperienceVideo, InstanceAnnotation, VideoFrame
from goat_suites.findingdory.object_tracks import (
    Measured,
    ObjectTrack,
    ObjectTracker,
    Place,
    TrackConfig,
    image_centre_distance_px,
)
from goat_suites.findingdory.room_segments import RoomMap, RoomSegmentConfig, RoomSegmenter

InteractionKind = Literal["pick", "place"]


@dataclass(frozen=True)
class MemoryConfig:
    tracks: TrackConfig = field(default_factory=TrackConfig)
    rooms: RoomSegmentConfig = field(default_factory=RoomSegmentConfig)
    support_gap_m: float = 0.08  # an object's base lies within this above (or 3 cm below) its support's top
    support_margin_m: float = 0.05  # the support's points are looked for this far around the object's footprint

    def __post_init__(self) -> None:
        if not (self.support_gap_m > 0.0 and self.support_margin_m >= 0.0):
            raise ConfigError(f"MemoryConfig: support_gap_m must be > 0 and support_margin_m >= 0, got "
                              f"{self.support_gap_m!r}, {self.support_margin_m!r}")


@dataclass(frozen=True)
class InferredInteraction:
    """A pick or a place as the memory inferred it."""

    kind: InteractionKind
    frame: int  # pick: the last frame before the grasp; place: the first frame after the release
    time_s: float
    track_id: Optional[str]  # None when no object could be told apart as the one taken
    receptacle_id: Optional[str]  # the support of the place the object left (pick) or reached (place)
    place: Optional[int]  # index into the track's places: the one left (pick) or reached (place)
    # True when no support was found under the object and the receptacle is the furniture that covers most of
    # the frame of the pick (place) instead; the memory's notes say so too.
    receptacle_guessed: bool = False


@dataclass(frozen=True)
class RoomVisit:
    """One stay in a room: consecutive frames with the same room label."""

    room: int
    first_frame: int
    last_frame: int
    start_s: float
    end_s: float


class FrameEmbedder(Protocol):
    """Per-frame vectors for retrieval (unit length; cosine similarity is a dot product)."""

    name: str

    def embed_frame(self, obs: Observation, detections: Sequence[Detection]) -> np.ndarray: ...

    def embed_text(self, text: str) -> np.ndarray: ...


class CategoryHistogramEmbedder:
    """A frame as the share of the image each category of ``labels`` covers, L2-normalised; a text query is the
    one-hot vector of the category it names. Needs no model: the embedding of the ground-truth setting."""

    name = "category_histogram"

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = tuple(sorted(set(labels)))
        if not self.labels:
            raise ConfigError("CategoryHistogramEmbedder needs at least one label")
        self._index = {label: k for k, label in enumerate(self.labels)}

    def embed_frame(self, obs: Observation, detections: Sequence[Detection]) -> np.ndarray:
        v = np.zeros(len(self.labels), dtype=np.float32)
        for det in detections:
            k = self._index.get(det.category)
            if k is not None:
                v[k] += float(np.count_nonzero(det.mask)) / det.mask.size
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0.0 else v

    def embed_text(self, text: str) -> np.ndarray:
        k = self._index.get(text.strip())
        if k is None:
            raise ConfigError(f"{text!r} is not one of the {len(self.labels)} categories this embedding knows "
                              f"(e.g. {list(self.labels[:5])})")
        v = np.zeros(len(self.labels), dtype=np.float32)
        v[k] = 1.0
        return v


class ImageTextEncoder(Protocol):
    """What :class:`ClipFrameEmbedder` needs of a CLIP model (goat_core.perception.clip_embedder.ClipEmbedder)."""

    def encode_images(self, images: Sequence[np.ndarray]) -> np.ndarray: ...

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray: ...


class ClipFrameEmbedder:
    """A frame as CLIP's embedding of the whole image; a text query as CLIP's embedding of the text."""

    name = "clip"

    def __init__(self, clip: ImageTextEncoder) -> None:
        self.clip = clip

    def embed_frame(self, obs: Observation, detections: Sequence[Detection]) -> np.ndarray:
        return np.asarray(self.clip.encode_images([obs.rgb])[0], dtype=np.float32)

    def embed_text(self, text: str) -> np.ndarray:
        return np.asarray(self.clip.encode_texts([text])[0], dtype=np.float32)


@dataclass(eq=False)
class ExperienceMemory:
    """The memory of one experience (episode frame; see the module docstring)."""

    tracks: Mapping[str, ObjectTrack]  # in order of first sight
    furniture: frozenset[str]  # tracks standing on the floor (receptacles)
    interactions: tuple[InferredInteraction, ...]  # in time order
    room_map: RoomMap
    frame_rooms: tuple[Optional[int], ...]  # room label of each frame's base position
    frame_times_s: tuple[float, ...]
    frame_poses: tuple[Pose2D, ...]
    frame_tilts_rad: tuple[float, ...]
    frame_sightings: tuple[tuple[tuple[str, float, int], ...], ...]  # per frame (track id, coverage, place)
    annotations: Mapping[str, InstanceAnnotation]  # track id -> the simulator's annotation (ground truth only)
    embeddings: np.ndarray  # (frames, D) float32
    embedder: Optional[FrameEmbedder]
    notes: tuple[str, ...] = ()  # what could not be inferred (an unidentified pick ...)

    def __len__(self) -> int:
        return len(self.frame_times_s)

    # ------------------------------------------------------------------------------------------------ queries
    def interactions_of(self, kind: InteractionKind) -> list[InferredInteraction]:
        return [i for i in self.interactions if i.kind == kind]

    def moved(self) -> list[str]:
        """Tracks seen at more than one place (moved during the experience), in order of first sight."""
        return [t for t, track in self.tracks.items() if len(track.places) > 1]

    def current_place(self, track_id: str) -> Place:
        """Where the object was last seen standing."""
        return self._track(track_id).place

    def disappearances(self) -> list[tuple[str, int, int]]:
        """(track id, place index, frame the place was found empty) for every place that became gone."""
        return [(t, k, p.gone_frame) for t, track in self.tracks.items() for k, p in enumerate(track.places)
                if p.gone_frame is not None]

    def frames_showing(self, track_id: str, place: Optional[int] = None, min_coverage: float = 0.0
                       ) -> list[tuple[int, float]]:
        """(frame, coverage) of the sightings of a track (at one place, or all), in time order."""
        return [(s.frame, s.coverage) for s in self._track(track_id).sightings
                if (place is None or s.place == place) and s.coverage >= min_coverage]

    def best_frame(self, track_id: str, min_coverage: float = 0.0) -> Optional[int]:
        """The frame showing the object largest at the place it was last seen at."""
        track = self._track(track_id)
        found = self.frames_showing(track_id, len(track.places) - 1, min_coverage)
        return None if not found else max(found, key=lambda fc: (fc[1], -fc[0]))[0]

    def room_visits(self) -> list[RoomVisit]:
        """Stays in rooms in time order (frames off every room are skipped, not a stay of their own)."""
        visits: list[RoomVisit] = []
        for k, room in enumerate(self.frame_rooms):
            if room is None:
                continue
            if visits and visits[-1].room == room:
                last = visits[-1]
                visits[-1] = RoomVisit(room, last.first_frame, k, last.start_s, self.frame_times_s[k])
            else:
                visits.append(RoomVisit(room, k, k, self.frame_times_s[k], self.frame_times_s[k]))
        return visits

    def rooms_in_order(self) -> list[int]:
        """Rooms in the order they were first entered."""
        return list(dict.fromkeys(v.room for v in self.room_visits()))

    def retrieve(self, query: np.ndarray, k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` frames most similar to a query vector: (frame, cosine), best first (ties: earlier frame)."""
        if k < 1:
            raise ConfigError(f"retrieve needs k >= 1, got {k!r}")
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if self.embeddings.shape[0] == 0 or q.shape[0] != self.embeddings.shape[1]:
            raise ConfigError(f"query of dimension {q.shape[0]} for frame embeddings of shape "
                              f"{self.embeddings.shape}")
        sims = self.embeddings @ (q / max(float(np.linalg.norm(q)), 1e-12))
        order = np.lexsort((np.arange(sims.shape[0]), -sims))[:k]
        return [(int(i), float(sims[i])) for i in order]

    def retrieve_text(self, text: str, k: int = 5) -> list[tuple[int, float]]:
        if self.embedder is None:
            raise ConfigError("this memory was built without a frame embedder")
        return self.retrieve(self.embedder.embed_text(text), k)

    def _track(self, track_id: str) -> ObjectTrack:
        try:
            return self.tracks[track_id]
        except KeyError:
            raise GoatError(f"the memory has no track {track_id!r}") from None


# ----------------------------------------------------------------------------------------------- building


class _Builder:
    def __init__(self, video: ExperienceVideo, perception: PerceptionBackend, config: MemoryConfig,
                 embedder: Optional[FrameEmbedder]) -> None:
        self.video = video
        self.perception = perception
        self.config = config
        self.embedder = embedder
        self.tracker = ObjectTracker(config.tracks, perception.persistent_keys)
        self.rooms = RoomSegmenter(config.rooms)
        self.held: Optional[str] = None
        self.pending: list[InferredInteraction] = []
        self.notes: list[str] = []
        self.sightings: list[tuple[tuple[str, float, int], ...]] = []
        self.embeddings: list[np.ndarray] = []
        self.previous_view: Optional[tuple[Observation, list[Detection]]] = None

    def add(self, frame: VideoFrame, previous: Optional[VideoFrame]) -> None:
        obs = frame.observation(self.video.annotation)
        detections = self.perception.detect(obs)
        measured = self.tracker.measure(obs, detections)
        grasped = previous is not None and frame.proprioception.holding and not previous.proprioception.holding
        released = previous is not None and previous.proprioception.holding and not frame.proprioception.holding
        placed = self._release_detection(measured, obs, detections) if released and self.held is not None else None
        pairs = self.tracker.observe(frame.index, measured, placed)
        if grasped and previous is not None:
            self._grasp(frame.index, previous, obs)
        if released:
            self._release(frame, placed is not None)
        self.tracker.update_missing(frame.index, obs)
        self.rooms.update(obs)
        self.sightings.append(tuple((t, m.coverage, len(self.tracker.tracks[t].places) - 1) for t, m in pairs))
        self.previous_view = (obs, list(detections))
        if self.embedder is not None:
            self.embeddings.append(np.asarray(self.embedder.embed_frame(obs, detections), dtype=np.float32))

    def _grasp(self, index: int, previous: VideoFrame, obs: Observation) -> None:
        """The gripper closed between ``previous`` and this frame: which object did it take?"""
        tracks = self.tracker.tracks
        gone = [t for t in self.tracker.seen_last if t not in self.tracker.seen_now and not tracks[t].held
                and not self.tracker.is_furniture(tracks[t])]
        in_view = {t for t in gone if self.tracker.expected_in_view(tracks[t].place, obs)}
        cover = {t: s.coverage for t in gone for s in tracks[t].sightings if s.frame == previous.index}
        ranked = sorted(gone, key=lambda t: (t not in in_view, -cover.get(t, 0.0), t))
        if self.held is not None:
            self.notes.append(f"frame {index}: a grasp while {self.held} was still held; treated as put down unseen")
            self.tracker.tracks[self.held].held = False
            self.held = None
        if not ranked:
            self.notes.append(f"frame {index}: the gripper closed but no object vanished from view")
            self.pending.append(InferredInteraction("pick", previous.index, previous.time_s, None, None, None))
            return
        track_id = ranked[0]
        place = len(tracks[track_id].places) - 1
        self.tracker.pick(track_id, index)
        self.held = track_id
        self.pending.append(InferredInteraction("pick", previous.index, previous.time_s, track_id, None, place))

    def _release_detection(self, measured: Sequence[Measured], obs: Observation, detections: Sequence[Detection]
                           ) -> Optional[tuple[str, Measured]]:
        """The detection that shows the carried object in the first frame after the gripper opened: with persistent
        keys, the carried key; otherwise a small object that appeared, preferably of the carried object's category
        and nearest the image centre. "Appeared": where the robot stood still, a detection whose mask overlaps no
        mask of its category in the frame before; after a move, one that belongs to no track."""
        assert self.held is not None
        held = self.tracker.tracks[self.held]
        if self.tracker.persistent_keys:
            found = [m for m in measured if m.detection.instance_key == held.key]
        else:
            small = [m for m in measured if self.tracker.is_small(m)]
            still = self.previous_view is not None and _same_view(self.previous_view[0], obs)
            if still and self.previous_view is not None:
                before = self.previous_view[1]
                found = [m for m in small if _overlap(m.detection, before) < _APPEARED_MAX_OVERLAP]
            else:
                found = [m for m in small if not self.tracker.would_associate(m)]
            found.sort(key=lambda m: (m.detection.category not in held.category_votes,
                                      image_centre_distance_px(m, obs), -m.coverage))
        return (self.held, found[0]) if found else None

    def _release(self, frame: VideoFrame, seen: bool) -> None:
        if self.held is None:
            self.notes.append(f"frame {frame.index}: the gripper opened but nothing was known to be held")
            self.pending.append(InferredInteraction("place", frame.index, frame.time_s, None, None, None))
            return
        track = self.tracker.tracks[self.held]
        track.held = False
        place = len(track.places) - 1 if seen else None
        if not seen:
            self.notes.append(f"frame {frame.index}: {self.held} was put down out of view")
        self.pending.append(InferredInteraction("place", frame.index, frame.time_s, self.held, None, place))
        self.held = None

    # ------------------------------------------------------------------------------------------- finishing
    def finish(self) -> ExperienceMemory:
        tracks = self.tracker.tracks
        furniture = frozenset(t for t, track in tracks.items() if self.tracker.is_furniture(track))
        self._supports(furniture)
        interactions = tuple(self._with_receptacle(i, furniture) for i in self.pending)
        room_map = self.rooms.segment()
        frames = self.video.frames
        rooms = tuple(room_map.room_at(f.pose.x_m, f.pose.y_m) for f in frames)
        dim = self.embeddings[0].shape[0] if self.embeddings else 0
        embeddings = np.stack(self.embeddings) if self.embeddings else np.zeros((len(frames), dim), np.float32)
        return ExperienceMemory(
            tracks=dict(tracks), furniture=furniture, interactions=interactions, room_map=room_map,
            frame_rooms=rooms, frame_times_s=tuple(f.time_s for f in frames), frame_poses=tuple(f.pose for f in frames),
            frame_tilts_rad=tuple(f.camera_tilt_rad for f in frames), frame_sightings=tuple(self.sightings),
            annotations=self._annotations(), embeddings=embeddings, embedder=self.embedder, notes=tuple(self.notes))

    def _with_receptacle(self, inter: InferredInteraction, furniture: frozenset[str]) -> InferredInteraction:
        """The interaction with its receptacle: the support of the place the object left or reached, else (no
        support found under it, the object unidentified, or put down out of view and never seen again) the
        furniture covering most of the frame of the interaction, or of the first sighting at the place reached."""
        place = inter.place
        support: Optional[str] = None
        frame = inter.frame
        if inter.track_id is not None:
            track = self.tracker.tracks[inter.track_id]
            if place is None and inter.kind == "place":  # put down out of view: the next place it was seen at
                place = next((k for k, p in enumerate(track.places) if p.first_frame >= inter.frame), None)
            if place is not None:
                support = track.places[place].support
                frame = inter.frame if inter.kind == "pick" else track.places[place].first_frame
        guessed = False
        if support is None:
            # The furniture that fills the view of a pick or place is what a person watching would name (a mesh
            # surface below where the object's base was measured, a top above the camera's view ...).
            support = self._largest_furniture(frame, furniture)
            guessed = support is not None
            what = inter.track_id if inter.track_id is not None else "an unidentified object"
            self.notes.append(f"frame {inter.frame}: no support found under {what} at its {inter.kind}; "
                              + (f"took {support}, the furniture covering most of frame {frame}" if guessed
                                 else f"frame {frame} shows no furniture either: its receptacle is unknown"))
        return InferredInteraction(inter.kind, inter.frame, inter.time_s, inter.track_id, support, place, guessed)

    def _largest_furniture(self, frame: int, furniture: frozenset[str]) -> Optional[str]:
        """The furniture track covering the largest share of ``frame`` (ties: lower id), None when none shows."""
        shown = [(coverage, track_id) for track_id, coverage, _ in self.sightings[frame] if track_id in furniture]
        return None if not shown else min(shown, key=lambda ct: (-ct[0], ct[1]))[1]

    def _supports(self, furniture: frozenset[str]) -> None:
        """Give every place of every small object the floor-standing track it stood on."""
        cfg = self.config
        owners = sorted(furniture)
        clouds = [np.concatenate([p.points_xyz_m for p in self.tracker.tracks[t].places]) for t in owners]
        for track_id, track in self.tracker.tracks.items():
            if track_id in furniture:
                continue
            for place in track.places:
                lo, hi = (corner[:2] for corner in place.box_m)
                lo, hi = lo - cfg.support_margin_m, hi + cfg.support_margin_m
                base = place.bottom_z_m
                best: tuple[int, str] | None = None
                for owner, cloud in zip(owners, clouds, strict=True):
                    under = ((cloud[:, 0] >= lo[0]) & (cloud[:, 0] <= hi[0]) & (cloud[:, 1] >= lo[1])
                             & (cloud[:, 1] <= hi[1]) & (cloud[:, 2] >= base - cfg.support_gap_m)
                             & (cloud[:, 2] <= base + 0.03))
                    count = int(np.count_nonzero(under))
                    if count and (best is None or count > best[0]):
                        best = (count, owner)
                place.support = None if best is None else best[1]

    def _annotations(self) -> dict[str, InstanceAnnotation]:
        """The simulator's annotation of each track's instance (ground-truth perception: persistent keys)."""
        out: dict[str, InstanceAnnotation] = {}
        for track_id, track in self.tracker.tracks.items():
            found = self.video.annotation.get(track.key) if track.key is not None else None
            if found is not None:
                out[track_id] = found
        return out


_APPEARED_MAX_OVERLAP = 0.2  # a mask overlapping its category's masks of the frame before less than this is new
_STILL_M = 0.01  # the robot stood still between two frames: its pose moved less than this ...
_STILL_RAD = 0.01  # ... and turned (or tilted its head) less than this


def _same_view(a: Observation, b: Observation) -> bool:
    return (math.hypot(a.pose.x_m - b.pose.x_m, a.pose.y_m - b.pose.y_m) < _STILL_M
            and abs(wrap_angle_rad(a.pose.yaw_rad - b.pose.yaw_rad)) < _STILL_RAD
            and abs(a.camera_tilt_rad - b.camera_tilt_rad) < _STILL_RAD)


def _overlap(det: Detection, before: Sequence[Detection]) -> float:
    """Share of ``det``'s mask covered by the masks of its category in ``before``."""
    same = [d.mask for d in before if d.category == det.category]
    if not same:
        return 0.0
    covered = np.logical_or.reduce(same) & det.mask
    return float(np.count_nonzero(covered)) / max(int(np.count_nonzero(det.mask)), 1)


def build_experience_memory(video: ExperienceVideo, perception: PerceptionBackend,
                            config: MemoryConfig = MemoryConfig(), embedder: Optional[FrameEmbedder] = None,
                            on_frame: Optional[Callable[[int], None]] = None) -> ExperienceMemory:
    """Run ``perception`` over every frame of ``video`` and build its memory (``on_frame``: progress, per frame)."""
    if len(video) == 0:
        raise ConfigError("cannot build a memory of an empty experience video")
    if perception.persistent_keys and not video.has_segmentation:
        raise ConfigError("ground-truth perception needs a video recorded with segmentation (VideoEncoding("
                          "with_segmentation=True)); this one has none")
    builder = _Builder(video, perception, config, embedder)
    previous: Optional[VideoFrame] = None
    for frame in video.frames:
        builder.add(frame, previous)
        previous = frame
        if on_frame is not None:
            on_frame(frame.index)
    return builder.finish()
