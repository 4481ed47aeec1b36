"""Table and figures of issue 25's radio experiment (docs/radio_loss.md) from maes-batch output.

    python experiments/radio_loss_report.py results/radio_loss docs/radio_loss

Prints Markdown tables (medians over the seeds, with min..max) and writes
``radio_loss_time_to_99.png`` and ``radio_loss_slowdown.png`` into the output folder.

A *condition* is a row of the comparison: the values of the columns of
:data:`CONDITION_COLUMNS` present in ``results.csv``, each described by :func:`describe`. To add
lidar-noise or moving-obstacle rows, make them values of a parameter of the experiment file,
add that parameter's column here and a description in :func:`describe`.
"""

from __future__ import annotations

import ast
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
    "maes_controller.algorithms.swarmbots:logic": "Swarmbots",
    "maes_controller.algorithms.space_bt:logic": "SPACE BT (FCG)",
    "maes_controller.algorithms.space_cbba:logic": "SPACE CBBA",
    "maes_controller.algorithms.space_grape:logic": "SPACE GRAPE",
    "maes_controller.algorithms.maes2_explorer:logic": "MAES 2.0 explorer",
    "maes_controller.algorithms.random_walk:logic": "random walk",
}
#: Columns of results.csv that make a condition (a row of the comparison), in label order.
CONDITION_COLUMNS = ("robot_types",)
#: The label of the reference condition (slowdowns are relative to it).
BASELINE = "no loss"
#: Simulated seconds a run that never reached 99 % counts as (the config's tick limit).
CENSORED_AT = 300.0


def radio_label(radio: dict) -> str:
    """``communication`` settings as a short label ("" for MAES 2.0's perfect radio)."""
    model = radio.get("model", "range")
    if model == "range":
        return ""
    if model == "bernoulli":
        return f"Bernoulli {100 * radio['loss_probability']:.0f} %"
    if model == "gilbert_elliott":
        g = radio.get("good_to_bad_probability", 0.0)
        b = radio.get("bad_to_good_probability", 1.0)
        return f"Gilbert-Elliott {100 * g / (g + b):.0f} % (bursts of {1 / b:.0f})"
    return f"{model} {radio}"


def describe(column: str, text: str) -> str:
    """A short label for one condition column's value ("" for the perfect baseline). A new
    kind of condition (``lidar`` noise of a type, an ``obstacles`` column) adds a branch."""
    value = ast.literal_eval(text) if text[:1] in "{[" else text
    if column == "robot_types":
        parts = []
        for settings in value.values():
            parts.append(radio_label(settings.get("communication", {})))
            if "lidar" in settings:
                parts.append(f"lidar {settings['lidar']}")
        return ", ".join(p for p in parts if p)
    return f"{column}={value}"


def read(folder: Path) -> list[dict]:
    with open(folder / "results.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    for r in rows:
        r["algorithm"] = NAMES.get(r["controller"], r["controller"])
        r["kind"] = "cave" if "cave_config" in r["map"] else "building"
        parts = [describe(c, r[c]) for c in CONDITION_COLUMNS if c in r]
        r["condition"] = ", ".join(p for p in parts if p) or BASELINE
        t = r["time_to_exploration_99"]
        r["t99"] = float(t) if t else CENSORED_AT
        r["reached"] = bool(t)
    return rows


def ordered(rows: list[dict], key: str) -> list[str]:
    seen: list[str] = []
    for r in rows:
        if r[key] not in seen:
            seen.append(r[key])
    return seen


def cell(values: list[float], digits: int = 0) -> str:
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}..{max(values):.{digits}f})"


def groups(rows: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    out: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows:
        out[(r["kind"], r["algorithm"], r["condition"])].append(r)
    return out


def tables(rows: list[dict]) -> str:
    g = groups(rows)
    conds = ordered(rows, "condition")
    text = []
    for kind in ordered(rows, "kind"):
        text.append(
            f"\n**{kind}**: time to 99 % explored, s (median, min..max over 5 seeds; "
            f"a run that never got there counts {CENSORED_AT:g} s; * = some did not)\n"
        )
        text.append("| algorithm | " + " | ".join(conds) + " |")
        text.append("|---" * (len(conds) + 1) + "|")
        for algo in ordered(rows, "algorithm"):
            cells = []
            for c in conds:
                runs = g[(kind, algo, c)]
                star = "*" if not all(r["reached"] for r in runs) else ""
                cells.append(cell([r["t99"] for r in runs], 1) + star if runs else "n/a")
            text.append(f"| {algo} | " + " | ".join(cells) + " |")
    text.append(
        "\nDelivered share of broadcasts and lost map exchanges (all runs of a condition)\n"
    )
    text.append("| condition | broadcasts sent | delivered share | map exchanges lost |")
    text.append("|---|---:|---:|---:|")
    for c in conds:
        runs = [r for r in rows if r["condition"] == c]
        sent = sum(int(r["broadcasts_sent"]) for r in runs)
        got = sum(int(r["broadcasts_delivered"]) for r in runs)
        lost = sum(int(r["broadcasts_dropped"]) for r in runs)
        maps = sum(int(r["map_exchanges_dropped"]) for r in runs)
        share = got / (got + lost) if got + lost else float("nan")
        text.append(f"| {c} | {sent} | {share:.3f} | {maps} |")
    return "\n".join(text)


def plot(rows: list[dict], out: Path) -> None:
    g = groups(rows)
    conds = ordered(rows, "condition")
    kinds = ordered(rows, "kind")
    algos = ordered(rows, "algorithm")
    colours = plt.get_cmap("tab10")
    x = list(range(len(conds)))
    for name, ylabel, ratio in (
        ("radio_loss_time_to_99.png", "time to 99 % explored (simulated s, median of 5)", False),
        ("radio_loss_slowdown.png", "slowdown: time / same seed's no-loss time (median)", True),
    ):
        fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 6.0), sharey=True)
        for ax, kind in zip(axes if len(kinds) > 1 else [axes], kinds, strict=True):
            for k, algo in enumerate(algos):
                if ratio:  # paired by seed: the same map and spawn with and without loss
                    base = {r["seed"]: r["t99"] for r in g[(kind, algo, conds[0])]}
                    meds = [
                        statistics.median(r["t99"] / base[r["seed"]] for r in g[(kind, algo, c)])
                        for c in conds
                    ]
                else:
                    meds = [statistics.median(r["t99"] for r in g[(kind, algo, c)]) for c in conds]
                ax.plot(x, meds, marker="o", color=colours(k), label=algo)
            if ratio:
                ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
            ax.set_xticks(x, conds, rotation=25, ha="right")
            ax.set_xlabel("radio condition")
            sample = next(r for r in rows if r["kind"] == kind)
            side = ast.literal_eval(sample["map"])["width_in_tiles"]
            reach = sample.get("robot_constraints.broadcast_range", "")
            reach = f", radio range {float(reach):g} tiles" if reach else ""
            ax.set_title(f"{side}x{side} {kind}, {sample['number_of_robots']} robots{reach}")
            ax.grid(alpha=0.3)
        first = axes[0] if len(kinds) > 1 else axes
        first.set_ylabel(ylabel)
        handles, labels = first.get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(algos) // 2, fontsize=9)
        what = "Slowdown under radio loss" if ratio else "Time to explore 99 % under radio loss"
        fig.suptitle(
            f"{what} (SLAM maps merged in range; runs that never reach 99 % count "
            f"{CENSORED_AT:g} s)",
            fontsize=11,
        )
        fig.tight_layout(rect=(0, 0.1, 1, 1))
        fig.savefig(out / name, dpi=80)
        plt.close(fig)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    rows = read(Path(argv[0]))
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    print(tables(rows))
    plot(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
