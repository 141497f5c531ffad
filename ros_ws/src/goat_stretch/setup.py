"""ament_python build of goat_stretch (colcon). In the venv the package is importable from the source tree."""

from setuptools import setup

setup(
    name="goat_stretch",
    version="0.1.0",
    packages=["goat_stretch"],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/goat_stretch"]),
        ("share/goat_stretch", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    entry_points={
        "console_scripts": [
            "stretch_driver = goat_stretch.driver_node:main",
            "operator = goat_suites.ros.operator_node:main",
            "head_camera = goat_stretch.camera_node:main",
        ],
    },
)
