"""Snapshots of a running simulation: continue bit-identically from any tick.

A snapshot is a deep copy of everything a :class:`~maes_sim.core.Simulation` changes while it
runs: its random generator's state, every array (motion, commands, odometry, SLAM maps,
exploration and coverage ticks, Explore-Bench seen maps), tags, the comms mailbox, statistics,
trails and the per-tick caches. It is taken over the object's attributes, less the few fixed
when the simulation was built (:data:`FIXED_ATTRIBUTES`: the config, the map and what derives
from them), so an attribute added to the simulation later is snapshotted without listing it.

Restoring copies the state back (the snapshot stays usable: restore it as often as you like,
e.g. to reset a learning episode to a saved start). A snapshot restores only into a simulation
of the same config and map; :func:`save_snapshot` / :func:`load_snapshot` keep one in a file.

>>> from maes_sim.core import Simulation, config_from_dict
>>> sim = Simulation(config_from_dict({"number_of_robots": 2}))
>>> sim.set_velocities([1.0, 0.5], [0.0, 0.2])
>>> saved = sim.snapshot()
>>> sim.run(max_ticks=5)
>>> after = sim.poses
>>> sim.restore(saved)
>>> sim.tick
0
>>> sim.run(max_ticks=5)
>>> bool((sim.poses == after).all())
True
"""

from __future__ import annotations

import copy
import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: The attributes a simulation fixes when it is built and never changes: a snapshot checks
#: them (through :func:`fingerprint`) instead of copying them. Everything else is copied.
FIXED_ATTRIBUTES = frozenset(
    {
        "config",
        "seed",
        "world",
        "walls",
        "_wall_sums",
        "shape",
        "_offset",
        "n_robots",
        "radius",
        "tick_duration",
        "motion_params",
        "comms",
        "_lidar_threads",
        "_one_lidar",
        "_scan_constants",
        # the one-call tick's kept arguments and entry: worked out again for replaced arrays
        "_one_call_kept",
        # the step's scratch arrays: nothing in them outlives a tick
        "_stepper",
        "_asked",
        # caches of the observation pass: rebuilt, not copied (Simulation.restore clears the
        # per-tick ones; each tag's scaled copy is looked up by value, so it stays valid)
        "_observations",
        "_tags_in_units",
        "_tag_copies",
    }
)

#: Version of the snapshot layout; a file of another version is refused.
SNAPSHOT_VERSION = 1


class SnapshotError(ValueError):
    """A snapshot cannot be restored here (another map or robot count, a bad file)."""


@dataclass(frozen=True)
class SimSnapshot:
    """The running state of a simulation at one tick.

    Attributes
    ----------
    tick : int
        The tick the snapshot was taken at.
    fingerprint : str
        :func:`fingerprint` of the simulation it came from (map, robot count, config).
    state : dict
        Deep copies of the simulation's changing attributes, by name.
    """

    tick: int
    fingerprint: str
    state: dict[str, Any]


def fingerprint(sim: Any) -> str:
    """A digest of what a snapshot needs to be equal to restore: the map, the robot count and
    the config (its repr: every value of the dataclass tree).

    Examples
    --------
    >>> from maes_sim.core import Simulation, config_from_dict
    >>> a = Simulation(config_from_dict({"number_of_robots": 2}))
    >>> b = Simulation(config_from_dict({"number_of_robots": 3}))
    >>> fingerprint(a) == fingerprint(b)
    False
    """
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(sim.walls).tobytes())
    h.update(repr(sim.walls.shape).encode())
    h.update(repr((sim.n_robots, sim.config)).encode())
    return h.hexdigest()


def take_snapshot(sim: Any) -> SimSnapshot:
    """Deep-copy the changing state of ``sim`` (see the module docstring)."""
    state = {k: v for k, v in vars(sim).items() if k not in FIXED_ATTRIBUTES}
    return SimSnapshot(int(sim.tick), fingerprint(sim), copy.deepcopy(state))


def restore_snapshot(sim: Any, snapshot: SimSnapshot) -> None:
    """Put ``snapshot``'s state back into ``sim`` (a copy: the snapshot can be reused).

    Raises :class:`SnapshotError`, leaving ``sim`` unchanged, when the snapshot came from a
    simulation of another map, robot count or config.
    """
    if not isinstance(snapshot, SimSnapshot):
        raise SnapshotError(f"expected a SimSnapshot, got {type(snapshot).__name__}")
    mine = fingerprint(sim)
    if snapshot.fingerprint != mine:
        raise SnapshotError(
            f"the snapshot of tick {snapshot.tick} comes from another simulation (map, robot "
            f"count or config differ: fingerprint {snapshot.fingerprint[:12]} != {mine[:12]})"
        )
    vars(sim).update(copy.deepcopy(snapshot.state))


def save_snapshot(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Pickle ``obj`` (a :class:`SimSnapshot` or any picklable run state) to ``path``
    atomically: written to a temporary file, then renamed, so a crash while writing leaves
    the previous file intact."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            pickle.dump({"version": SNAPSHOT_VERSION, "payload": obj}, f, pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def load_snapshot(path: str | os.PathLike[str]) -> Any:
    """Read what :func:`save_snapshot` wrote. Only load files you trust (pickle).

    Raises :class:`SnapshotError` for a file that is not a snapshot of this version.
    """
    try:
        with open(path, "rb") as f:
            data = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise SnapshotError(f"cannot read snapshot {str(path)!r}: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
        raise SnapshotError(f"{str(path)!r} is not a MAES snapshot of version {SNAPSHOT_VERSION}")
    return data["payload"]
