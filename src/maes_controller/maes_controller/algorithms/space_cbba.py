"""SPACE with CBBA: area tasks allocated by the Consensus-Based Bundle Algorithm.

The behaviour tree of :mod:`.space_bt` with a CBBA decision plugin (:class:`CbbaPlugin`). Bids
are the marginal gain of a time-discounted reward (SPACE's equation 2): a task's reward is its
workload (frontier cells) and ``tau`` is the travel in metres to it along the bundle's path,
discounted by ``LAMBDA`` per metre. Consensus runs over the real broadcasts (range-limited,
may not arrive): every robot broadcasts its ``y``, ``z`` and ``s`` every few ticks as
``cbba <json>``. SPACE's modification is kept: a robot whose bundle stays empty for
``RESET_TICKS`` forgets every winning bid it knows, so tasks won with stale bids are freed.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .allocation import CbbaState, cbba_build_bundle, cbba_consensus, cbba_drop
from .space_bt import Task, run_tree

#: Discount per metre of travel (SPACE used 0.999 per second on a 1400 x 1000 unit map).
LAMBDA = 0.95
#: Longest bundle (tasks per robot).
MAX_BUNDLE = 3
#: Ticks with an empty bundle before the robot resets the bids it knows (SPACE's modification).
RESET_TICKS = 30


def encode(state: CbbaState) -> str:
    """The broadcast of a CBBA state (``y``, ``z``, ``s`` only).

    Examples
    --------
    >>> decode(encode(CbbaState(y={3: 1.5}, z={3: 0}, s={0: 7}))).z
    {3: 0}
    """
    y = {str(t): round(v, 6) for t, v in state.y.items()}
    z = {str(t): a for t, a in state.z.items()}
    s = {str(a): t for a, t in state.s.items()}
    return "cbba " + json.dumps({"y": y, "z": z, "s": s}, separators=(",", ":"), sort_keys=True)


def decode(text: str) -> CbbaState | None:
    """The state in a ``cbba`` broadcast, None for other or malformed messages."""
    if not text.startswith("cbba "):
        return None
    try:
        d = json.loads(text[5:])
        return CbbaState(
            y={int(t): float(v) for t, v in d["y"].items()},
            z={int(t): int(a) for t, a in d["z"].items()},
            s={int(a): int(t) for a, t in d["s"].items()},
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class CbbaPlugin:
    """CBBA as a SPACE decision plugin (receive, decide, task_done, message)."""

    def __init__(self, me: int) -> None:
        self.me = me
        self.state = CbbaState()
        self.inbox: list[tuple[int, CbbaState]] = []
        self.empty_since: int | None = None

    def receive(self, sender: int, text: str, now: int) -> None:
        msg = decode(text)
        if msg is not None and sender != self.me:
            self.inbox.append((sender, msg))

    def decide(self, tasks: dict[int, Task], now: int) -> int | None:
        st = self.state
        st.s[self.me] = now
        for sender, msg in self.inbox:
            cbba_consensus(st, self.me, sender, msg, now)
        self.inbox.clear()
        for task in [t for t in st.bundle if t not in tasks]:
            cbba_drop(st, task)  # explored (or unreachable) in this robot's map
        start = {t: task.cost_m for t, task in tasks.items()}
        reward = {t: float(task.workload) for t, task in tasks.items()}

        def between(a: int, b: int) -> float:
            pa, pb = tasks[a].pos, tasks[b].pos
            return math.hypot(pa[0] - pb[0], pa[1] - pb[1])

        cbba_build_bundle(st, self.me, start, between, reward, lam=LAMBDA, max_bundle=MAX_BUNDLE)
        if st.bundle:
            self.empty_since = None
        elif tasks:
            self.empty_since = now if self.empty_since is None else self.empty_since
            if now - self.empty_since >= RESET_TICKS:
                st.y.clear()
                st.z.clear()
                self.empty_since = None
        return st.path[0] if st.path else None

    def task_done(self, task: int) -> None:
        cbba_drop(self.state, task)

    def message(self) -> str | None:
        return encode(self.state)


def logic(robot: Any) -> None:
    """SPACE's behaviour tree with CBBA allocating the area tasks."""
    run_tree(robot, lambda r: CbbaPlugin(r.robot_id))
