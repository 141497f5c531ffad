"""Every launch file records the same way: a ``record`` argument that puts the recorder first. ROS-free.

``launch``/``launch_ros`` are not installable here, so the launch files are read with ``ast`` (as in
test_ros_bringup_config.py): the argument exists and is described, and the recorder action comes before any node
or included launch file, so a bad bag path stops the launch before anything starts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def _is_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _launch_description_items(tree: ast.AST) -> list[ast.expr]:
    (call,) = [n for n in ast.walk(tree) if _is_call(n, "LaunchDescription")]
    assert isinstance(call, ast.Call) and isinstance(call.args[0], ast.List)
    return call.args[0].elts


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_the_record_argument_adds_the_recorder_before_anything_else(path: Path) -> None:
    tree = ast.parse(path.read_text())
    declared = {c.args[0].value: c for c in ast.walk(tree) if isinstance(c, ast.Call)
                and _is_call(c, "DeclareLaunchArgument") and isinstance(c.args[0], ast.Constant)}
    assert "record" in declared, f"{path.name} has no record argument"
    keywords = {k.arg: k.value for k in declared["record"].keywords}
    assert isinstance(keywords["default_value"], ast.Constant) and keywords["default_value"].value == ""
    items = _launch_description_items(tree)
    first_action = next(i for i, item in enumerate(items) if not isinstance(item, ast.Starred)
                        or not (isinstance(item.value, ast.Name) and item.value.id == "args"))
    recorder = items[first_action]
    assert _is_call(recorder, "recorder_node"), f"{path.name}: the recorder is not the first action"
    assert isinstance(recorder, ast.Call)
    source = recorder.args[0]
    assert isinstance(source, ast.Call) and _is_call(source, "LaunchConfiguration")
    assert isinstance(source.args[0], ast.Constant) and source.args[0].value == "record"
