"""The built-in radio models' loss decisions, compiled: one call per model and tick.

:meth:`maes_sim.core.radio.Radio.keep` hands each built-in model's attempts to
:func:`keep_group` instead of selecting them, computing distances and drawing in a few dozen
small numpy operations per model. The Python models (:mod:`maes_sim.core.radio`) are the
reference: for the same attempts the kernel keeps the same ones and leaves the same
Gilbert-Elliott link states (``test_radio.py`` compares them). Its uniforms are drawn before
the call, as one ``rng.random(k * draws_per_attempt)`` per model: the generator hands out the
same doubles in the same order however the draws are split into calls, so the simulation's one
stream is unchanged. (A kernel could draw them itself, but numba takes ~25 us to take a
``Generator`` in at every call.)
"""

from __future__ import annotations

import math

import numpy as np

from maes_common.jit import JIT_OPTIONS, njit

#: ``keep_group``'s ``kind`` of each built-in model.
BERNOULLI = 0
DISTANCE = 1
GILBERT_ELLIOTT = 2


@njit(**JIT_OPTIONS)
def _power(x, exponent):  # pragma: no cover - compiled
    """``x ** exponent`` as numpy computes it for an array and a scalar exponent (its special
    cases first: squaring, square root, ... are not ``pow``)."""
    if exponent == 2.0:
        return x * x
    if exponent == 0.5:
        return math.sqrt(x)
    if exponent == 1.0:
        return x
    if exponent == 0.0:
        return 1.0
    if exponent == -1.0:
        return 1.0 / x
    return x**exponent


@njit(**JIT_OPTIONS)
def keep_group(
    kind, params, senders, receivers, groups, g, positions, ranges, bad, u, out
):  # pragma: no cover - compiled
    """Decide the attempts ``i`` with ``groups[i] == g`` (in order) by model ``kind``; write
    True (arrives) or False into ``out[i]``.

    Parameters
    ----------
    kind : int
        :data:`BERNOULLI`, :data:`DISTANCE` or :data:`GILBERT_ELLIOTT`.
    params : ndarray (5,)
        Bernoulli: ``loss_probability``. Distance: ``loss_probability, distance_exponent``.
        Gilbert-Elliott: ``good_to_bad, bad_to_good, loss_good, loss_bad`` probabilities.
    senders, receivers, groups : ndarray (K,) int64
        The attempts and each one's model (its sender's).
    g : int
        The model's index.
    positions : ndarray (N, 2)
        Positions at sending time, tiles (read by the distance model only).
    ranges : ndarray (N,)
        Each robot's broadcast range, tiles (the distance model's scale).
    bad : ndarray (N, N) bool
        Gilbert-Elliott's link states, updated in place (unused by the others).
    u : ndarray
        The uniforms the Python model would draw, in its order: one per attempt of the group
        (Gilbert-Elliott: two).
    out : ndarray (K,) bool
    """
    k = 0
    idx = np.empty(senders.shape[0], dtype=np.int64)
    for i in range(senders.shape[0]):
        if groups[i] == g:
            idx[k] = i
            k += 1
    if kind == BERNOULLI:
        p = params[0]
        for j in range(k):
            out[idx[j]] = u[j] >= p
    elif kind == DISTANCE:
        p0, exponent = params[0], params[1]
        for j in range(k):
            i = idx[j]
            a, b = senders[i], receivers[i]
            d = math.hypot(positions[b, 0] - positions[a, 0], positions[b, 1] - positions[a, 1])
            ratio = min(d / max(ranges[a], 1e-12), 1.0)
            out[i] = u[j] >= p0 + (1.0 - p0) * _power(ratio, exponent)
    else:
        _gilbert_elliott(params, senders, receivers, idx[:k], bad, u, out)


@njit(**JIT_OPTIONS)
def _gilbert_elliott(params, senders, receivers, idx, bad, u, out):  # pragma: no cover
    """Rounds as the Python model takes them: the first use of every link, then the second,
    ...; per round of ``m`` attempts its ``m`` transition draws, then its ``m`` loss draws."""
    k = idx.shape[0]
    if k == 0:
        return
    n = bad.shape[0]
    key = np.empty(k, dtype=np.int64)
    for j in range(k):
        key[j] = senders[idx[j]] * n + receivers[idx[j]]
    increasing = True
    for j in range(1, k):
        if key[j] <= key[j - 1]:
            increasing = False
            break
    occurrence = np.zeros(k, dtype=np.int64)
    rounds = 1
    if not increasing:  # a link used several times: its n-th use goes in round n
        order = np.argsort(key, kind="mergesort")
        for m in range(1, k):
            if key[order[m]] == key[order[m - 1]]:
                occurrence[order[m]] = occurrence[order[m - 1]] + 1
                rounds = max(rounds, occurrence[order[m]] + 1)
    members = np.empty(k, dtype=np.int64)
    start = 0  # the round's first uniform
    for r in range(rounds):
        m = 0
        for j in range(k):
            if occurrence[j] == r:
                members[m] = idx[j]
                m += 1
        for j in range(m):
            i = members[j]
            a, b = senders[i], receivers[i]
            was_bad = bad[a, b]
            move = params[1] if was_bad else params[0]
            now_bad = was_bad ^ (u[start + j] < move)
            bad[a, b] = now_bad
            loss = params[3] if now_bad else params[2]
            out[i] = u[start + m + j] >= loss
        start += 2 * m
