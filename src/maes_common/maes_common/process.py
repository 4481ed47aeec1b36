"""How a MAES-ROS node process starts and ends: rclpy set-up, parameters, signals, teardown.

Every console script (``maes_sim_node``, ``controller_node``, ``navigator_node``) runs its node
inside :func:`ros_process`, so each ends the same way whatever stops it: its own end (the
simulator finished), Ctrl-C in a terminal, or ``ros2 launch`` shutting down (SIGINT to every
process, SIGTERM 5 s later to those still alive). Nothing is printed but the node's own log:
no ``KeyboardInterrupt`` or ``ExternalShutdownException`` traceback, also when a second signal
arrives while the node is being destroyed.

How: before ``rclpy.init`` a Python handler is put on SIGINT and SIGTERM. rclpy's own handlers
(installed by ``rclpy.init`` over it, ``SignalHandlerOptions.ALL``) shut the context down and
wake the executor, then call ours. Ours raises ``KeyboardInterrupt`` for the first signal only,
so a node still starting up (loading a config, compiling kernels) stops at once, and does
nothing once the node spins (:meth:`NodeProcess.spin`: rclpy's shutdown ends the spin) or
teardown has begun.

A teardown that hangs does not keep the process for ever: destroying a node can block inside
the middleware (seen on loaded machines: Fast DDS deleting the process's participant, with the
GIL held, so no Python thread can help). :func:`teardown_limit` bounds it: a teardown still
running ``MAES_TEARDOWN_LIMIT_S`` seconds (default 30) after it began prints every thread's
stack to stderr (:mod:`faulthandler`, headed ``Timeout (0:00:30)!``) and ends the process with
exit code 1. ``ros_process`` and ``maes_run`` use it.

A process whose nodes hold very many DDS endpoints ends without destroying them one by one
(:func:`quick_exit_due`): Fast DDS 2.14 takes time quadratic in their number for that (the
navigator serving Nav2's task interface for 120 robots: 123 s; 30 robots: 7.8 s, more than the
5 s ``ros2 launch`` gives a process before SIGTERM). It says so in one line and ends with exit
code 0 at once; the operating system reclaims everything, and the other participants see its
endpoints go when its DDS participant's lease runs out (Fast DDS: 20 s).

A process that hangs elsewhere on its way out can say where: with ``MAES_STALL_DUMP_S`` set to
a number of seconds, a process still running that long after its first stop signal (or after
its teardown began, when the teardown has no limit) prints every thread's Python stack to
stderr and goes on. The tests set it, so that a node that does not end shows its stack in
their output.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import gc
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = [
    "EndsQuietly",
    "NodeProcess",
    "SpinSlices",
    "destroy_nodes",
    "end_process_now",
    "events_executor",
    "graph_node_names",
    "publishing_node_names",
    "reporting_node_names",
    "read_parameters",
    "env_seconds",
    "quick_exit_due",
    "ros_process",
    "teardown_limit",
    "teardown_limit_seconds",
]

#: Signals that end a node process (``ros2 launch`` sends SIGINT, then SIGTERM).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Wall seconds an executor spins at least between two looks at ``until()``
#: (:meth:`NodeProcess.spin`).
SPIN_SLICE_S = 0.05
#: Environment variable: seconds after which a process still ending dumps its threads' stacks.
STALL_DUMP_ENV = "MAES_STALL_DUMP_S"
#: Environment variable: wall seconds a process's teardown may take (:func:`teardown_limit`).
TEARDOWN_LIMIT_ENV = "MAES_TEARDOWN_LIMIT_S"
#: Its default. A real teardown takes a second or two at most (the simulator node of 120
#: robots destroys its 2,805 entities in 1.0-1.4 s, profiled on a 2-core machine); the limit
#: only has to tell a hang from a slow, loaded machine.
TEARDOWN_LIMIT_S = 30.0
#: Environment variable: DDS reader-writer pairs of a process's nodes above which it ends without
#: destroying its endpoints one by one (:func:`quick_exit_due`).
QUICK_EXIT_ENV = "MAES_QUICK_EXIT_PAIRS"
#: Its default. Fast DDS 2.14 destroys an endpoint in time proportional to the endpoints left
#: (``unregister_type`` scans every reader), so a teardown takes about 2-3 us per reader-writer
#: pair (2-core machine): 0.7-0.8 million pairs (the navigator of 120 robots, or of 15 serving
#: Nav2's task interface) 1.1 s; 3.0 million (30 robots with the task interface) 7.8 s.
QUICK_EXIT_PAIRS = 1_000_000


def _stderr_file() -> Any:
    """The process's real stderr, or None when it has no file descriptor (faulthandler
    writes to the descriptor)."""
    stream = sys.__stderr__
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return stream


def teardown_limit_seconds() -> float:
    """``MAES_TEARDOWN_LIMIT_S`` as seconds (unset or empty: :data:`TEARDOWN_LIMIT_S`; 0: no
    limit). ValueError naming the variable for anything but a finite number >= 0.

    Examples
    --------
    >>> import os
    >>> os.environ["MAES_TEARDOWN_LIMIT_S"] = "soon"
    >>> teardown_limit_seconds()
    Traceback (most recent call last):
    ...
    ValueError: MAES_TEARDOWN_LIMIT_S must be a number of seconds >= 0 (0: no limit), got 'soon'
    >>> del os.environ["MAES_TEARDOWN_LIMIT_S"]
    """
    return env_seconds(TEARDOWN_LIMIT_ENV, TEARDOWN_LIMIT_S, zero="no limit")


def env_seconds(name: str, default: float, *, zero: str | None = None) -> float:
    """Environment variable ``name`` as a finite number of seconds (unset or empty:
    ``default``), > 0, or >= 0 when ``zero`` says what 0 means. ValueError naming the variable
    otherwise.

    Examples
    --------
    >>> import os
    >>> os.environ["MAES_X_S"] = "0"
    >>> env_seconds("MAES_X_S", 5.0, zero="off")
    0.0
    >>> env_seconds("MAES_X_S", 5.0)
    Traceback (most recent call last):
    ...
    ValueError: MAES_X_S must be a number of seconds > 0, got '0'
    >>> del os.environ["MAES_X_S"]
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not ((seconds >= 0 if zero else seconds > 0) and seconds < float("inf")):
        rule = f">= 0 (0: {zero})" if zero else "> 0"
        raise ValueError(f"{name} must be a number of seconds {rule}, got {raw!r}")
    return seconds


@contextmanager
def teardown_limit(seconds: float) -> Iterator[bool]:
    """End the process if the block (a teardown) is still running after ``seconds``.

    When it fires, :mod:`faulthandler` prints ``Timeout (H:MM:SS)!`` and every thread's
    Python stack to stderr and exits the process with code 1, from its own C thread: it needs
    no GIL, so it also ends a hang inside a C++ call that holds it (a Fast DDS participant
    deletion in ``Node.destroy_node``: the reason this exists). The block's end cancels it
    (and with it a pending :func:`arm_stall_dump`). Yields whether it is armed (not when
    ``seconds`` is 0 or stderr has no file).

    Examples
    --------
    >>> with teardown_limit(teardown_limit_seconds()):  # doctest: +SKIP
    ...     node.destroy_node()
    ...     rclpy.try_shutdown()
    """
    stream = _stderr_file() if seconds > 0 else None
    if stream is not None:
        faulthandler.dump_traceback_later(seconds, repeat=False, file=stream, exit=True)
    try:
        yield stream is not None
    finally:
        if stream is not None:
            faulthandler.cancel_dump_traceback_later()


def arm_stall_dump() -> None:
    """Have :mod:`faulthandler` print every thread's stack to stderr if this process is still
    running ``MAES_STALL_DUMP_S`` seconds from now (once; a no-op when the variable is unset,
    empty or not a positive number). Called when a process starts to end."""
    try:
        seconds = float(os.environ.get(STALL_DUMP_ENV, "") or "nan")
    except ValueError:
        return
    stream = _stderr_file()
    if not seconds > 0 or stream is None:
        return
    faulthandler.dump_traceback_later(seconds, repeat=False, file=stream, exit=False)


class SignalArrivals:
    """The stop signals in their order of arrival, for a handler that records the first.

    Python runs the handlers of signals that arrived during one long C call (a tick, a spin,
    on a loaded machine) in the order of their numbers, not of their arrival: SIGTERM and then
    SIGINT came out as SIGINT first (seen under load: a run's summary named the wrong signal).
    The interpreter's C-level handler also writes each signal's number, as it arrives, to the
    wakeup file descriptor (:func:`signal.set_wakeup_fd`): :meth:`open` gives it a
    non-blocking pipe and :meth:`first` reads it. (rclpy's C++ handler, where installed, calls
    the interpreter's, so the numbers still arrive.) Only one wakeup fd exists per process;
    :meth:`close` puts the previous one back.

    Examples
    --------
    >>> arrivals = SignalArrivals()
    >>> arrivals.open()  # from the main thread, after the handlers are set
    >>> arrivals.first(signal.SIGINT) == signal.SIGINT  # nothing in the pipe: this signal
    True
    >>> arrivals.close()
    """

    def __init__(self) -> None:
        self._pipe: tuple[int, int] | None = None  # (read end, write end)
        self._previous = -1

    def open(self) -> None:
        """Take the wakeup fd (the main thread only; a second call does nothing)."""
        if self._pipe is not None:
            return
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        self._previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._pipe = (read, write)

    def first(self, signum: int) -> int:
        """The first stop signal that arrived since the last call, else ``signum`` (the one
        being handled: the pipe is closed, or the signal came before it was opened)."""
        arrived = b""
        if self._pipe is not None:
            with contextlib.suppress(OSError):  # (BlockingIOError: empty)
                arrived = os.read(self._pipe[0], 512)
        return next((n for n in arrived if n in STOP_SIGNALS), signum)

    def close(self) -> None:
        """Give the wakeup fd back (the main thread only)."""
        if self._pipe is None:
            return
        signal.set_wakeup_fd(self._previous)
        for fd in self._pipe:
            os.close(fd)
        self._pipe = None


class _FirstSignalInterrupts:
    """A Python signal handler: raise KeyboardInterrupt for the first stop signal only, and not
    when the interrupted code is already handling an exception.

    rclpy's own handler runs first (in C) and shuts the context down, so a node being built
    when the signal comes can fail on its own (``rcl node's context is invalid``) before this
    handler runs; a KeyboardInterrupt raised in the middle of that failure's handling (in
    ``with``'s ``__exit__``, say) would escape :func:`ros_process` as a traceback (seen under
    load: navigator_node stopped while it made its action servers). That failure is left to
    propagate instead; :func:`ros_process` takes it for the stop it is.

    The first is the first to arrive (:class:`SignalArrivals`, once :func:`ros_process` opened
    ``arrivals``): the simulator writes it into a stopped run's results."""

    def __init__(self) -> None:
        self.received = 0
        self.armed = True
        self.signum: int | None = None  # the first stop signal
        self.arrivals = SignalArrivals()

    def __call__(self, signum: int, frame: object) -> None:
        self.received += 1
        first = self.arrivals.first(signum)
        if self.signum is None:
            self.signum = first
            arm_stall_dump()
        if self.armed and self.received == 1 and sys.exc_info()[1] is None:
            sys.unraisablehook = _QuietAfterStop(sys.unraisablehook)
            raise KeyboardInterrupt


class _QuietAfterStop:
    """``sys.unraisablehook`` once a stop signal's KeyboardInterrupt was raised. It drops two
    leftovers of that interrupt, printed as "Exception ignored ..." with a traceback, and hands
    everything else to ``previous``:

    - the KeyboardInterrupt itself where it cannot propagate: in a ctypes callback (seen:
      maes_sim_node stopped while numba compiled its kernels). The stop still happens: rclpy's
      own handler has shut the context down, which ends the process's spin.
    - an AttributeError from a ``__del__`` of an object the interrupt left half built, whose
      ``__del__`` reads what its ``__init__`` never set (seen: rclpy's
      ``RcutilsLogger.__del__``, the simulator node stopped while it was built).
    """

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        error = unraisable.exc_value
        where = getattr(unraisable.object, "__qualname__", "")
        if isinstance(error, KeyboardInterrupt):
            return
        if isinstance(error, AttributeError) and where.endswith(".__del__"):
            return
        self.previous(unraisable)


#: The two lines rclpy's events executor prints (pybind11's ``print``, to ``sys.stdout``) each
#: time a clock gets its 8th or a later timer (rclpy 7.1, ``events_executor/timers_manager.cpp``,
#: ``WARN_TIMERS_COUNT``): a note on its own design (it scans a clock's timers one by one on
#: each update), not a fault. Every action server has a goal-expiry timer and the navigator's
#: are all on one system clock, so a run of 8 robots or more printed them once per robot.
EVENTS_EXECUTOR_NOTE = (
    "Warning, the number of timers associated with this clock is large.",
    "Management of this number of timers may be inefficient.",
)


class WithoutLines:
    r"""A text stream that passes every write to ``stream`` except the given whole lines.

    A line arrives as ``print`` writes it: its text, then ``"\n"`` as a second write (dropped
    with it). Everything else (``fileno``, ``flush``, ``encoding``, ...) is ``stream``'s.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> quiet = WithoutLines(out, ["noise"])
    >>> print("noise", file=quiet); print("kept", file=quiet); print("noise!", file=quiet)
    >>> out.getvalue()
    'kept\nnoise!\n'
    """

    def __init__(self, stream: Any, lines: Any) -> None:
        self.stream = stream
        self._lines = frozenset(lines)
        self._dropped = False

    def write(self, text: str) -> int:
        if text in self._lines:
            self._dropped = True
            return len(text)
        if self._dropped and text == "\n":
            self._dropped = False
            return 1
        self._dropped = False
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def events_executor() -> Any:
    """rclpy's EventsExecutor where this rclpy has it, else the SingleThreadedExecutor.

    The events executor wakes for each ready entity instead of rebuilding a wait set of every
    entity for every batch: lockstep's short hops per tick made the wait-set executor 6-8x
    slower (the embedded stack, 20 robots: 0.2x vs 1.6x real time; docs/lockstep.md). Its
    note on many timers per clock (:data:`EVENTS_EXECUTOR_NOTE`) is kept off ``sys.stdout``.
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:  # older rclpy
        from rclpy.executors import SingleThreadedExecutor

        return SingleThreadedExecutor()
    if not isinstance(sys.stdout, WithoutLines):
        sys.stdout = WithoutLines(sys.stdout, EVENTS_EXECUTOR_NOTE)
    # It enables faulthandler on sys.stderr, which needs a real file (not so under capture).
    saved = sys.stderr
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        sys.stderr = sys.__stderr__
    try:
        return EventsExecutor()
    finally:
        sys.stderr = saved


class SpinSlices:
    """Spin slices of :data:`SPIN_SLICE_S` that end whatever else is ready.

    rclpy's events executor looks at ``spin_until_future_complete``'s timeout only when its
    queue is empty. A timer overdue for good keeps that queue full: one with a period of 0
    (the simulator's stepping timer, unpaced in free mode) or whose callback takes longer
    than its period (the start barrier's graph queries for many robots on a loaded machine).
    A spin then never returned: a stop signal recorded by a Python handler, ``until()`` and
    the end of a run were never looked at (the simulator, unpaced in free mode, stayed up
    after its run had ended; ``maes_run --controllers none --sync free`` ignored SIGTERM while
    it waited for its controllers). This timer (steady clock, a callback group of its own,
    on ``node``) completes the slice's future every :data:`SPIN_SLICE_S`, and the queue's
    order lets it through (``test_process.py``: a spin looks at ``until()`` while a timer is
    overdue for good).

    >>> slices = SpinSlices(node)                             # doctest: +SKIP
    >>> executor.spin_until_future_complete(slices.next())    # doctest: +SKIP
    """

    def __init__(self, node: Any, seconds: float = SPIN_SLICE_S) -> None:
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
        from rclpy.clock import Clock, ClockType

        self._node = node
        self._future: Any = None
        self._timer = node.create_timer(
            seconds,
            self.end,
            callback_group=MutuallyExclusiveCallbackGroup(),
            clock=Clock(clock_type=ClockType.STEADY_TIME),
        )

    def next(self) -> Any:
        """The current slice's future, a new one once the last has ended."""
        from rclpy.task import Future

        if self._future is None or self._future.done():
            self._future = Future()
        return self._future

    def end(self, *_: Any) -> None:
        """End the current slice now (the timer, or an event worth a look: a tick stepped)."""
        if self._future is not None and not self._future.done():
            self._future.set_result(True)

    def close(self) -> None:
        """Remove the timer (before the node is destroyed)."""
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None


def quiet_after_shutdown(context: Any, callback: Any) -> Any:
    """``callback``, except that an exception it raises once ``context`` is shut down is
    dropped (the callback returns None): see :class:`EndsQuietly`."""

    @functools.wraps(callback)
    def guarded(*args: Any) -> Any:
        try:
            return callback(*args)
        except Exception:
            if context.ok():
                raise
            return None

    return guarded


class EndsQuietly:
    """A mixin for ``rclpy.node.Node``: timer and subscription callbacks end quietly when a stop
    signal shuts the context down under them.

    rclpy's signal handler shuts the context down from another thread, so a callback running
    at that moment can fail in the middle (``Failed to publish: publisher's context is
    invalid``). The wait-set executor raises that out of ``spin_once``, where
    :meth:`NodeProcess.spin` takes it for the normal end it is; the events executor first logs
    it as ``[FATAL] Exception in 'timers' callback`` with a stack. With this mixin such a
    failure, and only one after the shutdown, is dropped inside the callback; every other
    exception propagates as before.

    Examples
    --------
    >>> class MyNode(EndsQuietly, Node):  # doctest: +SKIP
    ...     ...
    """

    def create_subscription(self, msg_type: Any, topic: str, callback: Any, *args, **kwargs):
        guarded = quiet_after_shutdown(self.context, callback)
        return super().create_subscription(msg_type, topic, guarded, *args, **kwargs)

    def create_timer(self, timer_period_sec: float, callback: Any, *args, **kwargs):
        guarded = quiet_after_shutdown(self.context, callback)
        return super().create_timer(timer_period_sec, guarded, *args, **kwargs)


class NodeProcess:
    """The nodes of one process, destroyed by :func:`ros_process` when it ends.

    Parameters
    ----------
    program : str
        The console script's name, used in error messages.
    """

    def __init__(self, program: str, handler: _FirstSignalInterrupts | None = None) -> None:
        self.program = program
        self._nodes: list[Any] = []
        self._executors: list[Any] = []  # shut down before the nodes are destroyed
        self._handler = handler

    def spin(self, node: Any, until: Any = None, *, executor: Any = None) -> None:
        """Spin ``node`` until shutdown (or until ``until()`` is true).

        With ``executor`` (holding the process's nodes; ``node``, or else the executor's
        first node, only holds the slices' timer) the executor spins instead, in slices with
        ``until()`` checked between them: a slice lasts :data:`SPIN_SLICE_S`
        (:class:`SpinSlices`: rclpy's events executor looks at its own deadline only when its
        queue is empty; a stop signal ends a slice at once). Else rclpy's default (wait-set)
        executor spins ``node``. The events executor
        (:func:`events_executor`) is much faster for a node of many robots, but its timers
        follow the system clock only: a node on sim time with ROS-time timers (an action
        server's goal expiry) busy-loops on it and can stall (ros2/rclcpp#2457), so only nodes
        without such timers should get it.

        While spinning a stop signal no longer raises ``KeyboardInterrupt`` (which could land
        inside a message conversion in rclpy's C++ and come out as another exception): rclpy's
        own handler shuts the context down, and the spin ends with
        ``ExternalShutdownException``, a normal end for :func:`ros_process`.
        """
        import rclpy

        if executor is not None and all(executor is not e for e in self._executors):
            self._executors.append(executor)  # shut down at the end, also after the raise below
        if self._handler is not None:
            if self._handler.received:
                raise KeyboardInterrupt  # a signal came before spinning: stop now
            self._handler.armed = False
        try:
            if executor is not None:
                # Slices of SPIN_SLICE_S (and until idle), every event in them handled, not
                # spin_once: the events executor counts each resumption of a pending
                # coroutine (an action goal being executed, one per robot in the navigator)
                # as a callback, and after every event it resumes all of them; one spin_once
                # per resumption made a 120-robot navigator spend ~3 s a tick in the loop.
                host = node if node is not None else next(iter(executor.get_nodes()), None)
                slices = SpinSlices(host) if host is not None else None
                try:
                    while (until is None or not until()) and rclpy.ok():
                        if slices is None:  # no node to hold the timer: nothing to spin
                            time.sleep(SPIN_SLICE_S)
                            continue
                        executor.spin_until_future_complete(slices.next(), timeout_sec=SPIN_SLICE_S)
                finally:
                    if slices is not None and rclpy.ok():
                        slices.close()
                return
            if until is None:
                rclpy.spin(node)
                return
            while rclpy.ok() and not until():
                rclpy.spin_once(node, timeout_sec=0.1)
        except Exception:
            if rclpy.ok():
                raise
            # The context was shut down by a signal in the middle of a wait; rclpy reports
            # that as whatever failed first (an RCLError about the wait set, say): a normal end.

    @property
    def stopped_by(self) -> str | None:
        """The first stop signal's name (``"SIGINT"``, ``"SIGTERM"``), None if none came."""
        signum = None if self._handler is None else self._handler.signum
        return None if signum is None else signal.Signals(signum).name

    def events_executor(self) -> Any:
        """:func:`events_executor`, shut down when the process ends, before its nodes are
        destroyed (:meth:`_destroy_nodes`), whatever happens after this call: a stop signal
        that comes after the nodes were added to it but before :meth:`spin` no longer leaves
        it to be destroyed after them (rclpy's events executor aborts the process when it is
        destroyed with callbacks of its entities left)."""
        executor = events_executor()
        self._executors.append(executor)
        return executor

    def own(self, node: Any) -> Any:
        """Destroy ``node`` when the process ends; returns it.

        Examples
        --------
        >>> with ros_process("my_node") as proc:  # doctest: +SKIP
        ...     node = proc.own(MyNode())
        ...     proc.spin(node)
        """
        self._nodes.append(node)
        return node

    def fail(self, message: object, code: int = 2) -> None:
        """End the process with ``<program>: <message>`` on stderr and exit code ``code``;
        quietly, as a normal end, when a stop signal came first: rclpy's handler then shut the
        context down under the node being built, and the failure (e.g. "Failed to create
        action client: rcl node's context is invalid") is that, not the user's."""
        if self._handler is not None and self._handler.received:
            raise KeyboardInterrupt
        print(f"{self.program}: {message}", file=sys.stderr)
        raise SystemExit(code)

    def _destroy_nodes(self) -> None:
        # The executors first, while their nodes' entities are whole: rclpy's events executor
        # holds a callback for each entity it served, and one destroyed with callbacks left
        # (by the garbage collector, after the nodes) aborts the process ("Destroying callback
        # manager with callbacks remaining"; seen once in a test run, a second SIGINT during
        # the navigator's teardown). make run's embedded stack does the same.
        executors, self._executors = self._executors, []
        for executor in executors:
            with contextlib.suppress(Exception):
                executor.shutdown()
        nodes, self._nodes = self._nodes, []
        destroy_nodes(nodes)

    def _quick_exit_if_due(self) -> None:
        """End the process at once (exit code 0) when destroying its nodes' endpoints one by
        one would take long (:func:`quick_exit_due`), saying so on stderr."""
        due = quick_exit_due(self._nodes)
        if due is not None:
            end_process_now(self.program, due, 0)


def end_process_now(program: str, endpoints: tuple[int, int], code: int) -> None:
    """End the process at once with exit ``code``, its nodes' ``endpoints`` (readers,
    writers) not destroyed one by one (:func:`quick_exit_due`), saying so on stderr; the
    Python and C streams are written out first."""
    readers, writers = endpoints
    print(
        f"{program}: ending at once, without destroying its {readers} DDS readers and "
        f"{writers} writers one by one (Fast DDS would take about "
        f"{2.5e-6 * readers * writers:.0f} s for that)",
        file=sys.stderr,
        flush=True,
    )
    sys.stdout.flush()
    _flush_c_streams()  # the nodes' log lines (rcutils writes with C stdio)
    os._exit(code)


def _flush_c_streams() -> None:
    """``fflush(NULL)``: write out every C stdio buffer (before ``os._exit``)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


def dds_endpoints(nodes: list[Any]) -> tuple[int, int]:
    """(readers, writers): the DDS endpoints the rclpy ``nodes`` hold. A subscription is a
    reader and a publisher a writer; a service or a client is one of each; an action server
    is three services and two publishers (3 readers, 5 writers), an action client the other
    way round (5 readers, 3 writers).

    Examples
    --------
    >>> dds_endpoints([navigator_node])  # doctest: +SKIP
    (730, 969)
    """
    from rclpy.action import ActionClient, ActionServer

    readers = writers = 0
    for node in nodes:
        pairs = len(list(node.services)) + len(list(node.clients))
        readers += len(list(node.subscriptions)) + pairs
        writers += len(list(node.publishers)) + pairs
        for waitable in node.waitables:
            if isinstance(waitable, ActionServer):
                readers, writers = readers + 3, writers + 5
            elif isinstance(waitable, ActionClient):
                readers, writers = readers + 5, writers + 3
    return readers, writers


def quick_exit_due(nodes: list[Any]) -> tuple[int, int] | None:
    """``(readers, writers)`` of ``nodes`` (:func:`dds_endpoints`) when their product is above
    ``MAES_QUICK_EXIT_PAIRS`` (default :data:`QUICK_EXIT_PAIRS`; 0: never): destroying them
    one by one would take seconds to minutes, so the process had better end without it.
    None otherwise. A bad ``MAES_QUICK_EXIT_PAIRS`` is a ValueError naming it.

    Examples
    --------
    >>> quick_exit_due([])
    """
    limit = quick_exit_pairs()
    if not nodes or limit == 0:
        return None
    readers, writers = dds_endpoints(nodes)
    return (readers, writers) if readers * writers > limit else None


def quick_exit_pairs() -> int:
    """``MAES_QUICK_EXIT_PAIRS`` (unset or empty: :data:`QUICK_EXIT_PAIRS`; 0: never).

    Examples
    --------
    >>> import os
    >>> os.environ["MAES_QUICK_EXIT_PAIRS"] = "many"
    >>> quick_exit_pairs()
    Traceback (most recent call last):
    ...
    ValueError: MAES_QUICK_EXIT_PAIRS must be a whole number >= 0 (0: never), got 'many'
    >>> del os.environ["MAES_QUICK_EXIT_PAIRS"]
    """
    raw = os.environ.get(QUICK_EXIT_ENV, "").strip()
    if not raw:
        return QUICK_EXIT_PAIRS
    if not raw.isdigit():
        raise ValueError(f"{QUICK_EXIT_ENV} must be a whole number >= 0 (0: never), got {raw!r}")
    return int(raw)


def destroy_nodes(nodes: list[Any], *, quiet: bool = False) -> None:
    """Destroy ``nodes``, the last first; before the last node of each context goes, detach
    its DDS participant's discovery listener
    (:func:`maes_common.fastdds.detach_participant_listener`: the participant's deletion can
    hang otherwise). ``nodes`` should hold every node left in their contexts. ``quiet``: a
    node that fails to be destroyed (half built after an early signal) is skipped.

    Examples
    --------
    >>> destroy_nodes([sim_node, navigator])  # doctest: +SKIP
    """
    from .fastdds import detach_participant_listener

    remaining: dict[int, int] = {}
    for node in nodes:
        key = id(getattr(node, "context", None))
        remaining[key] = remaining.get(key, 0) + 1
    for node in reversed(nodes):
        key = id(getattr(node, "context", None))
        remaining[key] -= 1
        try:
            if remaining[key] == 0:
                detach_participant_listener(node)
            _destroy_entities_newest_first(node)
            node.destroy_node()
        except Exception:
            if not quiet:
                raise


def _destroy_entities_newest_first(node: Any) -> None:
    """Destroy ``node``'s services, clients, subscriptions and publishers, the newest of each
    kind first; :meth:`rclpy.node.Node.destroy_node` then ends the rest.

    Fast DDS checks on each destruction whether the entity's type is still in use, scanning the
    participant's readers and then its writers until one has the type. In rclpy's own order
    (publishers first, the oldest first) each publisher's scan walks every reader still there:
    quadratic in the robots: 8-18 s to end a 300-robot ``make run`` (2,409 publishers, 302
    subscriptions, 609 services). Services and subscriptions gone first, the newest first:
    about 5 s (docs/benchmarks.md).
    """
    for kind in ("service", "client", "subscription", "publisher"):
        entities = list(getattr(node, kind + "s", ()))  # none on a node half built
        destroy = getattr(node, "destroy_" + kind, None)
        for entity in reversed(entities):
            destroy(entity)


@contextmanager
def ros_process(program: str, args: list[str] | None = None) -> Iterator[NodeProcess]:
    """Run a node process: ``rclpy.init``, the body, then a quiet teardown.

    Inside the ``with`` block, build the node(s), hand them to :meth:`NodeProcess.own` and spin.
    The block ends normally, or by Ctrl-C / SIGTERM / ``ros2 launch`` shutting down (both
    caught: a normal end, exit code 0), or by :meth:`NodeProcess.fail` or a bad parameter
    (``<program>: <message>`` on stderr, exit code 2). Then the owned nodes are destroyed and
    rclpy shut down, with further signals ignored, so no traceback can interrupt either, and
    within :func:`teardown_limit` (a hang there ends the process, exit code 1); nodes with
    more DDS reader-writer pairs than ``MAES_QUICK_EXIT_PAIRS`` are not destroyed one by one,
    the process ends at once, exit code 0 (:func:`quick_exit_due`). A bad
    ``MAES_TEARDOWN_LIMIT_S`` or ``MAES_QUICK_EXIT_PAIRS`` exits 2 with one line before
    anything starts.

    Parameters
    ----------
    program : str
        The console script's name, for error messages.
    args : list of str, optional
        Command-line arguments for ``rclpy.init`` (``None``: ``sys.argv``).

    Yields
    ------
    NodeProcess

    Notes
    -----
    Meant for a process's main function: afterwards SIGINT stays ignored until the process
    ends.
    """
    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.executors import ExternalShutdownException
    from rclpy.impl.implementation_singleton import rclpy_implementation
    from rclpy.signals import SignalHandlerOptions

    try:
        limit = teardown_limit_seconds()
        quick_exit_pairs()  # a bad MAES_QUICK_EXIT_PAIRS is said before anything starts
    except ValueError as exc:
        print(f"{program}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    handler = _FirstSignalInterrupts()
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    handler.arrivals.open()
    proc = NodeProcess(program, handler)
    try:
        try:
            # ALL (the default context's default, spelled out): rclpy's handlers wake a
            # blocked executor and then chain to ours.
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.ALL)
        except rclpy_implementation.RCLError as exc:  # e.g. a malformed --ros-args
            handler.armed = False
            print(f"{program}: bad ROS arguments: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        yield proc
    except (KeyboardInterrupt, ExternalShutdownException):
        pass  # asked to stop: a normal end
    except ParameterException as exc:
        handler.armed = False
        print(f"{program}: bad parameter: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception:
        if not handler.received:
            raise
        # A stop signal came while the node was being built: rclpy's handler shut the context
        # down under it, and whatever rclpy call came next failed. A normal end.
    finally:
        handler.armed = False
        if sys.exc_info()[0] is None:  # a normal end (a stop signal too), not a failure
            proc._quick_exit_if_due()
        with teardown_limit(limit) as limited:  # (it replaces a stall dump a signal armed)
            if not limited and handler.signum is None:  # (a stop signal armed it already)
                arm_stall_dump()
            proc._destroy_nodes()
            try:
                rclpy.try_shutdown()
            except rclpy_implementation.RCLError:
                # rclpy's signal thread shut the context down between try_shutdown's look at
                # it and its own shutdown ("rcl_shutdown already called"): it is down.
                if rclpy.ok():
                    raise
        # What is left is the interpreter's exit. Python then resets a handler of ours to
        # SIG_DFL, so a late SIGINT (a terminal's Ctrl-C reaches a node once more via
        # ros2 launch) would kill the process: ignore it. SIGTERM gets its old disposition
        # back, which still ends a process whose exit hangs.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, previous[signal.SIGTERM])
        handler.arrivals.close()
        skip_exit_collection()


def skip_exit_collection() -> None:
    """Spare the process's exit its last garbage collection, for a program's main function
    once its work is done: write out every open file, collect, then ``gc.freeze()``.

    The interpreter's exit ends with a collection over every object the cleared modules leave
    behind (numba's dispatchers, rclpy's and the nodes' objects): 0.5-0.7 s for a node on an
    idle machine, and on a loaded one several seconds, past ``ros2 launch``'s 5 s from SIGINT
    to SIGTERM. Collecting here, while the heap is alive, and freezing what is left ends a
    node's process in about half the time (0.3-0.6 s against 0.6-1.0 s, the four processes
    of a 2-robot ``ros2 launch`` ending together on 2 cores).

    The objects alive now are frozen: refcounting still frees them as the modules are cleared,
    but one kept alive by a reference cycle is never finalized. So every open file's buffer is
    written out first: a logic's log file that its own object holds and never closes loses
    nothing (Python itself promises that only for closed files). Not for a process that goes
    on working: nothing alive now would ever be collected.
    """
    from _io import _IOBase  # io.IOBase's C base: an isinstance check 7x faster than the ABC's

    for obj in gc.get_objects():
        if isinstance(obj, _IOBase) and not obj.closed:
            with contextlib.suppress(Exception):  # a closed pipe, a read-only file, ...
                obj.flush()
    gc.collect()
    gc.freeze()


def read_parameters(node_name: str, declarations: Mapping[str, Any]) -> dict[str, Any]:
    """Declare parameters on a short-lived node and return their values.

    The nodes take their wiring from parameters before they are built (their constructors need
    it), so a temporary node named ``node_name`` reads them. Launch files and ``--ros-args -p``
    address parameters to every node of the process (``/**``), so it receives them too.

    Parameters
    ----------
    node_name : str
        Name of the temporary node.
    declarations : mapping
        Parameter name -> default value, or an ``rclpy.Parameter.Type`` for a typed parameter
        with no default (its value is then ``None`` when not given).

    Returns
    -------
    dict
        Parameter name -> value.

    Raises
    ------
    rclpy.exceptions.ParameterException
        A given value of the wrong type (inside :func:`ros_process`: a one-line error, exit 2).

    Examples
    --------
    >>> from rclpy.parameter import Parameter  # doctest: +SKIP
    >>> read_parameters("x_params", {"robot_id": 0, "flag": Parameter.Type.BOOL})  # doctest: +SKIP
    {'robot_id': 0, 'flag': None}
    """
    import rclpy

    loader = rclpy.create_node(node_name)
    try:
        return {
            name: loader.declare_parameter(name, default).value
            for name, default in declarations.items()
        }
    finally:
        destroy_nodes([loader])  # the context's only node (its participant goes with it)


def graph_node_names(node: Any) -> set[str]:
    """Fully qualified names of the nodes on ``node``'s ROS graph now (its own included).

    A name can outlive its node's process (:func:`publishing_node_names` says why): lockstep
    tells a slow participant (wait for it, however long a loaded machine or a first-run compile
    takes) from a gone one (its process ended: stop waiting) by its report publisher, and by
    this only while a publisher's node is not named yet.

    Examples
    --------
    >>> graph_node_names(node)  # doctest: +SKIP
    {'/maes_sim', '/maes_navigator', '/robot0/maes_controller'}
    """
    return {(ns.rstrip("/") + "/" + name) for name, ns in node.get_node_names_and_namespaces()}


#: The node name rmw gives an endpoint whose participant's node list has not arrived yet.
UNKNOWN_NODE_NAME = "_NODE_NAME_UNKNOWN_"


def publishing_node_names(node: Any, topics: Sequence[str]) -> tuple[set[str], bool]:
    """Fully qualified names of the nodes publishing on any of ``topics`` now, from the
    publishers DDS discovery lists; and whether some publisher's node is not named yet.

    Lockstep's test of a gone participant: a publisher leaves the graph with its process's DDS
    participant (its end announced, or its lease over), for good. A node's *name* alone can
    outlive its process. The graph cache (rmw_dds_common's ``GraphCache``) learns a node's name
    from the participant's ``ros_discovery_info`` messages, on a thread of its own, and one of
    them taken after the participant's removal puts the participant back
    (``update_participant_entities`` makes the entry anew) with nobody left to remove it: the
    node is listed for ever. A run waited for a Ctrl-C'd controller so, once, on a loaded
    machine. A publisher is not put back.

    Examples
    --------
    >>> publishing_node_names(node, ["/maes/tick_done"])  # doctest: +SKIP
    ({'/robot0/maes_controller', '/robot1/maes_controller'}, False)
    """
    names: set[str] = set()
    unnamed = False
    for topic in topics:
        for info in node.get_publishers_info_by_topic(topic):
            if info.node_name == UNKNOWN_NODE_NAME:
                unnamed = True
            else:
                names.add(info.node_namespace.rstrip("/") + "/" + info.node_name)
    return names, unnamed


def reporting_node_names(node: Any, topics: Sequence[str]) -> set[str]:
    """The nodes to count as alive for lockstep: those publishing on any of ``topics``
    (:func:`publishing_node_names`), and, while some publisher's node is not named yet, every
    node on the graph (:func:`graph_node_names`). A gone participant is never waited for long
    that way: the graph names the unnamed publisher's node a moment later.

    Examples
    --------
    >>> reporting_node_names(node, ["/maes/tick_done"])  # doctest: +SKIP
    {'/robot0/maes_controller', '/robot1/maes_controller'}
    """
    names, unnamed = publishing_node_names(node, topics)
    return names | graph_node_names(node) if unnamed else names
