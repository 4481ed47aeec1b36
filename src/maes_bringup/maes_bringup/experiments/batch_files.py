"""The files of a batch output folder: their names, columns, and CSV reading and writing.

Shared by :mod:`maes_bringup.experiments.batch` (which writes them as runs finish) and
:mod:`maes_bringup.experiments.aggregate` (which reads them back), so neither imports the
other's internals.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .experiment import ExperimentError

RESULTS = "results.csv"
TIMESERIES = "timeseries.csv"
TIMING = "timing.csv"
ERRORS = "errors.log"
STALE = "stale_results.csv"
CHECKPOINTS = "checkpoints"
SERIES_COLUMNS = ("case_id", "tick", "sim_time", "exploration_percent", "coverage_percent")
TIMING_COLUMNS = ("case_id", "wall_time_s", "real_time_factor", "worker")


#: Significant digits of a float in the CSV files: enough for any measured value, few enough to
#: drop binary noise (``52.925000000000004`` is written ``52.925``).
CSV_DIGITS = 10


def cell(value: Any) -> Any:
    """A CSV cell for ``value``: empty for None and NaN, floats to :data:`CSV_DIGITS`
    significant digits.

    Examples
    --------
    >>> cell(52.925000000000004), cell(0.1 + 0.2), cell(None), cell(3), cell(1e-12)
    (52.925, 0.3, '', 3, 1e-12)
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{CSV_DIGITS}g}")
    return value


class CsvLog:
    """An append-only CSV file whose rows reach the disk as they are written."""

    def __init__(self, path: Path, columns: Iterable[str]) -> None:
        self.path = path
        self.columns = list(columns)
        new = not path.exists() or path.stat().st_size == 0
        self._fh = path.open("a", newline="", encoding="utf-8")
        self._writer = csv.writer(self._fh)
        if new:
            self._writer.writerow(self.columns)
            self.sync()

    def write(self, rows: Iterable[Iterable[Any]]) -> None:
        for r in rows:
            self._writer.writerow([cell(v) for v in r])

    def sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def read_rows(path: Path, columns: list[str] | None = None) -> list[dict[str, str]]:
    """Complete rows of a CSV file written by this module (a torn last line is dropped).

    With ``columns``, a file whose header differs raises ExperimentError (it was written by
    another experiment).
    """
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # the writer died mid-row
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        return []
    if columns is not None and header != columns:
        raise ExperimentError(
            f"{path}: its columns differ from this experiment's; it was written "
            "by another experiment (use another --out, or delete the folder)"
        )
    return [dict(zip(header, r, strict=True)) for r in reader if len(r) == len(header)]


def write_rows(path: Path, columns: list[str], rows: Iterable[dict[str, Any]]) -> None:
    """Replace ``path`` atomically with ``rows`` (dicts keyed by ``columns``).

    A missing value or NaN is written as an empty cell.
    """
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for r in rows:
            writer.writerow([cell(r.get(c)) for c in columns])
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
