"""``maes-replay``: a run as an animated GIF (or MP4 where ffmpeg exists).

From a recording::

    maes-replay run.mcap -o run.gif

or from a direct-mode run of a config (no ROS; the same run ``make run`` makes, to the bit)::

    maes-replay --direct maes_config.yaml -o run.gif [--logic SPEC] [--seed S] [--max-ticks N]

Exit codes: 0 written, 2 bad arguments or input (one line on stderr says what), 1 the robots'
logic raised (``--direct``), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .model import MAX_FRAMES


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="maes-replay",
        description="Replay a run as an animated GIF (or MP4 where ffmpeg exists): the map being "
        "explored, robots in colours with trails, broadcasts and tags.",
    )
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("recording", nargs="?", help="an MCAP recording (rosbag2 format) of a run")
    src.add_argument("--direct", metavar="CONFIG", help="run CONFIG in direct mode and replay it")
    parser.add_argument("-o", "--output", required=True, help="the .gif (or .mp4) to write")
    parser.add_argument("--fps", type=float, default=10.0, help="frames per second (default 10)")
    parser.add_argument(
        "--frames",
        type=int,
        default=MAX_FRAMES,
        help=f"at most this many frames, spread over the run (default {MAX_FRAMES})",
    )
    parser.add_argument("--width", type=int, default=720, help="width in pixels (default 720)")
    parser.add_argument(
        "--logic",
        default="maes_controller.algorithms.frontier_explorer:logic",
        help="--direct: the robots' logic spec (default: the shipped example)",
    )
    parser.add_argument("--seed", type=int, help="--direct: overrides the config's seed")
    parser.add_argument("--max-ticks", type=int, help="--direct: stop after this many ticks")
    parser.add_argument(
        "--results", metavar="DIR", help="--direct: also write the run's result files under DIR"
    )
    args = parser.parse_args(argv)
    if args.frames < 2:
        parser.error(f"--frames must be at least 2, got {args.frames}")
    return args


class _Progress:
    """One status line on stderr, rewritten at most twice a second."""

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, text: str, final: bool = False) -> None:
        now = time.monotonic()
        if final or now - self._last >= 0.5:
            self._last = now
            end = "\n" if final else ""
            print(f"\rmaes-replay: {text}\033[K", end=end, file=sys.stderr, flush=True)


def _direct(args: argparse.Namespace, show: _Progress):
    from maes_bringup.runners.direct import run

    from .model import ReplayRecorder

    recorder = ReplayRecorder(max_frames=args.frames)

    def progress(sim) -> None:
        recorder(sim)
        show(f"simulating tick {sim.tick}, explored {sim.exploration_percent:.1f} %")

    result = run(
        args.direct, args.logic, seed=args.seed, max_ticks=args.max_ticks, progress=progress
    )
    show(
        f"simulated {result.ticks} ticks: {result.end_reason or 'tick limit of --max-ticks'}",
        final=True,
    )
    if args.results:
        print(f"maes-replay: results in {result.write(args.results)}", file=sys.stderr)
    return recorder.replay(result.sim)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``maes-replay``; returns the exit code."""
    args = parse_args(argv)
    from maes_bringup.runners.direct import LogicError
    from maes_sim.core import ConfigError

    from .mcap_source import RecordingError, read_mcap
    from .render import ReplayError, check_output, write_animation

    show = _Progress()
    try:
        check_output(args.output)  # before minutes of simulating or reading
        if args.direct:
            replay = _direct(args, show)
        else:
            replay = read_mcap(args.recording, args.frames, lambda t: show(t, final=True))
        out = write_animation(
            replay,
            args.output,
            fps=args.fps,
            width_px=args.width,
            max_frames=args.frames,
            progress=lambda k, n: show(f"drawing frame {k}/{n}", final=k == n),
        )
    except (RecordingError, ReplayError, ConfigError, ValueError, OSError) as exc:
        print(f"\nmaes-replay: error: {exc}", file=sys.stderr)
        return 2
    except LogicError as exc:  # the robots' logic raised: the run cannot be replayed
        print(f"\nmaes-replay: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nmaes-replay: interrupted; nothing written", file=sys.stderr)
        return 130
    print(f"maes-replay: wrote {out} ({Path(out).stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
