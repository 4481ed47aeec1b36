"""Repository-wide pytest setup: ROS isolation per run and Hypothesis profiles.

ROS isolation
    Every pytest process takes a ROS domain of its own before any test runs: it locks
    ``<tmp>/maes-ros-domain-<id>.lock`` for the first free id in 1..101 (starting from one derived
    from its PID) and exports ``ROS_DOMAIN_ID``; discovery is kept on this machine with
    ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``. Two test runs on one machine therefore never
    hear each other, and subprocesses started by tests inherit the same domain. Ids above 101
    are avoided: with Fast DDS's port mapping they may run out of ports on Linux.
    The one-run-per-domain probe of ``maes_run``, ``ros2 launch`` and ``controller_node``
    keeps its full window here (``MAES_DOMAIN_PROBE_S`` unset): with 0.5 s, two CI runs each
    had a controller_node that stalled (once not reporting tick 2, once not ending on SIGINT),
    which a 4 s window had not shown; not understood, so not shortened.
    SIGINT ignored (pytest run as a background job): restored, so that the processes the
    tests start hear Ctrl-C as from a terminal (``ros2 launch`` would not).
    ``FASTDDS_BUILTIN_TRANSPORTS=UDPv4`` (unless set): no shared-memory transport, which a
    hard-killed process can leave locked for the processes started after it.
    ``MAES_STALL_DUMP_S=45`` (unless set): a node process that has not ended 45 s after its
    stop signal, or after its teardown began, prints every thread's stack
    (maes_common.process). Not sooner: faulthandler reads the stacks of running threads without
    the GIL, which can crash a process that is only slow (seen under load: a simulator node
    still ending 7 s after Ctrl-C died of SIGSEGV in the middle of its dump).

Hard limits
    No test can hang a run. Every test has a wall-clock limit (pytest-timeout): 60 s, or
    :data:`SLOW_LIMIT_S` for a test marked ``slow`` (its own waits are bounded tighter);
    ``@pytest.mark.timeout(S)`` sets another. Past it the test fails with every thread's stack.
    pytest-timeout's signal needs the main thread back in Python; a hang inside a C call that
    holds the GIL (a DDS participant's deletion, say) is ended :data:`BACKSTOP_S` later by
    :mod:`faulthandler` from its own C thread: every thread's stack, then the process exits
    (under pytest-xdist the worker is replaced and the test reported as crashed). A traceback
    entry without a line number (Python 3.11, where the signal interrupted an instruction
    without one) is numbered before pytest formats it (:func:`numbered`): pytest would
    otherwise end the whole session with an INTERNALERROR.

Tests that need ROS 2's launch stack or nav2_simple_commander
    are marked ``launch_stack``: where setup could not install them (no wheels, no network)
    they skip, and CI runs them again where the wheels are (``pytest -m launch_stack``). A
    test that skips for that reason without the mark fails, so none is left out of both.

Hypothesis
    Profile ``dev`` (default) and ``ci`` (chosen when ``CI`` is set): no per-example deadline,
    since the first call of a numba kernel compiles it and a loaded 2-core machine is slow;
    ``ci`` also derandomizes so a CI run is reproducible. ``HYPOTHESIS_PROFILE`` overrides.

Nothing here imports ROS, so core tests run without it.
"""

from __future__ import annotations

import faulthandler
import fcntl
import os
import re
import signal
import sys
import tempfile
import types
from pathlib import Path

import pytest

DOMAIN_ID_MIN = 1
DOMAIN_ID_MAX = 101

#: The hard limit of a test marked ``slow`` (wall seconds; others: pyproject.toml's ``timeout``).
SLOW_LIMIT_S = 240.0
#: How long after its limit a test still running is ended by faulthandler (wall seconds).
BACKSTOP_S = 30.0
#: The skip reasons of tests that need the launch stack or nav2_simple_commander.
LAUNCH_STACK_SKIP = re.compile(
    r"no ROS 2 launch stack|nav2_simple_commander is not installed"
    r"|could not import '(launch|launch_ros|launch_testing|ros2cli|nav2_simple_commander)\b"
)

# Keeps the lock file open (and so the domain held) for the life of the pytest process.
_domain_lock_file = None


def acquire_ros_domain_id(start: int, lock_dir: Path) -> tuple[int, object]:
    """Lock and return the first free ROS domain id at or after ``start`` (wrapping around).

    Parameters
    ----------
    start : int
        Preferred id; any integer, folded into ``DOMAIN_ID_MIN..DOMAIN_ID_MAX``.
    lock_dir : Path
        Directory holding one lock file per domain id (shared by every run on the machine).

    Returns
    -------
    tuple
        ``(domain_id, open_lock_file)``; the domain stays reserved while the file is open.

    Raises
    ------
    RuntimeError
        If every id in the range is held by another process.

    Examples
    --------
    >>> domain_id, handle = acquire_ros_domain_id(7, Path(tempfile.gettempdir()))  # doctest: +SKIP
    >>> DOMAIN_ID_MIN <= domain_id <= DOMAIN_ID_MAX  # doctest: +SKIP
    True
    """
    span = DOMAIN_ID_MAX - DOMAIN_ID_MIN + 1
    for offset in range(span):
        domain_id = DOMAIN_ID_MIN + (start - DOMAIN_ID_MIN + offset) % span
        handle = open(lock_dir / f"maes-ros-domain-{domain_id}.lock", "a+")  # noqa: SIM115 - kept open: the lock lives as long as the process
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        return domain_id, handle
    raise RuntimeError(
        f"every ROS domain id {DOMAIN_ID_MIN}..{DOMAIN_ID_MAX} is locked by another test run "
        f"(lock files maes-ros-domain-*.lock in {lock_dir})"
    )


def _register_hypothesis_profiles() -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    settings.register_profile("dev", deadline=None)
    settings.register_profile(
        "ci",
        deadline=None,
        derandomize=True,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    default = "ci" if os.environ.get("CI") else "dev"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


def pytest_configure(config: pytest.Config) -> None:
    """Reserve a ROS domain for this run and load the Hypothesis profile."""
    global _domain_lock_file
    if _domain_lock_file is None:
        domain_id, _domain_lock_file = acquire_ros_domain_id(
            os.getpid(), Path(tempfile.gettempdir())
        )
        os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    # A background job of a non-interactive shell starts with SIGINT ignored, and the processes
    # a test starts would inherit that: ros2 launch (launch's signal manager only hears a
    # signal that has a Python handler) then never hears the Ctrl-C a test sends it. The
    # processes start as from a terminal: SIGINT at its default.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Fast DDS over UDP on loopback only, not its shared-memory transport: the tests kill
    # processes hard (SIGKILL, on purpose or when cleaning up), which can leave the shared
    # memory of the domain's ports locked or corrupt (eProsima/Fast-DDS#1144), and a node
    # started later then stalls (seen as controllers that never subscribed, never reported a
    # tick or never ended). Everything else is the same real DDS.
    os.environ.setdefault("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")
    # A node process still ending 45 s after its stop signal prints its threads' stacks, so a
    # hang shows where it is (the tests give a process 60 s to end).
    os.environ.setdefault("MAES_STALL_DUMP_S", "45")
    _register_hypothesis_profiles()


#: A test module that talks DDS or starts processes names one of these.
DDS_OR_PROCESS = re.compile(r"\b(rclpy|subprocess|multiprocessing|Popen)\b")
#: Fixtures that start processes (src/maes_bringup/test/conftest.py's ``run_maes``): a test that
#: uses one is ``dds_or_process`` too, whatever its module names.
PROCESS_FIXTURES = {"run_maes"}


def _dds_or_process(module_path: str, cache: dict[str, bool] = {}) -> bool:  # noqa: B006
    """Whether the test module at ``module_path`` talks DDS or starts processes (its source
    names rclpy, subprocess, multiprocessing or Popen); read once per module."""
    if module_path not in cache:
        try:
            cache[module_path] = bool(DDS_OR_PROCESS.search(Path(module_path).read_text()))
        except OSError:
            cache[module_path] = False
    return cache[module_path]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``slow`` without a limit of its own gets :data:`SLOW_LIMIT_S`; a test of
    a module that talks DDS or starts processes is marked ``dds_or_process`` (what
    ``make test-stress`` repeats under load)."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_LIMIT_S))
        if _dds_or_process(str(item.path)) or PROCESS_FIXTURES & set(
            getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.dds_or_process)


def _limit_s(item: pytest.Item) -> float:
    """The test's hard limit in wall seconds (0: none), as pytest-timeout reads it."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0] or 0)
    try:
        return float(item.config.getini("timeout") or 0)
    except ValueError:  # pytest-timeout absent: its ini key is unknown
        return 0.0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Arm the faulthandler backstop for the test's setup, call and teardown."""
    limit = _limit_s(item)
    stream = sys.__stderr__
    armed = limit > 0 and stream is not None
    if armed:
        faulthandler.dump_traceback_later(limit + BACKSTOP_S, repeat=False, file=stream, exit=True)
    try:
        yield
    finally:
        if armed:
            faulthandler.cancel_dump_traceback_later()


def numbered(exc: BaseException) -> bool:
    """Give every traceback entry of ``exc``, its cause and its context a line number.

    Python 3.11 leaves ``tb_lineno`` None for an instruction without one, e.g. where
    pytest-timeout's signal interrupted a hung test; pytest 9 cannot format such a traceback
    (``TypeError`` in ``TracebackEntry.lineno``) and ends the whole session with an
    INTERNALERROR (a stress run lost every test after one such hang, and the hung test's
    stacks). Such an entry gets its frame's line, or its function's first. Returns whether
    any entry was changed."""
    changed, seen, todo = False, set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        entries, tb = [], e.__traceback__
        while tb is not None:
            entries.append(tb)
            tb = tb.tb_next
        if any(t.tb_lineno is None for t in entries):
            rebuilt = None
            for t in reversed(entries):
                line = t.tb_lineno
                if line is None:
                    line = t.tb_frame.f_lineno or t.tb_frame.f_code.co_firstlineno
                rebuilt = types.TracebackType(rebuilt, t.tb_frame, t.tb_lasti, line)
            e.__traceback__ = rebuilt
            changed = True
        todo += [e.__cause__, e.__context__]
    return changed


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test that skips for want of the launch stack must be marked ``launch_stack``; a
    traceback without line numbers is numbered first (:func:`numbered`)."""
    if call.excinfo is not None and numbered(call.excinfo.value):
        call.excinfo = pytest.ExceptionInfo.from_exception(call.excinfo.value)
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not item.get_closest_marker("launch_stack"):
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        if LAUNCH_STACK_SKIP.search(reason):
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} skipped ({reason}) but is not marked launch_stack: CI's run "
                "where the launch stack is installed selects tests by that mark"
            )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Release this run's ROS domain."""
    global _domain_lock_file
    if _domain_lock_file is not None:
        _domain_lock_file.close()
        _domain_lock_file = None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the ROS isolation and the environment in pytest's header."""
    in_env = os.environ.get("MAES_ROS_ENV") == "1"
    return [
        f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')} "
        f"ROS_AUTOMATIC_DISCOVERY_RANGE={os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE')}",
        "environment: "
        + (
            "pip environment (scripts/env.sh)"
            if in_env
            else "bare (ROS tests skip; use scripts/with_env or make test)"
        ),
    ]
