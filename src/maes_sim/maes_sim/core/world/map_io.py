"""Custom maps: PGM images (MAES's rule) and Nav2 map_server YAML maps.

Both readers flip the image (its first row is the top) so that row 0 is the bottom of the map, keep
the map as drawn (no region is dropped) and record the largest open region as the map's one room.
"""

from __future__ import annotations

import math
import os
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np

from ..safe_yaml import MAX_YAML_BYTES, check_user_file, load_yaml, read_user_file, short_repr
from .connectivity import largest_open_region
from .generators import map_generator
from .worldmap import MapError, WorldMap

_NAV2_MODES = ("trinary", "scale", "raw")
_YAML_REQUIRED = ("image", "resolution", "origin", "occupied_thresh", "free_thresh", "negate")
_TOKEN = re.compile(rb"\s*(?:#[^\n\r]*[\n\r]?\s*)*")
_DIGITS = re.compile(rb"[0-9]+")
#: Most pixels a map image may have (a 5000 x 5000 map, the largest generated one). Checked
#: from the header before any pixel is decoded, so a small file cannot ask for gigabytes.
MAX_IMAGE_PIXELS = 5000 * 5000
#: Most tiles a Nav2 map may have once resampled to ``tile_size`` (the same budget).
MAX_MAP_TILES = MAX_IMAGE_PIXELS
#: Largest image file read (a 16-bit 5000 x 5000 PGM is 50 MB; ASCII P2 needs more).
MAX_IMAGE_BYTES = 256 << 20
#: Bytes read to find a PGM header (comments included) before the raster.
_HEADER_BYTES = 64 << 10
#: Bytes allowed after a P5 raster (a trailing newline or padding), beyond which the header is
#: not describing the file.
_P5_SLACK = 4096

# OpenCV's own decoded-size limit, for the formats we do not pre-check (set before cv2 loads).
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_IMAGE_PIXELS))


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


def _pgm_header(data: bytes, where: str) -> tuple[bytes, int, int, int, int]:
    """(magic, cols, rows, maxval, end of header) of a PGM whose first bytes are ``data``."""
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
    if rows * cols > MAX_IMAGE_PIXELS:
        raise MapError(
            f"{where}: image size {cols}x{rows} is too large (at most {MAX_IMAGE_PIXELS} pixels)"
        )
    return magic, cols, rows, maxval, pos


def read_pgm(path: str | Path, what: str = "PGM map") -> tuple[np.ndarray, int]:
    """Read a PGM file, checking its header against the file's size before reading the pixels.

    Parameters
    ----------
    path : str or Path
        A P2 or P5 PGM file.

    Returns
    -------
    pixels : np.ndarray
        uint16 (rows, cols) in file order (row 0 = top of the image).
    maxval : int

    Raises
    ------
    MapError
        Not a regular file, a header asking for more than :data:`MAX_IMAGE_PIXELS`, a file
        shorter (truncated) or much longer than its header declares, or any error of
        :func:`parse_pgm`.
    """
    path = Path(path)
    where = str(path)
    size = check_user_file(path, MAX_IMAGE_BYTES, what, MapError)
    with open(path, "rb") as handle:
        head = handle.read(_HEADER_BYTES)
        magic, cols, rows, maxval, pos = _pgm_header(head, where)
        if magic == b"P5":
            width = 2 if maxval > 255 else 1
            need = pos + 1 + rows * cols * width
            if size < need:
                got = max(0, size - pos - 1) // width
                raise MapError(
                    f"{where}: truncated PGM data, expected {rows * cols} pixels, got {got}"
                )
            if size > need + _P5_SLACK:
                raise MapError(
                    f"{where}: the file is {size} bytes but its header declares {cols}x{rows} "
                    f"pixels ({need} bytes); not a single PGM image"
                )
            handle.seek(0)
            data = handle.read(need)
        else:
            # ASCII: a pixel takes 2 to 6 bytes; 16 leaves room for comments and line breaks.
            if size > _HEADER_BYTES + 16 * rows * cols:
                raise MapError(
                    f"{where}: the file is {size} bytes, far more than its header's {cols}x{rows} "
                    "ASCII pixels need; not a single PGM image"
                )
            handle.seek(0)
            data = handle.read()
    return parse_pgm(data, where)


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
    magic, cols, rows, maxval, pos = _pgm_header(data, where)
    count = rows * cols
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
    pixels, _ = read_pgm(path)
    walls = np.ascontiguousarray((pixels == 0)[::-1])
    return _finish(walls, str(path), name=path.stem)


def _read_image(path: Path) -> tuple[np.ndarray, np.ndarray | None, int]:
    """(grey (rows, cols) float in 0..maxval, alpha (rows, cols) bool opaque or None, maxval)."""
    if path.suffix.lower() == ".pgm":
        pixels, maxval = read_pgm(path, "map image")
        return pixels.astype(np.float64), None, maxval
    check_user_file(path, MAX_IMAGE_BYTES, "map image", MapError)
    size = _image_size(path)  # a PNG's header: refuse a decompression bomb before decoding
    if size is not None and size[0] * size[1] > MAX_IMAGE_PIXELS:
        raise MapError(
            f"{path}: image size {size[0]}x{size[1]} is too large (at most {MAX_IMAGE_PIXELS} "
            "pixels)"
        )
    try:
        import cv2  # optional: only for non-PGM images
    except ImportError:
        raise MapError(
            f"{path}: reading {path.suffix or 'this'} images needs opencv-python-headless "
            "(pip install opencv-python-headless); or convert the image to PGM"
        ) from None
    try:
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    except cv2.error as exc:  # e.g. over OPENCV_IO_MAX_IMAGE_PIXELS
        raise MapError(f"{path}: not a readable image ({short_repr(str(exc), 200)})") from None
    if img is None:
        raise MapError(f"{path}: not a readable image")
    if img.shape[0] * img.shape[1] > MAX_IMAGE_PIXELS:
        raise MapError(
            f"{path}: image size {img.shape[1]}x{img.shape[0]} is too large (at most "
            f"{MAX_IMAGE_PIXELS} pixels)"
        )
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
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MapError(f"{where}: {key} must be a finite number, got {short_repr(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise MapError(f"{where}: {key} must be a finite number, got {short_repr(value)}")
    return number


def _image_size(path: Path) -> tuple[int, int] | None:
    """(cols, rows) from a PGM or PNG header, or None for other formats (checked after decode)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEADER_BYTES)
    if head[:2] in (b"P2", b"P5"):
        _, cols, rows, _, _ = _pgm_header(head, str(path))
        return cols, rows
    if len(head) >= 24 and head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        cols, rows = struct.unpack(">II", head[16:24])
        return cols, rows
    return None  # another format, or a PNG too short to say: the decoder reports it


def _check_tiles(where: str, image: Path, resolution: float, tile_size: float) -> None:
    """Refuse a map that resampled to ``tile_size`` would exceed MAX_MAP_TILES (before reading)."""
    try:
        size = _image_size(image)
    except OSError:
        return  # _read_image reports unreadable files with their reason
    if size is None:
        return
    scale = resolution / tile_size
    tiles = [math.ceil(n * scale - 1e-9) if math.isfinite(n * scale) else math.inf for n in size]
    if tiles[0] * tiles[1] > MAX_MAP_TILES:
        raise MapError(
            f"{where}: {size[0]}x{size[1]} pixels of {resolution:g} m resampled to tiles of "
            f"{tile_size:g} m make a map of {tiles[0]}x{tiles[1]} tiles, more than the "
            f"{MAX_MAP_TILES} allowed; use a larger world.tile_size"
        )


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
    path = Path(path)
    where = str(path)
    if (
        isinstance(tile_size, bool)
        or not isinstance(tile_size, int | float)
        or not (math.isfinite(tile_size) and tile_size > 0)
    ):
        raise MapError(f"tile_size must be a finite number of metres > 0, got {tile_size!r}")
    # One strict loader for every YAML file: duplicate keys, aliases, traps -> MapError.
    doc = load_yaml(read_user_file(path, MAX_YAML_BYTES, "map YAML", MapError), where, MapError)
    if not isinstance(doc, dict):
        raise MapError(f"{where}: expected a mapping of map_server keys, got {type(doc).__name__}")
    missing = [k for k in _YAML_REQUIRED if k not in doc]
    if missing:
        raise MapError(f"{where}: missing required key(s) {', '.join(missing)}")

    image = doc["image"]
    if not isinstance(image, str) or not image:
        raise MapError(f"{where}: image must be a file name, got {short_repr(image)}")
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
        raise MapError(f"{where}: origin must be [x, y, yaw] numbers, got {short_repr(origin)}")
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
        raise MapError(f"{where}: negate must be 0 or 1, got {short_repr(negate)}")
    mode = doc.get("mode", "trinary")
    if mode not in _NAV2_MODES:
        raise MapError(
            f"{where}: mode must be one of {', '.join(_NAV2_MODES)}, got {short_repr(mode)}"
        )

    if "\0" in image:
        raise MapError(f"{where}: image {short_repr(image)} contains a NUL byte (\\x00)")
    image_path = Path(image) if Path(image).is_absolute() else path.parent / image
    if not os.path.exists(image_path):
        raise MapError(f"{where}: image {short_repr(image)} not found (looked for {image_path})")
    # A FIFO or device would block the header read below: refuse anything but a regular file.
    check_user_file(image_path, MAX_IMAGE_BYTES, f"map image (from {where})", MapError)
    _check_tiles(where, image_path, resolution, float(tile_size))
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


@map_generator("custom", "custom_map_filename")
def custom_from_config(config, rng: np.random.Generator) -> WorldMap:
    """The map file of a config (``map.custom_map_filename``), resampled to
    ``world.tile_size`` metres per tile when it is a Nav2 YAML map; ``rng`` is not drawn from."""
    return load_custom_map(config.map.custom_map_filename, tile_size=config.world.tile_size)
