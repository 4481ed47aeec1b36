#!/usr/bin/env python3
"""Write the Foxglove / Lichtblick layout of the live view and of recordings:
src/maes_bringup/foxglove/maes_live.json (docs/live_view.md).

Run it after changing the layout here (``python3 scripts/make_foxglove_layout.py``); a test
checks that the committed file is this script's output. The format is the one both apps export
and import (Layouts > Import from file): ``configById`` (each panel's settings, by
``Type!id``), ``layout`` (the split tree), ``globalVariables``, ``userNodes``,
``playbackConfig``.

The 3-D panel shows, in the ``world`` frame seen from above: the ground-truth map, the robots
(``/maes/markers``: robots, tags, communication links; ``/tf``: every robot's frames) and the
scans and planned paths of the first ROBOTS robots in matplotlib's tab10 colours (tick more in
the panel). The exploration and coverage heatmaps and the robots' SLAM maps and costmaps are
listed, switched off. Two
plots against sim time: exploration and coverage (percent), and the real-time factor with the
collisions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "maes_bringup" / "foxglove" / "maes_live.json"
ROBOTS = 10
#: matplotlib's tab10, robot i's colour.
COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


def _grid(visible: bool, mode: str, alpha: float) -> dict:
    return {"visible": visible, "colorMode": mode, "alpha": alpha, "frameLocked": True}


def three_d() -> dict:
    topics = {
        "/maes/ground_truth": _grid(True, "map", 0.6),
        "/maes/exploration": _grid(False, "costmap", 0.5),
        "/maes/coverage": _grid(False, "costmap", 0.5),
        "/maes/markers": {"visible": True},
    }
    for i in range(ROBOTS):
        topics[f"/robot{i}/scan"] = {
            "visible": True,
            "colorMode": "flat",
            "flatColor": COLORS[i % len(COLORS)],
            "pointSize": 3,
            "pointShape": "circle",
        }
        topics[f"/robot{i}/map"] = _grid(False, "map", 0.5)
        topics[f"/robot{i}/plan"] = {
            "visible": True,
            "type": "line",
            "lineWidth": 0.08,
            "gradient": [COLORS[i % len(COLORS)], COLORS[i % len(COLORS)]],
        }
        topics[f"/robot{i}/global_costmap/costmap"] = _grid(False, "costmap", 0.5)
    return {
        "foxglovePanelTitle": "MAES world (every robot)",
        "followTf": "world",
        "followMode": "follow-none",
        "cameraState": {
            "perspective": False,
            "distance": 60,
            "phi": 0,
            "thetaOffset": 0,
            "target": [0, 0, 0],
            "targetOffset": [0, 0, 0],
            "targetOrientation": [0, 0, 0, 1],
            "fovy": 45,
            "near": 0.5,
            "far": 5000,
        },
        "scene": {},
        "transforms": {},
        "layers": {
            "grid": {"layerId": "foxglove.Grid", "visible": False, "frameId": "world"},
        },
        "topics": topics,
        "publish": {"type": "point", "poseTopic": "/move_base_simple/goal"},
        "imageMode": {},
    }


def plot(title: str, series: list[tuple[str, str]], y_label: str, y_range=None) -> dict:
    config = {
        "foxglovePanelTitle": title,
        "paths": [
            {
                "value": f"/maes/stats.{field}",
                "label": label,
                "enabled": True,
                "timestampMethod": "receiveTime",
            }
            for field, label in series
        ],
        "showLegend": True,
        "legendDisplay": "top",
        "showXAxisLabels": True,
        "showYAxisLabels": True,
        "isSynced": True,
        "xAxisVal": "timestamp",
        "xAxisLabel": "sim time (s)",
        "yAxisLabel": y_label,
        "sidebarDimension": 240,
    }
    if y_range is not None:
        config["minYValue"], config["maxYValue"] = y_range
    return config


def layout() -> dict:
    return {
        "configById": {
            "3D!maes": three_d(),
            "Plot!progress": plot(
                "Exploration and coverage",
                [("exploration_percent", "explored %"), ("coverage_percent", "covered %")],
                "% of reachable tiles",
                (0, 100),
            ),
            "Plot!speed": plot(
                "Speed and collisions",
                [
                    ("real_time_factor", "real-time factor (x)"),
                    ("collisions", "collisions (all robots)"),
                ],
                "x real time / count",
            ),
        },
        "globalVariables": {},
        "userNodes": {},
        "playbackConfig": {"speed": 1},
        "layout": {
            "direction": "row",
            "first": "3D!maes",
            "second": {
                "direction": "column",
                "first": "Plot!progress",
                "second": "Plot!speed",
                "splitPercentage": 50,
            },
            "splitPercentage": 66,
        },
    }


def render() -> str:
    """The layout file's text."""
    return json.dumps(layout(), indent=2) + "\n"


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
