"""The in-process runners: ``embedded`` (the embedded ROS stack) and ``direct`` (no ROS).

Run the embedded stack with ``make run`` or ``maes_run`` (``python -m
maes_bringup.runners.embedded`` is the same program); direct mode with
:func:`maes_bringup.runners.direct.run`.
"""
