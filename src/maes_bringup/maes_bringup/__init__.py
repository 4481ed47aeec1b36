"""MAES-ROS bringup: how a run is started, one folder per concern.

``stack/``        the full ROS stack's launch: what ``multi_robot.launch.py`` starts
                  (``launch_plan``, pure data) and the Nav2 / slam_toolbox parameters it writes
                  per robot (``params``)
``runners/``      the two in-process ways to run: ``embedded`` (the embedded ROS stack in one
                  process: ``make run``, ``maes_run``) and ``direct`` (no ROS; the same
                  :class:`~maes_controller.robot_api.Robot` API over an in-process simulation,
                  one ``direct_robot.DirectRobot`` per robot)
``experiments/``  many direct-mode runs: the experiment file (``experiment``), the parallel,
                  resumable runner (``batch``: ``maes-batch``), its CSV files (``batch_files``),
                  the per-run metrics (``run_metrics``) and the aggregate table and plots
                  (``aggregate``)

See ``docs/architecture.md``.
"""
