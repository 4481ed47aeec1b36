"""Summaries of a batch's tidy CSV files: the aggregate table and the plots.

Reads ``results.csv``, ``timeseries.csv`` and ``experiment.json`` of a ``maes-batch`` output
folder and writes

* ``aggregate.csv``: one row per condition (parameter values + controller) and metric, with
  ``runs`` (runs of the condition), ``failed``, ``n`` (runs with a value), ``missing`` (finished
  runs without a value, e.g. 99 % never reached), ``mean``, ``std`` (sample, n - 1), ``min``,
  ``q25``, ``median``, ``q75``, ``max``;
* ``exploration_vs_time.png``: mean exploration per condition over simulated time, with the
  min..max band of its runs (a run that ended keeps its last value);
* ``<metric>_vs_<parameter>.png`` for each numeric parameter with more than one value: the
  last ``time_to_*`` metric (else ``ticks_to_end``) against it, mean and std per value, one
  line per controller and combination of the other listed parameters (runs as points for
  sampled parameters).

Legends name the parameters that differ between the lines (one that has a single value in the
batch is left out) and grow the picture to hold all their entries.

Run again by hand with ``python -m maes_bringup.experiments.aggregate OUT_DIR``.
"""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from maes_sim.core import distinct_colours

from .batch_files import RESULTS, SERIES_COLUMNS, TIMESERIES, read_rows, write_rows

AGGREGATE = "aggregate.csv"
STAT_COLUMNS = (
    "runs",
    "failed",
    "n",
    "missing",
    "mean",
    "std",
    "min",
    "q25",
    "median",
    "q75",
    "max",
)


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def describe(values: list[float]) -> dict[str, float | None]:
    """n, mean, std (n - 1), min, quartiles, max of ``values`` (None where undefined).

    Examples
    --------
    >>> d = describe([1.0, 2.0, 3.0, 4.0])
    >>> d["n"], d["mean"], round(d["std"], 4), d["median"], d["q25"]
    (4, 2.5, 1.291, 2.5, 1.75)
    """
    if not values:
        return dict.fromkeys(("mean", "std", "min", "q25", "median", "q75", "max")) | {"n": 0}
    a = np.asarray(values, dtype=np.float64)
    q = np.quantile(a, [0.25, 0.5, 0.75])
    return {
        "n": int(a.size),
        "mean": float(a.mean()),
        "std": float(a.std(ddof=1)) if a.size > 1 else None,
        "min": float(a.min()),
        "q25": float(q[0]),
        "median": float(q[1]),
        "q75": float(q[2]),
        "max": float(a.max()),
    }


def _conditions(rows: list[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    groups: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault(r["condition_id"], []).append(r)
    return groups


def aggregate_rows(
    rows: list[dict[str, str]], parameters: list[str], metrics: list[str]
) -> list[dict[str, Any]]:
    """The ``aggregate.csv`` rows of ``results.csv`` rows (conditions in first-seen order)."""
    out = []
    for cid, runs in _conditions(rows).items():
        ok = [r for r in runs if r["status"] == "ok"]
        head = {
            "condition_id": cid,
            **{p: runs[0][p] for p in parameters},
            "controller": runs[0]["controller"],
        }
        for metric in metrics:
            values = [v for v in (_float(r[metric]) for r in ok) if v is not None]
            stats = describe(values)
            out.append(
                {
                    **head,
                    "metric": metric,
                    "runs": len(runs),
                    "failed": len(runs) - len(ok),
                    "missing": len(ok) - len(values),
                    **stats,
                }
            )
    return out


def controller_name(spec: str, controllers: list[str]) -> str:
    """The shortest tail of ``spec`` that no other of ``controllers`` shares, for plot legends.

    Examples
    --------
    >>> specs = ["pkg.trs:logic", "pkg.space_bt:logic", "pkg.trs:unpruned"]
    >>> [controller_name(s, specs) for s in specs]
    ['trs:logic', 'space_bt:logic', 'unpruned']
    """

    def tail(text: str, n: int) -> str:  # the last n names, with their separators
        return "".join(re.split(r"([.:])", text)[-(2 * n - 1) :])

    for n in range(1, len(re.split(r"[.:]", spec)) + 1):
        mine = tail(spec, n)
        if all(tail(other, n) != mine for other in controllers if other != spec):
            return mine
    return spec


def varying(rows: list[dict[str, str]], parameters: list[str]) -> list[str]:
    """The ``parameters`` that take more than one value among ``rows``: only they tell the
    conditions apart (a single value is the same for every line of a plot).

    Examples
    --------
    >>> varying([{"a": "1", "b": "x"}, {"a": "2", "b": "x"}], ["a", "b"])
    ['a']
    """
    return [p for p in parameters if len({r[p] for r in rows}) > 1]


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """The leaves of a parsed parameter value: ``(key path, value text)`` pairs (an empty
    mapping is a leaf of its own, "{}"; an empty list "none")."""
    if isinstance(value, dict):
        items = [leaf for k, v in value.items() for leaf in _leaves(v, (*path, str(k)))]
        return items or [(path, "{}")]
    if isinstance(value, list | tuple):
        items = [leaf for v in value for leaf in _leaves(v, path)]
        return items or [(path, "none")]
    return [(path, str(value))]


def short_values(values: list[str]) -> dict[str, str]:
    """Legend texts of one parameter's values (as results.csv writes them): of a mapping or a
    list only the leaves that differ between the values, each as its last key and its value.

    Examples
    --------
    >>> cave, building = "{'w': 40, 'cave': {'fill': 40}}", "{'w': 40, 'building': {}}"
    >>> short_values([cave, building]) == {cave: "fill 40", building: "building"}
    True
    >>> short_values(["[]", "[{'random_walkers': 4, 'speed': 0.5}]"])["[]"]
    'none'
    >>> short_values(["0.5", "1.0"])
    {'0.5': '0.5', '1.0': '1.0'}
    """
    parsed: dict[str, list | None] = {}
    for text in values:
        try:
            value = ast.literal_eval(text) if text[:1] in ("{", "[") else None
        except (SyntaxError, ValueError):
            value = None
        parsed[text] = _leaves(value) if isinstance(value, dict | list) else None
    if any(leaves is None for leaves in parsed.values()):
        return {text: text for text in values}
    common = set.intersection(*(set(leaves) for leaves in parsed.values()))

    def text_of(leaf: tuple[tuple[str, ...], str]) -> str:
        path, value = leaf
        key = path[-1] if path else ""
        if value == "{}":
            return key or "{}"
        return f"{key} {value}".strip()

    return {
        text: ", ".join(text_of(leaf) for leaf in leaves if leaf not in common) or "same"
        for text, leaves in parsed.items()
    }


def labeller(rows: list[dict[str, str]], parameters: list[str], controllers: list[str]):
    """A function giving a row's legend text: the ``parameters`` (those that differ between
    the rows) in short (:func:`short_values`), then the controller when there are several."""
    shorts = {p: short_values(sorted({r[p] for r in rows})) for p in parameters}

    def label(row: dict[str, str]) -> str:
        parts = [f"{p.rsplit('.', 1)[-1]}: {shorts[p][row[p]]}" for p in parameters]
        if len(controllers) > 1:
            parts.append(controller_name(row["controller"], controllers))
        return "; ".join(parts) or "base config"

    return label


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # plots are optional; the CSV files are the results
        return None
    return plt


#: More lines than this in one picture cannot be told apart: the exploration plot then draws a
#: panel per controller (when the batch has several), each with the other parameters' lines.
PANEL_FROM = 16


def plot_exploration(
    path: Path,
    rows: list[dict[str, str]],
    series: list[dict[str, str]],
    parameters: list[str],
    controllers: list[str],
    title: str = "",
) -> Path | None:
    """Mean exploration % vs simulated time per condition, with the runs' min..max band; a
    panel per controller when there are more than :data:`PANEL_FROM` conditions."""
    plt = _pyplot()
    if plt is None:
        return None
    per_case: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for s in series:
        per_case[s["case_id"]].append((float(s["sim_time"]), float(s["exploration_percent"])))
    groups = _conditions([r for r in rows if r["status"] == "ok"])
    shown = varying(rows, parameters)
    in_rows = sorted({r["controller"] for r in rows}, key=_order_of(controllers))
    panels = in_rows if len(groups) > PANEL_FROM and len(in_rows) > 1 and shown else [None]
    # one colour per line label, the same in every panel
    label_of = labeller(rows, shown, controllers if panels == [None] else [])
    labels = {cid: label_of(runs[0]) for cid, runs in groups.items()}
    colour_of = dict(
        zip(dict.fromkeys(labels.values()), distinct_colours(len(labels)), strict=False)
    )
    cols = min(4, len(panels))
    n_rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(
        n_rows,
        cols,
        figsize=(9, 4.5) if panels == [None] else (3.6 * cols, 2.8 * n_rows + 0.8),
        dpi=100,
        layout="constrained",
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    handles: dict[str, Any] = {}
    for ax, panel in zip(axes.flat, panels, strict=False):
        for cid, runs in groups.items():
            if panel is not None and runs[0]["controller"] != panel:
                continue
            curves = [np.asarray(per_case[r["case_id"]]) for r in runs if per_case[r["case_id"]]]
            if not curves:
                continue
            t = np.unique(np.concatenate([c[:, 0] for c in curves]))
            # each run holds its last value after it ended
            ys = np.stack([np.interp(t, c[:, 0], c[:, 1], right=c[-1, 1]) for c in curves])
            colour = colour_of[labels[cid]]
            runs_text = f"{len(curves)} run" + ("s" if len(curves) > 1 else "")
            label = labels[cid] if panel is not None else f"{labels[cid]} ({runs_text})"
            (line,) = ax.plot(t, ys.mean(axis=0), color=colour, label=label)
            handles.setdefault(label, line)
            if len(curves) > 1:
                ax.fill_between(t, ys.min(axis=0), ys.max(axis=0), color=colour, alpha=0.15, lw=0)
        if panel is not None:
            ax.set_title(controller_name(panel, in_rows), fontsize="small")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylim(0, 100)  # after every line: the axes share these limits
    axes[0, 0].set_xlim(left=0)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    how = "line: mean of the runs; band: their min..max (a run that ended keeps its last value)"
    if panels == [None]:
        ax = axes[0, 0]
        ax.set_title(f"{title}: exploration over time per condition\n{how}", fontsize="medium")
        ax.set_xlabel("simulated time (s)")
        ax.set_ylabel("exploration (% of reachable area)")
        _legend_outside(ax, len(groups))
    else:
        fig.suptitle(
            f"{title}: exploration over time, a panel per controller\n{how}", fontsize="medium"
        )
        for ax in axes[-1, :]:
            ax.set_xlabel("simulated time (s)", fontsize="small")
        for ax in axes[:, 0]:
            ax.set_ylabel("explored (%)", fontsize="small")
        fig.legend(
            handles.values(),
            handles.keys(),
            loc="outside lower center",
            ncol=1 if max(map(len, handles)) > 60 else 2,
            fontsize="small",
        )
    _save(fig, path, whole=panels == [None])
    plt.close(fig)
    return path


def _order_of(controllers: list[str]):
    """Sort key: the experiment's order of ``controllers`` (others last, by name)."""
    rank = {spec: k for k, spec in enumerate(controllers)}
    return lambda spec: (rank.get(spec, len(rank)), spec)


def plot_metric_vs(
    path: Path,
    rows: list[dict[str, str]],
    metric: str,
    parameter: str,
    others: list[str],
    sampled: bool,
    title: str = "",
) -> Path | None:
    """``metric`` against ``parameter``: mean +- std per value and line, or points if sampled."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100, layout="constrained")
    lines: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    never = 0  # finished runs without a value (e.g. 90 % never reached)
    specs = sorted({r["controller"] for r in rows})
    label_of = labeller(rows, varying(rows, others), specs)
    for r in rows:
        x, y = _float(r[parameter]), _float(r[metric])
        if r["status"] == "ok" and x is not None and y is None:
            never += 1
        if r["status"] != "ok" or x is None or y is None:
            continue
        key = label_of(r)
        lines[key][x].append(y)
    colours = distinct_colours(len(lines))
    runs_per_point: set[int] = set()
    for k, (key, points) in enumerate(lines.items()):
        xs = sorted(points)
        runs_per_point |= {len(points[x]) for x in xs}
        if sampled:
            ax.plot(
                [x for x in xs for _ in points[x]],
                [y for x in xs for y in points[x]],
                "o",
                color=colours[k],
                label=key,
                alpha=0.7,
            )
            continue
        mean = [float(np.mean(points[x])) for x in xs]
        std = [float(np.std(points[x], ddof=1)) if len(points[x]) > 1 else 0.0 for x in xs]
        ax.errorbar(xs, mean, yerr=std, marker="o", capsize=3, color=colours[k], label=key)
    n_runs = "-".join(
        str(v) for v in sorted({min(runs_per_point or {0}), max(runs_per_point or {0})})
    )
    how = (
        "each point: one run"
        if sampled
        else f"points: mean over {n_runs} runs; error bars: \u00b11 standard deviation (n - 1)"
    )
    if never:
        how += f"\n{never} run{'s' if never > 1 else ''} without a value (never reached) left out"
    ax.set_title(f"{title}: {metric} vs {parameter}\n{how}", fontsize="medium")
    ax.set_xlabel(parameter)
    ax.set_ylabel(metric + (" (s)" if metric.startswith("time_to") else ""))
    ax.grid(alpha=0.3)
    all_x = [x for pts in lines.values() for x in pts]
    if all_x and all(float(x).is_integer() for x in all_x):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if len(lines) > 1:
        _legend_outside(ax, len(lines))
    _save(fig, path)
    plt.close(fig)
    return path


def _legend_outside(ax, entries: int) -> None:
    """A legend right of the axes (never over the curves); two columns past 16 entries. None
    when nothing was drawn (every run of the batch failed, say)."""
    if not ax.get_legend_handles_labels()[0]:
        return
    legend = ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize="small" if entries <= 16 else "x-small",
        ncol=1 if entries <= 16 else 2,
        borderaxespad=0.0,
    )
    # the layout sizes the axes alone; the saved picture grows to hold the legend whole
    # (``_save``), however many and long its entries
    legend.set_in_layout(False)


def _save(fig, path: Path, whole: bool = True) -> None:
    """Save; ``whole``: the picture grows to hold a legend right of the axes (which the layout
    leaves out: it may reach past the figure's edges)."""
    if not whole:
        fig.savefig(path)
        return
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    fig.savefig(path, bbox_inches="tight", pad_inches=0.1, bbox_extra_artists=legends)


def aggregate(out_dir: str | Path) -> list[Path]:
    """Write ``aggregate.csv`` and the plots of a batch output folder; returns the paths.

    Examples
    --------
    >>> aggregate("results/experiments/robots_vs_time")  # doctest: +SKIP
    [PosixPath('results/experiments/robots_vs_time/aggregate.csv'), ...]
    """
    out = Path(out_dir)
    meta = json.loads((out / "experiment.json").read_text())
    params, metrics = list(meta["parameters"]), list(meta["metrics"])
    rows = read_rows(out / RESULTS)
    table = aggregate_rows(rows, params, metrics)
    columns = ["condition_id", *params, "controller", "metric", *STAT_COLUMNS]
    write_rows(out / AGGREGATE, columns, table)
    written = [out / AGGREGATE]
    series = read_rows(out / TIMESERIES, list(SERIES_COLUMNS))
    p = plot_exploration(
        out / "exploration_vs_time.png",
        rows,
        series,
        params,
        list(meta["controllers"]),
        meta["name"],
    )
    written += [p] if p else []
    times = [m for m in metrics if m.startswith("time_to_")]
    target = times[-1] if times else ("ticks_to_end" if "ticks_to_end" in metrics else None)
    kinds = meta.get("parameter_kinds", {})
    for param in params:
        numeric = all(_float(r[param]) is not None for r in rows)
        if target is None or not numeric or not rows or param not in varying(rows, params):
            continue  # (a parameter with one value has no trend to draw)
        others = [q for q in params if q != param and kinds.get(q) != "lhs"]
        name = f"{target}_vs_{param.rsplit('.', 1)[-1]}.png"
        p = plot_metric_vs(
            out / name, rows, target, param, others, kinds.get(param) == "lhs", meta["name"]
        )
        written += [p] if p else []
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m maes_bringup.experiments.aggregate OUT_DIR``: redo the table and plots."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not (Path(args[0]) / "experiment.json").is_file():
        print(
            "usage: python -m maes_bringup.experiments.aggregate OUT_DIR"
            "  (a maes-batch output folder)",
            file=sys.stderr,
        )
        return 2
    for path in aggregate(args[0]):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
