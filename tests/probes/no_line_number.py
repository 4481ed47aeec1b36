"""Probe for tests/test_hard_limits.py (not collected by the suite: not named test_*.py).

Fails with a traceback one entry of which has no line number, as Python 3.11 leaves where a
signal (pytest-timeout's) interrupts an instruction without one: here one of the cleanup
instructions of this test's own ``with`` statement.
"""

import sys
import types


def test_fails_with_an_entry_without_a_line_number():
    with open(__file__) as fh:
        fh.read(1)
    frame = sys._getframe()
    offset = next(start for start, _end, line in frame.f_code.co_lines() if line is None)
    try:
        raise RuntimeError("stuck in a C call")
    except RuntimeError as exc:
        entry = types.TracebackType(exc.__traceback__, frame, offset, -1)
        assert entry.tb_lineno is None
        raise exc.with_traceback(entry) from None
