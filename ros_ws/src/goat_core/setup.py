"""ament_python build of goat_core for colcon workspaces (pip users install the root pyproject instead)."""

from setuptools import find_packages, setup

setup(
    name="goat_core",
    version="0.1.0",
    packages=find_packages(include=["goat_core", "goat_core.*"]),
    package_data={"goat_core": ["py.typed"], "goat_core.perception.data": ["*.json"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/goat_core"]),
        ("share/goat_core", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
)
