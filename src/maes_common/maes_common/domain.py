"""One MAES-ROS run per ROS domain: find another run's simulator or navigator before starting.

Two runs on one ROS domain hear each other: both navigators serve ``/robot0/navigate_to_pose``,
a controller's goal is accepted twice, the other run's commands move this run's robots. So
``maes_run``, ``ros2 launch maes_bringup multi_robot.launch.py`` and ``controller_node`` look at
the domain before they start anything (:func:`find_runs`): a node publishing ``/maes/tick`` is a
MAES-ROS simulator, one publishing ``/maes/tick_done/navigation`` a built-in navigator. Found:
they stop with one line (:func:`busy_message`), or, when asked (``--domain auto``), pick a free
domain (:func:`choose_domain`) and say which.

Discovery takes a moment: the probe watches the graph for :data:`PROBE_S` wall seconds (it
stops early once it sees a run), or for ``MAES_DOMAIN_PROBE_S`` seconds where that environment
variable is set (:func:`probe_seconds`). The probe has a context and node of its own, with no
topics, so it cannot disturb the run it finds. Nothing here changes a run's result.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from .contract import NAVIGATION_DONE_TOPIC, TICK_TOPIC
from .process import destroy_nodes, env_seconds

__all__ = [
    "DOMAIN_MAX",
    "PROBE_ENV",
    "PROBE_S",
    "DomainProbe",
    "busy_message",
    "choose_domain",
    "current_domain",
    "find_runs",
    "parse_domain",
    "probe_seconds",
]

#: Wall seconds the probe watches the domain's graph. Discovery on one machine took 0.13-3.1 s
#: on a loaded 2-core machine (load 5; about 3 s when the first announcements are missed and the
#: next periodic one is awaited); a run found earlier ends the probe at once.
PROBE_S = 4.0
#: Environment variable that replaces :data:`PROBE_S` (seconds, > 0).
PROBE_ENV = "MAES_DOMAIN_PROBE_S"
#: Highest domain id :func:`choose_domain` tries (above 101 Fast DDS's ports may run out on
#: Linux); the lowest is 1.
DOMAIN_MAX = 101
#: What each topic's publisher is.
_ROLES = ((TICK_TOPIC, "simulator"), (NAVIGATION_DONE_TOPIC, "navigator"))


def current_domain() -> int:
    """The ROS domain this process uses: ``ROS_DOMAIN_ID``, 0 when unset or empty."""
    text = os.environ.get("ROS_DOMAIN_ID", "").strip()
    return parse_domain(text) if text else 0


def probe_seconds() -> float:
    """The probe's window in wall seconds: ``MAES_DOMAIN_PROBE_S`` when set, else
    :data:`PROBE_S`; ``ValueError`` naming the variable when it is not a positive number.

    Examples
    --------
    >>> import os
    >>> os.environ[PROBE_ENV] = "0.5"; probe_seconds()
    0.5
    >>> os.environ[PROBE_ENV] = "soon"; probe_seconds()
    Traceback (most recent call last):
    ...
    ValueError: MAES_DOMAIN_PROBE_S must be a number of seconds > 0, got 'soon'
    >>> del os.environ[PROBE_ENV]; probe_seconds() == PROBE_S
    True
    """
    return env_seconds(PROBE_ENV, PROBE_S)


def parse_domain(text: str) -> int:
    """A domain id from text (0..232, ROS 2's range), or ``ValueError`` naming it.

    Examples
    --------
    >>> parse_domain("7")
    7
    >>> parse_domain("x")
    Traceback (most recent call last):
    ...
    ValueError: ROS domain id must be an integer from 0 to 232, got 'x'
    """
    try:
        value = int(str(text).strip())
    except ValueError:
        value = -1
    if not 0 <= value <= 232:
        raise ValueError(f"ROS domain id must be an integer from 0 to 232, got {text!r}")
    return value


class DomainProbe:
    """Watch one ROS domain for another MAES-ROS run while the caller does something else.

    Discovery runs in the middleware's own threads, so a probe started before loading a
    config and building the world costs no extra time: :meth:`finish` then only waits for
    what is left of the window.

    Parameters
    ----------
    domain : int
        The ROS domain id to watch.
    """

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.context import Context

        self.domain = int(domain)
        self.seconds = probe_seconds()  # a bad MAES_DOMAIN_PROBE_S: ValueError, before anything
        self._started = time.monotonic()
        self._context = Context()
        # Not the process's command line (rclpy's default): in ``ros2 launch ... a:=b`` rcl
        # would read each launch argument as a deprecated remap rule and warn about it.
        rclpy.init(args=["maes_domain_probe"], context=self._context, domain_id=self.domain)
        self._node = rclpy.create_node(
            "maes_domain_probe",
            context=self._context,
            enable_rosout=False,
            start_parameter_services=False,
        )

    def runs(self) -> list[str]:
        """What is on the domain now: ``"<role> <node>"`` per publisher found, one per
        simulator or navigator (``"<role>"`` alone while its node's name is not discovered)."""
        found = []
        for topic, role in _ROLES:
            for info in self._node.get_publishers_info_by_topic(topic):
                name = info.node_namespace.rstrip("/") + "/" + info.node_name
                found.append(role if "_UNKNOWN_" in name else f"{role} {name}")
        return found

    def finish(self, seconds: float | None = None, whole: bool = False) -> list[str]:
        """Watch until ``seconds`` (default :func:`probe_seconds`) after the start, or (unless
        ``whole``) until a run is seen, then up to one second more for its nodes' names; the
        runs found. The probe is closed afterwards."""
        seconds = self.seconds if seconds is None else seconds
        try:
            found: list[str] = []
            while True:
                now = self.runs()
                if len(now) >= len(found):
                    found = now
                waited = time.monotonic() - self._started
                named = found and all(" " in what for what in found)
                if (named and (not whole or waited >= seconds)) or waited >= seconds + (
                    1.0 if found else 0.0
                ):
                    return found
                time.sleep(0.05)
        finally:
            self.close()

    def close(self) -> None:
        """Destroy the probe's node and context (idempotent)."""
        if self._node is not None:
            destroy_nodes([self._node])  # the probe's context's only node
            self._node = None
            self._context.try_shutdown()


def find_runs(
    domain: int | None = None, seconds: float | None = None, whole: bool = False
) -> list[str]:
    """The MAES-ROS simulators and navigators on ``domain`` (default: this process's), as
    ``"<role> <node>"``; empty when the domain is free. ``whole``: watch the whole window
    (to count them), not only until the first is seen."""
    return DomainProbe(current_domain() if domain is None else domain).finish(seconds, whole)


def busy_message(program: str, domain: int, found: list[str], how: str = "make run") -> str:
    """The one line a run prints when ``domain`` is taken by ``found``.

    Examples
    --------
    >>> busy_message("maes_run", 0, ["simulator /maes_sim"])  # doctest: +NORMALIZE_WHITESPACE
    "maes_run: ROS domain 0 is in use by another MAES-ROS run (simulator /maes_sim); two runs
    on one domain mix their robots' traffic. Choose another domain: ROS_DOMAIN_ID=<n> make run,
    or make run DOMAIN=auto to pick a free one"
    """
    return (
        f"{program}: ROS domain {domain} is in use by another MAES-ROS run "
        f"({', '.join(found)}); two runs on one domain mix their robots' traffic. "
        f"Choose another domain: ROS_DOMAIN_ID=<n> {how}, or {_auto_hint(how)} to pick a "
        "free one"
    )


def _auto_hint(how: str) -> str:
    if how == "make run":
        return "make run DOMAIN=auto"
    if how.startswith("ros2 launch"):
        return f"{how} domain:=auto"
    return f"{how} --domain auto"


def _lock(domain: int, lock_dir: Path) -> Any | None:
    """Hold ``maes-ros-domain-<id>.lock`` (the tests' and manual runs' convention); None when
    another process holds it."""
    handle = open(lock_dir / f"maes-ros-domain-{domain}.lock", "a+")  # noqa: SIM115 - kept open
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def choose_domain(
    preferred: int | None = None,
    seconds: float | None = None,
    lock_dir: Path | None = None,
) -> tuple[int, list[str], Any | None]:
    """A ROS domain with no MAES-ROS run on it: ``preferred`` (default: this process's) when
    free, else the first of 1..:data:`DOMAIN_MAX` that is free and whose lock file
    (``<tmp>/maes-ros-domain-<id>.lock``, the convention of the tests and of manual runs)
    nobody holds.

    Returns
    -------
    tuple
        ``(domain, found, lock)``: the domain; what was found on ``preferred`` (empty when it
        was free); the open lock file of the chosen domain (keep it open while the run lasts;
        None for ``preferred``).

    Raises
    ------
    RuntimeError
        If no domain is free.
    """
    lock_dir = Path(tempfile.gettempdir()) if lock_dir is None else lock_dir
    preferred = current_domain() if preferred is None else int(preferred)
    found = find_runs(preferred, seconds)
    if not found:
        return preferred, [], None
    for domain in range(1, DOMAIN_MAX + 1):
        if domain == preferred:
            continue
        lock = _lock(domain, lock_dir)
        if lock is None:
            continue
        if not find_runs(domain, seconds):
            return domain, found, lock
        lock.close()
    raise RuntimeError(f"no free ROS domain: 1..{DOMAIN_MAX} are all in use or locked")
