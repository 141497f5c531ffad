"""The VLM high-level policy of FindingDory: request building (frame budget, images as data URLs), answer parsing,
retries, fail-fast checks and the run going on past a malformed answer.

No VLM weights exist on this machine, so every test talks to :class:`FixtureVlm`: a small HTTP server started in
the test that speaks the OpenAI-compatible chat-completions protocol (``GET /v1/models``, ``POST
/v1/chat/completions``, as vLLM and Ollama serve it) and answers from a fixture instead of a model. The client under
test is the real one, over real sockets."""

from __future__ import annotations

import argparse
import base64
import json
import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Optional

import cv2
import numpy as np
import pytest

from goat_core.errors import ConfigError
from goat_core.types import CameraIntrinsics, Observation, Pose2D
from goat_nav.cli import main
from goat_suites.findingdory import run as suite
from goat_suites.findingdory.args import policy_choice
from goat_suites.findingdory.experience import ExperienceLog, format_clock
from goat_suites.findingdory.experience_video import ExperienceVideo, Proprioception, VideoEncoding, encode_frame
from goat_suites.findingdory.policy import EpisodeExperience
from goat_suites.findingdory.vlm import (
    VlmAnswerError,
    VlmClient,
    VlmConfig,
    VlmError,
    VlmSelector,
    VlmUnreachableError,
    parse_frame_answer,
)

MODEL = "fixture-vlm"
Answer = Callable[[dict[str, Any]], str]  # request body -> the assistant's text


class FixtureVlm:
    """Stand-in for a VLM server (see the module docstring): records every request, answers from ``answer``."""

    def __init__(self, answer: Answer, fail_first: int = 0, fail_status: int = 503,
                 api_key: Optional[str] = None, models: tuple[str, ...] = (MODEL,)) -> None:
        self.answer, self.fail_left, self.fail_status = answer, fail_first, fail_status
        self.api_key, self.models = api_key, models
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fixture = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest's output clean
                pass

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self) -> bool:
                if fixture.api_key is None or self.headers.get("Authorization") == f"Bearer {fixture.api_key}":
                    return True
                self._reply(401, {"error": {"message": "invalid api key"}})
                return False

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                if not self._authorised():
                    return
                if self.path == "/v1/models":
                    self._reply(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in fixture.models]})
                else:
                    self._reply(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fixture.headers.append(dict(self.headers))
                if not self._authorised():
                    return
                fixture.requests.append(body)
                if fixture.fail_left > 0:
                    fixture.fail_left -= 1
                    self._reply(fixture.fail_status, {"error": {"message": "busy"}})
                    return
                text = fixture.answer(body)
                self._reply(200, {"id": "cmpl-1", "object": "chat.completion", "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": text}}]})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FixtureVlm:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def shown_frames(body: dict[str, Any]) -> list[int]:
    """The frame numbers a request labels its images with."""
    texts = [p["text"] for p in body["messages"][1]["content"] if p["type"] == "text"]
    return [int(t.split()[1].rstrip(",")) for t in texts if t.startswith("Frame ")]


def images(body: dict[str, Any]) -> list[np.ndarray]:
    out = []
    for part in body["messages"][1]["content"]:
        if part["type"] == "image_url":
            url = part["image_url"]["url"]
            assert url.startswith("data:image/jpeg;base64,")
            out.append(cv2.imdecode(np.frombuffer(base64.b64decode(url.split(",", 1)[1]), np.uint8), cv2.IMREAD_COLOR))
    return out


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def synthetic_video(frames: int) -> ExperienceVideo:
    """A video of ``frames`` 360 x 640 frames, one second apart from 09:00, no simulator needed."""
    intr = CameraIntrinsics.from_hfov(360, 640, math.radians(42.0))
    rng = np.random.default_rng(0)
    out = []
    for k in range(frames):
        rgb = np.full((640, 360, 3), (k * 7) % 255, dtype=np.uint8)
        rgb[: 20 + k % 100] = rng.integers(0, 255, size=3, dtype=np.uint8)
        obs = Observation(rgb=rgb, depth_m=np.full((640, 360), 2.0, np.float32), pose=Pose2D(0.01 * k, 0.0, 0.0),
                          camera_tilt_rad=-0.5, camera_height_m=1.31, intrinsics=intr)
        out.append(encode_frame(obs, k, 9 * 3600.0 + k, Proprioception(False, False),
                                VideoEncoding(with_segmentation=False)))
    return ExperienceVideo(tuple(out))


@pytest.fixture(scope="module")
def video() -> ExperienceVideo:
    return synthetic_video(250)


def _begin(selector: VlmSelector, video: ExperienceVideo) -> VlmSelector:
    selector.begin_episode(EpisodeExperience(video=video, log=ExperienceLog(frames=(), objects={})))
    return selector


# ----------------------------------------------------------------------------------------------- requests


@pytest.mark.parametrize("budget", [12, 96])
def test_the_frame_budget_is_respected(video: ExperienceVideo, budget: int) -> None:
    with FixtureVlm(lambda body: f"The mug is in frame {shown_frames(body)[3]}: [[{shown_frames(body)[3]}]]") as vlm:
        selector = _begin(VlmSelector(VlmClient(VlmConfig(vlm.url, MODEL, frame_budget=budget))), video)
        selection = selector.select("Navigate to the object you picked up first.")
        body = vlm.requests[0]
        shown = shown_frames(body)
        assert shown == list(video.subsample(budget)) and len(shown) == budget and shown[-1] == len(video) - 1
        pictures = images(body)
        assert len(pictures) == budget and all(max(p.shape[:2]) <= 384 for p in pictures)
        texts = [p["text"] for p in body["messages"][1]["content"] if p["type"] == "text"]
        assert texts[1] == f"Frame {shown[1]}, {format_clock(video.frames[shown[1]].time_s)}"
        assert "Navigate to the object you picked up first." in texts[-1] and "JSON list" in texts[-1]
        assert body["model"] == MODEL and body["messages"][0]["role"] == "system"
        assert selection.frame_indices == (shown[3],)


def test_each_goal_goes_to_the_first_frame_of_its_list(video: ExperienceVideo) -> None:
    def answer(body: dict[str, Any]) -> str:
        a, b, c = (shown_frames(body)[i] for i in (5, 6, 9))
        return f"[[{a}, {b}], [{c}]]"

    with FixtureVlm(answer) as vlm:
        selector = _begin(VlmSelector(VlmClient(VlmConfig(vlm.url, MODEL, frame_budget=16))), video)
        selection = selector.select("Revisit every object you picked up yesterday, in any order.")
        shown = list(video.subsample(16))
        assert selection.frame_indices == (shown[5], shown[9])


@pytest.mark.parametrize(("reply", "expected"), [
    ("[[3], [7]]", [[3], [7]]),
    ("Sure! The frames are [12, 14].", [[12, 14]]),
    ("First I looked at [3]. Final answer: [[7, 3]]", [[7, 3]]),
    ("```json\n[[0],\n [249]]\n```", [[0], [249]]),
])
def test_replies_are_read_into_frame_indices(reply: str, expected: list[list[int]]) -> None:
    assert parse_frame_answer(reply, range(250)) == expected


@pytest.mark.parametrize(("reply", "message"), [
    ("The robot should go to the kitchen.", "holds no list of frame numbers"),
    ("[[]]", "not a non-empty list of non-empty lists"),
    ("[[3], [4000]]", r"named frames \[4000\] that it was not shown"),
    ("[[3, 1], [2]", "holds no readable list"),
])
def test_malformed_replies_are_named(reply: str, message: str) -> None:
    with pytest.raises(VlmAnswerError, match=message):
        parse_frame_answer(reply, range(250))


# ----------------------------------------------------------------------------------------------- transport


def test_transport_failures_are_retried_then_named(video: ExperienceVideo) -> None:
    waits: list[float] = []
    with FixtureVlm(lambda body: "[[0]]", fail_first=2) as vlm:
        client = VlmClient(VlmConfig(vlm.url, MODEL, frame_budget=4, retries=2, retry_wait_s=0.5), sleep=waits.append)
        assert _begin(VlmSelector(client), video).select("Navigate to the object you picked up first.").frame_indices \
            == (0,)
        assert len(vlm.requests) == 3 and waits == [0.5, 1.0]
    with FixtureVlm(lambda body: "[[0]]", fail_first=5) as vlm:
        client = VlmClient(VlmConfig(vlm.url, MODEL, frame_budget=4, retries=1), sleep=waits.append)
        with pytest.raises(VlmError, match=r"answered HTTP 503 .*attempt 2 of 2"):
            _begin(VlmSelector(client), video).select("Navigate to the object you picked up first.")
    with FixtureVlm(lambda body: "[[0]]", fail_first=1, fail_status=400) as vlm:  # not retried: the request is bad
        client = VlmClient(VlmConfig(vlm.url, MODEL, frame_budget=4, retries=3), sleep=waits.append)
        with pytest.raises(VlmError, match="HTTP 400"):
            _begin(VlmSelector(client), video).select("x")
        assert len(vlm.requests) == 1


def test_an_unusable_endpoint_is_named_before_a_run() -> None:
    port = closed_port()
    started = time.monotonic()
    with pytest.raises(VlmUnreachableError, match=f"cannot reach the VLM endpoint http://127.0.0.1:{port}/v1"):
        VlmClient(VlmConfig(f"http://127.0.0.1:{port}/v1", MODEL)).check()
    assert time.monotonic() - started < 5.0
    with FixtureVlm(lambda body: "", models=("llava", "qwen2-vl")) as vlm:
        with pytest.raises(VlmUnreachableError, match=r"does not serve model 'fixture-vlm'; it serves \['llava'"):
            VlmClient(VlmConfig(vlm.url, MODEL)).check()
    with FixtureVlm(lambda body: "", api_key="sekrit") as vlm:
        with pytest.raises(VlmUnreachableError, match="refused the request .HTTP 401.: check the API key"):
            VlmClient(VlmConfig(vlm.url, MODEL, api_key="wrong")).check()
        VlmClient(VlmConfig(vlm.url, MODEL, api_key="sekrit")).check()
    with pytest.raises(ConfigError, match="--vlm-url must be an http"):
        VlmConfig("localhost:8000", MODEL)


def _vlm_args(url: str, **more: Any) -> argparse.Namespace:
    base = dict(selector="vlm", vlm_url=url, vlm_model=MODEL, vlm_api_key_env=None, vlm_frames=8, vlm_timeout_s=5.0,
                vlm_retries=0, perception="ground_truth", model_dir=None, clip_model_dir=None, device="cpu",
                experience_bags=None, episodes=1, seed=1)
    return argparse.Namespace(**(base | more))


def test_the_api_key_comes_from_the_variable_a_flag_names(video: ExperienceVideo,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with FixtureVlm(lambda body: "[[0]]", api_key="sekrit") as vlm:
        monkeypatch.setenv("FIXTURE_VLM_KEY", "sekrit")
        choice = policy_choice(_vlm_args(vlm.url, vlm_api_key_env="FIXTURE_VLM_KEY"))
        assert choice.vlm is not None and choice.vlm.api_key == "sekrit"
        _begin(VlmSelector(VlmClient(choice.vlm)), video).select("x")
        assert vlm.headers[-1]["Authorization"] == "Bearer sekrit"
        monkeypatch.delenv("FIXTURE_VLM_KEY")
        with pytest.raises(ConfigError, match="'FIXTURE_VLM_KEY', which is not set"):
            policy_choice(_vlm_args(vlm.url, vlm_api_key_env="FIXTURE_VLM_KEY"))
    with pytest.raises(ConfigError, match="--vlm-url and --vlm-model apply to --selector vlm only"):
        policy_choice(_vlm_args("http://x/v1", selector="memory"))


def test_the_cli_stops_before_any_episode_when_the_endpoint_is_down(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    port = closed_port()
    out = tmp_path / "fd.json"
    started = time.monotonic()
    rc = main(["bench", "--suite", "findingdory", "--episodes", "3", "--selector", "vlm", "--vlm-url",
               f"http://127.0.0.1:{port}/v1", "--vlm-model", MODEL, "--out", str(out), "--quiet"])
    assert rc == 2 and not out.exists() and time.monotonic() - started < 10.0
    assert f"cannot reach the VLM endpoint http://127.0.0.1:{port}/v1" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- in a run


@pytest.mark.slow
def test_a_malformed_answer_fails_its_task_and_the_run_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """One real episode (3-room home) with two tasks; the fixture answers the room question with words only and the
    other with the first frame it was shown."""
    def answer(body: dict[str, Any]) -> str:
        instruction = body["messages"][1]["content"][-1]["text"]
        return "It is the kitchen." if "room" in instruction else f"[[{shown_frames(body)[0]}]]"

    monkeypatch.setattr(suite, "TASK_TYPES", ("interaction_order", "room_visitation"))
    out = tmp_path / "fd.json"
    with FixtureVlm(answer) as vlm:
        rc = main(["bench", "--suite", "findingdory", "--episodes", "1", "--seed", "7", "--num-rooms", "3",
                   "--max-actions", "200", "--selector", "vlm", "--vlm-url", vlm.url, "--vlm-model", MODEL,
                   "--vlm-frames", "24", "--out", str(out), "--quiet"])
        assert rc == 0 and len(vlm.requests) == 2
        assert all(len(images(body)) == 24 for body in vlm.requests)
    body = json.loads(out.read_text())
    first, room = body["tasks"]
    assert first["error"] is None and first["selected_frames"] == [0]
    assert room["error"].startswith("the VLM's reply holds no list of frame numbers: 'It is the kitchen.'")
    assert room["selected_frames"] is None and not room["hl_success"] and not room["ll_success"]
    assert body["meta"]["high_level"]["selector"] == "vlm" and body["meta"]["high_level"]["frame_budget"] == 24
    assert body["meta"]["perception"] == "vlm (rgb frames)"
    assert "1 tasks without a high-level answer" in capsys.readouterr().out
