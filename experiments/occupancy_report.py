"""Issue 37's comparison: the imperfect-world experiment with the simulated SLAM's maps against
the same runs with occupancy maps built from the robots' own scans (docs/imperfect_world.md).

    python experiments/occupancy_report.py results/imperfect_world \\
        results/imperfect_world_occupancy docs/imperfect_world

The two folders are maes-batch outputs of experiments/imperfect_world.yaml and
experiments/imperfect_world_occupancy.yaml: the same cases (condition, map, algorithm, seed),
which differ only in ``stack.slam``. Prints Markdown tables: per algorithm and condition the
median over the seeds of the time to 99 % explored with occupancy maps divided by the same
case's time with the simulated SLAM (runs that never got there count 300 s), and how many runs
reached 99 % in each; writes ``occupancy_vs_simulated.png`` into the output folder. A group
(map, algorithm, condition) missing seeds in either folder (an interrupted batch: continue it
with ``maes-batch ... --resume``) is listed and left out of the comparison.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from compare_algorithms_report import NAMES
from radio_loss_report import BASELINE, CENSORED_AT, CONDITION_COLUMNS, describe, plt, read


def _paired(simulated: list[dict], occupancy: list[dict]) -> tuple[list, list[str]]:
    """(simulated run, occupancy run) pairs of the same case, and what was left out.

    A group (map, algorithm, condition) is compared only when both folders hold every seed of
    it (an interrupted batch leaves some groups partial: they are named, not compared).
    """
    key = ("kind", "algorithm", "condition", "seed")
    by_case = {tuple(r[k] for k in key): r for r in simulated}
    seeds = {r["seed"] for r in simulated} | {r["seed"] for r in occupancy}
    groups: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for r in occupancy:
        case = tuple(r[k] for k in key)
        if case in by_case:
            groups[case[:3]].append((by_case[case], r))
    all_groups = {tuple(r[k] for k in key[:3]) for r in simulated + occupancy}
    pairs, left_out = [], []
    for group in sorted(all_groups):
        runs = groups.get(group, [])
        if len(runs) == len(seeds):
            pairs.extend(runs)
        else:
            left_out.append(f"{' / '.join(group)}: {len(runs)} of {len(seeds)} seeds in both")
    if not pairs:
        raise SystemExit("no (map, algorithm, condition) has every seed in both folders")
    return pairs, left_out


def _case_order(folder: Path) -> dict[str, list[str]]:
    """The conditions and maps in the experiment's case order (``cases.csv``), so that the
    tables read the same whatever order an interrupted batch finished its runs in."""
    with open(folder / "cases.csv", newline="") as fh:
        cases = list(csv.DictReader(fh))
    order: dict[str, list[str]] = {"condition": [], "kind": [], "algorithm": []}
    for c in cases:
        parts = [describe(col, c[col]) for col in CONDITION_COLUMNS if col in c]
        kind = "cave" if "cave_config" in c["map"] else "building"
        values = {
            "condition": ", ".join(p for p in parts if p) or BASELINE,
            "kind": kind,
            "algorithm": NAMES.get(c["controller"], c["controller"]),
        }
        for key, value in values.items():
            if value not in order[key]:
                order[key].append(value)
    return order


def ordered(rows: list[dict], key: str) -> list[str]:
    """The values of ``key`` among ``rows``, in the experiment's order (algorithms: as listed)."""
    present = {r[key] for r in rows}
    known = [v for v in ORDER.get(key, []) if v in present]
    return known + sorted(present - set(known))


#: Ratios marked on the plot's (log) axis.
TICKS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
#: Filled by main() from the occupancy folder's cases.csv.
ORDER: dict[str, list[str]] = {}


def _by(pairs, *fields) -> dict[tuple, list[tuple[dict, dict]]]:
    out: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for s, o in pairs:
        out[tuple(o[f] for f in fields)].append((s, o))
    return out


def tables(pairs: list[tuple[dict, dict]]) -> str:
    occ = [o for _, o in pairs]
    conds, algos = ordered(occ, "condition"), ordered(occ, "algorithm")
    g = _by(pairs, "kind", "algorithm", "condition")
    text = []
    for kind in ordered(occ, "kind"):
        text.append(
            f"\n**{kind}**: time to 99 % with occupancy maps / with the simulated SLAM's, the "
            "same case (median over 5 seeds; a run that never got there counts "
            f"{CENSORED_AT:g} s); in brackets the runs that reached 99 %, simulated -> "
            "occupancy, when they differ; n/a: not every seed run in both\n"
        )
        text.append("| algorithm | " + " | ".join(conds) + " |")
        text.append("|---" * (len(conds) + 1) + "|")
        for algo in algos:
            cells = []
            for c in conds:
                runs = g.get((kind, algo, c))
                if not runs:
                    cells.append("n/a")
                    continue
                ratio = statistics.median(o["t99"] / s["t99"] for s, o in runs)
                sim_ok = sum(s["reached"] for s, _ in runs)
                occ_ok = sum(o["reached"] for _, o in runs)
                note = f" ({sim_ok} -> {occ_ok})" if sim_ok != occ_ok else ""
                cells.append(f"{ratio:.2f}{note}")
            text.append(f"| {algo} | " + " | ".join(cells) + " |")
    text.append("\nRuns that reached 99 % explored, of the runs compared (all rows above)\n")
    text.append(
        "| algorithm | cave, simulated | cave, occupancy | building, simulated | "
        "building, occupancy | median ratio, all rows |"
    )
    text.append("|---|---:|---:|---:|---:|---:|")
    by_algo = _by(pairs, "algorithm")
    by_kind = _by(pairs, "algorithm", "kind")
    for algo in algos:
        cells = []
        for kind in ("cave", "building"):
            runs = by_kind[(algo, kind)]
            cells.append(f"{sum(s['reached'] for s, _ in runs)}/{len(runs)}")
            cells.append(f"{sum(o['reached'] for _, o in runs)}/{len(runs)}")
        ratio = statistics.median(o["t99"] / s["t99"] for s, o in by_algo[(algo,)])
        text.append(f"| {algo} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    return "\n".join(text)


def plot(pairs: list[tuple[dict, dict]], out: Path) -> Path:
    occ = [o for _, o in pairs]
    conds, algos, kinds = (ordered(occ, k) for k in ("condition", "algorithm", "kind"))
    g = _by(pairs, "kind", "algorithm", "condition")
    colours = plt.get_cmap("tab10")
    x = list(range(len(conds)))
    fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 6.0), sharey=True)
    for ax, kind in zip(axes, kinds, strict=True):
        for k, algo in enumerate(algos):
            meds, censored = [], []
            for c in conds:
                runs = g.get((kind, algo, c), [])
                meds.append(
                    statistics.median(o["t99"] / s["t99"] for s, o in runs)
                    if runs
                    else float("nan")
                )
                censored.append(bool(runs) and not all(o["reached"] for _, o in runs))
            ax.plot(x, meds, marker="o", color=colours(k), label=algo)
            for xi, m, cut in zip(x, meds, censored, strict=True):
                if cut:  # some occupancy runs never reached 99 %: the ratio is a lower bound
                    ax.plot(xi, m, marker="o", ms=10, mfc="white", color=colours(k))
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xticks(x, conds, rotation=25, ha="right", fontsize=9)
        ax.set_xlabel("condition (the experiment's rows)")
        ax.set_title(f"40x40 {kind}, 4 robots, maps merged in range")
        ax.set_yscale("log", base=2)
        ax.set_yticks(TICKS, [f"{t:g}" for t in TICKS])
        ax.minorticks_off()
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel(
        "time to 99 % with occupancy maps /\nwith the simulated SLAM's (same case; median of 5)"
    )
    handles, labels = axes[0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], marker="o", ms=10, mfc="white", color="0.3", ls=""))
    labels.append("some occupancy runs never reached 99 % (a lower bound)")
    fig.legend(handles, labels, loc="lower center", ncol=(len(labels) + 1) // 2, fontsize=9)
    fig.suptitle(
        "What the noise costs when it reaches the maps: occupancy maps against the simulated "
        f"SLAM\n(a run that never reaches 99 % counts {CENSORED_AT:g} s; log scale; above 1: "
        "slower with occupancy maps; no point: the condition was not run in both)",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    path = out / "occupancy_vs_simulated.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    pairs, left_out = _paired(read(Path(argv[0])), read(Path(argv[1])))
    ORDER.update(_case_order(Path(argv[1])))
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    print(tables(pairs))
    if left_out:
        print(f"\nnot compared (not every seed in both folders): {len(left_out)} groups")
        for line in left_out:
            print(f"  {line}")
    print(f"\nwrote {plot(pairs, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
