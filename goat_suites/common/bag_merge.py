"""A run's bag from bags that workers recorded one episode each (``goat-nav bench --record`` with workers).

A worker records its episode with a :class:`~goat_ros.record.RunRecorder` of its own, whose simulated clock starts
at 0, and sends the bag back as bytes (:class:`BagFragment`: the driver may be another machine). The driver appends
the fragments to the run's bag in plan order (:class:`FragmentMerger`), moving each one's clock on by the actions
recorded before it: every stamp in a message header and every log time is shifted, so the run's bag holds the same
messages, with the same stamps, as the bag of a serial run of the same episodes. Headers with an empty frame_id are
left alone: they are the unset headers of default-constructed messages (the empty image of a text goal), stamped 0
in a serial run too. The fragment's own /tf_static is dropped (the run's bag has it once, from its start).
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from goat_ros.record import TF_STATIC_TOPIC, TOPICS, RecordError, RunRecorder

HEADER_TYPE = "std_msgs/msg/Header"
TIME_TYPE = "builtin_interfaces/msg/Time"


@dataclass(frozen=True)
class BagFragment:
    """One episode's bag as a worker recorded it: the rosbag2 folder's files and the actions it holds."""

    files: dict[str, bytes]  # file name in the bag folder -> contents (metadata.yaml and the .mcap)
    num_actions: int  # the fragment's clock at its end, in actions

    @property
    def size_bytes(self) -> int:
        return sum(len(b) for b in self.files.values())


def capture_fragment(recorder: RunRecorder) -> BagFragment:
    """The closed bag of ``recorder`` as bytes (call after the recorder is closed)."""
    files = {p.name: p.read_bytes() for p in sorted(recorder.folder.iterdir()) if p.is_file()}
    return BagFragment(files=files, num_actions=recorder.now_ns // recorder.step_period_ns)


def _shifted(msg: Any, offset_ns: int, store: Any) -> Any:
    """``msg`` with every set header stamp (non-empty frame_id) moved on by ``offset_ns``, nested ones included."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(msg):
        value = getattr(msg, f.name)
        if getattr(value, "__msgtype__", None) == HEADER_TYPE:
            if value.frame_id:
                stamp_ns = value.stamp.sec * 1_000_000_000 + value.stamp.nanosec + offset_ns
                stamp = store.types[TIME_TYPE](sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
                changes[f.name] = dataclasses.replace(value, stamp=stamp)
        elif hasattr(value, "__msgtype__"):
            changes[f.name] = _shifted(value, offset_ns, store)
        elif isinstance(value, list) and value and hasattr(value[0], "__msgtype__"):
            changes[f.name] = [_shifted(v, offset_ns, store) for v in value]
    return dataclasses.replace(msg, **changes) if changes else msg


def append_fragment(recorder: RunRecorder, fragment: BagFragment) -> None:
    """Append one episode's fragment to the open run bag at its current clock and move the clock on."""
    from rosbags.rosbag2 import Reader  # rosbags' bag reader and writer load only for a recorded run

    offset_ns = recorder.now_ns
    store = recorder.typestore
    with tempfile.TemporaryDirectory(prefix="goat-fragment-") as tmp:
        folder = Path(tmp) / "episode"
        folder.mkdir()
        for name, data in fragment.files.items():
            (folder / name).write_bytes(data)
        with Reader(folder) as reader:
            for connection, log_ns, raw in reader.messages():
                if connection.topic == TF_STATIC_TOPIC:
                    continue
                msgtype = TOPICS.get(connection.topic)
                if msgtype is None or msgtype != connection.msgtype:
                    raise RecordError(f"a worker's bag holds {connection.topic} ({connection.msgtype}), which the "
                                      "run's bag does not record")
                msg = store.deserialize_cdr(raw, msgtype)
                recorder.append(connection.topic, log_ns + offset_ns, _shifted(msg, offset_ns, store))
    recorder.advance_clock(fragment.num_actions)


class FragmentMerger:
    """Appends fragments to the run's bag in plan order, whatever order the episodes finish in.

    ``order``: the plan indices of the units of this run. A unit without a bag (its worker was lost) is
    :meth:`skip` ped. Fragments wait in memory until every unit before them is in.
    """

    def __init__(self, recorder: Optional[RunRecorder], order: Sequence[int]) -> None:
        self.recorder = recorder
        self._order = list(order)
        self._next = 0  # position in _order of the next unit to append
        self._waiting: dict[int, Optional[BagFragment]] = {}

    def add(self, index: int, fragment: Optional[BagFragment]) -> None:
        if self.recorder is None:
            return
        if fragment is None:
            raise RecordError(f"episode {index} came back without its bag")
        self._waiting[index] = fragment
        self._flush()

    def skip(self, index: int) -> None:
        if self.recorder is not None:
            self._waiting[index] = None
            self._flush()

    def _flush(self) -> None:
        assert self.recorder is not None
        while self._next < len(self._order) and self._order[self._next] in self._waiting:
            fragment = self._waiting.pop(self._order[self._next])
            if fragment is not None:
                append_fragment(self.recorder, fragment)
            self._next += 1
