"""Watching and recording a run: the one place that turns the user's switches (record to a
path, serve the live view) into a :class:`~maes_sim.ros.tap.Tap` for the simulator node, or,
in direct mode, for :class:`TapOutputs` (the simulator node's messages without a node).

Used by ``maes_sim_node`` (the launch), ``maes_run`` (``make run``) and direct mode, so the
three give the same files and the same live view.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from maes_common.lockstep import new_run_id
from maes_sim.core import Simulation

from .messages import MessageFactory
from .publishing import TickPublishers, prepare_tap
from .tap import Sink, Tap

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "Tap",
    "TapOutputs",
    "build_tap",
    "check_port",
    "listen_to_navigation",
]

#: The live view binds this machine only by default; "0.0.0.0" serves the network.
DEFAULT_HOST = "127.0.0.1"
#: Foxglove's usual port.
DEFAULT_PORT = 8765


def _need(module: str, package: str, what: str) -> None:
    """Import ``module`` or raise ImportError saying which PyPI package ``what`` needs (the
    pip environment has them; the Docker image records with ``ros2 bag record -s mcap``)."""
    try:
        __import__(module)
    except ImportError:
        raise ImportError(
            f"{what} needs the Python package {package!r} (pip install {package})"
        ) from None


def check_port(port: object, what: str = "live port") -> int:
    """``port`` as a TCP port number (0..65535); ValueError naming ``what`` otherwise."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"{what} must be an integer from 0 to 65535, got {port!r}")
    return port


def build_tap(
    record: str | os.PathLike[str] | None = None,
    live: bool = False,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    forward: bool = True,
    say: Callable[[str], None] | None = None,
) -> Tap | None:
    """The tap a run's switches ask for, or None when neither is on.

    Parameters
    ----------
    record : path, optional
        Record to this ``.mcap`` file (or rosbag2 bag folder).
    live : bool
        Serve the live view on ``host:port``: the web page (``http://host:port/``) and, on the
        same port, Foxglove's WebSocket protocol for Foxglove and Lichtblick.
    forward : bool
        Also publish on DDS (direct mode gives False; its outlets never do).
    say : callable, optional
        Told one line per output started (``watch at http://...``, where the file goes).

    Raises
    ------
    ValueError
        A bad port.
    ImportError
        ``mcap`` or ``foxglove-sdk`` is missing (named).
    FileExistsError
        The recording's path exists.
    RuntimeError
        The live view cannot bind its address.
    """
    sinks: list[Sink] = []
    say = say or (lambda text: None)
    if live:
        check_port(port)
        _need("foxglove", "foxglove-sdk", "the live view")
    if record:
        _need("mcap", "mcap", "recording")
    if record:
        from .recorder import McapRecorder

        recorder = McapRecorder(record)
        sinks.append(recorder)
        say(f"recording to {recorder.path}")
    page = None
    if live:
        page = _serve_live(host, port, sinks)
        sinks.append(page.foxglove)
        say(
            f"watch at {page.url} in a web browser (Foxglove or Lichtblick: Open connection, "
            f"Foxglove WebSocket, {page.ws_url}; docs/watching.md)"
        )
    return Tap(sinks, forward=forward, page=page) if sinks else None


def _serve_live(host: str, port: int, sinks: list[Sink]):
    """The web page on ``host:port`` and, behind it on a loopback port of its own, the Foxglove
    server (Foxglove apps reach it through the page's port, :mod:`maes_sim.watch`); the
    page server holds it as ``foxglove``. Closes ``sinks`` and raises RuntimeError naming the
    address when either cannot start."""
    from maes_sim.watch import LiveFeed, PageServer

    from .live import PORT_HINT, LiveServer

    def log(text: str) -> None:
        print(f"maes_sim: {text}", file=sys.stderr, flush=True)

    foxglove = None
    try:
        foxglove = LiveServer("127.0.0.1", 0)
        try:
            page = PageServer(LiveFeed(log=log), host, port, foxglove.port, report=log)
        except OSError as exc:
            raise RuntimeError(
                f"live view: cannot serve on {host}:{port}: {exc}; {PORT_HINT}"
            ) from exc
    except RuntimeError:
        if foxglove is not None:
            foxglove.close()
        for sink in sinks:
            sink.close()
        raise
    page.foxglove = foxglove
    return page


def listen_to_navigation(node, tap: Tap, robots: int) -> None:
    """Have ``node`` hear each robot's ``plan`` and ``global_costmap/costmap`` (from the
    navigator or Nav2) for the sinks that take heard messages (the live view's paths)."""
    from nav_msgs.msg import OccupancyGrid, Path

    from maes_common.contract import robot_namespace
    from maes_common.qos import LATCHED_QOS

    for i in range(robots):
        ns = "/" + robot_namespace(i)
        tap.listen(node, f"{ns}/plan", Path, LATCHED_QOS)
        tap.listen(node, f"{ns}/global_costmap/costmap", OccupancyGrid, LATCHED_QOS)


class TapOutputs:
    """A simulation's ticks to a tap alone, without a node or DDS: direct mode's recording and
    live view.

    The sinks get what the simulator node publishes for the same ticks when it runs free
    (``sync="free"``) and its caller steps the simulation: at once every robot's
    ``tf_static`` and the first tick's outputs with the maps and the ground truth, then each
    tick's outputs and manifest (:meth:`publish`). The web page (``tap.page``) follows the
    run without controls: the caller steps it.

    Parameters
    ----------
    sim : Simulation
        The simulation, stepped by the caller.
    tap : Tap
        Where the messages go; the caller closes it.
    """

    def __init__(self, sim: Simulation, tap: Tap) -> None:
        self.sim = sim
        self.tap = tap
        prepare_tap(tap, sim)
        #: The manifests' run id (nobody joins: it only tells runs apart).
        self.run_id = new_run_id()
        self.publishers = TickPublishers(MessageFactory(sim), tap.outlet)
        #: The web page's feed (sampled after each tick's outputs while a page looks), or None.
        self.page = None
        if tap.page is not None:
            from .watching import follow_caller

            follow_caller(sim, tap.page.feed)
            self.page = tap.page.feed
        self.publishers.publish_static()
        self._publish_tick(force_maps=True)

    def _publish_tick(self, force_maps: bool = False) -> None:
        self.publishers.publish_tick(force_maps)
        if self.page is not None:
            self.page.offer()

    def publish(self) -> None:
        """The tick just stepped: its outputs and its manifest."""
        self._publish_tick()
        self.publishers.publish_manifest(
            tick=self.sim.tick,
            lockstep=False,
            navigators=[],
            lockstep_robots=[],
            run_id=self.run_id,
        )
