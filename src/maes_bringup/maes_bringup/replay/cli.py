"""``maes-replay``: a run as an animated GIF (or MP4 where ffmpeg exists).

From a recording::

    maes-replay run.mcap -o run.gif

or from a direct-mode run of a config (no ROS; the same run ``make run`` makes, to the bit)::

    maes-replay --direct maes_config.yaml -o run.gif [--logic SPEC] [--seed S] [--max-ticks N]

or on the page that watches live runs, in a web browser, with a time slider (a recording, or a
results folder whose run is made again in direct mode; docs/watching.md)::

    maes-replay --serve results/20261125-210453_building_3robots_seed0 [--port 8765]

Exit codes: 0 written (or served until Ctrl-C), 2 bad arguments or input (one line on stderr
says what), 1 the robots' logic raised (``--direct``), 130 Ctrl-C while writing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .model import MAX_FRAMES, SERVE_FRAMES


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
    src.add_argument(
        "--serve",
        metavar="RESULTS_OR_MCAP",
        help="serve a web page to watch the run with a time slider, at http://HOST:PORT/: "
        "an MCAP recording, or a results folder (its recording, or its run made again)",
    )
    parser.add_argument("-o", "--output", help="the .gif (or .mp4) to write")
    parser.add_argument(
        "--port", type=int, default=8765, help="--serve: the page's port (default 8765; 0: free)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="--serve: the address to bind (default 127.0.0.1, this machine only)",
    )
    parser.add_argument("--fps", type=float, default=10.0, help="frames per second (default 10)")
    parser.add_argument(
        "--frames",
        type=int,
        default=None,
        help=f"at most this many frames, spread over the run (default {MAX_FRAMES}; "
        f"--serve: {SERVE_FRAMES})",
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
    if args.frames is None:
        args.frames = SERVE_FRAMES if args.serve else MAX_FRAMES
    if args.frames < 2:
        parser.error(f"--frames must be at least 2, got {args.frames}")
    if not args.serve and not args.output:
        parser.error("-o/--output is required (the .gif or .mp4 to write), or use --serve")
    if args.serve and args.output:
        parser.error("--serve shows the run in a web browser: it writes no -o/--output")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be from 0 to 65535, got {args.port}")
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
    if args.serve:
        return _serve(args, show)
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


def _serve(args: argparse.Namespace, show: _Progress) -> int:
    """``--serve``: read the run, serve the page until Ctrl-C (or SIGTERM)."""
    import signal
    import threading

    from maes_bringup.runners.direct import LogicError
    from maes_sim.core import ConfigError
    from maes_sim.watch import PageServer

    from .mcap_source import RecordingError, read_mcap
    from .serve import ReplayFeed, replay_of_results

    path = Path(args.serve)
    try:
        if path.is_dir() and (path / "summary.json").is_file():
            replay = replay_of_results(
                path,
                args.frames,
                lambda t: show(t),
                warn=lambda t: print(f"\nmaes-replay: warning: {t}", file=sys.stderr),
            )
            show(f"read {path}", final=True)
        elif path.is_dir() or path.is_file():
            replay = read_mcap(path, args.frames, lambda t: show(t, final=True))
        else:
            raise RecordingError(
                f"{str(path)!r} does not exist: give an MCAP recording or a results folder"
            )
        feed = ReplayFeed(replay)
    except (RecordingError, ConfigError, ValueError, OSError) as exc:
        print(f"\nmaes-replay: error: {exc}", file=sys.stderr)
        return 2
    except LogicError as exc:
        print(f"\nmaes-replay: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nmaes-replay: interrupted", file=sys.stderr)
        return 130
    try:
        server = PageServer(feed, args.host, args.port)
    except OSError as exc:
        print(
            f"maes-replay: error: cannot serve on {args.host}:{args.port}: {exc}; "
            "choose another port (--port 8766, or --port 0 for a free one)",
            file=sys.stderr,
        )
        return 2
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(
        f"maes-replay: watch at {server.url} in a web browser "
        f"({len(replay.frames)} frames, ticks {replay.frames[0].tick}-{replay.frames[-1].tick}); "
        "Ctrl-C ends",
        file=sys.stderr,
        flush=True,
    )
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
    print("maes-replay: stopped serving", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
