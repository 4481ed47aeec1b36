"""The page's view of a running simulation: sampled on the run's thread, only while a page looks.

The run never waits for the page. After each tick's outputs the run calls :meth:`LiveFeed.offer`,
which returns at once unless a page asked for a frame in the last :attr:`idle_s` seconds and the
last sample is :attr:`period_s` old; then it copies what the page draws (:mod:`.scene`: a few
arrays, a millisecond at 120 robots) into a new sample. The page server's threads read samples,
never the simulation. A failure while sampling is caught: the page says so, the run goes on.

Commands from the page (pause, resume, speed) are queued and carried out on the run's thread
(:meth:`drain`, from the run's timer) by the handler the run gave (:meth:`attach`).
"""

from __future__ import annotations

import math
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping

import numpy as np

from maes_sim.core import Trail

from .scene import explored_and_slam, simulation_frame, simulation_scene
from .wire import packed

__all__ = ["LiveFeed", "bad_query", "query_int"]

#: Robots whose state a frame carries at most (the robots the pages have clicked on).
MAX_SELECTED = 8
#: Speeds (real-time factors) the page may ask for: 0 = as fast as the run goes.
MAX_SPEED = 1000.0


class bad_query(ValueError):  # noqa: N801 - raised like a builtin error
    """A page's request with a bad value; the server answers 400 with the message."""


def query_int(query: Mapping[str, str], name: str, default: int) -> int:
    """The integer ``query[name]`` (``default`` when absent); :class:`bad_query` otherwise.

    Examples
    --------
    >>> query_int({"seq": "4"}, "seq", -1), query_int({}, "seq", -1)
    (4, -1)
    """
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise bad_query(f"{name} must be an integer, got {text!r}") from None


class LiveFeed:
    """Samples of a running :class:`~maes_sim.core.Simulation` for the page server.

    Parameters
    ----------
    period_s : float
        Wall seconds between two samples at most once a page looks (10 a second by default).
    idle_s : float
        A page that asked nothing for this long no longer counts: the run stops sampling.
    maps_period_s : float
        Wall seconds between two copies of the explored tiles and the merged SLAM map.
    log : callable, optional
        Told one line when sampling fails (once).
    """

    mode = "live"

    def __init__(
        self,
        period_s: float = 0.1,
        idle_s: float = 3.0,
        maps_period_s: float = 1.0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.period_s = float(period_s)
        self.idle_s = float(idle_s)
        self.maps_period_s = float(maps_period_s)
        self.log = log or (lambda text: None)
        self._lock = threading.Lock()
        self.sim = None
        self._scene: dict | None = None
        self._sample: dict | None = None
        self._seq = 0
        self._last_sample = -math.inf
        self._trail: Trail | None = None
        self._trail_tick = -1
        self._history: list[tuple[float, float, float]] = []
        self._snapshots_read = 0
        self._maps: dict | None = None
        self._maps_seq = 0
        self._maps_at = -math.inf
        self._asked = -math.inf
        self._asked_scans = -math.inf
        self._asked_links = -math.inf
        self._asked_maps = -math.inf
        self._selected: dict[int, float] = {}
        self._stale = False
        self._commands: deque[dict] = deque()
        self._apply: Callable[[dict], None] | None = None
        self._run_info: Callable[[], dict] = dict
        self._on_select: Callable[[tuple[int, ...]], None] | None = None
        self._nav_status: Callable[[int], str | None] = lambda i: None
        self._selection: tuple[int, ...] = ()
        self._speed_window: list[tuple[float, float]] = []
        #: Why sampling stopped (an error while sampling), else None: the run goes on.
        self.failed: str | None = None

    # ------------------------------------------------------------------ the run's side
    def attach(
        self,
        sim,
        *,
        apply: Callable[[dict], None] | None = None,
        controls: Mapping[str, bool] | None = None,
        run_info: Callable[[], dict] | None = None,
        on_select: Callable[[tuple[int, ...]], None] | None = None,
        nav_status: Callable[[int], str | None] | None = None,
    ) -> None:
        """Follow ``sim`` (call on the run's thread; takes the first sample).

        Parameters
        ----------
        apply : callable, optional
            ``apply(command)`` carries out a page's command (``{"op": "pause"}``, ``"resume"``,
            ``{"op": "speed", "rtf": 2.0}``) on the run's thread, from :meth:`drain`.
        controls : mapping, optional
            ``{"pause": bool, "speed": bool}``: which commands the run takes.
        run_info : callable, optional
            ``run_info()`` -> dict merged into every sample (``rtf``, ``rtf_cap``, ``paused``,
            ``started``).
        on_select : callable, optional
            Told the robots the pages look at when that changes (to hear their navigation).
        nav_status : callable, optional
            ``nav_status(i)`` -> a line on robot ``i``'s navigation, or None when unknown.
        """
        self.sim = sim
        self._apply = apply
        self._run_info = run_info or dict
        self._on_select = on_select
        self._nav_status = nav_status or (lambda i: None)
        scene = simulation_scene(sim, dict(controls or {}))
        self._trail = Trail(sim.n_robots)
        with self._lock:
            self._scene = scene
        self._take(time.monotonic(), everything=True)

    def offer(self, force: bool = False) -> None:
        """After a tick's outputs: sample when a page looks and the last sample is old enough
        (``force``: whatever its age, e.g. the run's last tick). Costs one clock read
        otherwise; never raises."""
        if self.sim is None or self.failed is not None:
            return
        now = time.monotonic()
        if now - self._asked > self.idle_s:
            return
        if not force and now - self._last_sample < self.period_s:
            return
        self._take(now)

    def drain(self) -> None:
        """From the run's timer: carry out the pages' commands, follow their selection, and
        sample again when a page asked for more than the last sample has (a paused run)."""
        if self.sim is None:
            return
        while self._commands:
            command = self._commands.popleft()
            try:
                if self._apply is not None:
                    self._apply(command)
            except Exception as exc:  # a command must never end the run
                self.log(f"web page: command {command} failed: {exc}")
            self._stale = True
        now = time.monotonic()
        selection = self._wanted_robots(now)
        if selection != self._selection:
            self._selection = selection
            if self._on_select is not None:
                try:
                    self._on_select(selection)
                except Exception as exc:
                    self.log(f"web page: following robots {selection} failed: {exc}")
        if self._stale and self.failed is None and now - self._asked <= self.idle_s:
            self._take(now, everything=False)

    def _speed(self, now: float, sim) -> float:
        """Sim seconds per wall second between the samples of the last few seconds (for a run
        that does not say its own real-time factor)."""
        window = self._speed_window
        window.append((now, sim.sim_time))
        while len(window) > 2 and now - window[0][0] > 5.0:
            window.pop(0)
        (w0, t0), (w1, t1) = window[0], window[-1]
        return (t1 - t0) / (w1 - w0) if w1 > w0 else 0.0

    def _wanted_robots(self, now: float) -> tuple[int, ...]:
        with self._lock:
            recent = [i for i, t in self._selected.items() if now - t <= self.idle_s]
        return tuple(sorted(recent)[:MAX_SELECTED])

    def _take(self, now: float, everything: bool = False) -> None:
        """Copy what the page draws (on the run's thread)."""
        sim = self.sim
        try:
            self._stale = False
            scans = everything or now - self._asked_scans <= self.idle_s
            links = everything or now - self._asked_links <= self.idle_s
            robots = self._wanted_robots(now)
            frame = simulation_frame(sim, scans=scans, robots=robots, links=links)
            frame["rtf"] = self._speed(now, sim)
            frame.update(self._run_info())
            frame["nav"] = {str(i): self._nav_status(i) for i in robots}
            new_ticks, new_xy = sim.trail.since(self._trail_tick)
            rows = sim.snapshots[self._snapshots_read :]
            maps = None
            if (everything or now - self._asked_maps <= self.idle_s) and (
                now - self._maps_at >= self.maps_period_s
            ):
                maps = explored_and_slam(sim)
                self._maps_at = now
        except Exception as exc:  # the run goes on; the page says why it stopped following
            self.failed = f"{type(exc).__name__}: {exc}"
            self.log(
                f"web page: stopped following the run (it goes on): {self.failed}\n"
                + traceback.format_exc(limit=4)
            )
            return
        with self._lock:
            for tick, xy in zip(new_ticks.tolist(), np.moveaxis(new_xy, 1, 0), strict=True):
                self._trail.record(tick, xy)
            if new_ticks.size:
                self._trail_tick = int(new_ticks[-1])
            self._snapshots_read += len(rows)
            self._history.extend(
                (
                    float(r["sim_time"]),
                    float(r["exploration_percent"]),
                    float(r["coverage_percent"]),
                )
                for r in rows
            )
            if maps is not None:
                self._maps_seq += 1
                self._maps = maps
            self._seq += 1
            frame["seq"] = self._seq
            self._sample = frame
            self._last_sample = now

    # ------------------------------------------------------------------ the server's side
    def scene(self) -> dict:
        """The scene (what stays the same during the run), for ``/api/scene``."""
        with self._lock:
            if self._scene is None:
                raise bad_query("the run has not started yet")
            return self._scene

    def frame(self, query: Mapping[str, str]) -> dict:
        """The latest sample for one page's request (``/api/frame``).

        Query: ``seq`` (the sample the page has: unchanged, only the run's state comes back),
        ``trail`` (the last path tick it has), ``stride`` (its path's stride), ``hist`` (the
        number of plot points it has), ``maps`` (the maps' number it has; ``-1``: it shows
        none), ``scans`` and ``links`` (``1``: it shows them), ``robot`` (the robot it
        shows, or -1).
        """
        seq = query_int(query, "seq", -1)
        trail_after = query_int(query, "trail", -1)
        stride = query_int(query, "stride", 0)
        hist = max(0, query_int(query, "hist", 0))
        maps_have = query_int(query, "maps", 0)
        robot = query_int(query, "robot", -1)
        now = time.monotonic()
        with self._lock:
            if self._scene is None:
                raise bad_query("the run has not started yet")
            n = len(self._scene["robots"]["names"])
            if robot >= n:
                raise bad_query(f"robot must be below {n}, got {robot}")
            self._asked = now
            if query.get("scans") == "1":
                self._stale |= now - self._asked_scans > self.idle_s
                self._asked_scans = now
            if query.get("links") == "1":
                self._stale |= now - self._asked_links > self.idle_s
                self._asked_links = now
            if maps_have >= 0:
                self._stale |= now - self._asked_maps > self.idle_s
                self._asked_maps = now
            if robot >= 0:
                self._stale |= robot not in self._selected
                self._selected[robot] = now
                if len(self._selected) > 4 * MAX_SELECTED:  # forget robots nobody looks at
                    recent = sorted(self._selected.items(), key=lambda kv: kv[1])
                    self._selected = dict(recent[-MAX_SELECTED:])
            sample = self._sample
            if sample is None:
                raise bad_query("no sample yet")
            out = {"seq": sample["seq"], "failed": self.failed}
            if seq == sample["seq"]:
                return out
            out.update(sample)
            out["trail"] = self._trail_part(trail_after if stride == self._trail.stride else -1)
            out["history"] = {"from": min(hist, len(self._history))}
            rows = self._history[out["history"]["from"] :]
            out["history"]["rows"] = packed(np.asarray(rows, dtype=float).reshape(-1, 3))
            if maps_have >= 0 and self._maps is not None and maps_have != self._maps_seq:
                out["maps"] = {"seq": self._maps_seq, **self._maps}
            return out

    def _trail_part(self, after: int) -> dict:
        """The robots' path samples after tick ``after``, in metres (under the lock)."""
        ticks, xy = self._trail.since(after)
        m = self._scene["map"]
        xy = xy.astype(np.float64) * m["tile"] + np.asarray(m["origin"])
        return {"stride": self._trail.stride, "ticks": ticks.tolist(), "xy": packed(xy)}

    def control(self, command: Mapping) -> dict:
        """Queue a page's command for the run's thread (``/api/control``).

        Raises
        ------
        bad_query
            An unknown command, a command this run does not take, or a bad speed.
        """
        controls = self.scene()["controls"]
        op = command.get("op") if isinstance(command, Mapping) else None
        if op in ("pause", "resume"):
            if not controls.get("pause"):
                raise bad_query("this run cannot be paused from the page")
            self._commands.append({"op": op})
        elif op == "speed":
            if not controls.get("speed"):
                raise bad_query("this run has no speed control")
            rtf = command.get("rtf")
            ok = isinstance(rtf, int | float) and not isinstance(rtf, bool)
            if not ok or not 0.0 <= float(rtf) <= MAX_SPEED:
                raise bad_query(f"rtf must be a number from 0 to {MAX_SPEED:g}, got {rtf!r}")
            self._commands.append({"op": "speed", "rtf": float(rtf)})
        else:
            raise bad_query(f"op must be pause, resume or speed, got {op!r}")
        return {"ok": True, "queued": command.get("op")}

    def close(self) -> None:
        """Stop following the run (the server says the run ended)."""
        self.sim = None
