"""`goat-nav goal` against `goat-nav launch sim` (two processes, as a user runs them): a category goal ends in a
printed success; Ctrl-C on a running goal cancels it; bad goals are refused before ROS is touched."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed: run 'bash scripts/setup_ros.sh'")
from ros_skip import require_ros, stop_process  # noqa: E402

require_ros()

from goat_interfaces.msg import SubtaskOutcome  # noqa: E402
from goat_nav.cli import main as cli_main  # noqa: E402
from goat_nav.goal_cmd import summarise  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GOAL = [sys.executable, "-m", "goat_nav.cli", "goal"]
CATEGORY = "bookshelf"  # in sight of the default home's start pose (embedded/home_s1234_r5)


def _goal(*args: str, timeout_s: float = 240.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GOAL, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)


@pytest.mark.slow
def test_goal_cli_reaches_a_category_and_ctrl_c_cancels(tmp_path: Path) -> None:
    log_path = tmp_path / "graph.log"
    with open(log_path, "w") as log:
        graph = subprocess.Popen([sys.executable, "-m", "goat_nav.cli", "launch", "sim"], cwd=ROOT, stdout=log,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        done = _goal("--category", CATEGORY, "--max-actions", "150", "--connect-timeout-s", "90")
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\ngraph:\n{log_path.read_text()[-3000:]}"
        out = done.stdout
        assert "outcome: success (the agent's own verdict" in out, out
        assert f"stopped at a {CATEGORY}" in out, out
        n_actions = int(re.search(r"^actions: (\d+)", out, re.M).group(1))  # type: ignore[union-attr]
        assert 1 <= n_actions <= 150, out
        assert float(re.search(r"^path length: ([\d.]+) m", out, re.M).group(1)) >= 0.0  # type: ignore[union-attr]
        assert "ended: stop" in out, out

        # A goal the home cannot satisfy keeps the robot searching; Ctrl-C cancels it through the controller.
        running = subprocess.Popen([*GOAL, "the purple piano on the roof", "--connect-timeout-s", "60"], cwd=ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert running.stdout is not None
        sent = running.stdout.readline()
        assert sent.startswith("goal sent: description"), sent + (running.stderr.read() if running.stderr else "")
        time.sleep(0.5)  # searching: on an idle machine the whole fruitless search takes only a few seconds
        running.send_signal(signal.SIGINT)
        rest, err = running.communicate(timeout=60)
        assert running.returncode == 130, f"{rest}\n{err}"
        assert "ended: error: cancelled" in rest, rest
    finally:
        stop_process(graph)
    assert graph.returncode == 0, log_path.read_text()[-3000:]


def test_goal_cli_refuses_bad_goals_before_ros(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["goal"]) == 2
    assert "no goal" in capsys.readouterr().err
    missing = tmp_path / "nope.png"
    assert cli_main(["goal", "--image", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err
    not_image = tmp_path / "text.png"
    not_image.write_text("not a picture")
    assert cli_main(["goal", "--image", str(not_image), "--category", "mug"]) == 2
    assert "not an image" in capsys.readouterr().err
    assert cli_main(["goal", "a red mug", "--category", "mug"]) == 2
    assert "not both" in capsys.readouterr().err


def test_goal_cli_with_no_graph_names_the_topic(capsys: pytest.CaptureFixture[str]) -> None:
    env_domain = os.environ["ROS_DOMAIN_ID"]
    os.environ["ROS_DOMAIN_ID"] = "231"  # outside the tests' domains (1-200): no graph there
    try:
        assert cli_main(["goal", "--category", "sofa", "--connect-timeout-s", "1"]) == 2
    finally:
        os.environ["ROS_DOMAIN_ID"] = env_domain
    assert "/goat/goal" in capsys.readouterr().err


def test_outcome_summary_of_real_messages() -> None:
    from geometry_msgs.msg import Point, Pose2D

    outcome = SubtaskOutcome(stop_reason="stop", actions=[1, 1, 2, 0], stop_detail="reached it",
                             stop_at_target=True, stop_target_category="sofa", stop_target_confident=True,
                             stop_target=Point(x=1.0, y=0.0, z=0.4),
                             poses=[Pose2D(x=0.0, y=0.0), Pose2D(x=0.25, y=0.0), Pose2D(x=0.5, y=0.0)])
    summary = summarise(outcome)
    assert (summary.success, summary.judged_by, summary.path_length_m) == (True, "agent", 0.5)
    text = "\n".join(summary.lines())
    assert "actions: 4 (1 stop, 2 move_forward, 1 turn_left)" in text
    assert "stopped at a sofa (confident); reached it" in text
    gave_up = summarise(SubtaskOutcome(stop_reason="stop", actions=[0], stop_detail="nothing left to try"))
    assert not gave_up.success and "ended: stop: nothing left to try" in "\n".join(gave_up.lines())
