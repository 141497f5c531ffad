"""Launch files, node list, executables and params YAMLs agree. ROS-free: runs without rclpy or ros2 launch.

The launch files cannot be executed here (no ``launch``/``launch_ros`` on PyPI), so they are compiled and read
with ``ast``: which bringup they start, that every launch argument is described, and that every overridden
parameter exists on its node.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ros_ws" / "src" / "goat_ros"))

from goat_ros.graph import BRINGUPS, NODES, params_args, repo_config_dir  # noqa: E402
from goat_ros.params import PARAMS_BY_NODE  # noqa: E402

LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and ((isinstance(n.func, ast.Name) and n.func.id == name)
                 or (isinstance(n.func, ast.Attribute) and n.func.attr == name))]


def test_the_three_launch_files_exist() -> None:
    assert {p.name for p in LAUNCH_FILES} == {"sim.launch.py", "stretch.launch.py", "bench.launch.py"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_compiles_and_starts_a_known_bringup(path: Path) -> None:
    source = path.read_text()
    compile(source, str(path), "exec")
    tree = ast.parse(source)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)
    bringups = [c.args[0].value for c in _calls(tree, "goat_nodes") if isinstance(c.args[0], ast.Constant)]
    assert bringups and path.name.startswith(bringups[0]) and bringups[0] in BRINGUPS


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_arguments_are_described_and_booleans_have_choices(path: Path) -> None:
    for call in _calls(ast.parse(path.read_text()), "DeclareLaunchArgument"):
        keywords = {k.arg: k.value for k in call.keywords}
        name = call.args[0].value  # type: ignore[attr-defined]
        assert "description" in keywords, f"{path.name}: argument {name} has no description"
        default = keywords.get("default_value")
        if isinstance(default, ast.Constant) and default.value in ("true", "false"):
            assert "choices" in keywords, f"{path.name}: boolean argument {name} has no choices"


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_overrides_name_existing_parameters(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "overrides"
                                                for t in node.targets):
            assert isinstance(node.value, ast.Dict)
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                node_name = key.value  # type: ignore[union-attr]
                fields = {f.name for f in dataclasses.fields(PARAMS_BY_NODE[node_name])}
                assert isinstance(value, ast.Dict)
                params = {k.value for k in value.keys}  # type: ignore[union-attr]
                assert params <= fields, f"{path.name}: {node_name} has no parameters {params - fields}"


def _console_scripts(package: str) -> dict[str, str]:
    tree = ast.parse((ROOT / "ros_ws" / "src" / package / "setup.py").read_text())
    scripts: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and " = " in node.value:
            name, target = node.value.split(" = ")
            scripts[name.strip()] = target.strip()
    return scripts


def _module_file(module: str) -> Path:
    if module.startswith("sim_bridge"):
        return ROOT / "sim_bridge" / (module.replace(".", "/") + ".py")
    if module.startswith("goat_suites"):  # the benchmark's nodes (episode player, evaluator, operator)
        return ROOT / (module.replace(".", "/") + ".py")
    return ROOT / "ros_ws" / "src" / module.split(".")[0] / (module.replace(".", "/") + ".py")


@pytest.mark.parametrize("name", sorted(NODES))
def test_every_node_has_an_executable_and_a_params_yaml(name: str) -> None:
    spec = NODES[name]
    module = spec.node_class.split(":")[0]
    assert _console_scripts(spec.package).get(spec.executable) == f"{module}:main"
    tree = ast.parse(_module_file(module).read_text())
    assert {spec.node_class.split(":")[1], "main"} <= {n.name for n in tree.body if hasattr(n, "name")}
    config = yaml.safe_load((repo_config_dir() / spec.params_file).read_text())
    assert list(config) == [name], f"{spec.params_file} must hold exactly the block '{name}'"
    values = config[name]["ros__parameters"]
    fields = {f.name: f.default for f in dataclasses.fields(PARAMS_BY_NODE[name])}
    assert set(values) == set(fields), f"{spec.params_file}: keys differ from {PARAMS_BY_NODE[name].__name__}"
    for key, value in values.items():
        assert type(value) is type(fields[key]), f"{spec.params_file}: {key} is {value!r}, default {fields[key]!r}"
        assert value == fields[key], f"{spec.params_file}: {key} = {value!r} drifts from the default"


def test_every_bringup_names_known_nodes_and_every_param_is_described() -> None:
    for nodes in BRINGUPS.values():
        assert set(nodes) <= set(NODES)
    for params_type in PARAMS_BY_NODE.values():
        for f in dataclasses.fields(params_type):
            assert f.metadata.get("description"), f"{params_type.__name__}.{f.name} has no description"


def test_params_args_put_overrides_after_the_yaml() -> None:
    args = params_args(NODES["controller"], Path("/cfg"), {"publish_debug": False, "camera_height_m": 1.2})
    assert args[:5] == ["--ros-args", "-r", "__node:=controller", "--params-file", "/cfg/controller.yaml"]
    assert args[5:] == ["-p", "publish_debug:=false", "-p", "camera_height_m:=1.2"]


def test_launch_cli_parses() -> None:
    from goat_nav.cli import build_parser
    from goat_nav.launcher import parse_overrides

    args = build_parser().parse_args(["launch", "bench", "--episodes-file", "e.json", "--param",
                                      "controller.publish_debug=false"])
    assert (args.bringup, args.isolated) == ("bench", False)
    assert parse_overrides(args.param) == {"controller": {"publish_debug": False}}
    assert build_parser().parse_args(["bench", "--ros"]).ros


def test_the_stretch_bringup_turns_the_head_camera_upright_for_every_consumer() -> None:
    """stretch_core's sideways camera is remapped under HEAD_CAMERA_RAW (only its own include, in a scoped group)
    and the head_camera relay, with sideways on in the stretch bringup only, publishes on the graph's names."""
    from goat_ros import topics
    from goat_ros.graph import bringup_overrides

    assert "head_camera" in BRINGUPS["stretch"]
    assert bringup_overrides("stretch", {})["head_camera"] == {"sideways": True}
    assert all("head_camera" not in BRINGUPS[b] for b in BRINGUPS if b != "stretch")
    assert set(topics.HEAD_CAMERA_RAW) == {topics.RGB, topics.DEPTH, topics.CAMERA_INFO}
    assert not set(topics.HEAD_CAMERA_RAW.values()) & set(topics.HEAD_CAMERA_RAW)
    tree = ast.parse((ROOT / "launch" / "stretch.launch.py").read_text())
    groups = _calls(tree, "GroupAction")
    assert len(groups) == 1, "the camera include and its remaps belong in one GroupAction"
    members = groups[0].args[0]
    assert isinstance(members, ast.List)
    starred = [m.value for m in members.elts if isinstance(m, ast.Starred)]
    assert any(isinstance(c, ast.Call) and getattr(c.func, "id", "") == "head_camera_remaps" for c in starred)
    assert _calls(groups[0], "IncludeLaunchDescription"), "the group must hold stretch_core's camera include"
    assert any(k.arg == "scoped" and getattr(k.value, "value", None) is True for k in groups[0].keywords)
    common = ast.parse((ROOT / "launch" / "goat_launch_common.py").read_text())
    assert _calls(common, "SetRemap") and "HEAD_CAMERA_RAW" in ast.unparse(common)
