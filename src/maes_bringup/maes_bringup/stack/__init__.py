"""The full stack's launch as pure data: what starts (``launch_plan``), its parameters (``params``).

``launch/multi_robot.launch.py`` turns :func:`~maes_bringup.stack.launch_plan.plan_launch`'s
result into launch actions; everything here is tested without ``launch``.
"""
