"""Exploration algorithms shipped as logic callbacks, one module each.

Each module ``maes_controller.algorithms.<name>`` has a ``logic(robot)`` usable wherever a logic
spec is taken (``--logic maes_controller.algorithms.<name>:logic``, direct mode, experiments, the
controller node's ``logic`` parameter). ``docs/algorithms.md`` describes each one. Nothing is
imported here, so loading one algorithm never pulls in another's dependencies.
"""
