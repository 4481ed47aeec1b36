"""Python package setup of maes_bringup (ament_python)."""

from glob import glob

from setuptools import find_namespace_packages, setup

package_name = "maes_bringup"
share = "share/" + package_name

setup(
    name=package_name,
    version="0.1.0",
    # Namespace discovery so a sub-package is installed even before it has an __init__.py.
    packages=find_namespace_packages(
        include=[package_name, f"{package_name}.*"], exclude=["*.__pycache__"]
    ),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        (share, ["package.xml"]),
        # Every file in these folders is installed, so adding one needs no edit here
        # (only a rebuild: `make build`).
        (share + "/launch", glob("launch/*.py") + glob("launch/*.xml")),
        (share + "/config", glob("config/*.yaml") + glob("config/*.xml")),
        (share + "/params", glob("params/*.yaml")),
        (share + "/rviz", glob("rviz/*.rviz")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="MAES-ROS developers",
    maintainer_email="maes-ros@example.com",
    description="MAES-ROS launch files, parameters, embedded runner and results output.",
    license="Apache-2.0",
    entry_points={
        # Executables for `ros2 run maes_bringup <name>`: 'name = maes_bringup.module:main'.
        "console_scripts": [
            "maes_run = maes_bringup.runners.embedded:main",
            "navigator_node = maes_bringup.runners.navigator_process:main",
            "maes-batch = maes_bringup.experiments.batch:main",
            "maes-replay = maes_bringup.replay.cli:main",
        ],
    },
)
