"""Compile the simulator's and the navigator's numba kernels into the on-disk cache, once.

``make setup`` runs it after building the workspace (again only when a module that compiles
kernels changed), so that the first ``make run`` and every process of the test suite load the
kernels from the cache (maes_common.jit: ``~/.cache/maes_ros/numba/<digest of their sources>``,
shared by every clone of the same sources) instead of each compiling them: 20-40 s of CPU per
process on a 2-core machine, and the parallel test workers would each pay it at once.

It runs short direct-mode runs of the shipped configs (the default explorer on a building, a
cave and a larger one whose regions need passages, the imperfect world with its noise, radio
models and moving obstacles, with the simulated SLAM's maps and with occupancy maps, a mixed
team, a Nav2 map, the lidar split over two threads), which touch the kernels with the argument
types a run uses, and SPACE CBBA's unvisited ground on a small map view (its kernels run only
in crowds, long after these runs' ticks). A kernel used some other
way still compiles on its first use, as before. Prints one line.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: (config file, ticks, extra config keys): small runs that together reach every kernel.
RUNS = [
    ("maes_config.yaml", 30, {}),
    ("configs/cave_75.yaml", 20, {}),
    # a cave with regions apart (the 75x75 one has one), so the passage kernels compile too
    ("configs/cave_75.yaml", 2, {"map": {"width_in_tiles": 200, "height_in_tiles": 200}}),
    ("configs/imperfect_world.yaml", 30, {}),
    # stack.slam: occupancy's grids: their scan update and, robots in range, their merge
    ("configs/imperfect_world.yaml", 30, {"stack": {"slam": "occupancy"}}),
    ("configs/mixed_team.yaml", 20, {}),
    ("configs/custom_map_depot.yaml", 10, {}),
    ("maes_config.yaml", 10, {"performance": {"threads": 2}}),
]


def main() -> int:
    from maes_bringup.runners.direct import run
    from maes_common.contract import DEFAULT_LOGIC
    from maes_common.jit import cache_dir, compile_seconds
    from maes_sim.core import config_from_dict, config_to_dict, load_config

    start = time.monotonic()
    with tempfile.TemporaryDirectory() as results:
        for path, ticks, extra in RUNS:
            raw = config_to_dict(load_config(ROOT / path))
            raw["global_settings"]["statistics_result_path"] = results
            raw["results"] = {"pictures": False}
            for section, keys in extra.items():
                raw[section] = {**raw.get(section, {}), **keys}
            run(config_from_dict(raw), DEFAULT_LOGIC, max_ticks=ticks)
    _unvisited_ground()
    print(
        f"kernels compiled in {compile_seconds():.0f} s ({time.monotonic() - start:.0f} s in "
        f"all) into {cache_dir() or 'numba’s default cache'}"
    )
    return 0


def _unvisited_ground() -> None:
    """SPACE CBBA's unvisited ground (``space_cbba.unvisited_gaps``) on a 4x4 unknown map view,
    one area finished: its kernels with the argument types a run gives them."""
    import numpy as np

    from maes_controller.algorithms._common import MapView
    from maes_controller.algorithms.space_cbba import unvisited_gaps
    from maes_controller.navigation import GridMap

    view = MapView(GridMap.from_array(np.full((4, 4), -1, dtype=np.int8), 1.0), (0.5, 0.5))
    unvisited_gaps(view, {0}, [(0.5, 0.5)])


if __name__ == "__main__":
    sys.exit(main())
