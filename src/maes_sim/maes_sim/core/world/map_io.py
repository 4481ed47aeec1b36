"""Custom maps: PGM images (MAES's rule) and Nav2 map_server YAML maps.

Both readers flip the image (its first row is the top) so that row 0 is the bottom of the map, keep
the map as drawn (no region is dropped) and record the largest open region as the map's one room.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from .connectivity import largest_open_region
from .worldmap import MapError, WorldMap

_NAV2_MODES = ("trinary", "scale", "raw")
_YAML_REQUIRED = ("image", "resolution", "origin", "occupied_thresh", "free_thresh", "negate")
_TOKEN = re.compile(rb"\s*(?:#[^\n\r]*[\n\r]?\s*)*")
_DIGITS = re.compile(rb"[0-9]+")
# Guards against absurd headers before anything is allocated.
_MAX_PIXELS = 1 << 28


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise MapError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise MapError(f"{what} is a directory, not a file: {path}") from None
    except OSError as exc:
        raise MapError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _header_number(data: bytes, pos: int, name: str, where: str) -> tuple[int, int]:
    """Skip whitespace and comments from ``pos``; read a decimal number; return (value, end)."""
    pos = _TOKEN.match(data, pos).end()
    m = _DIGITS.match(data, pos)
    if m is None:
        got = data[pos : pos + 12]
        raise MapError(f"{where}: bad PGM header, expected the {name} as a number, got {got!r}")
    if len(m.group()) > 9:
        raise MapError(f"{where}: bad PGM header, {name} {m.group().decode()} is too large")
    return int(m.group()), m.end()


def parse_pgm(data: bytes, where: str = "<bytes>") -> tuple[np.ndarray, int]:
    """Parse a P2 (ASCII) or P5 (binary) PGM image.

    Parameters
    ----------
    data : bytes
        The whole file.
    where : str
        Name used in error messages (usually the path).

    Returns
    -------
    pixels : np.ndarray
        uint16 (rows, cols) in file order (row 0 = top of the image).
    maxval : int
        The image's maximum grey value (1..65535).

    Raises
    ------
    MapError
        Not a PGM, a bad header (comments may appear anywhere in it), maxval 0 or above 65535,
        truncated pixel data (the message gives the expected and found pixel counts), or a pixel
        value above maxval.

    Examples
    --------
    >>> pixels, maxval = parse_pgm(b"P2\\n# tiny\\n3 1\\n255\\n0 128 255\\n")
    >>> pixels, maxval
    (array([[  0, 128, 255]], dtype=uint16), 255)
    """
    magic = data[:2]
    if magic not in (b"P2", b"P5"):
        raise MapError(f"{where}: not a PGM image (P2 or P5 expected), starts with {data[:8]!r}")
    pos = 2
    if len(data) > 2 and data[2:3] not in b" \t\r\n\v\f#":
        raise MapError(f"{where}: not a PGM image, the magic number is {data[:8]!r}")
    cols, pos = _header_number(data, pos, "width", where)
    rows, pos = _header_number(data, pos, "height", where)
    maxval, pos = _header_number(data, pos, "maxval", where)
    if cols == 0 or rows == 0:
        raise MapError(f"{where}: bad PGM header, image size {cols}x{rows} has no pixels")
    if maxval == 0 or maxval > 65535:
        raise MapError(f"{where}: bad PGM header, maxval must be within 1..65535, got {maxval}")
    count = rows * cols
    if count > _MAX_PIXELS:
        raise MapError(f"{where}: image size {cols}x{rows} is too large")
    if magic == b"P5":
        # Exactly one whitespace byte separates the header from the binary raster.
        if pos >= len(data) or data[pos : pos + 1] not in b" \t\r\n\v\f":
            raise MapError(f"{where}: bad PGM header, no whitespace after maxval {maxval}")
        raster = data[pos + 1 :]
        width = 2 if maxval > 255 else 1
        got = len(raster) // width
        if got < count:
            raise MapError(f"{where}: truncated PGM data, expected {count} pixels, got {got}")
        dtype = ">u2" if width == 2 else "u1"
        pixels = np.frombuffer(raster, dtype=dtype, count=count).astype(np.uint16)
    else:
        body = re.sub(rb"#[^\n\r]*", b" ", data[pos:])
        if re.fullmatch(rb"[\s0-9]*", body) is None:
            bad = re.search(rb"[^\s0-9]+", body).group()[:12]
            raise MapError(f"{where}: bad P2 pixel data, {bad!r} is not a number")
        tokens = body.split()
        if len(tokens) < count:
            raise MapError(
                f"{where}: truncated PGM data, expected {count} pixels, got {len(tokens)}"
            )
        if any(len(t) > 18 for t in tokens[:count]):  # would overflow int64; never <= 65535
            raise MapError(f"{where}: bad P2 pixel data, a value exceeds maxval {maxval}")
        pixels = np.array(tokens[:count]).astype(np.int64)
    if int(pixels.max()) > maxval:
        raise MapError(f"{where}: pixel value {int(pixels.max())} exceeds maxval {maxval}")
    return pixels.astype(np.uint16).reshape(rows, cols), maxval


def _finish(walls: np.ndarray, where: str, **fields: Any) -> WorldMap:
    if walls.all():
        raise MapError(f"{where}: the map is all wall (no open tile)")
    return WorldMap(walls=walls, rooms=(largest_open_region(walls),), source=where, **fields)


def load_pgm(path: str | Path) -> WorldMap:
    """Read a PGM map with MAES's rule: a completely black pixel (0) is a wall, others open.

    One pixel per tile; the image is flipped so that its bottom row is tile row 0.

    Parameters
    ----------
    path : str or Path
        A P2 or P5 PGM file (8 or 16 bit, comments allowed in the header).

    Returns
    -------
    WorldMap
        ``name`` is the file stem, ``source`` the path, ``rooms`` the largest open region.

    Raises
    ------
    MapError
        Missing file, not a PGM, corrupt or truncated data, or an image that is all wall.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "m.pgm"
    ...     _ = p.write_bytes(b"P2\\n2 2\\n255\\n0 255\\n255 255\\n")
    ...     load_pgm(p).walls  # the top-left pixel is the wall at row 1
    array([[False, False],
           [ True, False]])
    """
    path = Path(path)
    pixels, _ = parse_pgm(_read_bytes(path, "PGM map"), str(path))
    walls = np.ascontiguousarray((pixels == 0)[::-1])
    return _finish(walls, str(path), name=path.stem)


def _read_image(path: Path) -> tuple[np.ndarray, np.ndarray | None, int]:
    """(grey (rows, cols) float in 0..maxval, alpha (rows, cols) bool opaque or None, maxval)."""
    if path.suffix.lower() == ".pgm":
        pixels, maxval = parse_pgm(_read_bytes(path, "map image"), str(path))
        return pixels.astype(np.float64), None, maxval
    if not path.exists():
        raise MapError(f"map image not found: {path}")
    try:
        import cv2  # optional: only for non-PGM images
    except ImportError:
        raise MapError(
            f"{path}: reading {path.suffix or 'this'} images needs opencv-python-headless "
            "(pip install opencv-python-headless); or convert the image to PGM"
        ) from None
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise MapError(f"{path}: not a readable image")
    maxval = 65535 if img.dtype == np.uint16 else 255
    alpha = None
    if img.ndim == 3:
        if img.shape[2] == 4:
            alpha = img[:, :, 3] == maxval
        grey = img[:, :, :3].astype(np.float64).mean(axis=2)  # Nav2 averages the channels
    else:
        grey = img.astype(np.float64)
    return grey, alpha, maxval


def _number(doc: dict, key: str, where: str) -> float:
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MapError(f"{where}: {key} must be a finite number, got {value!r}")
    return float(value)


def _resample_any(blocked: np.ndarray, resolution: float, tile_size: float) -> np.ndarray:
    """OR-reduce a bottom-up pixel mask onto tiles of ``tile_size`` (partial tiles included)."""
    out = blocked
    for axis in (0, 1):
        n_px = out.shape[axis]
        n_tiles = max(1, math.ceil(n_px * resolution / tile_size - 1e-9))
        edges = np.arange(n_tiles + 1) * (tile_size / resolution)
        # Pixel p covers [p, p+1) in pixel units; it falls in every tile its extent overlaps.
        first = np.clip(np.floor(edges[:-1] + 1e-9).astype(np.int64), 0, n_px)
        last = np.clip(np.ceil(edges[1:] - 1e-9).astype(np.int64), 0, n_px)
        csum = np.concatenate(
            [
                np.zeros_like(np.take(out, [0], axis=axis), dtype=np.int64),
                np.cumsum(out, axis=axis, dtype=np.int64),
            ],
            axis=axis,
        )
        out = (np.take(csum, last, axis=axis) - np.take(csum, first, axis=axis)) > 0
    return out


def load_map_yaml(path: str | Path, tile_size: float = 1.0) -> WorldMap:
    """Read a Nav2 map_server map (YAML + image) and resample it to tiles of ``tile_size`` metres.

    Pixel occupancy follows map_server: ``p = (maxval - v) / maxval`` (``v / maxval`` when
    ``negate``). ``trinary`` (default): occupied when ``p > occupied_thresh``, free when
    ``p < free_thresh``, else unknown. ``scale``: the same, but in-between pixels are graded
    occupancy (free for a Nav2 costmap), not unknown; transparent pixels are unknown. ``raw``: the
    8-bit value is the occupancy percent (0..100, ``negate`` ignored, above 100 unknown) and the
    thresholds apply to it. Occupied and unknown pixels are walls; a tile is a wall when any wall
    pixel overlaps it, and partial tiles at the top and right edges are kept.

    Parameters
    ----------
    path : str or Path
        The YAML file; its ``image`` is relative to the YAML's folder unless absolute.
    tile_size : float
        Tile edge in metres.

    Returns
    -------
    WorldMap
        ``origin_m`` is the YAML ``origin`` (x, y, yaw) and ``tile_size_m`` the tile size.

    Raises
    ------
    MapError
        Missing files, missing or bad keys (thresholds outside 0..1 or free above occupied),
        an unreadable image, or a map that is all wall.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "m.pgm").write_bytes(b"P2\\n2 1\\n255\\n0 254\\n")
    ...     _ = (Path(d) / "m.yaml").write_text(
    ...         "image: m.pgm\\nresolution: 0.5\\norigin: [-1, 0, 0]\\n"
    ...         "occupied_thresh: 0.65\\nfree_thresh: 0.196\\nnegate: 0\\n")
    ...     world = load_map_yaml(Path(d) / "m.yaml", tile_size=0.5)
    >>> world.walls, world.origin_m
    (array([[ True, False]]), (-1.0, 0.0, 0.0))
    """
    import yaml  # only needed for map_server maps

    path = Path(path)
    where = str(path)
    if (
        isinstance(tile_size, bool)
        or not isinstance(tile_size, int | float)
        or not (math.isfinite(tile_size) and tile_size > 0)
    ):
        raise MapError(f"tile_size must be a finite number of metres > 0, got {tile_size!r}")
    text = _read_bytes(path, "map YAML")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MapError(f"{where}: not valid YAML ({exc})") from None
    if not isinstance(doc, dict):
        raise MapError(f"{where}: expected a mapping of map_server keys, got {type(doc).__name__}")
    missing = [k for k in _YAML_REQUIRED if k not in doc]
    if missing:
        raise MapError(f"{where}: missing required key(s) {', '.join(missing)}")

    image = doc["image"]
    if not isinstance(image, str) or not image:
        raise MapError(f"{where}: image must be a file name, got {image!r}")
    resolution = _number(doc, "resolution", where)
    if resolution <= 0:
        raise MapError(f"{where}: resolution must be > 0 metres per pixel, got {resolution!r}")
    origin = doc["origin"]
    if (
        not isinstance(origin, list | tuple)
        or len(origin) not in (2, 3)
        or any(isinstance(v, bool) or not isinstance(v, int | float) for v in origin)
        or not all(math.isfinite(v) for v in origin)
    ):
        raise MapError(f"{where}: origin must be [x, y, yaw] numbers, got {origin!r}")
    origin_m = (float(origin[0]), float(origin[1]), float(origin[2]) if len(origin) == 3 else 0.0)
    occ = _number(doc, "occupied_thresh", where)
    free = _number(doc, "free_thresh", where)
    if not (0.0 <= free <= 1.0 and 0.0 <= occ <= 1.0) or free > occ:
        raise MapError(
            f"{where}: thresholds need 0 <= free_thresh <= occupied_thresh <= 1, got "
            f"free_thresh={free!r}, occupied_thresh={occ!r}"
        )
    negate = doc["negate"]
    if negate not in (0, 1) or not isinstance(negate, int):
        raise MapError(f"{where}: negate must be 0 or 1, got {negate!r}")
    mode = doc.get("mode", "trinary")
    if mode not in _NAV2_MODES:
        raise MapError(f"{where}: mode must be one of {', '.join(_NAV2_MODES)}, got {mode!r}")

    image_path = Path(image) if Path(image).is_absolute() else path.parent / image
    if not image_path.exists():
        raise MapError(f"{where}: image {image!r} not found (looked for {image_path})")
    grey, alpha, maxval = _read_image(image_path)
    shade = grey / maxval
    if mode == "raw":
        percent = np.rint(shade * 255.0)
        p = percent / 100.0
        blocked = (percent > 100) | (p > occ)
    else:
        p = shade if negate else 1.0 - shade
        blocked = p > occ
        if mode == "trinary":
            blocked |= p >= free  # unknown (neither occupied nor free) counts as wall
        elif alpha is not None:
            blocked |= ~alpha
    blocked = np.ascontiguousarray(blocked[::-1])
    walls = _resample_any(blocked, resolution, float(tile_size))
    if walls.all() and not blocked.all():
        raise MapError(
            f"{where}: the map is all wall once resampled to tiles of {tile_size:g} m (a tile is "
            f"a wall if any pixel in it is occupied or unknown); its passages need a smaller "
            f"tile_size (the image has {resolution:g} m pixels)"
        )
    return _finish(walls, where, name=path.stem, origin_m=origin_m, tile_size_m=float(tile_size))


def load_custom_map(path: str | Path, tile_size: float = 1.0) -> WorldMap:
    """Load a custom map by extension: ``.yaml``/``.yml`` (Nav2 map_server) or ``.pgm`` (MAES).

    ``tile_size`` (metres) only matters for YAML maps; a PGM is one pixel per tile.

    Examples
    --------
    >>> try:
    ...     load_custom_map("map.png")
    ... except MapError as exc:
    ...     print(exc)
    unsupported custom map 'map.png': use a .pgm image or a Nav2 map .yaml/.yml
    """
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return load_map_yaml(path, tile_size)
    if suffix == ".pgm":
        return load_pgm(path)
    raise MapError(
        f"unsupported custom map {str(path)!r}: use a .pgm image or a Nav2 map .yaml/.yml"
    )
