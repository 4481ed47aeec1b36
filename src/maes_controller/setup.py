"""Python package setup of maes_controller (ament_python)."""

from setuptools import find_namespace_packages, setup

package_name = "maes_controller"

setup(
    name=package_name,
    version="0.1.0",
    # Namespace discovery so a sub-package is installed even before it has an __init__.py.
    packages=find_namespace_packages(
        include=[package_name, f"{package_name}.*"], exclude=["*.__pycache__"]
    ),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="MAES-ROS developers",
    maintainer_email="maes-ros@example.com",
    description="MAES-ROS per-robot controller node and built-in navigator (no simulator needed).",
    license="Apache-2.0",
    entry_points={
        # Executables for `ros2 run maes_controller <name>`: 'name = maes_controller.module:main'.
        "console_scripts": [
            "controller_node = maes_controller.nodes.controller_node:main",
            "controller_container = maes_controller.nodes.controller_container:main",
        ],
    },
)
