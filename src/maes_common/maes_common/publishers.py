"""rclpy publishers as a node that publishes every tick uses them.

Pure helpers shared by the simulator node and the embedded stack's driver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rclpy.publisher import Publisher

__all__ = ["subscription_counter"]


def subscription_counter(publisher: Any) -> Callable[[], int]:
    """``publisher.get_subscription_count`` as a callable, for a loop that asks every tick.

    For an rclpy ``Publisher`` it is the native handle's own method: the same count without
    rclpy's per-call guard against a destruction from another thread (0.4 us a call instead of
    1.8 us; a 300-robot tick asks 1,200 times). The caller must ask only while the publisher
    lives: the simulator's publishers are destroyed after its last tick, by the thread that
    publishes. Anything else with a ``get_subscription_count`` (the simulator's tap wrappers)
    is asked as it is.
    """
    if isinstance(publisher, Publisher):
        return publisher.handle.get_subscription_count
    return publisher.get_subscription_count
