"""Draw a :class:`~maes_bringup.replay.model.Replay` frame by frame into a GIF or an MP4.

One matplotlib figure is built once and its artists are updated per frame (no re-layout), so a
frame costs a redraw. GIFs are written with Pillow; MP4 is piped to ``ffmpeg`` when it exists.
Robots have the colours of the result pictures (``maes_sim.core.robot_colours``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from maes_sim.core import (
    BROADCAST_RGB,
    EXPLORED_RGB,
    NEVER_RGB,
    OBSTACLE_RGB,
    TAG_RGB,
    WALL_RGB,
    agg_pyplot,
    crop_box,
    marker_areas,
    robot_colours,
)

from .model import MAX_FRAMES, Replay, thin_frames

# The colours of every picture of a run (maes_sim.core.figures; the web page uses them too).
TAG_COLOUR = TAG_RGB
#: Moving obstacles (config ``obstacles``): dark, white-hatched and outlined.
OBSTACLE_COLOUR = OBSTACLE_RGB
OBSTACLE_HATCH = "////"
BROADCAST_COLOUR = BROADCAST_RGB
FORMATS = (".gif", ".mp4")


class ReplayError(ValueError):
    """A replay cannot be written (bad output name, no frames, no ffmpeg for MP4...)."""


def _background(replay: Replay, explored: np.ndarray | None) -> np.ndarray:
    h, w = replay.walls.shape
    rgb = np.empty((h, w, 3), dtype=np.float32)
    rgb[:] = EXPLORED_RGB
    if explored is not None:
        rgb[~explored] = NEVER_RGB
    rgb[replay.walls] = WALL_RGB
    return rgb


@dataclass(frozen=True)
class FrameLayout:
    """Where things are in a replay's frames.

    Attributes
    ----------
    size : (int, int)
        Frame width and height in pixels (even, for video encoders).
    map_box : (int, int, int, int)
        The map's axes: left, top (pixels from the frame's top-left), width, height.
    crop : (int, int, int, int)
        The tiles shown, ``(x0, x1, y0, y1)`` half-open (``maes_sim.core.crop_box``).
    extent : (float, float, float, float)
        The axes' limits in world metres: x from, x to, y from, y to.
    to_m : ndarray, shape (2,)
        Grid coordinates of the world origin (the map centre).
    """

    size: tuple[int, int]
    map_box: tuple[int, int, int, int]
    crop: tuple[int, int, int, int]
    extent: tuple[float, float, float, float]
    to_m: np.ndarray

    def pixels(self, grid_xy: np.ndarray, tile_size: float) -> np.ndarray:
        """Pixel (column, row) in a frame of grid positions (..., 2)."""
        xy_m = (np.asarray(grid_xy, dtype=np.float64) - self.to_m) * tile_size
        left, top, w, h = self.map_box
        ex = self.extent
        col = left + (xy_m[..., 0] - ex[0]) / (ex[1] - ex[0]) * w
        row = top + (ex[3] - xy_m[..., 1]) / (ex[3] - ex[2]) * h
        return np.stack([col, row], axis=-1)


def frame_layout(replay: Replay, width_px: int = 720) -> FrameLayout:
    """The layout of ``replay``'s frames ``width_px`` wide: the map cropped to its open area
    keeps its aspect, with axis labels left and below, the title above and the legend right.

    Examples
    --------
    >>> walls = np.ones((20, 40), dtype=bool)
    >>> walls[5:15, 10:30] = False
    >>> r = Replay(walls, 0.5, "t", [], np.zeros(0), np.zeros((1, 0, 2)))
    >>> lay = frame_layout(r, 720)
    >>> lay.size, lay.crop, lay.extent
    ((720, 386), (8, 32, 3, 17), (-6.0, 6.0, -3.5, 3.5))
    """
    h, w = replay.walls.shape
    x0, x1, y0, y1 = crop_box(~replay.walls)
    to_m = np.array([w / 2.0, h / 2.0])
    tile = replay.tile_size
    extent = (
        (x0 - to_m[0]) * tile,
        (x1 - to_m[0]) * tile,
        (y0 - to_m[1]) * tile,
        (y1 - to_m[1]) * tile,
    )
    width_px = max(300, int(width_px) // 2 * 2)
    left, right, top, bottom = 58, 150, 46, 42
    map_w = width_px - left - right
    map_h = int(np.clip(map_w * (y1 - y0) / max(x1 - x0, 1), 120, 2 * width_px))
    map_w = int(min(map_w, map_h * (x1 - x0) / max(y1 - y0, 1)))  # a tall map: narrower
    height_px = (map_h + top + bottom + 1) // 2 * 2
    return FrameLayout(
        (width_px, height_px),
        (left, top, map_w, map_h),
        (x0, x1, y0, y1),
        tuple(float(v) for v in extent),
        to_m,
    )


def render_frames(
    replay: Replay,
    width_px: int = 720,
    max_frames: int = MAX_FRAMES,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[np.ndarray]:
    """Yield the replay's frames as (H, W, 3) uint8 images of ``width_px`` (even) pixels.

    At most ``max_frames`` frames (evenly spread over the run, first and last kept). Axes are
    world metres (origin at the map centre) and the view is cropped to the map's open area.
    ``progress(k, n)`` is called after frame ``k`` of ``n``.
    """
    plt = agg_pyplot()
    if plt is None:
        raise ReplayError("a replay needs matplotlib (pip install matplotlib)")
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Patch, Rectangle

    frames = thin_frames(replay.frames, max_frames)
    if not frames:
        raise ReplayError("the replay has no frames (was the run or recording empty?)")
    lay = frame_layout(replay, width_px)
    x0, x1, y0, y1 = lay.crop
    to_m, tile, extent = lay.to_m, replay.tile_size, lay.extent
    n = replay.n_robots
    colours = robot_colours(n)
    width_px, height_px = lay.size
    left, top, map_w, map_h = lay.map_box
    fig = plt.figure(figsize=(width_px / 100, height_px / 100), dpi=100)
    ax = fig.add_axes(
        (left / width_px, 1 - (top + map_h) / height_px, map_w / width_px, map_h / height_px)
    )
    im = ax.imshow(
        _background(replay, None)[y0:y1, x0:x1],
        origin="lower",
        extent=extent,
        interpolation="nearest",
    )
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_xlabel("x (m)", fontsize="small")
    ax.set_ylabel("y (m)", fontsize="small")
    ax.tick_params(labelsize="x-small")
    trails_m = (replay.trail.astype(np.float64) - to_m) * tile
    trail_lines = [ax.plot([], [], color=colours[i], lw=1.2, alpha=0.85)[0] for i in range(n)]
    tags = ax.scatter([], [], s=10, marker="D", color=TAG_COLOUR, zorder=3)
    tags_m = (np.asarray(replay.tags, dtype=np.float64).reshape(-1, 2) - to_m) * tile
    links = LineCollection([], colors=[BROADCAST_COLOUR], linewidths=1.8, linestyles="--", zorder=4)
    ax.add_collection(links)
    robots = ax.scatter(
        np.zeros(n),
        np.zeros(n),
        s=marker_areas(9 if n <= 20 else 6, replay.radii),
        c=colours,
        edgecolors="black",
        linewidths=0.8,
        zorder=5,
    )
    shown: list = []  # this frame's obstacle patches

    def draw_obstacles(rows: np.ndarray | None) -> None:
        for patch in shown:
            patch.remove()
        shown.clear()
        for kind, x, y, a, b in [] if rows is None else np.asarray(rows).tolist():
            cx, cy = (x - to_m[0]) * tile, (y - to_m[1]) * tile
            style = {
                "facecolor": OBSTACLE_COLOUR,
                "edgecolor": "white",
                "hatch": OBSTACLE_HATCH,
                "lw": 0.0,
                "zorder": 4.5,
            }
            if kind == 0:
                patch = Circle((cx, cy), a * tile, **style)
            else:
                patch = Rectangle(
                    (cx - a * tile, cy - b * tile), 2 * a * tile, 2 * b * tile, **style
                )
            shown.append(ax.add_patch(patch))

    title = fig.text(0.5, 0.985, "", ha="center", va="top", fontsize="small")
    handles = [
        Line2D([], [], ls="", marker="o", mfc=colours[i], mec="black", label=f"robot{i}")
        for i in range(min(n, 12))
    ]
    if n > 12:
        handles.append(
            Line2D([], [], ls="", marker="o", mfc="0.6", mec="black", label=f"... {n} robots")
        )
    handles += [
        Line2D([], [], color="0.3", lw=1.2, label="trail"),
        Line2D([], [], color=BROADCAST_COLOUR, ls="--", label="broadcast\n(sender - receiver)"),
        Line2D([], [], ls="", marker="D", ms=4, color=TAG_COLOUR, label="tag"),
        *(
            [
                Patch(
                    facecolor=OBSTACLE_COLOUR,
                    edgecolor="white",
                    hatch=OBSTACLE_HATCH,
                    label="moving obstacle",
                )
            ]
            if any(f.obstacles is not None and len(f.obstacles) for f in frames)
            else []
        ),
        Patch(facecolor=EXPLORED_RGB, edgecolor="0.6", label="explored"),
        Patch(facecolor=NEVER_RGB, edgecolor="0.6", label="not yet explored"),
        Patch(facecolor=WALL_RGB, label="wall"),
    ]
    fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=((left + map_w + 8) / width_px, 1 - top / height_px),
        fontsize="x-small",
        frameon=False,
    )
    try:
        for k, frame in enumerate(frames):
            explored = frame.explored(replay.walls.shape)
            im.set_data(_background(replay, explored)[y0:y1, x0:x1])
            upto = int(np.searchsorted(replay.trail_ticks, frame.tick, side="right"))
            pos_m = (np.asarray(frame.positions, dtype=np.float64) - to_m) * tile
            for i, line in enumerate(trail_lines):
                xy = trails_m[i, :upto]
                if np.isfinite(pos_m[i]).all():
                    xy = np.vstack([xy, pos_m[i][None]])
                line.set_data(xy[:, 0], xy[:, 1])
            robots.set_offsets(np.where(np.isfinite(pos_m), pos_m, np.nan))
            tags.set_offsets(tags_m[replay.tag_ticks <= frame.tick])
            draw_obstacles(frame.obstacles)
            pairs = np.asarray(frame.links, dtype=np.int64).reshape(-1, 2)
            links.set_segments([pos_m[[a, b]] for a, b in pairs.tolist() if a < n and b < n])
            pct = (
                f", explored {frame.exploration_percent:.1f} %"
                if frame.exploration_percent is not None
                else ""
            )
            title.set_text(
                f"Replay: {replay.title}\ntick {frame.tick} ({frame.sim_time:.1f} s simulated){pct}"
            )
            fig.canvas.draw()
            yield np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
            if progress is not None:
                progress(k + 1, len(frames))
    finally:
        plt.close(fig)


def check_output(path: str | Path) -> tuple[Path, str | None]:
    """``(path, ffmpeg)`` when a replay can be written to ``path``, else :class:`ReplayError`:
    the suffix must be ``.gif`` or ``.mp4``, and an MP4 needs ``ffmpeg`` on PATH."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ReplayError(f"the replay's file must end in .gif or .mp4, got {str(path)!r}")
    ffmpeg = shutil.which("ffmpeg")
    if path.suffix.lower() == ".mp4" and ffmpeg is None:
        raise ReplayError(
            "writing an MP4 needs ffmpeg on PATH, which is missing here; write a "
            f"GIF instead ({path.with_suffix('.gif')})"
        )
    return path, ffmpeg


def write_animation(
    replay: Replay,
    path: str | Path,
    *,
    fps: float = 10.0,
    width_px: int = 720,
    max_frames: int = MAX_FRAMES,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Write ``replay`` as an animated GIF (``.gif``) or, where ``ffmpeg`` exists, an MP4.

    Returns the path. Raises :class:`ReplayError` for another suffix, a bad ``fps`` or
    ``max_frames``, no frames, or an MP4 without ffmpeg.
    """
    path, ffmpeg = check_output(path)
    suffix = path.suffix.lower()
    if isinstance(fps, bool) or not isinstance(fps, int | float) or not 0.1 <= fps <= 60:
        raise ReplayError(f"fps must be a number from 0.1 to 60, got {fps!r}")
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 2:
        raise ReplayError(f"max_frames must be an integer >= 2, got {max_frames!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    images = render_frames(replay, width_px, max_frames, progress)
    if suffix == ".gif":
        _write_gif(path, images, fps)
    else:
        _write_mp4(path, images, fps, ffmpeg)
    return path


def _write_gif(path: Path, images: Iterator[np.ndarray], fps: float) -> None:
    from PIL import Image

    frames = [
        Image.fromarray(img).quantize(colors=255, method=Image.Quantize.MEDIANCUT) for img in images
    ]
    duration = int(round(1000.0 / fps))
    tmp = path.with_name(path.name + ".part")
    frames[0].save(
        tmp,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        duration=duration,
        loop=0,
        optimize=False,
    )
    tmp.replace(path)


def _write_mp4(path: Path, images: Iterator[np.ndarray], fps: float, ffmpeg: str) -> None:
    first = next(images)
    h, w, _ = first.shape
    cmd = [
        ffmpeg,
        "-loglevel",
        "error",
        "-y",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-s",
        f"{w}x{h}",
        "-r",
        f"{fps:g}",
        "-i",
        "-",
        "-pix_fmt",
        "yuv420p",
        "-vcodec",
        "libx264",
        str(path),
    ]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE) as proc:
        assert proc.stdin is not None
        proc.stdin.write(first.tobytes())
        for img in images:
            proc.stdin.write(img.tobytes())
        proc.stdin.close()
        if proc.wait() != 0:
            raise ReplayError(f"ffmpeg failed writing {path} (exit code {proc.returncode})")
