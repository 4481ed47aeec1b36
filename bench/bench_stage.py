"""Side-by-side benchmark against Stage 4.3 (built from source) on the wander scenario.

The scenario of ``bench/bench_wander.py`` (50x50 m cave from the core's generator, robots
spawned in its biggest open region, 180-beam 360-degree 10 m lidar every 0.1 s, the reactive
wander controller reading each robot's scan) runs in the MAES-ROS core (this process, numba on
one thread) and in Stage (``stage -g``, headless, with the controller plugin
``bench/stage/wander_bench.cc``), with the same walls and spawn poses, built for Stage as
``bench/irsim_driver.py`` builds it for IR-SIM:

* the walls and spawn poses come from ``bench_irsim.write_scenario``; the walls become a PNG
  (one pixel per ``--resolution`` metres) loaded by a Stage ``model`` with ``bitmap``;
* each robot is a Stage ``position`` model (diff drive, 16-gon disc of the core's radius,
  ``localization "gps"``) at its spawn pose, with a ``ranger`` of 180 samples over a
  358-degree fov yawed -1 degree, so beam k points at -180 + 2k degrees from the heading as
  the core's lidar does (10 m, no noise; the rays run 0.2 m above the floor, inside the robots'
  0.5 m tall bodies, so robots block each other's rays, as in the core);
* the plugin applies ``bench_wander.wander()``'s rule, times the run from inside Stage after
  20 warm-up updates (wall and process CPU clocks) and quits after ``--ticks`` more;
* the world has ``interval_sim 100`` (one 0.1 s tick per update), ``resolution`` =
  ``--resolution`` (Stage's ray and collision grid, m) and ``threads 1``.

The two alternate, case by case and round by round (the first of each pair alternates too),
each on one core (``--pin CPU`` pins both to that CPU), never both at once. Stage checks
collisions on its grid and stops a robot whose move collides (no sliding): at 0.1 m most robots
of a packed spawn (0.05 m apart) stick from the first tick, so the table shows Stage's share of
stalled robot-ticks; at 0.05 m they spread out as the core's do.

Stage (once; Debian 12, about 5 minutes on 2 cores; docs/benchmarks.md has the details)::

    apt-get install libfltk1.3-dev fluid libltdl-dev libjpeg-dev libpng-dev libglu1-mesa-dev \
        cmake g++ pkg-config
    git clone https://github.com/rtv/Stage ~/stage/Stage && cd ~/stage/Stage && git checkout v4.3.0
    mkdir build && cd build && cmake -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=$HOME/stage/install -DCMAKE_INSTALL_RPATH=$HOME/stage/install/lib ..
    make -j2 install

Usage::

    STAGE_PREFIX=~/stage/install bench/stage/build.sh          # the plugin, into .stage-bench/
    STAGE_PREFIX=~/stage/install python bench/bench_stage.py --robots 1 10 100 --pin 1
    python bench/bench_stage.py --robots 10 --resolution 0.05 --repeat 3

Prints per robot count the median wall ms per tick and real-time factor of each, the same from
CPU time, the ratio MAES-ROS / Stage (above 1: the core is faster) and Stage's stalled share.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_irsim import ONE_THREAD, write_scenario  # noqa: E402
from bench_wander import LIDAR_RANGE, N_BEAMS, TICK_S, run_once  # noqa: E402

STAGE_PREFIX = Path(os.environ.get("STAGE_PREFIX", str(Path.home() / "stage" / "install")))
PLUGIN_DIR = Path(os.environ.get("STAGE_PLUGIN_DIR", str(HERE.parent / ".stage-bench")))

#: robot body height and the rays' height above the floor (m): rays must cross other bodies
BODY_HEIGHT = 0.5
RAY_HEIGHT = 0.2
WALL_HEIGHT = 1.0
WARMUP = 20


def write_png(path: Path, image: np.ndarray) -> None:
    """8-bit greyscale PNG of ``image`` (uint8 (H, W), row 0 at the top), no dependencies."""
    h, w = image.shape
    raw = b"".join(b"\x00" + image[r].tobytes() for r in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 6))
    png += chunk(b"IEND", b"")
    path.write_bytes(png)


def walls_image(walls: np.ndarray, resolution: float) -> np.ndarray:
    """The walls (``walls[iy, ix]``, 1 m tiles, y up) as a bitmap of ``resolution`` m pixels,
    each pixel the tile under its centre: 0 (black) = wall, 255 = free; row 0 = the map's top."""
    h_tiles, w_tiles = walls.shape
    nx = round(w_tiles / resolution)
    ny = round(h_tiles / resolution)
    cx = np.minimum(((np.arange(nx) + 0.5) * (w_tiles / nx)).astype(int), w_tiles - 1)
    cy = np.minimum(((np.arange(ny) + 0.5) * (h_tiles / ny)).astype(int), h_tiles - 1)
    img = np.where(walls[np.ix_(cy, cx)], 0, 255).astype(np.uint8)
    return np.ascontiguousarray(img[::-1])


def disc_points(radius: float, n: int = 16) -> str:
    pts = [
        f"point[{k}] [{radius * math.cos(2 * math.pi * k / n):.6f} "
        f"{radius * math.sin(2 * math.pi * k / n):.6f}]"
        for k in range(n)
    ]
    return f"points {n} " + " ".join(pts)


def world_text(
    png: str,
    side_x: float,
    side_y: float,
    poses: np.ndarray,
    radius: float,
    *,
    ticks: int,
    warmup: int,
    resolution: float,
    threads: int,
    print_poses: bool,
    dump_scan: bool = False,
) -> str:
    """Stage's world file of the scenario."""
    step_deg = 360.0 / N_BEAMS
    fov = step_deg * (N_BEAMS - 1)  # Stage spaces samples fov / (samples - 1) apart
    # first sample at -fov/2 + yaw = -180 degrees, as the core's beam 0
    yaw = -180.0 + fov / 2
    quit_time = (warmup + ticks + 5) * TICK_S  # backstop: the plugin quits first
    ctrl = (
        f"wander_bench ticks {ticks} warmup {warmup} poses {int(print_poses)} dump {int(dump_scan)}"
    )
    lines = [
        "# written by bench/bench_stage.py: the MAES-ROS wander scenario",
        f'name "maes_wander_{len(poses)}"',
        "interval_sim 100",
        f"quit_time {quit_time:.3f}",
        f"resolution {resolution}",
        f"threads {threads}",
        "speedup -1",
        "show_clock 0",
        "",
        "model",
        "(",
        '  name "cave"',
        f'  bitmap "{png}"',
        f"  size [{side_x} {side_y} {WALL_HEIGHT}]",
        f"  pose [{side_x / 2} {side_y / 2} 0 0]",
        "  color_rgba [0.3 0.3 0.3 1]",
        "  boundary 0",
        "  gui_move 0",
        "  obstacle_return 1",
        "  ranger_return 1",
        ")",
        "",
        "define benchbot position",
        "(",
        f"  size [{2 * radius} {2 * radius} {BODY_HEIGHT}]",
        f"  block( {disc_points(radius)} z [0 {BODY_HEIGHT}] )",
        '  drive "diff"',
        '  localization "gps"',
        "  obstacle_return 1",
        "  ranger_return 1",
        "  ranger",
        "  (",
        # the ranger is stacked on top of its parent: bring it down to RAY_HEIGHT
        f"    pose [0 0 {RAY_HEIGHT - BODY_HEIGHT - 0.05:.3f} 0]",
        "    sensor",
        "    (",
        f"      pose [0 0 0 {yaw:.6f}]",
        "      size [0.1 0.1 0.1]",
        f"      range [0 {LIDAR_RANGE}]",
        f"      fov {fov:.6f}",
        f"      samples {N_BEAMS}",
        "    )",
        "  )",
        f'  ctrl "{ctrl}"',
        ")",
        "",
    ]
    for i, (x, y, a) in enumerate(poses):
        lines.append(f'benchbot( name "r{i}" pose [{x:.6f} {y:.6f} 0 {math.degrees(a):.6f}] )')
    return "\n".join(lines) + "\n"


def prepare(
    n: int,
    seed: int,
    out: Path,
    *,
    ticks: int,
    warmup: int,
    resolution: float,
    threads: int,
    print_poses: bool = False,
    dump_scan: bool = False,
) -> Path:
    """Scenario .npz, walls PNG and world file for ``n`` robots in ``out``; the world's path."""
    out.mkdir(parents=True, exist_ok=True)
    npz = out / f"wander_{n}.npz"
    write_scenario(n, seed, npz)
    data = np.load(npz)
    walls, poses, radius = data["walls"], data["poses"], float(data["radius"])
    png = out / f"walls_{resolution:g}.png"
    write_png(png, walls_image(walls, resolution))
    world = out / f"wander_{n}_r{resolution:g}.world"
    world.write_text(
        world_text(
            png.name,
            float(walls.shape[1]),
            float(walls.shape[0]),
            poses,
            radius,
            ticks=ticks,
            warmup=warmup,
            resolution=resolution,
            threads=threads,
            print_poses=print_poses,
            dump_scan=dump_scan,
        )
    )
    return world


def run_stage(world: Path, pin: int | None, timeout: float = 900.0) -> dict:
    """One headless ``stage -g`` run of ``world``: the plugin's JSON line (per-tick wall and
    CPU seconds of the timed ticks, travel, stalls, the last scans' finite and hit counts)."""
    env = {**os.environ, "STAGEPATH": str(PLUGIN_DIR)}
    env.pop("DISPLAY", None)  # headless
    preexec = (lambda: os.sched_setaffinity(0, {pin})) if pin is not None else None
    proc = subprocess.run(
        [str(STAGE_PREFIX / "bin" / "stage"), "-g", world.name],
        cwd=world.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec,
        check=False,
    )
    lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip().startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"stage failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--ticks", type=int, default=None, help="timed ticks (default by size)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (medians shown)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resolution", type=float, default=0.1, help="Stage's grid, m")
    parser.add_argument("--pin", type=int, default=None, help="run both on this CPU only")
    parser.add_argument("--keep", type=Path, default=None, help="keep Stage's files here")
    args = parser.parse_args(argv)
    os.environ.update({k: v for k, v in ONE_THREAD.items() if k != "MPLBACKEND"})
    if not (STAGE_PREFIX / "bin" / "stage").exists():
        parser.error(f"no Stage at {STAGE_PREFIX} (set STAGE_PREFIX; build: see this script)")
    if not (PLUGIN_DIR / "wander_bench.so").exists():
        parser.error(f"no {PLUGIN_DIR}/wander_bench.so: run bench/stage/build.sh")
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})

    def ticks_for(n: int) -> int:  # as bench_wander.py
        return args.ticks or max(200, min(5000, 20000 // n))

    ours: dict[int, list] = {n: [] for n in args.robots}
    stage: dict[int, list] = {n: [] for n in args.robots}
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        worlds = {
            n: prepare(
                n,
                args.seed,
                base / f"n{n}",
                ticks=ticks_for(n),
                warmup=WARMUP,
                resolution=args.resolution,
                threads=1,
            )
            for n in args.robots
        }
        run_once(2, 5, args.seed)  # compile and load the kernels first
        for rnd in range(args.repeat):
            for n in args.robots:
                order = ("ours", "stage") if rnd % 2 == 0 else ("stage", "ours")
                for who in order:
                    if who == "ours":
                        ours[n].append(run_once(n, ticks_for(n), args.seed))
                    else:
                        stage[n].append(run_stage(worlds[n], args.pin))
                print(f"[round {rnd + 1}/{args.repeat}] {n} robots done", file=sys.stderr)

    def median(runs: list, key: str) -> float:
        return float(np.median([r[key] for r in runs]))

    version = stage[args.robots[0]][0]["stage"]
    print(
        f"MAES-ROS core vs Stage {version} ({args.resolution:g} m grid): median of "
        f"{args.repeat} interleaved runs, one core"
    )
    print(
        f"{'robots':>6} {'ticks':>6} {'ours ms':>8} {'ours RTF':>9} {'Stage ms':>9} "
        f"{'Stage RTF':>10} {'ours/Stage':>10} {'CPU ratio':>9} {'Stage stalled':>13}"
    )
    for n in args.robots:
        ow, sw = median(ours[n], "wall"), median(stage[n], "wall")
        oc, sc = median(ours[n], "cpu"), median(stage[n], "cpu")
        stalled = median(
            [{"s": r["stall_ticks"] / (n * (r["ticks"] + r["warmup"]))} for r in stage[n]], "s"
        )
        print(
            f"{n:>6} {ticks_for(n):>6} {ow * 1e3:>8.3f} {TICK_S / ow:>8.0f}x {sw * 1e3:>9.3f} "
            f"{TICK_S / sw:>9.0f}x {sw / ow:>10.2f} {sc / oc:>9.2f} {100 * stalled:>12.0f}%",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
