"""Tables and figures of issue 25's experiments from maes-batch output: the radio one
(docs/radio_loss.md) and the imperfect-world one (docs/imperfect_world.md).

    python experiments/radio_loss_report.py results/radio_loss docs/radio_loss
    python experiments/radio_loss_report.py results/imperfect_world docs/imperfect_world \
        --name imperfect_world

Prints Markdown tables (medians over the seeds, with min..max) and writes
``<name>_time_to_99.png`` and ``<name>_slowdown.png`` into the output folder (``--name``:
``radio_loss`` by default).

A *condition* is a row of the comparison: the values of the columns of
:data:`CONDITION_COLUMNS` present in ``results.csv``, each described by :func:`describe` (radio
settings, sensor noise of the robot type, moving obstacles). To add another kind, make it values
of a parameter of the experiment file, add that parameter's column here and a description in
:func:`describe`.
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
from compare_algorithms_report import NAMES  # noqa: E402 - one table of display names

#: Columns of results.csv that make a condition (a row of the comparison), in label order.
CONDITION_COLUMNS = ("robot_types", "obstacles")
#: The label of the reference condition per experiment name (slowdowns are relative to it).
BASELINES = {"radio_loss": "no loss"}
#: ... and for any other experiment.
BASELINE = "exact sensing, no loss"
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


def noise_label(settings: dict) -> str:
    """A robot type's sensor noise as a short label ("" for exact sensing)."""
    lidar = settings.get("lidar", {})
    odometry = settings.get("motion", {}).get("odometry_noise", 0.0)
    slam = settings.get("slam_position_inaccuracy", 0.0)
    noisy_lidar = bool(lidar.get("range_noise_std") or lidar.get("dropout_probability"))
    pose_errors = bool(odometry or slam)
    if noisy_lidar and pose_errors:
        return "noisy sensing"
    return "lidar noise" if noisy_lidar else "pose errors" if pose_errors else ""


def obstacles_label(obstacles: list) -> str:
    """Moving obstacles as a short label ("" for none)."""
    walkers = sum(o.get("random_walkers", 0) for o in obstacles)
    paths = sum(1 for o in obstacles if "path" in o)
    parts = [f"{walkers} walkers"] * bool(walkers) + [f"{paths} on paths"] * bool(paths)
    return " + ".join(parts)


def describe(column: str, text: str) -> str:
    """A short label for one condition column's value ("" for the perfect baseline)."""
    value = ast.literal_eval(text) if text[:1] in "{[" else text
    if column == "robot_types":
        parts = []
        for settings in value.values():
            parts.append(noise_label(settings))
            parts.append(radio_label(settings.get("communication", {})))
        return ", ".join(p for p in parts if p)
    if column == "obstacles":
        return obstacles_label(value)
    return f"{column}={value}"


def read(folder: Path, baseline: str = BASELINE) -> list[dict]:
    with open(folder / "results.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    for r in rows:
        r["algorithm"] = NAMES.get(r["controller"], r["controller"])
        r["kind"] = "cave" if "cave_config" in r["map"] else "building"
        parts = [describe(c, r[c]) for c in CONDITION_COLUMNS if c in r]
        r["condition"] = ", ".join(p for p in parts if p) or baseline
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


def plot(rows: list[dict], out: Path, name: str = "radio_loss") -> None:
    g = groups(rows)
    conds = ordered(rows, "condition")
    kinds = ordered(rows, "kind")
    algos = ordered(rows, "algorithm")
    colours = plt.get_cmap("tab10")
    x = list(range(len(conds)))
    radio = name == "radio_loss"
    for png, ylabel, ratio in (
        (f"{name}_time_to_99.png", "time to 99 % explored (simulated s, median of 5)", False),
        (
            f"{name}_slowdown.png",
            f"slowdown (median over the seeds):\ntime / same seed's time with {conds[0]}",
            True,
        ),
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
            ax.set_xticks(x, conds, rotation=25, ha="right", fontsize=9)
            ax.set_xlabel("radio condition" if radio else "condition")
            sample = next(r for r in rows if r["kind"] == kind)
            side = ast.literal_eval(sample["map"])["width_in_tiles"]
            reach = sample.get("robot_constraints.broadcast_range", "")
            reach = f", radio range {float(reach):g} tiles" if reach else ""
            ax.set_title(f"{side}x{side} {kind}, {sample['number_of_robots']} robots{reach}")
            ax.grid(alpha=0.3)
        first = axes[0] if len(kinds) > 1 else axes
        first.set_ylabel(ylabel)
        handles, labels = first.get_legend_handles_labels()
        fig.legend(
            handles, labels, loc="lower center", ncol=max(1, (len(algos) + 1) // 2), fontsize=9
        )
        under = "radio loss" if radio else "noise, radio loss and moving obstacles"
        what = f"Slowdown under {under}" if ratio else f"Time to explore 99 % under {under}"
        fig.suptitle(
            f"{what} (SLAM maps merged in range; runs that never reach 99 % count "
            f"{CENSORED_AT:g} s)",
            fontsize=11,
        )
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        fig.savefig(out / png, dpi=80)
        plt.close(fig)


def main(argv: list[str]) -> int:
    name = "radio_loss"
    if len(argv) == 4 and argv[2] == "--name":
        name, argv = argv[3], argv[:2]
    if len(argv) != 2:
        print(__doc__)
        return 2
    rows = read(Path(argv[0]), BASELINES.get(name, BASELINE))
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    print(tables(rows))
    plot(rows, out, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
