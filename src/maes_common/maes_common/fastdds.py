"""A way around a hang in Fast DDS's participant deletion (PyPI's ROS 2 Jazzy wheels).

The cause
    When a process destroys the last node of an rclpy context, ``rmw_fastrtps`` deletes the
    context's DDS participant, and its first step is ``participant->set_listener(nullptr)``
    (rmw_fastrtps_shared_cpp ``destroy_participant``). Fast DDS 2.14 then waits, without a
    time limit, until no discovery callback is running: ``cv.wait_until(lock,
    steady_clock::time_point::max(), ...)`` (``DomainParticipantImpl::set_listener``). The
    ``libfastrtps`` of the PyPI wheel was built without ``pthread_cond_clockwait`` (manylinux),
    where libstdc++ turns a steady-clock deadline into a system-clock one: ``max()`` overflows
    into the past, every wait returns at once, and the thread spins, holding the lock, for as
    long as a callback runs. A discovery callback in progress (another participant's readers or
    writers appearing or going: every process of a run ending at once) needs that very lock to
    finish (its ``Sentry``); on a loaded machine the spinning thread, which keeps taking the lock
    back, starves it, for minutes or for ever. Seen as a node process that never ends, stuck in
    ``Node.destroy_node`` with the GIL held; the same livelock in twenty lines of C++ (a waiter
    with ``time_point::max()``, a notifier taking the mutex) never ends either when compiled
    without ``pthread_cond_clockwait``. Builds with it (Ubuntu's apt packages, the Docker image)
    wait properly.

The way around
    :func:`detach_participant_listener` makes the same ``set_listener(nullptr)`` call first,
    with a finite time limit (a real, blocking wait: no overflow, the lock is released while
    waiting, the callback finishes). Afterwards no callback can start, so the middleware's own
    call returns at once. Call it just before destroying a context's last node
    (:func:`maes_common.process.destroy_nodes` does).

It goes through the middleware's public C and C++ API, by ``ctypes`` since rclpy does not expose
it: ``rcl_node_get_rmw_handle``, ``rmw_fastrtps_cpp::get_domain_participant`` and
``DomainParticipant::set_listener(listener, std::chrono::seconds)``, found in the libraries
already loaded into the process. With another RMW, or where a symbol is missing, it does
nothing.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path
from typing import Any

__all__ = ["detach_participant_listener"]

#: ``eprosima::fastdds::dds::DomainParticipant::set_listener(DomainParticipantListener*,
#: std::chrono::seconds)`` (Fast DDS 2.x; the seconds are one int64 passed by value).
SET_LISTENER = (
    "_ZN8eprosima7fastdds3dds17DomainParticipant12set_listenerEPNS1_25DomainParticipantListener"
    "ENSt6chrono8durationIlSt5ratioILl1ELl1EEEE"
)
#: ``rmw_fastrtps_cpp::get_domain_participant(rmw_node_t*)`` (its public get_participant.hpp).
GET_PARTICIPANT = "_ZN16rmw_fastrtps_cpp22get_domain_participantEP10rmw_node_s"


def _loaded(prefix: str) -> str | None:
    """The path of a shared library already mapped into this process whose file name starts
    with ``prefix`` (``/proc/self/maps``), or None."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.rpartition(" ")[2]
        if path.startswith("/") and Path(path).name.startswith(prefix):
            return path
    return None


@functools.cache
def _functions() -> tuple[Any, Any, Any] | None:
    """(rcl_node_get_rmw_handle, get_domain_participant, set_listener) as ctypes functions,
    or None when rmw_fastrtps_cpp and Fast DDS are not loaded here."""
    paths = [_loaded(p) for p in ("librcl.so", "librmw_fastrtps_cpp.so", "libfastrtps.so")]
    if None in paths:
        return None
    try:
        rcl, rmw, fastdds = (ctypes.CDLL(p) for p in paths)
        get_rmw_handle = rcl.rcl_node_get_rmw_handle
        get_participant = getattr(rmw, GET_PARTICIPANT)
        set_listener = getattr(fastdds, SET_LISTENER)
    except (OSError, AttributeError):
        return None
    get_rmw_handle.argtypes, get_rmw_handle.restype = [ctypes.c_void_p], ctypes.c_void_p
    get_participant.argtypes, get_participant.restype = [ctypes.c_void_p], ctypes.c_void_p
    # this, listener, seconds; ReturnCode_t is one uint32 (trivially copyable: returned in a
    # register).
    set_listener.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    set_listener.restype = ctypes.c_uint32
    return get_rmw_handle, get_participant, set_listener


def detach_participant_listener(node: Any, timeout_s: int = 10) -> bool:
    """Detach the discovery listener of ``node``'s DDS participant, waiting at most
    ``timeout_s`` seconds for a callback in progress (see the module's docstring for why).

    Call it just before destroying the last node of ``node``'s context: the participant stops
    reporting discovery to the middleware, so the graph seen from that context no longer
    changes.

    Parameters
    ----------
    node : rclpy.node.Node
        A node of the context whose participant is about to be deleted.
    timeout_s : int
        Whole seconds to wait for a discovery callback to finish.

    Returns
    -------
    bool
        True when the listener was detached; False when it could not be (another RMW, a
        library or symbol missing, a destroyed node, a callback still running at the limit).

    Examples
    --------
    >>> detach_participant_listener(my_last_node)  # doctest: +SKIP
    True
    >>> my_last_node.destroy_node()  # doctest: +SKIP
    """
    functions = _functions()
    if functions is None:
        return False
    get_rmw_handle, get_participant, set_listener = functions
    try:
        rcl_node = node.handle.pointer
    except Exception:  # a destroyed node, or not an rclpy node
        return False
    rmw_node = get_rmw_handle(rcl_node)
    participant = get_participant(rmw_node) if rmw_node else None
    if not participant:
        return False
    return set_listener(participant, None, int(timeout_s)) == 0  # RETCODE_OK
