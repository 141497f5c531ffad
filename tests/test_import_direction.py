"""Imports run one way: benchmarks -> robot and simulator packages -> ROS nodes -> core (ARCHITECTURE.md, "Layers").

Every module of the shipped packages is parsed (ast, no import), and every ``import`` / ``from ... import`` in it
counts: at module level, inside functions and under ``if TYPE_CHECKING:`` alike, since an import hidden in a
function is still a dependency. A package may import its own modules and those of lower layers only; the
robot and the simulator, side by side on one layer, do not import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# package -> (its source folder, its layer); a higher layer may import a lower one, never the other way.
PACKAGES: dict[str, tuple[str, int]] = {
    "goat_core": ("ros_ws/src/goat_core/goat_core", 0),  # the agent stack, no ROS
    "goat_ros": ("ros_ws/src/goat_ros/goat_ros", 1),  # the rclpy nodes around the core
    "sim_bridge": ("sim_bridge/sim_bridge", 2),  # the simulator and its bridge node
    "goat_stretch": ("ros_ws/src/goat_stretch/goat_stretch", 2),  # the physical robot
    "goat_suites": ("goat_suites", 3),  # the benchmark suites, their runner, report and ROS nodes (docs/layout.md)
    "goat_nav": ("goat_nav", 4),  # the goat-nav command line and the launcher
    "benchmarks": ("benchmarks", 5),  # scripts that print numbers
}


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import statement anywhere in ``tree``; relative imports stay
    inside their package and are left out."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            found.append((node.lineno, node.module))
    return found


def violations(root: Path = ROOT) -> list[str]:
    """``file:line imports module (package layer a -> b)`` for every import against the layers."""
    found = []
    for package, (folder, layer) in PACKAGES.items():
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, module in imported_modules(tree):
                target = module.split(".")[0]
                if target == package or target not in PACKAGES:
                    continue
                target_layer = PACKAGES[target][1]
                if target_layer >= layer:
                    found.append(f"{path.relative_to(root)}:{line} imports {module} "
                                 f"({package}, layer {layer} -> {target}, layer {target_layer})")
    return found


def test_no_import_runs_against_the_layers() -> None:
    found = violations()
    assert not found, ("imports against the layers (core <- goat_ros <- sim_bridge | goat_stretch <- goat_suites <- "
                       "goat_nav):\n" + "\n".join(found))


# Inside goat_suites: what every suite shares (common) imports no suite; each suite hands its parts to common through
# goat_suites.common.parts.SuiteParts, and goat_suites.registry names them (docs/layout.md).
SUITE_PACKAGES = ("goat_suites.goat", "goat_suites.langmap", "goat_suites.findingdory", "goat_suites.pasture",
                  "goat_suites.registry")


def common_imports_of_suites(root: Path = ROOT) -> list[str]:
    """``file:line imports module`` for every import of a suite package (or of the registry that knows them) in
    goat_suites/common."""
    found = []
    for path in sorted((root / "goat_suites" / "common").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in imported_modules(tree):
            if any(module == s or module.startswith(s + ".") for s in SUITE_PACKAGES):
                found.append(f"{path.relative_to(root)}:{line} imports {module}")
    return found


def test_common_imports_no_suite() -> None:
    found = common_imports_of_suites()
    assert not found, "goat_suites.common imports a suite package:\n" + "\n".join(found)


def test_a_suite_import_in_common_is_found_inside_a_function(tmp_path: Path) -> None:
    common = tmp_path / "goat_suites" / "common"
    common.mkdir(parents=True)
    (common / "report.py").write_text("import math\n\n\ndef page():\n    from goat_suites.langmap.report import "
                                      "levels_of\n    import goat_suites.registry\n")
    (common / "ok.py").write_text("from goat_suites.common.parts import SuiteParts\nimport goat_suites\n")
    assert common_imports_of_suites(tmp_path) == [
        "goat_suites/common/report.py:5 imports goat_suites.langmap.report",
        "goat_suites/common/report.py:6 imports goat_suites.registry",
    ]


@pytest.mark.parametrize("source, expected", [
    ("from goat_suites.common.runner import RunConfig\n", ["goat_suites.common.runner"]),
    ("def f():\n    import sim_bridge.embedded.catalogue as c\n", ["sim_bridge.embedded.catalogue"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from goat_stretch import nav2_mode\n",
     ["typing", "goat_stretch"]),
    ("from . import topics\nfrom .params import declare\n", []),
])
def test_imports_are_found_wherever_they_stand(source: str, expected: list[str]) -> None:
    assert [module for _, module in imported_modules(ast.parse(source))] == expected


def test_an_upward_import_is_reported_with_its_file_and_line(tmp_path: Path) -> None:
    for folder, _ in PACKAGES.values():
        (tmp_path / folder).mkdir(parents=True)
    node = tmp_path / PACKAGES["goat_ros"][0] / "some_node.py"
    node.write_text("import math\n\n\ndef build():\n    from goat_suites.common.runner import build_agent\n")
    sibling = tmp_path / PACKAGES["sim_bridge"][0] / "x.py"
    sibling.write_text("from goat_stretch.driver import StretchDriver\nfrom goat_core.types import Pose2D\n")
    assert violations(tmp_path) == [
        "ros_ws/src/goat_ros/goat_ros/some_node.py:5 imports goat_suites.common.runner (goat_ros, layer 1 -> "
        "goat_suites, layer 3)",
        "sim_bridge/sim_bridge/x.py:1 imports goat_stretch.driver (sim_bridge, layer 2 -> goat_stretch, layer 2)",
    ]
