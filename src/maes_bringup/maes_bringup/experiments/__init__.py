"""The experiment platform: many direct-mode runs as tidy CSV, aggregated.

``maes-batch EXPERIMENT.yaml`` (:func:`maes_bringup.experiments.batch.main`) runs every case;
``python -m maes_bringup.experiments.aggregate OUT_DIR`` redoes the table and plots. See
``docs/experiments.md``.
"""
