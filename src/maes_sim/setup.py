"""Python package setup of maes_sim (ament_python)."""

from setuptools import find_namespace_packages, setup

package_name = "maes_sim"

setup(
    name=package_name,
    version="0.1.0",
    # Namespace discovery so a sub-package is installed even before it has an __init__.py.
    packages=find_namespace_packages(
        include=[package_name, f"{package_name}.*"], exclude=["*.__pycache__"]
    ),
    # the web page's files (maes_sim.watch: docs/watching.md)
    package_data={"maes_sim.watch": ["static/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="MAES-ROS developers",
    maintainer_email="maes-ros@example.com",
    description="Headless multi-robot exploration simulator (MAES 2.0 in Python) for ROS 2.",
    license="Apache-2.0",
    entry_points={
        # Executables for `ros2 run maes_sim <name>`: 'name = maes_sim.module:main'.
        "console_scripts": [
            "maes_sim_node = maes_sim.ros.sim_node:main",
        ],
    },
)
