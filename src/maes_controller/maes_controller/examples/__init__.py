"""Example controllers (run them with ``python -m maes_controller.examples.<name>``)."""
