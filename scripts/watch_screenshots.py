"""Take docs/watching.md's screenshots of the page: real ``maes_run --live 0`` runs in headless
Chromium (scripts/setup_browser.sh), a robot clicked, saved as small PNGs.

    scripts/with_env python scripts/watch_screenshots.py            # both: 3 and 120 robots
    scripts/with_env python scripts/watch_screenshots.py --robots 3

Each run: the config below, capped at 2x real time, watched until ``--seconds`` of sim time,
then the page's picture (1280 x 1024) is written to docs/watching/page_<N>_robots.png.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "watching"
#: Per robot count: the map (width = height, tiles), the robot to click, the layers unticked
#: (120 robots near each other all hear each other: their links hide the robots).
RUNS = {3: (30, 1, ()), 120: (64, 17, ("links",))}


def config(robots: int, size: int) -> str:
    return (
        f"number_of_robots: {robots}\nrandom_seeds: [1]\n"
        "end_criteria:\n  exploration_percent: null\n  tick: null\n"
        f"map:\n  width_in_tiles: {size}\n  height_in_tiles: {size}\n  building_config: {{}}\n"
        "robot_spawn_config:\n  biggest_room: null\n  spawn_together: {}\n"
    )


def shoot(robots: int, seconds: float) -> Path:
    from maes_sim.watch import open_page

    size, clicked, hidden = RUNS[robots]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "run.yaml"
        cfg.write_text(config(robots, size))
        proc = subprocess.Popen(
            [sys.executable, "-m", "maes_bringup.runners.embedded", "--config", str(cfg),
             "--real-time-factor", "2", "--live", "0", "--results", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
        )  # fmt: skip
        lines: list[str] = []
        threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
        try:
            url = None
            deadline = time.monotonic() + 600
            while url is None and time.monotonic() < deadline and proc.poll() is None:
                found = [re.search(r"watch at (http://\S+/)", line) for line in list(lines)]
                url = next((m.group(1) for m in found if m), None)
                time.sleep(0.2)
            if url is None:
                raise SystemExit("maes_run did not serve the page:\n" + "".join(lines)[-2000:])
            with open_page(url, width=1280, height=1024) as page:
                page.wait_for_function(
                    f"window.maesPage.ready && window.maesPage.frame.time >= {seconds}",
                    timeout=int(1000 * 60 * max(5, seconds)),
                )
                for layer in hidden:
                    page.uncheck(f"#show-{layer}")
                d = page.evaluate("window.maesPage.drawn")
                x, y, _ = d["robots"][clicked]
                box = page.locator("#map").bounding_box()
                page.mouse.click(box["x"] + x, box["y"] + y)
                page.wait_for_function(
                    "document.getElementById('robot-info').textContent.includes('nearby_robots')"
                )
                # its navigation heard from its navigate_to_pose status (a subscription made
                # on the click: discovery takes a moment, longer with 120 robots)
                page.wait_for_function(
                    "/goals? so far/.test(document.getElementById('robot-info').textContent)",
                    timeout=120_000,
                )
                time.sleep(1.0)
                OUT.mkdir(parents=True, exist_ok=True)
                path = OUT / f"page_{robots}_robots.png"
                page.screenshot(path=str(path))
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            proc.wait(timeout=120)
    small(path)
    return path


def small(path: Path) -> None:
    """Fewer colours, the same picture to the eye: a palette PNG a fraction of the size (255
    colours by the fast octree method, which keeps the robots' colours)."""
    from PIL import Image

    img = Image.open(path).convert("RGB")
    img.quantize(colors=255, method=Image.Quantize.FASTOCTREE).save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=sorted(RUNS), choices=sorted(RUNS))
    parser.add_argument("--seconds", type=float, default=40.0, help="sim seconds before the shot")
    args = parser.parse_args(argv)
    for n in args.robots:
        path = shoot(n, args.seconds)
        print(f"{path.relative_to(REPO)}: {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
