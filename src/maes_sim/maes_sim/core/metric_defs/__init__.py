"""The run metrics, one module per metric family; a new metric is a new module here.

The built-in modules are loaded first, in the order of MAES-ROS's CSV columns; then every other
module of this package, by name. Each registers its metrics with
:func:`maes_sim.core.metric_registry.metric`.
"""

import importlib
import pkgutil

#: The built-in families, in the order of the statistics CSV's columns.
BUILTIN = ("area", "travel", "messages", "coverage_detail")

for _name in BUILTIN + tuple(
    sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in BUILTIN)
):
    if not _name.startswith("_"):
        importlib.import_module(f"{__name__}.{_name}")
