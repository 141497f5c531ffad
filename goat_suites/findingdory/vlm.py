"""A video-language model as FindingDory's high-level policy, over an OpenAI-compatible chat-completions API.

The protocol is the one vLLM, Ollama, llama.cpp's server and hosted APIs serve: ``POST <url>/chat/completions``
with ``{"model", "messages", "max_tokens", "temperature"}``, images as ``image_url`` content parts holding base64
``data:image/jpeg`` URLs; ``GET <url>/models`` lists the models (used to fail fast before a run). Only the
standard library speaks HTTP here (urllib).

What the model is shown (FindingDory's VLM baselines, Yadav et al. 2025, arXiv:2506.15635, Sec. 5, and its
released evaluation: each video evenly subsampled to 96 frames, the frame index and the time of day shown with
each frame, the answer a list of frame indices per goal):

* the experience video evenly subsampled to ``frame_budget`` frames (first and last kept), each image scaled to
  ``image_max_side_px`` and preceded by a text part "Frame <index>, <HH:MM>" (the index is the frame's index in
  the whole video, so an answer needs no translation);
* the instruction, and the answer format: a JSON list with one list of frame indices per place to go to, in the
  order to visit them, best first (``[[12, 14]]``, ``[[12], [40]]``).

The answer is read as the last bracketed list in the reply; each goal goes to the first frame of its list. A
reply that holds no such list, or names a frame it was not shown, raises :class:`VlmAnswerError`: the run
records it as that task's error and goes on. Transport failures (no connection, timeout, HTTP 429 or 5xx) are
retried ``retries`` times, waiting ``retry_wait_s`` and doubling; then they raise :class:`VlmError`.
:meth:`VlmClient.check` raises :class:`VlmUnreachableError` (a ConfigError) when the endpoint does not answer,
rejects the key, or does not serve the model: called before a run, so that a run never starts against nothing.
"""

from __future__ import annotations

import base64
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence
from urllib.parse import urlsplit

import cv2
import numpy as np

from goat_core.errors import ConfigError, GoatError
from goat_suites.findingdory.experience import format_clock
from goat_suites.findingdory.experience_video import ExperienceVideo
from goat_suites.findingdory.policy import EpisodeExperience
from goat_suites.findingdory.selector import Selection

DEFAULT_FRAME_BUDGET = 96  # FindingDory's subsampled videos
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_LIST = re.compile(r"\[[\s\d,\[\]]*\]")  # a bracketed list of integers or of lists of integers

SYSTEM_PROMPT = (
    "You are the memory of a home robot. You see frames of a video the robot recorded yesterday while it moved "
    "through a home, picked objects up and put them down somewhere else. Each frame comes after a line with its "
    "frame number and the time of day. To pick an object up the robot closes its gripper near it and the object "
    "leaves the view; when the robot puts it down it appears in its new place. Given an instruction for today, "
    "name the frames whose camera positions the robot should drive back to: frames taken close to the object, "
    "receptacle or room to reach, showing it where it is now (after its last move).")
ANSWER_FORMAT = (
    "Reply with a JSON list that holds one list of frame numbers per place to go to, in the order to visit them, "
    "the best frame first, for example [[12, 14]] for one place or [[12], [40]] for two. Reply with the list only.")


class VlmError(GoatError):
    """A request to the VLM endpoint failed after its retries (the message names the endpoint and the cause)."""


class VlmAnswerError(GoatError):
    """The VLM's reply holds no usable frame indices (the message quotes the reply)."""


class VlmUnreachableError(ConfigError):
    """The VLM endpoint cannot be used at all: checked before a run starts."""


@dataclass(frozen=True)
class VlmConfig:
    url: str  # base URL of the API, e.g. http://localhost:8000/v1 (a URL ending in /chat/completions is accepted)
    model: str
    api_key: Optional[str] = None  # sent as a bearer token; the caller reads it (goat-nav: from a named env var)
    frame_budget: int = DEFAULT_FRAME_BUDGET
    timeout_s: float = 120.0  # per request
    retries: int = 2  # further attempts after a transport failure
    retry_wait_s: float = 2.0  # before the first retry; doubled after each
    check_timeout_s: float = 10.0  # of the reachability check
    image_max_side_px: int = 384
    jpeg_quality: int = 80
    max_tokens: int = 256
    temperature: float = 0.0

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"--vlm-url must be an http(s) URL such as http://localhost:8000/v1, got {self.url!r}")
        if not self.model.strip():
            raise ConfigError("--vlm-model must name the model the endpoint serves, got an empty name")
        if self.frame_budget < 1:
            raise ConfigError(f"the VLM frame budget must be >= 1, got {self.frame_budget!r}")
        for name in ("timeout_s", "check_timeout_s"):
            if not getattr(self, name) > 0.0:
                raise ConfigError(f"VlmConfig.{name} must be positive, got {getattr(self, name)!r}")
        if self.retries < 0 or self.retry_wait_s < 0.0:
            raise ConfigError(f"VlmConfig: retries and retry_wait_s must be >= 0, got {self.retries!r}, "
                              f"{self.retry_wait_s!r}")
        if self.image_max_side_px < 16 or not 1 <= self.jpeg_quality <= 100 or self.max_tokens < 1:
            raise ConfigError("VlmConfig: image_max_side_px >= 16, jpeg_quality in [1, 100] and max_tokens >= 1 "
                              f"needed, got {self.image_max_side_px!r}, {self.jpeg_quality!r}, {self.max_tokens!r}")

    @property
    def base_url(self) -> str:
        url = self.url.rstrip("/")
        return url[: -len("/chat/completions")] if url.endswith("/chat/completions") else url

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def models_url(self) -> str:
        return f"{self.base_url}/models"


Sleep = Callable[[float], None]


class VlmClient:
    """HTTP client of one endpoint and model."""

    def __init__(self, config: VlmConfig, sleep: Sleep = time.sleep) -> None:
        self.config = config
        self._sleep = sleep

    def _request(self, url: str, body: Optional[dict[str, Any]], timeout_s: float) -> bytes:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(url, data=data, headers=headers, method="POST" if body is not None else "GET")
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (http(s) checked above)
            return bytes(response.read())

    def check(self) -> None:
        """Raise VlmUnreachableError unless the endpoint answers, accepts the key and (if it lists them) serves the
        model."""
        cfg = self.config
        try:
            raw = self._request(cfg.models_url, None, cfg.check_timeout_s)
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise VlmUnreachableError(f"the VLM endpoint {cfg.base_url} refused the request (HTTP {exc.code}): "
                                          "check the API key (--vlm-api-key-env)") from None
            return  # it answers; some servers do not list models
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise VlmUnreachableError(f"cannot reach the VLM endpoint {cfg.base_url} ({cfg.models_url}): {reason}; "
                                      "start the server or fix --vlm-url") from None
        try:
            listed = [str(m.get("id")) for m in json.loads(raw.decode("utf-8")).get("data", [])]
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            return  # not a model list: nothing more to check
        if listed and cfg.model not in listed:
            raise VlmUnreachableError(f"the VLM endpoint {cfg.base_url} does not serve model {cfg.model!r}; it "
                                      f"serves {listed}")

    def chat(self, messages: Sequence[dict[str, Any]]) -> str:
        """The text of the first choice of a chat completion; transport failures are retried (see module doc)."""
        cfg = self.config
        body = {"model": cfg.model, "messages": list(messages), "max_tokens": cfg.max_tokens,
                "temperature": cfg.temperature}
        wait = cfg.retry_wait_s
        for attempt in range(cfg.retries + 1):
            try:
                raw = self._request(cfg.chat_url, body, cfg.timeout_s)
                break
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRY_STATUS or attempt == cfg.retries:
                    raise VlmError(f"the VLM endpoint {cfg.chat_url} answered HTTP {exc.code} {exc.reason} "
                                   f"(attempt {attempt + 1} of {cfg.retries + 1})") from None
            except (TimeoutError, urllib.error.URLError, OSError) as exc:
                if attempt == cfg.retries:
                    reason = getattr(exc, "reason", exc)
                    raise VlmError(f"no answer from the VLM endpoint {cfg.chat_url} after {cfg.retries + 1} "
                                   f"attempts: {reason}") from None
            self._sleep(wait)
            wait *= 2.0
        return _completion_text(raw, cfg.chat_url)


def _completion_text(raw: bytes, url: str) -> str:
    try:
        content = json.loads(raw.decode("utf-8"))["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError):
        raise VlmAnswerError(f"the VLM endpoint {url} sent no chat completion: {_short(raw.decode('utf-8', 'replace'))}"
                             ) from None
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise VlmAnswerError(f"the VLM's message content is neither text nor text parts: {_short(repr(content))}")
    return content


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def parse_frame_answer(text: str, shown: Sequence[int]) -> list[list[int]]:
    """One list of frame indices per goal from a VLM reply (see the module doc); VlmAnswerError if there is none."""
    found = _LIST.findall(text)
    if not found:
        raise VlmAnswerError(f"the VLM's reply holds no list of frame numbers: {_short(text)}")
    try:
        value = json.loads(found[-1])
    except json.JSONDecodeError:
        raise VlmAnswerError(f"the VLM's reply holds no readable list of frame numbers: {_short(text)}") from None
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        value = [value]  # a flat list: one goal
    if not (isinstance(value, list) and value and all(isinstance(g, list) and g and all(isinstance(i, int) for i in g)
                                                        for g in value)):
        raise VlmAnswerError(f"the VLM's reply is not a non-empty list of non-empty lists of frame numbers: "
                             f"{_short(text)}")
    allowed = set(shown)
    stray = sorted({i for goal in value for i in goal if i not in allowed})
    if stray:
        raise VlmAnswerError(f"the VLM named frames {stray} that it was not shown (it saw {len(allowed)} frames "
                             f"between {min(allowed)} and {max(allowed)}): {_short(text)}")
    return [list(goal) for goal in value]


def frame_data_url(rgb: np.ndarray, max_side_px: int, quality: int) -> str:
    """An RGB frame scaled to fit ``max_side_px`` as a base64 JPEG data URL."""
    h, w = rgb.shape[:2]
    scale = min(1.0, max_side_px / max(h, w))
    if scale < 1.0:
        rgb = cv2.resize(rgb, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(rgb[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ConfigError(f"cannot encode a {rgb.shape} frame as JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


def build_messages(lang: str, frames: Sequence[tuple[int, float, str]]) -> list[dict[str, Any]]:
    """The chat messages for one instruction; ``frames`` are (index, time of day s, image data URL)."""
    content: list[dict[str, Any]] = []
    for index, time_s, url in frames:
        content.append({"type": "text", "text": f"Frame {index}, {format_clock(time_s)}"})
        content.append({"type": "image_url", "image_url": {"url": url}})
    content.append({"type": "text", "text": f"Instruction: {lang}\n{ANSWER_FORMAT}"})
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


class VlmSelector:
    """FindingDory's high level by a VLM: the video subsampled to the frame budget, one request per instruction."""

    name = "vlm"

    def __init__(self, client: VlmClient) -> None:
        self.client = client
        self._frames: list[tuple[int, float, str]] = []
        self.last_reply: Optional[str] = None

    def begin_episode(self, experience: EpisodeExperience) -> None:
        if experience.video is None:
            raise ConfigError("the VLM selector needs the experience video; the episode recorded none")
        self._frames = self.frames_for(experience.video)

    def frames_for(self, video: ExperienceVideo) -> list[tuple[int, float, str]]:
        cfg = self.client.config
        return [(k, video.frames[k].time_s,
                 frame_data_url(video.frames[k].rgb(), cfg.image_max_side_px, cfg.jpeg_quality))
                for k in video.subsample(cfg.frame_budget)]

    def select(self, lang: str, start_xy_m: Sequence[float] = (0.0, 0.0)) -> Selection:
        if not self._frames:
            raise ConfigError("VlmSelector.select before begin_episode")
        self.last_reply = None
        reply = self.client.chat(build_messages(lang, self._frames))
        self.last_reply = reply
        goals = parse_frame_answer(reply, [k for k, _, _ in self._frames])
        return Selection(frame_indices=tuple(goal[0] for goal in goals), target_ids=tuple("vlm" for _ in goals),
                         candidates=())

    def describe(self) -> dict[str, Any]:
        cfg = self.client.config
        return {"selector": self.name, "url": cfg.base_url, "model": cfg.model, "frame_budget": cfg.frame_budget,
                "image_max_side_px": cfg.image_max_side_px, "timeout_s": cfg.timeout_s, "retries": cfg.retries,
                "api_key": "given" if cfg.api_key else "none"}
