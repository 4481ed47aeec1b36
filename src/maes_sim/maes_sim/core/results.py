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


def write_csv(path: str | Path, rows: Iterable[Mapping[str, object]],
              columns: Sequence[str]) -> Path:
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
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def write_png(path: str | Path, rgb: np.ndarray) -> Path:
    """Write an (H, W, 3) uint8 image (row 0 at the top) as PNG; returns the path."""
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"rgb must be uint8 (H, W, 3), got {rgb.dtype} {rgb.shape}")
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))
    data = (b"\x89PNG\r\n\x1a\n"
            + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + _png_chunk(b"IDAT", zlib.compress(raw, 6))
            + _png_chunk(b"IEND", b""))
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
