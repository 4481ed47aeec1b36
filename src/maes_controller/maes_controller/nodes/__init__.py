"""The ROS 2 nodes of maes_controller: thin adapters over the pure code beside them.

``controller_node``  one robot's controller: runs a logic callback (the frontier explorer
                     by default, :data:`maes_common.contract.DEFAULT_LOGIC`) through the
                     :class:`~maes_controller.robot_api.Robot` API
``navigator_node``   the built-in navigator: Nav2's ``navigate_to_pose`` for every robot,
                     driving one :class:`~maes_controller.navigation.Navigator` per goal
``ros_conversions``  every message conversion the two nodes need, in one module

Console scripts: ``ros2 run maes_controller controller_node`` and ``... navigator_node``.
"""
