#!/bin/bash
# MAES-ROS image entrypoint: source ROS 2 Jazzy and the MAES-ROS overlay, then run the command.
set -e
source /opt/ros/jazzy/setup.bash
source /ws/install/setup.bash
exec "$@"
