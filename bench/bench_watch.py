"""Benchmark: what watching a run in a web browser costs it (docs/watching.md).

Paired, interleaved runs of the embedded stack (``maes_run``, unpaced, the default map with
``--robots`` robots, the example explorer, ``--ticks`` ticks), each in its own process:

=========  =====================================================================
``plain``  no switch
``live``   ``--live 0``: the page and the Foxglove server up, nobody looking
``page``   ``--live 0`` with the page open from the start to the end of the run
=========  =====================================================================

The page is opened by ``--client``: ``chromium`` (the real page in Debian's headless Chromium,
through playwright; on this machine the browser's drawing competes with the run for the same
cores) or ``http`` (a Python client asking for exactly what the page asks for, as often: the
run's side of the cost alone). ``auto`` takes Chromium where it exists.

Printed per variant: the run's speed (ticks per wall second from its first tick on, from its
``summary.json``, so start-up does not count) and the CPU time of the ``maes_run`` process
alone (start-up included; the browser's is not in it), medians over the rounds, and the ratios
``page / live`` (what an open page costs) and ``page / plain``, paired round by round. On a
loaded machine the speed follows the load; the run's CPU time says what the page costs the run
itself.
Run it in the pip environment::

    scripts/with_env python bench/bench_watch.py --robots 120 --ticks 150 --rounds 3
    scripts/with_env python bench/bench_watch.py --robots 20 --ticks 200 --client http
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
URL = re.compile(r"watch at (http://\S+/)")
VARIANTS = ("plain", "live", "page")
#: What the page asks the run for, as the page does (static/app.js: POLL_MS, the query).
POLL_S = 0.1


class HttpClient:
    """Asks ``/api/frame`` what the page asks, every ``POLL_S`` (the page's rate) or slower
    when an answer takes longer: the layers the page starts with (the scene's ``show``), and
    one robot selected."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stop = threading.Event()
        self.frames = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        scene = None
        while scene is None and not self.stop.is_set():  # the page waits for the start too
            try:
                with urllib.request.urlopen(self.url + "api/scene", timeout=10) as r:
                    scene = json.loads(r.read())
            except OSError:
                self.stop.wait(0.5)
        if scene is None:
            return
        shown = "&".join(f"{k}={int(v)}" for k, v in scene["show"].items())
        seq, hist, maps = -1, 0, 0
        while not self.stop.is_set():
            t0 = time.monotonic()
            query = f"seq={seq}&trail=-1&stride=0&hist={hist}&maps={maps}&{shown}&robot=0"
            try:
                with urllib.request.urlopen(f"{self.url}api/frame?{query}", timeout=10) as r:
                    frame = json.loads(r.read())
            except OSError:
                break  # the run ended
            if "poses" in frame:
                self.frames += 1
                seq = frame["seq"]
                hist = frame["history"]["from"] + frame["history"]["rows"]["shape"][0]
                maps = frame.get("maps", {}).get("seq", maps) if frame.get("maps") else maps
            spent = time.monotonic() - t0
            self.stop.wait(max(POLL_S - spent, 2 * spent, 0.01))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


class ChromiumClient:
    """The page in a real headless Chromium (Debian's, through playwright)."""

    def __init__(self, url: str) -> None:
        from maes_sim.watch import open_page

        self._context = open_page(url)
        self.page = self._context.__enter__()
        self.frames = 0

    def close(self) -> None:
        try:
            self.frames = int(self.page.evaluate("window.maesPage.draws"))
        except Exception:
            self.frames = -1
        self._context.__exit__(None, None, None)


def one_run(config: Path, ticks: int, variant: str, client: str, env: dict, out: Path) -> dict:
    """One ``maes_run``: its speed from its summary, its own CPU seconds (not the browser's),
    frames the page drew."""
    extra = [] if variant == "plain" else ["--live", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "maes_bringup.runners.embedded", "--config", str(config),
         "--real-time-factor", "0", "--max-ticks", str(ticks), "--results", str(out), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    watcher = None
    err: list[str] = []
    try:
        for line in proc.stderr:
            err.append(line)
            found = URL.search(line)
            if found and variant == "page":
                try:
                    watcher = (ChromiumClient if client == "chromium" else HttpClient)(
                        found.group(1)
                    )
                except Exception as exc:  # the browser came up after the run had ended?
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        raise exc from None
                    raise SystemExit(
                        f"the page could not open ({exc.__class__.__name__}): the run had "
                        f"already ended ({ticks} ticks took less than the browser's start); "
                        "give more --ticks"
                    ) from None
                break
        err.extend(proc.stderr)  # the rest, until the run ends
        # the run's own resource use (os.wait4: this child alone, not the browser)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if watcher is not None:
            watcher.close()
        if proc.poll() is None:
            proc.kill()
    if proc.returncode != 0:
        raise SystemExit(f"maes_run failed ({proc.returncode}): {''.join(err)[-2000:]}")
    summary = json.loads(next(out.glob("*/summary.json")).read_text())
    return {
        "speed": summary["ticks"] / max(summary["wall_time_s"], 1e-9),
        "cpu": usage.ru_utime + usage.ru_stime,
        "frames": watcher.frames if watcher is not None else 0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=120)
    parser.add_argument("--ticks", type=int, default=150, help="logic ticks per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every variant")
    parser.add_argument("--client", choices=("auto", "chromium", "http"), default="auto")
    parser.add_argument("--config", default=str(REPO / "maes_config.yaml"))
    parser.add_argument("--size", type=int, default=None, help="map width and height in tiles")
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=VARIANTS,
        default=list(VARIANTS),
        help="the variants to run (default all; page and live give the headline ratio)",
    )
    args = parser.parse_args(argv)
    from maes_sim.watch import INSTALL_HINT, chromium_path

    client = args.client
    if client == "auto":
        client = "chromium" if chromium_path() else "http"
    if client == "chromium" and not chromium_path():
        raise SystemExit(f"no chromium here: {INSTALL_HINT} (or --client http)")

    cfg = yaml.safe_load(Path(args.config).read_text())
    cfg["number_of_robots"] = args.robots
    cfg["end_criteria"] = {"exploration_percent": None, "coverage_percent": None, "tick": None}
    cfg.setdefault("results", {})["pictures"] = False  # matplotlib's end is no part of the run
    if args.size:
        cfg["map"]["width_in_tiles"] = cfg["map"]["height_in_tiles"] = args.size
    sys.path.insert(0, str(REPO))
    from conftest import acquire_ros_domain_id  # the tests' domain locks (repository root)

    domain, _lock = acquire_ros_domain_id(os.getpid(), Path(tempfile.gettempdir()))
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    variants = tuple(v for v in VARIANTS if v in args.variants)
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.yaml"
        config.write_text(yaml.safe_dump(cfg))
        one_run(config, 3, "plain", client, env, Path(tmp) / "warm")  # numba's caches first
        for k in range(args.rounds):
            # each round in another order: no variant always runs after the same one
            order = variants[k % len(variants) :] + variants[: k % len(variants)]
            for name in order:
                r = one_run(config, args.ticks, name, client, env, Path(tmp) / f"{name}_{k}")
                runs[name].append(r)
                print(f"round {k + 1}/{args.rounds} {name:>5}: {r['speed']:6.2f} ticks/s, "
                      f"cpu {r['cpu']:6.1f} s, page frames {r['frames']}", flush=True)  # fmt: skip
    med = {
        name: {key: statistics.median(r[key] for r in rs) for key in ("speed", "cpu")}
        for name, rs in runs.items()
    }
    print(
        f"\n{args.robots} robots, {args.ticks} ticks, median of {args.rounds} rounds, "
        f"page opened by {client} ({os.cpu_count()} cores, shared with the browser)"
    )
    print(f"{'variant':>8} {'ticks/s':>8} {'cpu s':>7}")
    for name in variants:
        print(f"{name:>8} {med[name]['speed']:8.2f} {med[name]['cpu']:7.1f}")
    for a, b in (("page", "live"), ("page", "plain")):
        if a in runs and b in runs:
            print(f"run's CPU time, {a} / {b}: {med[a]['cpu'] / med[b]['cpu']:.3f}")
    for a, b, what in (
        ("page", "live", "the page open / without it (live)"),
        ("page", "plain", "the page open / no switch (plain)"),
        ("live", "plain", "--live, no page / no switch"),
    ):
        if a in runs and b in runs:
            paired = [p["speed"] / q["speed"] for p, q in zip(runs[a], runs[b], strict=True)]
            print(
                f"speed with {what}: {med[a]['speed'] / med[b]['speed']:.3f} (paired per "
                f"round: {', '.join(f'{x:.3f}' for x in paired)}; median "
                f"{statistics.median(paired):.3f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
