"""Table and plots of issue 15's comparison (docs/algorithms_comparison.md) from maes-batch output.

    python experiments/compare_algorithms_report.py results/compare_algorithms \
        results/trs_pruning docs/algorithms_comparison

Prints Markdown tables (medians over seeds, with min..max) and writes
``time_to_99_vs_robots.png`` and ``exploration_vs_time_5_robots.png`` into the output folder.
Metric columns that a later version of maes-batch adds to ``results.csv`` are tabulated too
(every numeric column after ``final_exploration``), so the report grows with the metrics.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAMES = {
    "maes_controller.algorithms.frontier_explorer:logic": "example explorer",
    "maes_controller.algorithms.trs:logic": "TRS-Python",
    "maes_controller.algorithms.trs:logic_unpruned": "TRS-Python, unpruned",
    "maes_controller.algorithms.swarmbots:logic": "Swarmbots",
    "maes_controller.algorithms.space_bt:logic": "SPACE BT (FCG)",
    "maes_controller.algorithms.space_cbba:logic": "SPACE CBBA",
    "maes_controller.algorithms.space_grape:logic": "SPACE GRAPE",
    "maes_controller.algorithms.maes2_explorer:logic": "MAES 2.0 explorer",
    "maes_controller.algorithms.random_walk:logic": "random walk",
}


def map_kind(text: str) -> str:
    return "cave" if "cave_config" in text else "building"


def read(folder: Path) -> list[dict]:
    with open(folder / "results.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    for r in rows:
        r["algorithm"] = NAMES.get(r["controller"], r["controller"])
        r["kind"] = map_kind(r["map"])
    return rows


def cell(values: list[float], digits: int = 0) -> str:
    if not values:
        return "n/a"
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}..{max(values):.{digits}f})"


def table(rows: list[dict], metric: str, digits: int = 0) -> str:
    robots = sorted({int(r["number_of_robots"]) for r in rows})
    algos = [a for a in NAMES.values() if any(r["algorithm"] == a for r in rows)]
    out = []
    for kind in ("cave", "building"):
        out.append(f"\n{metric}, {kind} (median (min..max) over seeds)\n")
        out.append("| algorithm | " + " | ".join(f"{n} robots" for n in robots) + " |")
        out.append("|---|" + "---:|" * len(robots))
        for a in algos:
            vals = []
            for n in robots:
                sel = [
                    float(r[metric])
                    for r in rows
                    if r["algorithm"] == a
                    and r["kind"] == kind
                    and int(r["number_of_robots"]) == n
                    and r[metric] != ""
                ]
                vals.append(cell(sel, digits))
            out.append(f"| {a} | " + " | ".join(vals) + " |")
    return "\n".join(out)


def plot_time(rows: list[dict], out: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    robots = sorted({int(r["number_of_robots"]) for r in rows})
    for ax, kind in zip(axes, ("cave", "building"), strict=True):
        for k, a in enumerate(a for a in NAMES.values() if any(r["algorithm"] == a for r in rows)):
            med, lo, hi = [], [], []
            for n in robots:
                v = [
                    float(r["time_to_exploration_99"])
                    for r in rows
                    if r["algorithm"] == a
                    and r["kind"] == kind
                    and int(r["number_of_robots"]) == n
                    and r["time_to_exploration_99"]
                ]
                m = statistics.median(v) if v else float("nan")
                med.append(m)
                lo.append(m - min(v) if v else 0)
                hi.append(max(v) - m if v else 0)
            x = [n + (k - (len(NAMES) - 2) / 2) * 0.1 for n in robots]  # side by side, not on top
            ax.errorbar(x, med, yerr=[lo, hi], marker="o", capsize=3, label=a)
        ax.set_title(f"30x30 {kind}")
        ax.set_xlabel("number of robots")
        ax.set_xticks(robots)
        ax.grid(alpha=0.3)
    for ax in axes:
        ax.set_ylabel("simulated seconds to 99 % explored")
        ax.set_ylim(bottom=0)
    axes[1].legend(fontsize=8)
    fig.suptitle("Time to explore 99 %: median over seeds, bars min..max")
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)


def plot_curves(folder: Path, rows: list[dict], robots: int, out: Path) -> None:
    by_case = {r["case_id"]: r for r in rows if int(r["number_of_robots"]) == robots}
    runs: dict = defaultdict(dict)  # case -> {time: %}
    with open(folder / "timeseries.csv", newline="") as fh:
        for t in csv.DictReader(fh):
            if t["case_id"] in by_case:
                runs[t["case_id"]][float(t["sim_time"])] = float(t["exploration_percent"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, kind in zip(axes, ("cave", "building"), strict=True):
        for a in NAMES.values():
            cases = [c for c, r in by_case.items() if r["kind"] == kind and r["algorithm"] == a]
            if not cases:
                continue
            times = sorted({t for c in cases for t in runs[c]})
            mean = []
            for t in times:  # a finished run keeps its final value
                vals = [runs[c].get(t, runs[c][max(k for k in runs[c] if k <= t)]) for c in cases]
                mean.append(sum(vals) / len(vals))
            ax.plot(times, mean, label=a)
        ax.set_title(f"30x30 {kind}, {robots} robots")
        ax.set_xlabel("simulated time (s)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("explored (% of reachable area)")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"Exploration over time, mean over seeds ({robots} robots; a finished run holds)")
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)


def main(argv: list[str]) -> None:
    compare, pruning, out = (Path(a) for a in argv)
    out.mkdir(parents=True, exist_ok=True)
    rows = read(compare)
    print(f"{len(rows)} ok runs in {compare}")
    columns = list(rows[0])
    metrics = ["time_to_exploration_99", "time_to_exploration_90", "distance_per_robot"]
    extra = (
        columns[columns.index("final_exploration") + 1 :] if "final_exploration" in columns else []
    )
    for m in metrics + [c for c in extra if c not in metrics and c not in ("algorithm", "kind")]:
        print(table(rows, m, 1 if m.startswith("distance") else 1))
    plot_time(rows, out / "time_to_99_vs_robots.png")
    plot_curves(compare, rows, 5, out / "exploration_vs_time_5_robots.png")
    prows = read(pruning)
    print(f"\n{len(prows)} ok runs in {pruning}")
    print("\n| map | pruned: ticks to 99 % | unpruned | unpruned / pruned |\n|---|---:|---:|---:|")
    for kind in ("cave", "building"):
        t = {
            a: [
                float(r["ticks_to_end"]) for r in prows if r["kind"] == kind and r["algorithm"] == a
            ]
            for a in ("TRS-Python", "TRS-Python, unpruned")
        }
        p, u = statistics.mean(t["TRS-Python"]), statistics.mean(t["TRS-Python, unpruned"])
        print(
            f"| {kind} ({len(t['TRS-Python'])} seeds) | {p:.0f} (mean), "
            f"{statistics.median(t['TRS-Python']):.0f} (median) | {u:.0f} (mean), "
            f"{statistics.median(t['TRS-Python, unpruned']):.0f} (median) | {u / p:.2f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
