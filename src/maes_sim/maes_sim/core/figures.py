"""The result pictures a person reads: recency maps with paths, and progress over time.

matplotlib is optional for the core: :func:`agg_pyplot` returns None without it and the callers
fall back to plain images. Pure helpers (:func:`robot_colours`, :func:`crop_box`) are shared
with the replay (``maes_bringup.replay``), so a robot has one colour in every picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

#: Colours (RGB 0..1) of walls and of open tiles never explored / covered, in every picture.
WALL_RGB = (0.42, 0.42, 0.42)
NEVER_RGB = (0.93, 0.89, 0.78)
#: Open tiles some lidar has seen (replays and the web page; the unseen ones are NEVER_RGB).
EXPLORED_RGB = (1.0, 1.0, 1.0)
#: A broadcast, drawn from sender to receiver (replays and the web page).
BROADCAST_RGB = (0.85, 0.1, 0.55)
#: Environment tags.
TAG_RGB = (0.0, 0.0, 0.0)
#: Moving obstacles: dark (outlined in white), so that no robot's colour (any hue, for any
#: number of robots) and no wall is mistaken for one.
OBSTACLE_RGB = (0x26 / 255, 0x26 / 255, 0x26 / 255)
#: The colour map of the recency pictures (dark: long ago, yellow: just now).
RECENCY_CMAP = "viridis"
#: Tiles of margin around the open area when a picture is cropped to it.
CROP_MARGIN = 2


def agg_pyplot():
    """matplotlib.pyplot on the file-only Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # optional: the core does not depend on matplotlib
        return None
    return plt


def robot_colours(n: int) -> np.ndarray:
    """The robots' colours (n, 3), RGB 0..1, the same in every picture: :func:`distinct_colours`.

    Examples
    --------
    >>> robot_colours(2).round(3).tolist()
    [[0.122, 0.467, 0.706], [1.0, 0.498, 0.055]]
    """
    return distinct_colours(n)


def distinct_colours(n: int) -> np.ndarray:
    """Distinct RGB colours (n, 3), 0..1; no two alike for any ``n``.

    Up to 10: matplotlib's ``tab10``; up to 20: then the light ``tab20`` partners of those, in
    the same order; more: evenly spaced hues (golden-ratio steps), lightness alternating.

    Examples
    --------
    >>> distinct_colours(3).shape
    (3, 3)
    >>> len({tuple(c) for c in distinct_colours(50).round(4).tolist()})
    50
    """
    import colorsys

    if n <= len(_TAB20):
        return np.array(
            [[(h >> s & 0xFF) / 255.0 for s in (16, 8, 0)] for h in _TAB20[:n]]
        ).reshape(n, 3)
    hues = (np.arange(n) * 0.618033988749895) % 1.0  # golden-ratio steps: neighbours far apart
    light = np.where(np.arange(n) % 2 == 0, 0.45, 0.62)
    return np.array([colorsys.hls_to_rgb(h, li, 0.85) for h, li in zip(hues, light, strict=True)])


#: tab10, then tab20's light partners of the same hues.
_TAB20 = (
    [0x1F77B4, 0xFF7F0E, 0x2CA02C, 0xD62728, 0x9467BD, 0x8C564B, 0xE377C2, 0x7F7F7F, 0xBCBD22]
    + [0x17BECF, 0xAEC7E8, 0xFFBB78, 0x98DF8A, 0xFF9896, 0xC5B0D5, 0xC49C94, 0xF7B6D2, 0xC7C7C7]
    + [0xDBDB8D, 0x9EDAE5]
)


def crop_box(open_tiles: np.ndarray, margin: int = CROP_MARGIN) -> tuple[int, int, int, int]:
    """The tiles ``(x0, x1, y0, y1)`` (half-open) holding every open tile plus ``margin``.

    A map with no open tile is not cropped.

    Examples
    --------
    >>> m = np.zeros((10, 20), dtype=bool)
    >>> m[4:6, 8:12] = True
    >>> crop_box(m, margin=1)
    (7, 13, 3, 7)
    """
    h, w = open_tiles.shape
    ys, xs = np.nonzero(open_tiles)
    if not xs.size:
        return 0, w, 0, h
    return (
        max(int(xs.min()) - margin, 0),
        min(int(xs.max()) + 1 + margin, w),
        max(int(ys.min()) - margin, 0),
        min(int(ys.max()) + 1 + margin, h),
    )


def recency_rgb(last_tick: np.ndarray, walls: np.ndarray, end_tick: int, cmap) -> np.ndarray:
    """Colour an (H, W) map of the last tick each tile was reached (-1 never), row 0 bottom.

    The colour scale runs from tick 0 to ``end_tick`` (the run's length), so a short run is
    not all one colour. Returns (H, W, 3) floats 0..1.
    """
    t = np.clip(last_tick / float(max(end_tick, 1)), 0.0, 1.0)
    rgb = np.asarray(cmap(t))[..., :3]
    rgb[last_tick < 0] = NEVER_RGB
    rgb[walls] = WALL_RGB
    return rgb


def marker_areas(base: float, radii: np.ndarray | None) -> float | np.ndarray:
    """Scatter marker areas (points^2) drawing robots at their relative size: the largest robot
    ``base`` points across, the others in proportion to their radius (robot types). A uniform
    team (or no radii) gets the single area ``base ** 2``.

    Examples
    --------
    >>> marker_areas(8.0, None), marker_areas(8.0, np.array([0.3, 0.3]))
    (64.0, 64.0)
    >>> marker_areas(8.0, np.array([0.2, 0.4])).tolist()
    [16.0, 64.0]
    """
    r = None if radii is None else np.asarray(radii, dtype=np.float64)
    if r is None or r.size == 0 or (r == r.flat[0]).all():
        return float(base) ** 2
    return (float(base) * r / r.max()) ** 2


def plot_recency_map(
    path: str | Path,
    last_tick: np.ndarray,
    walls: np.ndarray,
    *,
    what: str,
    title: str,
    end_tick: int,
    tick_duration: float,
    tile_size: float,
    paths: np.ndarray,
    end_positions: np.ndarray,
    when: str = "last",
    radii: np.ndarray | None = None,
) -> Path | None:
    """Write a recency map with every robot's path, start and end; None without matplotlib.

    Parameters
    ----------
    last_tick : ndarray of int, shape (H, W)
        Last tick each tile was ``what`` ("explored", "covered"), -1 never; row 0 at the bottom.
        With ``when="first"``, the first tick instead (the order of discovery).
    walls : ndarray of bool, shape (H, W)
    paths : ndarray, shape (N, T, 2)
        Each robot's positions over time, grid coordinates (tiles); the first is its start.
    end_positions : ndarray, shape (N, 2)
        Where the robots are at ``end_tick`` (grid coordinates).
    radii : ndarray, shape (N,), optional
        Robot radii (robot types): start and end markers at the robots' relative sizes.

    Axes are world metres (origin at the map centre, as ``ground_truth.yaml``); the picture is
    cropped to the open area (:func:`crop_box`).
    """
    plt = agg_pyplot()
    if plt is None:
        return None
    from matplotlib.colors import Normalize
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    h, w = walls.shape
    x0, x1, y0, y1 = crop_box(~walls)
    cmap = plt.get_cmap(RECENCY_CMAP)
    rgb = recency_rgb(last_tick, walls, end_tick, cmap)[y0:y1, x0:x1]
    to_m = np.array([w / 2.0, h / 2.0])
    extent = (
        (x0 - to_m[0]) * tile_size,
        (x1 - to_m[0]) * tile_size,
        (y0 - to_m[1]) * tile_size,
        (y1 - to_m[1]) * tile_size,
    )
    aspect = (y1 - y0) / max(x1 - x0, 1)
    fig_w = 9.0
    fig_h = float(np.clip(5.4 * aspect, 3.0, 8.0)) + 1.6
    fig, ax = plt.subplots(figsize=(fig_w, fig_h), dpi=100, layout="constrained")
    ax.imshow(rgb, origin="lower", extent=extent, interpolation="nearest")
    n = paths.shape[0]
    colours = robot_colours(n)
    paths_m = (np.asarray(paths, dtype=np.float64) - to_m) * tile_size
    ends_m = (np.asarray(end_positions, dtype=np.float64) - to_m) * tile_size
    lw = 1.6 if n <= 10 else 1.0
    for i in range(n):
        xy = np.vstack([paths_m[i], ends_m[i][None]])
        ax.plot(xy[:, 0], xy[:, 1], color="black", lw=lw + 1.2, alpha=0.4, solid_capstyle="round")
        ax.plot(xy[:, 0], xy[:, 1], color=colours[i], lw=lw, label=f"robot{i}" if n <= 12 else None)
    ms = 8 if n <= 10 else 5
    areas = marker_areas(ms, radii)
    ax.scatter(
        paths_m[:, 0, 0],
        paths_m[:, 0, 1],
        s=areas,
        marker="o",
        facecolor="white",
        edgecolor=colours,
        linewidths=2,
        zorder=3,
    )
    ax.scatter(
        ends_m[:, 0],
        ends_m[:, 1],
        s=areas,
        marker="s",
        facecolor=colours,
        edgecolor="black",
        linewidths=1,
        zorder=4,
    )
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(title, fontsize="medium")
    handles = (
        [] if n <= 12 else [Line2D([], [], color="0.3", label=f"{n} robots' paths (a colour each)")]
    )
    handles += [
        Line2D([], [], ls="", marker="o", ms=ms, mfc="white", mec="black", label="start"),
        Line2D([], [], ls="", marker="s", ms=ms, mfc="0.5", mec="black", label="end"),
        Patch(facecolor=WALL_RGB, label="wall / outside"),
        Patch(facecolor=NEVER_RGB, edgecolor="0.6", label=f"never {what}"),
    ]
    robot_handles = ax.get_legend_handles_labels()[0] if n <= 12 else []
    ax.legend(
        handles=robot_handles + handles,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize="small",
        borderaxespad=0.0,
    )
    end_s = end_tick * tick_duration
    sm = plt.cm.ScalarMappable(norm=Normalize(0.0, end_s if end_s > 0 else 1.0), cmap=cmap)
    bar = fig.colorbar(sm, ax=ax, orientation="horizontal", fraction=0.05, pad=0.02, aspect=40)
    order = "dark: early, yellow: late" if when == "first" else "dark: long ago, yellow: lately"
    bar.set_label(f"{when} {what} at (simulated s; {order}; run length {end_s:g} s)")
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_progress(
    path: str | Path,
    rows: Sequence[Mapping[str, object]],
    *,
    title: str,
    end_criteria: Mapping[str, float | None],
    tick_duration: float,
    end_reason: str | None,
) -> Path | None:
    """Exploration and coverage over simulated time, with the end criteria; None without
    matplotlib.

    ``end_criteria`` holds ``exploration_percent``, ``coverage_percent`` (%) and ``tick``, each
    None when not set; set ones are drawn as dashed lines.
    """
    plt = agg_pyplot()
    if plt is None:
        return None
    t = [float(r["sim_time"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100, layout="constrained")
    ax.plot(
        t,
        [r["exploration_percent"] for r in rows],
        color="C0",
        label="exploration: tiles a robot's\nlidar has seen",
    )
    ax.plot(
        t,
        [r["coverage_percent"] for r in rows],
        color="C1",
        label=(
            "coverage, MAES 2.0's definition:\nhalf-tiles in the 3 x 3 around\na robot's half-tile"
        ),
    )
    if rows and "centre_coverage_percent" in rows[0]:
        ax.plot(
            t,
            [r["centre_coverage_percent"] for r in rows],
            color="C1",
            ls=":",
            label="centre coverage: tiles under\na robot's centre or body",
        )
    goal_e, goal_c = end_criteria.get("exploration_percent"), end_criteria.get("coverage_percent")
    if goal_e is not None:
        ax.axhline(goal_e, color="C0", ls="--", lw=1, label=f"end: exploration {goal_e:g} %")
    if goal_c is not None:
        ax.axhline(goal_c, color="C1", ls="--", lw=1, label=f"end: coverage {goal_c:g} %")
    tick_limit = end_criteria.get("tick")
    if tick_limit is not None:
        limit_s = tick_limit * tick_duration
        if t and limit_s <= 1.05 * max(t[-1], 1e-9):
            ax.axvline(
                limit_s, color="0.3", ls="--", lw=1, label=f"end: tick limit {int(tick_limit)}"
            )
        else:  # beyond the run: named in the legend only
            ax.plot(
                [],
                [],
                color="0.3",
                ls="--",
                lw=1,
                label=f"end: tick limit {int(tick_limit)}\n({limit_s:g} s, not reached)",
            )
    if t:
        ax.plot(t[-1], rows[-1]["exploration_percent"], "o", color="C0", ms=5)
        ax.annotate(
            f"{float(rows[-1]['exploration_percent']):.1f} %",
            (t[-1], float(rows[-1]["exploration_percent"])),
            textcoords="offset points",
            xytext=(-8, 5),
            ha="right",
            va="bottom",
            fontsize="small",
            color="C0",
        )
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("% of reachable open area")
    ax.set_ylim(0, 102)
    right = max(t[-1] if t else 1.0, 1e-9)
    if tick_limit is not None and tick_limit * tick_duration <= 1.05 * right:
        right = max(right, tick_limit * tick_duration) * 1.02  # the limit's line stays visible
    ax.set_xlim(0, right)
    ax.grid(alpha=0.3)
    ax.set_title(f"{title}\n{end_reason or 'stopped before an end criterion'}", fontsize="medium")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", borderaxespad=0.0)
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
