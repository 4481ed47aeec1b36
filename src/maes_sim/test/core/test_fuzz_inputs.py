"""A short run of ``bench/fuzz_inputs.py``: every class of bad input stays closed (issue 17).

Generated configs, maps and commands (fixed seeds, so a failure is reproducible with
``bench/fuzz_inputs.py --worker <class> <seed> <i> <i+1> 20``), each in a worker process with a
2 GiB address-space limit and a CPU-time budget per case. Only named errors and clean runs are
allowed: no raw traceback, hang, out-of-memory, crash or wrongly accepted command. The longer
fuzz (thousands of cases) is the benchmark script itself.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[4] / "bench" / "fuzz_inputs.py"


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("maes_fuzz_inputs", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("kind", "count", "seed"),
    [("configs", 120, 7), ("maps", 80, 7), ("commands", 400, 7)],
)
def test_fuzzed_inputs_give_named_errors_or_clean_runs(kind, count, seed):
    fuzz = _fuzz_module()
    counts, bad = fuzz.run_class(kind, count, seed=seed, case_seconds=20.0, memory_gib=2.0)
    assert sum(counts.values()) == count
    assert not bad, "\n".join(f"case {c['i']}: {c['outcome']}: {c['detail']}" for c in bad[:5])
    # Both outcomes occur: the generators reach past the first check and also make valid input.
    assert counts["named error"] > 0 and counts["ran"] > 0, counts
