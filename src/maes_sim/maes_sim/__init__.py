"""MAES-ROS simulator: a numpy core (``maes_sim.core``) and a thin rclpy adapter
(``maes_sim.ros``)."""
