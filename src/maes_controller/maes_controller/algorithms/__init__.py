"""Exploration algorithms shipped as logic callbacks, one module each.

Use one with ``--logic maes_controller.algorithms.<module>:logic`` (``make run``, direct mode,
experiments' ``controllers`` list, the launch file's ``logic:=`` argument). What each does and
where it comes from: ``docs/algorithms.md``. This package imports none of them, so loading one
costs only that one.
"""
