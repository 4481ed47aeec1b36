"""Draw docs/scaling/explored_vs_robots.png (and ..._cave.png) from the tables in docs/scaling.md.

The tables "Explored share after 2 minutes" (60x60 building, seeds 0-4, one column per
explorer), "60x60 cave, after 2 minutes" (and after 1 minute) and "60x60 building from MAES
2.0's start, after 2 minutes" are the one home of the figures; this script reads
one and plots, per explorer, the mean over the seeds against the team size with a band from the
lowest to the highest seed. The "before" column (the frontier explorer before issue 36, seeds
missing where not measured) is drawn dashed.

Usage::

    python experiments/scaling_figure.py                       # writes the PNG beside the doc
    python experiments/scaling_figure.py --map cave            # the cave's tables
    python experiments/scaling_figure.py --map cave-1min
    python experiments/scaling_figure.py --map building-maes-start   # robots one a tile
    python experiments/scaling_figure.py --out /tmp/scaling.png
"""

from __future__ import annotations

import argparse
import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scaling.md"
HEADING = "## Explored share after 2 minutes"
#: Per table: the heading it follows, the figure's title, its file in docs/scaling/ and when
#: the share was taken.
MAPS = {
    "building": (HEADING, "60x60 building", "explored_vs_robots.png", "2 min"),
    "cave": (
        "### 60x60 cave, after 2 minutes",
        "60x60 cave",
        "explored_vs_robots_cave.png",
        "2 min",
    ),
    "cave-1min": (
        "#### 60x60 cave, after 1 minute",
        "60x60 cave",
        "explored_vs_robots_cave_1min.png",
        "1 min",
    ),
    "building-maes-start": (
        "#### 60x60 building from MAES 2.0's start, after 2 minutes",
        "60x60 building, MAES 2.0's start",
        "explored_vs_robots_maes_start.png",
        "2 min",
    ),
}


def read_table(text: str, heading: str = HEADING) -> tuple[list[str], dict[int, list[list[float]]]]:
    """The table under ``heading``: the column names after "robots", and per team size
    one list of seed values per column (NaN where the doc has "-").

    Examples
    --------
    >>> names, rows = read_table(HEADING + '''
    ...
    ... | robots | a | b |
    ... |---:|---|---|
    ... | 5 | 1.0 / - | **2.5** / 3.0 |
    ... ''')
    >>> names, rows[5][1]
    (['a', 'b'], [2.5, 3.0])
    """
    lines = text[text.index(heading) :].splitlines()
    header = next(line for line in lines if line.startswith("| robots |"))
    names = [cell.strip() for cell in header.strip("|").split("|")[1:]]
    rows: dict[int, list[list[float]]] = {}
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[int(cells[0])] = [
            [
                float("nan") if v.strip() == "-" else float(re.sub(r"[*\s]", "", v))
                for v in cell.split("/")
            ]
            for cell in cells[1:]
        ]
    return names, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", choices=sorted(MAPS), default="building")
    parser.add_argument("--out", default=None, help="default: docs/scaling/<the map's file>")
    args = parser.parse_args(argv)
    heading, place, file_name, when = MAPS[args.map]
    args.out = args.out or str(DOC.parent / "scaling" / file_name)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names, rows = read_table(DOC.read_text(), heading)
    sizes = sorted(rows)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    colours = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"])
    for k, name in enumerate(names):
        values = np.array([rows[n][k] for n in sizes], dtype=float)
        with warnings.catch_warnings():  # a size with no seed measured (a "-" row): NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(values, axis=1)
        if "before" in name:
            ax.plot(
                sizes,
                mean,
                "kx--",
                label="frontier explorer before\nissue 36 (seeds measured\nin the issue)",
            )
            continue
        colour = next(colours)
        label = name.replace(", now", "")
        ax.plot(sizes, mean, "o-", color=colour, label=label)
        ax.fill_between(
            sizes, np.nanmin(values, axis=1), np.nanmax(values, axis=1), color=colour, alpha=0.15
        )
    ax.set_xscale("log")
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.minorticks_off()
    ax.set_ylim(0, 101)
    ax.set_xlabel("robots (spawn_together)")
    ax.set_ylabel(f"explored after {when} (%)")
    title = f"{place}, seeds 0-4: mean, band = min..max of the seeds"
    if len(title) > 62:  # a long place name: two lines, or the title runs off the figure
        title = f"{place}, seeds 0-4:\nmean, band = min..max of the seeds"
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
