"""Result files a person can open: statistics CSV, PGM+YAML maps (Nav2 map_server), PNG images.

I/O only; the numbers come from :mod:`metrics` and :mod:`slam`. PNG is written with zlib, so
the core needs no imaging library.
"""

from __future__ import annotations

import csv
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from maes_common.contract import map_origin

from . import figures


def write_csv(
    path: str | Path, rows: Iterable[Mapping[str, object]], columns: Sequence[str]
) -> Path:
    """Write ``rows`` (dicts keyed by ``columns``) as CSV with a header; returns the path.

    Examples
    --------
    >>> import tempfile, os
    >>> p = write_csv(os.path.join(tempfile.mkdtemp(), "s.csv"), [{"a": 1, "b": 2}], ["a", "b"])
    >>> open(p).read().splitlines()
    ['a,b', '1,2']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row[c] for c in columns})
    return path


def write_occupancy_map(
    path_stem: str | Path,
    occupancy: np.ndarray,
    resolution: float,
    origin_xy: tuple[float, float],
) -> tuple[Path, Path]:
    """Write an occupancy grid as Nav2 map_server PGM + YAML (``<stem>.pgm``, ``<stem>.yaml``).

    Parameters
    ----------
    occupancy : ndarray of int8, shape (H, W)
        OccupancyGrid values, row 0 at the bottom: -1 unknown, 0 free .. 100 occupied.
    resolution : float
        Metres per cell.
    origin_xy : tuple of float
        World position in metres of the bottom-left corner of cell (0, 0).

    The image uses map_saver's trinary convention (254 free, 0 occupied, 205 unknown, with
    free_thresh 0.196 so that 205 reads back as unknown), so
    ``map_server`` / ``load_map_yaml`` read it back unchanged.
    """
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    occ = np.asarray(occupancy)
    if occ.ndim != 2:
        raise ValueError(f"occupancy must be 2-D (H, W), got shape {occ.shape}")
    img = np.full(occ.shape, 205, dtype=np.uint8)
    img[(occ >= 0) & (occ < 25)] = 254
    img[occ >= 65] = 0
    img = np.flipud(img)  # image row 0 is the top
    pgm = stem.with_suffix(".pgm")
    with pgm.open("wb") as fh:
        fh.write(f"P5\n# MAES-ROS map\n{img.shape[1]} {img.shape[0]}\n255\n".encode("ascii"))
        fh.write(np.ascontiguousarray(img).tobytes())
    yml = stem.with_suffix(".yaml")
    yml.write_text(
        f"image: {pgm.name}\n"
        "mode: trinary\n"
        f"resolution: {float(resolution)!r}\n"
        f"origin: [{float(origin_xy[0])!r}, {float(origin_xy[1])!r}, 0.0]\n"
        "negate: 0\n"
        "occupied_thresh: 0.65\n"
        "free_thresh: 0.196\n"  # 205 (unknown) stays unknown, as ROS map_saver writes
    )
    return pgm, yml


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + kind
        + data
        + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def write_png(path: str | Path, rgb: np.ndarray) -> Path:
    """Write an (H, W, 3) uint8 image (row 0 at the top) as PNG; returns the path."""
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"rgb must be uint8 (H, W, 3), got {rgb.dtype} {rgb.shape}")
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))
    data = (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + _png_chunk(b"IDAT", zlib.compress(raw, 6))
        + _png_chunk(b"IEND", b"")
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def heatmap_rgb(heat: np.ndarray, walls: np.ndarray, scale: int = 4) -> np.ndarray:
    """Colour a recency heatmap (H, W) (1 hot .. 0 cold, -1 never) like MAES: red recent,
    blue old, beige never, dark grey walls. Row 0 of the result is the map's top; each tile
    becomes ``scale`` x ``scale`` pixels.
    """
    heat = np.asarray(heat, dtype=np.float32)
    t = np.clip(heat, 0.0, 1.0)[..., None]
    red = np.array([220, 40, 30], dtype=np.float32)
    blue = np.array([40, 70, 200], dtype=np.float32)
    rgb = (t * red + (1.0 - t) * blue).astype(np.uint8)
    rgb[heat < 0] = (235, 225, 200)
    rgb[walls] = (60, 60, 60)
    rgb = np.flipud(rgb)
    return np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)


def run_folder_name(sim, now: float | None = None) -> str:
    """A results folder name: ``<date-time>_<map>_<N>robots_seed<S>``."""
    import time as _time

    stamp = _time.strftime("%Y%m%d-%H%M%S", _time.localtime(now))
    return f"{stamp}_{sim.world.name}_{sim.n_robots}robots_seed{sim.seed}"


def write_run_results(
    sim,
    parent: str | Path,
    folder: str | None = None,
    extra_summary: Mapping[str, object] | None = None,
) -> Path:
    """Write a finished (or interrupted) run's results into ``parent/<folder>``; returns it.

    Files: ``statistics.csv`` (one row per snapshot; only with the config's
    ``global_settings.should_write_csv_results``, as in MAES 2.0), ``summary.json`` (config,
    seed, end reason, final statistics, per-robot distance in metres and collisions, i.e. new
    contacts with a wall or robot), ``ground_truth.pgm/.yaml`` and ``robot<i>_slam.pgm/.yaml``
    (Nav2 map_server format, metres), ``exploration.png`` and ``coverage.png`` (when each tile
    was last explored / covered, with every robot's path, start and end; with matplotlib, else
    plain heatmaps) and, with matplotlib, ``exploration_first_seen.png`` (the same for the first
    time a tile was explored: the order of discovery) and ``progress.png`` (exploration and
    both coverages over time with the end criteria); no pictures with the config's
    ``results.pictures`` false.
    """
    import json

    from .comms import robot_name
    from .config import config_to_dict
    from .metrics import snapshot_columns
    from .slam import to_occupancy

    out = Path(parent) / (folder or run_folder_name(sim))
    out.mkdir(parents=True, exist_ok=True)
    rows = list(sim.snapshots)
    if not rows or rows[-1]["tick"] != sim.tick:
        rows.append(sim.stats())
    if sim.config.global_settings.should_write_csv_results:
        write_csv(out / "statistics.csv", rows, snapshot_columns())
    tile = sim.config.world.tile_size
    h, w = sim.shape
    origin = map_origin(w, h, tile)
    write_occupancy_map(
        out / "ground_truth", np.where(sim.walls, 100, 0).astype(np.int8), tile, origin
    )
    for i in range(sim.n_robots):
        write_occupancy_map(
            out / f"{robot_name(i)}_slam", to_occupancy(sim.slam_maps[i]), tile, origin
        )
    if sim.config.results.pictures:
        _write_pictures(sim, out)
    summary = {
        "seed": sim.seed,
        "map": sim.world.name,
        "map_source": sim.world.source,
        "number_of_robots": sim.n_robots,
        "robot_types": list(sim.team.names),  # each robot's type, robot 0 first
        "ticks": sim.tick,
        "sim_time_s": sim.sim_time,
        "finished": sim.finished,
        "end_reason": sim.end_reason,
        "final": rows[-1],
        "distance_travelled_m": (sim.metrics.distance * tile).round(6).tolist(),
        "collisions": sim.metrics.collisions.tolist(),  # new contacts, per robot
        "stalls": sim.stalls.per_robot.tolist(),  # stalls begun, per robot (core/stalls.py)
        "radio": sim.mailbox.radio.summary(),  # per robot: sent, delivered, dropped, latency
        "exploration_metrics": sim.explore_bench_summary(),  # Explore-Bench's measures
        "config": config_to_dict(sim.config),
    }
    summary.update(extra_summary or {})
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    if not sim.config.results.pictures:
        return out
    end = sim.config.end_criteria
    figures.plot_progress(
        out / "progress.png",
        rows,
        title=f"Progress: {_run_title(sim)}",
        end_criteria={
            "exploration_percent": end.exploration_percent,
            "coverage_percent": end.coverage_percent,
            "tick": end.tick,
        },
        tick_duration=sim.tick_duration,
        end_reason=sim.end_reason,
    )
    return out


def _run_title(sim) -> str:
    """``<map> map, <N> robots, seed <S>, tick <T> (<t> s)``: what every picture's title names."""
    robots = f"{sim.n_robots} robot{'s' if sim.n_robots != 1 else ''}"
    return f"{sim.world.name} map, {robots}, seed {sim.seed}, tick {sim.tick} ({sim.sim_time:g} s)"


def _write_pictures(sim, out: Path) -> None:
    """``exploration.png`` and ``coverage.png``: recency maps with the robots' paths (plain
    heatmaps without matplotlib)."""
    metrics, tile = sim.metrics, sim.config.world.tile_size
    if figures.agg_pyplot() is None:
        h, w = sim.shape
        scale = max(1, min(16, 600 // max(h, w)))  # about 600 px on the long side
        write_png(out / "exploration.png", heatmap_rgb(sim.exploration_heatmap(), sim.walls, scale))
        write_png(out / "coverage.png", heatmap_rgb(sim.coverage_heatmap(), sim.walls, scale))
        return
    trail = sim.trail
    for name, what, when, last in (
        ("exploration", "explored", "last", metrics.explored_tick),
        # the order of discovery: when each tile was seen the first time
        ("exploration_first_seen", "explored", "first", metrics.first_explored_tick),
        # MAES 2.0's coverage is counted on half-tile mini-tiles: a tile shows its latest one
        ("coverage", "covered", "last", metrics.tile_covered_tick()),
    ):
        heading = "Exploration, order of discovery" if when == "first" else name.capitalize()
        if name == "coverage":
            heading = "Coverage (MAES 2.0's: half-tiles in the 3 x 3 around a robot's)"
        share = sim.coverage_percent if name == "coverage" else sim.exploration_percent
        figures.plot_recency_map(
            out / f"{name}.png",
            last,
            sim.walls,
            what=what,
            when=when,
            title=f"{heading}: {_run_title(sim)}\n"
            f"{share:.1f} % of the reachable area {what}; colour: when a tile was {when} {what}",
            end_tick=sim.tick,
            tick_duration=sim.tick_duration,
            tile_size=tile,
            paths=trail.positions,
            end_positions=sim.grid_positions,
            radii=sim.team.radii,
        )
