"""A minimal Foxglove WebSocket client, written from the protocol spec with the ``websockets`` package and no
goat_nav code: what Foxglove or Lichtblick do when they connect. Like them it offers both subprotocol names of the
protocol: ``foxglove.sdk.v1`` (what foxglove-sdk servers pick) and ``foxglove.websocket.v1`` (the spec's).

It reads ``serverInfo`` and ``advertise``, subscribes to channels by topic, reads binary Message Data frames
(opcode 0x01, uint32 subscription id, uint64 timestamp, payload; little-endian) and decodes protobuf payloads
with the FileDescriptorSet that the channel advertised (base64 in ``schema``), JSON payloads with json.
"""

from __future__ import annotations

import base64
import contextlib
import json
import struct
import time
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from websockets.sync.client import connect

SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]
MESSAGE_DATA = 0x01


class FoxgloveClient:
    def __init__(self, url: str, open_timeout_s: float = 30.0) -> None:
        self._stack = contextlib.ExitStack()
        deadline = time.monotonic() + open_timeout_s
        while True:  # the server may still be starting
            try:
                self.ws = self._stack.enter_context(
                    connect(url, subprotocols=SUBPROTOCOLS, open_timeout=5, max_size=None))  # type: ignore[arg-type]
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        assert self.ws.subprotocol in SUBPROTOCOLS, self.ws.subprotocol
        self.server_info: dict[str, Any] = {}
        self.channels: dict[int, dict[str, Any]] = {}  # advertised, by id
        self._subs: dict[int, dict[str, Any]] = {}  # subscription id -> channel
        self._decoders: dict[int, Any] = {}

    def close(self) -> None:
        self._stack.close()

    def _handle_text(self, text: str) -> None:
        msg = json.loads(text)
        if msg["op"] == "serverInfo":
            self.server_info = msg
        elif msg["op"] == "advertise":
            for ch in msg["channels"]:
                self.channels[int(ch["id"])] = ch
        elif msg["op"] == "unadvertise":
            for cid in msg["channelIds"]:
                self.channels.pop(int(cid), None)

    def topics(self) -> dict[str, dict[str, Any]]:
        return {ch["topic"]: ch for ch in self.channels.values()}

    def _next_binary(self, deadline: float, missing: Any) -> bytes | None:
        """The next binary frame before ``deadline`` (text frames are handled on the way); None for a text one."""
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {missing()}"
        try:
            frame = self.ws.recv(timeout=remaining)
        except TimeoutError:
            return None
        if isinstance(frame, str):
            self._handle_text(frame)
            return None
        return frame

    def wait_for_topics(self, topics: set[str], timeout_s: float) -> dict[str, dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while not topics <= set(self.topics()):
            self._next_binary(deadline, lambda: f"advertisements of {sorted(topics - set(self.topics()))}")
        return self.topics()

    def subscribe(self, topics: list[str]) -> None:
        by_topic = self.topics()
        subs = []
        for topic in topics:
            sub_id = len(self._subs)
            self._subs[sub_id] = by_topic[topic]
            subs.append({"id": sub_id, "channelId": by_topic[topic]["id"]})
        self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))

    def _decode(self, channel: dict[str, Any], payload: bytes) -> Any:
        if channel["encoding"] == "json":
            return json.loads(payload)
        assert channel["encoding"] == "protobuf", channel["encoding"]
        cid = int(channel["id"])
        if cid not in self._decoders:
            files = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
            pool = descriptor_pool.DescriptorPool()
            for f in files.file:
                pool.Add(f)
            self._decoders[cid] = message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))
        return self._decoders[cid].FromString(payload)

    def receive(self, topics: set[str], timeout_s: float, accept: Any = None) -> dict[str, Any]:
        """The first decoded message of each topic (that ``accept(topic, msg)`` takes, if given)."""
        got: dict[str, Any] = {}
        deadline = time.monotonic() + timeout_s
        while not topics <= set(got):
            frame = self._next_binary(deadline, lambda: f"messages on {sorted(topics - set(got))}")
            if frame is None:
                continue
            assert frame[0] == MESSAGE_DATA, f"unexpected binary opcode {frame[0]}"
            sub_id, _stamp_ns = struct.unpack_from("<IQ", frame, 1)
            channel = self._subs[sub_id]
            msg = self._decode(channel, frame[13:])
            if channel["topic"] not in got and (accept is None or accept(channel["topic"], msg)):
                got[channel["topic"]] = msg
        return got
