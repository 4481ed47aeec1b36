"""Tables of issue 36's scaling study from a ``maes-batch`` results CSV (docs/scaling.md).

Reads the ``results.csv`` of ``maes-batch experiments/scaling.yaml`` (or any batch with the same
columns) and prints, per map (building, cave) and algorithm, Markdown tables against the team
size (runs on maps of another size join their kind's tables: ``scaling_120.yaml``'s 50 and 120
robots on 75x75 maps are the columns "50 (75x75)" and "120 (75x75)" beside ``scaling.yaml``'s
1..50 on 60x60; give both CSVs): the explored share after 2 minutes and after 1 minute (mean
over the seeds, the lowest seed in brackets), the time to 90 % explored (the median of the runs
that reached it, and how many did), the runs that stalled, and every seed-by-seed *doubling
miss*: the next team size on a map of the same size explored more than 2 points less than the
one before it on that seed (issue 36's target: explored(2N) >= explored(N) - 2 points; on 75x75,
50 -> 120 robots). Last, per algorithm, the size from which it stops gaining: the smallest team
size after which no bigger team of the table on a map of the same size raises the mean 2 points
or more.

Usage::

    python experiments/scaling_report.py results/scaling/results.csv
    python experiments/scaling_report.py results/scaling/results.csv results/scaling_120/results.csv
    python experiments/scaling_report.py results.csv --out scaling_tables.md
    python experiments/scaling_report.py results.csv --figure docs/scaling/all_algorithms.png

``--figure`` also draws the explored share after 2 minutes against the team size, one panel
per map, one line per algorithm (the mean over the seeds, a band from the lowest to the
highest seed).
"""

from __future__ import annotations

import argparse
import ast
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

#: Issue 36's doubling target: no more than this many points lost from one size to the next.
MISS_POINTS = 2.0
#: A bigger team "gains" when its mean is at least this many points higher.
GAIN_POINTS = 2.0


def short_name(controller: str) -> str:
    """``maes_controller.algorithms.space_cbba:logic`` -> ``space_cbba``.

    Examples
    --------
    >>> short_name("maes_controller.algorithms.space_cbba:logic")
    'space_cbba'
    """
    return controller.split(":")[0].rsplit(".", 1)[-1]


def map_of(text: str) -> tuple[str, str]:
    """(``"WxH"``, ``"building"`` or ``"cave"``) of a results row's ``map`` column.

    Examples
    --------
    >>> map_of("{'width_in_tiles': 60, 'height_in_tiles': 60, 'cave_config': {}}")
    ('60x60', 'cave')
    """
    area = ast.literal_eval(text) if text else {}
    kind = "cave" if "cave_config" in area else "building"
    return f"{area.get('width_in_tiles', '?')}x{area.get('height_in_tiles', '?')}", kind


def read_rows(*paths: Path) -> dict:
    """``{(map kind, algorithm): {(robots, "WxH"): {seed: row}}}`` of the finished runs (status
    ``ok``) of every file: a map kind's runs of every size in one table."""
    table: dict = defaultdict(lambda: defaultdict(dict))
    for path in paths:
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                if row.get("status") != "ok":
                    continue
                size, kind = map_of(row["map"])
                team = (int(row["number_of_robots"]), size)
                table[(kind, short_name(row["controller"]))][team][int(row["seed"])] = row
    return table


def _teams(table: dict, kind: str) -> list[tuple[int, str]]:
    """The teams (robots, map size) of a map kind's runs, smallest first (the robots, then the
    map's area)."""

    def area(size: str) -> int:
        w, _, h = size.partition("x")
        return int(w) * int(h) if w.isdigit() and h.isdigit() else 0

    teams = {t for (k, _), runs in table.items() if k == kind for t in runs}
    return sorted(teams, key=lambda t: (t[0], area(t[1])))


def _usual(teams: list[tuple[int, str]]) -> str:
    """The map kind's usual size: the one most of its teams ran on."""
    sizes = [size for _, size in teams]
    return max(sorted(set(sizes)), key=sizes.count)


def _label(team: tuple[int, str], usual: str) -> str:
    """A team's column label: ``"50"``, or ``"120 (75x75)"`` on a map of another size."""
    n, size = team
    return str(n) if size == usual else f"{n} ({size})"


def _cell(values: list[float]) -> str:
    return f"{statistics.mean(values):.1f} ({min(values):.1f})" if values else ""


def _table(out: list[str], heading: str, teams: list, runs_of: dict, cell) -> None:
    """Append one Markdown table to ``out``: a row per algorithm of ``runs_of`` (algorithm ->
    {team: {seed: row}}), ``cell(rows of a team)`` in each column of ``teams``."""
    out.append(heading + "\n")
    usual = _usual(teams)
    out.append("| algorithm | " + " | ".join(_label(t, usual) for t in teams) + " |")
    out.append("|---|" + "---:|" * len(teams))
    for alg, runs in runs_of.items():
        cells = [cell(list(runs.get(t, {}).values())) for t in teams]
        out.append(f"| {alg} | " + " | ".join(cells) + " |")
    out.append("")


def _time_cell(rows: list[dict]) -> str:
    """The median time to 90 % of the runs that reached it, and how many of ``rows`` did."""
    reached = [float(r["time_to_exploration_90"]) for r in rows if r["time_to_exploration_90"]]
    median = f"{statistics.median(reached):.1f}" if reached else "-"
    return f"{median} ({len(reached)}/{len(rows)})" if rows else ""


def _stall_cell(rows: list[dict]) -> str:
    """How many of ``rows`` stalled, and their stalls in all."""
    stalls = [int(r["stalls"]) for r in rows]
    return f"{sum(s > 0 for s in stalls)}/{len(stalls)}, {sum(stalls)}" if rows else ""


def _doublings(teams: list[tuple[int, str]]) -> list[tuple[tuple[int, str], tuple[int, str]]]:
    """The pairs of teams the doubling target compares: each team and the next larger one on
    a map of the same size (a larger map is more to explore in the same 2 minutes)."""
    return [
        (small, next(t for t in teams[k + 1 :] if t[1] == small[1]))
        for k, small in enumerate(teams)
        if any(t[1] == small[1] for t in teams[k + 1 :])
    ]


def report(table: dict) -> str:
    """The Markdown tables (see the module docstring)."""
    out = []
    kinds = sorted({k for k, _ in table})
    for kind in kinds:
        algorithms = sorted(a for k, a in table if k == kind)
        teams = _teams(table, kind)
        usual = _usual(teams)
        area = f"{usual} {kind}"
        if any(size != usual for _, size in teams):
            others = sorted({size for _, size in teams if size != usual})
            area += f" ({', '.join(others)} where the column says)"
        runs_of = {alg: table[(kind, alg)] for alg in algorithms}
        for column, title in (
            ("exploration_at_120s", "explored after 2 minutes, %"),
            ("exploration_at_60s", "explored after 1 minute, %"),
        ):
            _table(
                out,
                f"#### {area}: {title}, mean over the seeds (lowest)",
                teams,
                runs_of,
                lambda rows, column=column: _cell([float(r[column]) for r in rows]),
            )
        title = "time to 90 % explored, s: median of the runs that reached it"
        _table(out, f"#### {area}: {title}", teams, runs_of, _time_cell)
        title = "runs with a stall (of the seeds run), stalls in all"
        _table(out, f"#### {area}: {title}", teams, runs_of, _stall_cell)
        out.append(f"#### {area}: doubling misses (more than {MISS_POINTS:g} points lost)\n")
        misses = []
        gains = []
        for alg in algorithms:
            runs = table[(kind, alg)]
            for small, big in _doublings(teams):
                where = "" if big[1] == usual else f" ({big[1]})"
                for seed in sorted(set(runs.get(small, {})) & set(runs.get(big, {}))):
                    a = float(runs[small][seed]["exploration_at_120s"])
                    b = float(runs[big][seed]["exploration_at_120s"])
                    if b < a - MISS_POINTS:
                        misses.append(
                            f"- {alg}: {_label(small, usual)} -> {big[0]} robots{where}, "
                            f"seed {seed}: {a:.1f} -> {b:.1f} %"
                        )
            means = {
                t: statistics.mean(float(r["exploration_at_120s"]) for r in runs[t].values())
                for t in teams
                if runs.get(t)
            }
            stops = []
            for size in sorted({t[1] for t in means}, key=lambda z: z != usual):
                order = [t for t in teams if t in means and t[1] == size]
                stop = next(
                    t
                    for k, t in enumerate(order)
                    if all(means[m] < means[t] + GAIN_POINTS for m in order[k + 1 :])
                )
                where = "" if size == usual else f"on {size} "
                stops.append(f"{where}from {stop[0]} robots ({means[stop]:.1f} %)")
            gains.append(
                f"- {alg}: stops gaining " + "; ".join(stops) if stops else f"- {alg}: no runs"
            )
        out.extend(misses or ["- none"])
        out.append("")
        out.append(f"#### {area}: where each algorithm stops gaining (2 minutes, mean)\n")
        out.extend(gains)
        out.append("")
    return "\n".join(out)


def figure(table: dict, out: Path, title: str = "") -> None:
    """Draw the explored share after 2 minutes against the team size (see the module
    docstring) to ``out`` (PNG). Runs on maps of another size than their kind's usual one are
    drawn dashed (e.g. 50 and 120 robots on 75x75)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = sorted({k for k, _ in table})
    algorithms = sorted({a for _, a in table})
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 5.0), squeeze=False)
    dashed = set()
    for ax, kind in zip(axes[0], kinds, strict=True):
        teams = _teams(table, kind)
        usual = _usual(teams)
        for k, alg in enumerate(algorithms):
            runs = table.get((kind, alg))
            if not runs:
                continue
            colour = colours(k % 10)
            for size in sorted({t[1] for t in teams}, key=lambda z: z != usual):
                mine = [t for t in teams if t[1] == size and runs.get(t)]
                if not mine:
                    continue
                shares = [[float(r["exploration_at_120s"]) for r in runs[t].values()] for t in mine]
                xs = [n for n, _ in mine]
                style = "-" if size == usual else "--"
                if size != usual:
                    dashed.add(size)
                ax.plot(
                    xs,
                    [statistics.mean(v) for v in shares],
                    style,
                    marker="o",
                    color=colour,
                    label=alg if size == usual else None,
                )
                ax.fill_between(
                    xs, [min(v) for v in shares], [max(v) for v in shares], color=colour, alpha=0.1
                )
        robots = sorted({n for n, _ in teams})
        # a team size drawn only on another map size is labelled with that size
        first = {}
        for team in sorted(teams, key=lambda t: t[1] != usual):
            first.setdefault(team[0], team)
        ax.set_xscale("log")
        ax.set_xticks(robots)
        ax.set_xticklabels([_label(first[n], usual) for n in robots])
        ax.set_ylim(0, 102)
        ax.set_xlabel("robots (spawned together)")
        ax.set_ylabel("explored after 2 minutes, %")
        ax.set_title(f"{usual} {kind}")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    notes = "lines: mean over the seeds; bands: lowest to highest seed"
    if dashed:
        notes += f"; dashed: on {', '.join(sorted(dashed))} maps"
    fig.suptitle(f"{title}\n{notes}" if title else notes)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "results", type=Path, nargs="+", help="maes-batch results.csv files (read together)"
    )
    parser.add_argument("--out", type=Path, help="also write the tables to this file")
    parser.add_argument("--figure", type=Path, help="also draw the 2-minute shares (PNG)")
    parser.add_argument("--title", default="", help="the figure's title")
    args = parser.parse_args(argv)
    for path in args.results:
        if not path.is_file():
            parser.error(f"no such results file: {path}")
    table = read_rows(*args.results)
    text = report(table)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    if args.figure is not None:
        figure(table, args.figure, args.title)
        print(f"wrote {args.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
