"""When the simulator node steps: pacing on a steady wall clock, and lockstep's waiting.

The simulator node (:class:`~maes_sim.ros.sim_node.SimNode`) asks these two parts, with the
wall clock's reading (``time.monotonic()`` seconds) and the simulation's tick, and does what
they say:

- :class:`Pacer`: which tick is due now at the real-time factor asked for (a cap: a run that
  cannot keep up is re-anchored, time dropped, never caught up in a burst), and the speed
  achieved over the last seconds.
- :class:`LateWatch`: while a lockstep tick waits for a participant, when to look at the ROS
  graph for participants that are gone and when to warn about (and publish the tick again for)
  the ones still running.

Neither touches ROS or the simulation: both are plain state on numbers, so the node's pacing
is tested with a clock the test moves (``test_stepping.py``).
"""

from __future__ import annotations

import math

__all__ = ["BURST_TICKS", "LAG_WARNING_S", "Pacer", "LateWatch"]

#: A free run behind its schedule steps at most this many ticks in one go, then drops the rest.
BURST_TICKS = 5
#: Wall seconds between two warnings that a free run cannot keep up.
LAG_WARNING_S = 5.0
#: Wall seconds over which the achieved speed is measured.
RATE_WINDOW_S = 3.0
#: A lockstep tick later than this (wall seconds) re-anchors the schedule: no catching up.
LOCKSTEP_SLACK_S = 0.1
#: The stepping timer's longest period (wall seconds), whatever the speed asked for.
MAX_TIMER_PERIOD_S = 0.02


class Pacer:
    """Sim time against a steady wall clock: what is due, and the speed achieved.

    The schedule is anchored at a wall time and a tick: tick ``anchor_tick + k`` is due
    ``k * tick_duration / real_time_factor`` wall seconds after the anchor. A
    ``real_time_factor`` <= 0 runs as fast as the run goes (every tick is due at once).

    Parameters
    ----------
    tick_duration : float
        Sim seconds per tick.
    real_time_factor : float
        Sim seconds per wall second at most.
    now : float
        The wall clock now.
    tick : int
        The simulation's tick now.

    Examples
    --------
    At 2x real time, 100 ms ticks: 0.4 wall seconds after the anchor, 8 ticks are due.

    >>> pacer = Pacer(0.1, 2.0, now=10.0, tick=0)
    >>> pacer.due_tick(10.4)
    8
    >>> pacer.lockstep_due(10.02, tick=0), pacer.lockstep_due(10.05, tick=0)
    (False, True)
    """

    def __init__(self, tick_duration: float, real_time_factor: float, now: float, tick: int):
        self.tick_duration = float(tick_duration)
        self.real_time_factor = float(real_time_factor)
        self.achieved = 0.0
        self._last_lag_warning = -math.inf
        self.restart(now, tick)

    @property
    def unpaced(self) -> bool:
        """True when no speed is asked for: step as fast as the run goes."""
        return self.real_time_factor <= 0

    def anchor(self, now: float, tick: int) -> None:
        """Tick ``tick`` is on schedule at ``now``: what was behind is dropped."""
        self._wall, self._tick = float(now), int(tick)

    def restart(self, now: float, tick: int) -> None:
        """Anchor at ``now`` and measure the achieved speed from here (the run's start)."""
        self.anchor(now, tick)
        self._window: list[tuple[float, int]] = [(float(now), int(tick))]

    def set_rate(self, real_time_factor: float, now: float, tick: int) -> None:
        """Cap the speed at ``real_time_factor`` from ``now`` on (0: as fast as it goes)."""
        rtf = float(real_time_factor)
        if not (math.isfinite(rtf) and rtf >= 0.0):
            raise ValueError(f"real_time_factor must be a number >= 0, got {real_time_factor!r}")
        self.real_time_factor = rtf
        self.anchor(now, tick)

    def timer_period(self, lockstep: bool) -> float:
        """The stepping timer's period (wall seconds): at most :data:`MAX_TIMER_PERIOD_S`; a
        free unpaced run's timer fires as often as it can (0), a lockstep one's still waits
        :data:`MAX_TIMER_PERIOD_S` (its steps follow the participants' reports)."""
        period = self.tick_duration / self.real_time_factor if not self.unpaced else 0.0
        if period > 0:
            return min(period, MAX_TIMER_PERIOD_S)
        return MAX_TIMER_PERIOD_S if lockstep else 0.0

    def due_tick(self, now: float) -> int:
        """The tick the simulation should be at ``now`` (a paced run)."""
        return self._tick + int((now - self._wall) * self.real_time_factor / self.tick_duration)

    def lockstep_due(self, now: float, tick: int) -> bool:
        """Whether the step after ``tick`` may run at ``now`` under the speed cap. A step more
        than :data:`LOCKSTEP_SLACK_S` late re-anchors the schedule at itself: the next one is
        due a tick's wall time after it (the cap never lets a run catch up in a burst)."""
        if self.unpaced:
            return True
        due = self._wall + (tick + 1 - self._tick) * self.tick_duration / self.real_time_factor
        if now < due:
            return False
        if now - due > LOCKSTEP_SLACK_S:
            self.anchor(now, tick + 1)  # tick + 1 is reached now
        return True

    def record(self, now: float, tick: int) -> float:
        """A step reached ``tick`` at ``now``: the speed achieved over the last
        :data:`RATE_WINDOW_S` wall seconds (sim seconds per wall second), also in
        :attr:`achieved`."""
        window = self._window
        window.append((float(now), int(tick)))
        while len(window) > 2 and now - window[0][0] > RATE_WINDOW_S:
            window.pop(0)
        (w0, t0), (w1, t1) = window[0], window[-1]
        self.achieved = (t1 - t0) * self.tick_duration / (w1 - w0) if w1 > w0 else 0.0
        return self.achieved

    def lag_warning_due(self, now: float) -> bool:
        """Whether to warn now that a free run cannot keep up: the achieved speed is really
        below the one asked for, and the last warning is :data:`LAG_WARNING_S` old."""
        lagging = 0 < self.achieved < 0.95 * self.real_time_factor
        if lagging and now - self._last_lag_warning > LAG_WARNING_S:
            self._last_lag_warning = now
            return True
        return False


class LateWatch:
    """While a lockstep tick waits: when to look for participants gone from the ROS graph, and
    when to warn about the ones still running.

    Parameters
    ----------
    sync_timeout : float
        Wall seconds between warnings (and between repeats of the tick's outputs); <= 0: never
        look, never warn (wait for ever).
    graph_check_s : float
        Wall seconds between looks at the graph (at most ``sync_timeout``).
    now : float
        The wall clock now: the wait starts.

    Examples
    --------
    >>> watch = LateWatch(10.0, 1.0, now=0.0)
    >>> [watch.graph_check_due(t) for t in (0.5, 1.0, 1.5, 2.0)]
    [False, True, False, True]
    >>> [watch.warning_due(t) for t in (9.0, 10.0, 15.0, 20.0)]
    [False, True, False, True]
    """

    def __init__(self, sync_timeout: float, graph_check_s: float, now: float):
        self.sync_timeout = float(sync_timeout)
        self.interval = min(float(graph_check_s), self.sync_timeout)
        self.restart(now)

    @property
    def active(self) -> bool:
        """False when late participants are waited for without looking (sync_timeout <= 0)."""
        return self.sync_timeout > 0

    def restart(self, now: float) -> None:
        """A new wait begins at ``now`` (a step was taken, or the run resumed)."""
        self.since = float(now)
        self._last_check = self._last_warning = -math.inf

    def waited(self, now: float) -> float:
        """Wall seconds the current tick has waited."""
        return now - self.since

    def graph_check_due(self, now: float) -> bool:
        """Whether to look at the graph now (every ``interval`` seconds of waiting)."""
        interval = self.interval
        if self.waited(now) >= interval and now - self._last_check >= interval:
            self._last_check = now
            return True
        return False

    def warning_due(self, now: float) -> bool:
        """Whether to warn now (every ``sync_timeout`` seconds of waiting)."""
        timeout = self.sync_timeout
        if self.waited(now) >= timeout and now - self._last_warning >= timeout:
            self._last_warning = now
            return True
        return False
