"""MAES-ROS controllers: the robot API a controller is written against, and the built-in navigator.

What a controller author uses is at the top level:

``robot_api``    the :class:`~maes_controller.robot_api.Robot` protocol, ``NavStatus``,
                 ``load_logic``
``logic``        the default exploration logic (edit it, or point ``--logic`` at your own)
``frontier``     frontier detection and goal choice on a robot's map
``maes_compat``  MAES 2.0's costmap helpers (``MaesCostmap``, ``Coord2D``)
``tf_pose``      pose algebra and the small TF buffer the controller reads
``examples``     stand-alone example controllers (``python -m maes_controller.examples.<name>``)

Folders by concern: ``navigation/`` the built-in navigator as pure Python (its session,
:class:`~maes_controller.navigation.Navigator`, is the public API), ``nodes/`` the ROS 2 nodes
(thin adapters). See ``docs/architecture.md``.
"""
