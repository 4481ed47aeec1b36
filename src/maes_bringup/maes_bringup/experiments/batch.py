"""``maes-batch``: every case of an experiment, in parallel, resumable, as tidy CSV.

::

    maes-batch experiment.yaml [--workers N] [--scheduler tcp://host:8786] [--out DIR] [--resume]

Cases run in direct mode (:func:`maes_bringup.runners.direct.run`) on the local cores (a process
pool, ``--workers`` default: the usable cores) or, given ``--scheduler``, on a Dask distributed
cluster; every run is deterministic, so both give the same numbers. Files in ``--out``
(default ``results/experiments/<name>``):

=========================== ======================================================================
``results.csv``             one row per run: case and condition ids, parameters, controller, seed,
                            status (``ok``/``failed``), error, end reason, ticks, the metrics
``timeseries.csv``          exploration and coverage of every run at each statistics snapshot
``aggregate.csv``           per condition and metric: n, mean, std, min, quartiles, max
``*.png``                   exploration vs time per condition; the last time metric vs each
                            numeric parameter (e.g. time to 99 % vs number of robots)
``timing.csv``              wall time and real-time factor per run (machine-dependent)
``errors.log``              the traceback of every failed run
``stale_results.csv``       on resume: rows of cases the (edited) experiment no longer has
``checkpoints/``            with ``--checkpoint-every``: the unfinished runs' checkpoints
``cases.csv``, ``experiment.json``, ``experiment.yaml``   what was planned, for the record
=========================== ======================================================================

A row is appended and flushed to disk as each run finishes, so an interrupted batch keeps what
finished; ``--resume`` skips the cases already in ``results.csv`` (failed ones are retried) and,
with ``--checkpoint-every``, continues an interrupted run from its last checkpoint. When
the last case is done the CSV files are rewritten in case order, so a resumed batch leaves the
same files as an uninterrupted one.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .aggregate import aggregate
from .batch_files import (
    CHECKPOINTS,
    ERRORS,
    RESULTS,
    SERIES_COLUMNS,
    STALE,
    TIMESERIES,
    TIMING,
    TIMING_COLUMNS,
    CsvLog,
    read_rows,
    write_rows,
)
from .experiment import Case, Experiment, ExperimentError, load_experiment


def result_columns(experiment: Experiment) -> list[str]:
    """The columns of ``results.csv`` for ``experiment``, in order."""
    return [
        "case_id",
        "condition_id",
        *experiment.parameter_names,
        "controller",
        "seed",
        "status",
        "error",
        "end_reason",
        "ticks",
        "sim_time",
        *experiment.metrics,
    ]


# ---------------------------------------------------------------------------------- one run
def run_case(
    case: Case, checkpoints: str | None = None, checkpoint_every: int = 0
) -> dict[str, Any]:
    """Run one case in this process; never raises for a failing run.

    With ``checkpoints`` (a folder) and ``checkpoint_every`` > 0 the run writes
    ``<case_id>.ckpt`` there every ``checkpoint_every`` ticks and, when that file exists at the
    start (an interrupted earlier attempt), continues from it bit-identically; the file is
    removed when the run ends.

    Returns ``{"case_id", "row", "series", "timing", "traceback"}``: the ``results.csv`` row
    (``status`` "ok" or "failed" with the error), the time-series rows, the timing row and the
    traceback text of a failure ("" otherwise). Used by the local pool and by Dask workers.
    """
    from maes_sim.core import config_from_dict

    from ..runners.direct import run
    from .run_metrics import compute_metrics

    started = time.perf_counter()
    row: dict[str, Any] = {
        "case_id": case.case_id,
        "condition_id": case.condition_id,
        **dict(case.parameters),
        "controller": case.controller,
        "seed": case.seed,
        "status": "ok",
        "error": "",
        "end_reason": "",
    }
    series: list[list[Any]] = []
    tb = ""
    rtf: float | None = None
    ckpt = None
    if checkpoints is not None and checkpoint_every > 0:
        ckpt = Path(checkpoints) / f"{case.case_id}.ckpt"
    try:
        result = _run_resumable(run, case, config_from_dict(case.config), ckpt, checkpoint_every)
        row.update(
            end_reason=result.end_reason or f"max_ticks {case.max_ticks} reached",
            ticks=result.ticks,
            sim_time=round(result.sim_time, 6),
        )
        row.update(compute_metrics(result, case.metrics))
        series = [
            [
                case.case_id,
                s["tick"],
                s["sim_time"],
                s["exploration_percent"],
                s["coverage_percent"],
            ]
            for s in result.snapshots
        ]
        rtf = result.real_time_factor
    except Exception as exc:  # a run that raises is recorded, and the batch goes on
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        row.update(status="failed", error=message[:500])
        tb = traceback.format_exc()
    wall = time.perf_counter() - started
    timing = [
        case.case_id,
        round(wall, 3),
        "" if rtf is None else round(rtf, 3),
        f"{socket.gethostname()}:{os.getpid()}",
    ]
    return {
        "case_id": case.case_id,
        "row": row,
        "series": series,
        "timing": timing,
        "traceback": tb,
    }


def _run_resumable(run: Callable, case: Case, config: Any, ckpt: Path | None, every: int) -> Any:
    from maes_sim.core import SnapshotError

    kwargs: dict[str, Any] = {"seed": case.seed, "max_ticks": case.max_ticks}
    if ckpt is None:
        return run(config, case.controller_ref, **kwargs)
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    kwargs.update(checkpoint=ckpt, checkpoint_every=every)
    result = None
    if ckpt.exists():
        try:
            result = run(config, case.controller_ref, resume=ckpt, **kwargs)
        except SnapshotError:  # unreadable, or from another version: run from the start
            result = None
    if result is None:
        result = run(config, case.controller_ref, **kwargs)
    ckpt.unlink(missing_ok=True)
    return result


# ---------------------------------------------------------------------------------- files
def _write_plan(experiment: Experiment, out: Path) -> None:
    shutil.copyfile(experiment.path, out / "experiment.yaml")
    meta = {
        "name": experiment.name,
        "parameters": list(experiment.parameter_names),
        "parameter_kinds": experiment.parameter_kinds,
        "controllers": list(experiment.controllers),
        "seeds": list(experiment.seeds),
        "metrics": list(experiment.metrics),
        "max_ticks": experiment.max_ticks,
        "cases": len(experiment.cases),
    }
    (out / "experiment.json").write_text(json.dumps(meta, indent=2) + "\n")
    cols = ["case_id", "condition_id", *experiment.parameter_names, "controller", "seed"]
    write_rows(
        out / "cases.csv",
        cols,
        (
            {
                "case_id": c.case_id,
                "condition_id": c.condition_id,
                **dict(c.parameters),
                "controller": c.controller,
                "seed": c.seed,
            }
            for c in experiment.cases
        ),
    )


# ---------------------------------------------------------------------------------- progress
class Progress:
    """A one-line progress bar on stderr (one line per run when stderr is not a terminal)."""

    def __init__(self, total: int, already: int, stream: Any = None, enabled: bool = True):
        self.total, self.done, self.failed = total, already, 0
        self._start_done = already
        self._t0 = time.monotonic()
        self._stream = stream or sys.stderr
        self._enabled = enabled
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())

    def update(self, ok: bool, case_id: str = "") -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if not self._enabled:
            return
        elapsed = time.monotonic() - self._t0
        new = self.done - self._start_done
        left = (self.total - self.done) * elapsed / new if new else 0.0
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        line = (
            f"maes-batch [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
            f"{f' ({self.failed} failed)' if self.failed else ''}  {_clock(elapsed)} elapsed"
            f", ~{_clock(left)} left"
        )
        if self._tty:
            self._stream.write("\r" + line + ("\n" if self.done == self.total else ""))
        else:
            self._stream.write(f"{line}  {case_id}{'' if ok else ' FAILED'}\n")
        self._stream.flush()


def _clock(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60:02d}:{s % 60:02d}"


# ---------------------------------------------------------------------------------- executors
#: Linux prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    """Worker initializer: end this worker when the batch process dies, even by ``kill -9``.

    On Linux the kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``);
    elsewhere a daemon thread checks the parent once a second. A worker whose parent is already
    gone exits at once.
    """
    armed = False
    if sys.platform.startswith("linux"):
        import ctypes
        import ctypes.util
        import signal

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the signal was armed
    if not armed:
        import threading

        def watch() -> None:
            while os.getppid() == parent_pid:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="maes-batch-parent-watch", daemon=True).start()


def _local(cases: list[Case], workers: int, ckpt: tuple = (None, 0)) -> Iterator[dict[str, Any]]:
    if workers <= 1:
        for case in cases:
            yield run_case(case, *ckpt)
        return
    # spawn: workers start clean (no inherited threads or half-initialised numba state)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    )
    futures = {pool.submit(run_case, c, *ckpt): c for c in cases}
    try:
        for fut in as_completed(futures):
            yield _outcome(fut, futures[fut])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: How long to try reaching a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT = "20s"


def _connect(scheduler: str) -> Any:
    """A Dask client of ``scheduler``; ExperimentError when the package or scheduler is missing."""
    try:
        from distributed import Client
    except ImportError:
        raise ExperimentError(
            "--scheduler needs the 'distributed' package (pip install dask distributed)"
        ) from None
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as err:
        raise ExperimentError(f"cannot reach the Dask scheduler {scheduler!r}: {err}") from None


def _dask(cases: list[Case], client: Any, ckpt: tuple = (None, 0)) -> Iterator[dict[str, Any]]:
    from distributed import as_completed as dask_completed

    try:
        futures = {client.submit(run_case, c, *ckpt, pure=False): c for c in cases}
        try:
            for fut in dask_completed(list(futures)):
                yield _outcome(fut, futures[fut])
        finally:
            client.cancel(list(futures))
    finally:
        client.close()


def _outcome(fut: Any, case: Case) -> dict[str, Any]:
    """The worker's answer, or a failed row when the worker itself died."""
    try:
        return fut.result()
    except Exception as exc:
        row = {
            "case_id": case.case_id,
            "condition_id": case.condition_id,
            **dict(case.parameters),
            "controller": case.controller,
            "seed": case.seed,
            "status": "failed",
            "error": f"worker failed: {type(exc).__name__}: {exc}"[:500],
        }
        return {
            "case_id": case.case_id,
            "row": row,
            "series": [],
            "timing": [case.case_id, "", "", ""],
            "traceback": traceback.format_exc(),
        }


# ---------------------------------------------------------------------------------- batch
@dataclass
class BatchSummary:
    """What :func:`run_experiment` did."""

    out_dir: Path
    total: int
    skipped: int
    completed: int
    failed: int
    interrupted: bool
    wall_time: float


def _clean_previous(out: Path, columns: list[str], experiment: Experiment) -> set[str]:
    """On resume: keep only the finished (ok) runs' rows; returns their case ids.

    Rows of cases this experiment no longer has (its base config or a setting changed) move to
    ``stale_results.csv``, so the results never mix two versions of an experiment.
    """
    known = {c.case_id for c in experiment.cases}
    rows = read_rows(out / RESULTS, columns)
    done = [r for r in rows if r["status"] == "ok" and r["case_id"] in known]
    stale = [r for r in rows if r["case_id"] not in known]
    if stale:
        previous = read_rows(out / STALE, columns)
        write_rows(out / STALE, columns, previous + stale)
        print(
            f"maes-batch: {len(stale)} rows of {RESULTS} belong to cases this experiment no "
            f"longer has (it changed); moved to {out / STALE}",
            file=sys.stderr,
        )
    ids = {r["case_id"] for r in done}
    write_rows(out / RESULTS, columns, done)
    for name, cols in ((TIMESERIES, SERIES_COLUMNS), (TIMING, TIMING_COLUMNS)):
        kept = [r for r in read_rows(out / name, list(cols)) if r["case_id"] in ids]
        write_rows(out / name, list(cols), kept)
    return ids


def _finalize(experiment: Experiment, out: Path, columns: list[str]) -> None:
    """Rewrite the CSV files in case order, then the aggregate table and plots."""

    order = {c.case_id: k for k, c in enumerate(experiment.cases)}
    rows = read_rows(out / RESULTS, columns)
    write_rows(out / RESULTS, columns, sorted(rows, key=lambda r: order[r["case_id"]]))
    for name, cols in ((TIMESERIES, SERIES_COLUMNS), (TIMING, TIMING_COLUMNS)):
        rows = read_rows(out / name, list(cols))
        rows.sort(key=lambda r: (order.get(r["case_id"], -1), int(r.get("tick") or 0)))
        write_rows(out / name, list(cols), rows)
    aggregate(out)


def run_experiment(
    experiment: Experiment | str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    checkpoint_every: int = 0,
    stop_after: int | None = None,
    show_progress: bool = True,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> BatchSummary:
    """Run an experiment's cases and write its result files.

    Parameters
    ----------
    experiment : Experiment or path
        A loaded experiment or its YAML file (validated before anything runs).
    out_dir : path, optional
        Output folder (default ``results/experiments/<name>``).
    workers : int, optional
        Local worker processes (default: the usable cores; 1 runs in this process).
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:port``); the cases run on its workers instead.
    resume : bool
        Continue in an existing output folder, skipping finished cases. Without it, a folder
        that already holds results is an error.
    checkpoint_every : int
        Each run writes a checkpoint to ``<out>/checkpoints/`` every this many ticks (0: none),
        and a resumed batch continues an interrupted run from its checkpoint (bit-identical)
        instead of from its start. The folder needs to be shared with Dask workers.
    stop_after : int, optional
        Stop after this many runs finished (simulates an interruption; for tests).
    show_progress : bool
        Draw the progress bar on stderr.
    on_result : callable, optional
        Called with each run's outcome (see :func:`run_case`) as it arrives.

    Returns
    -------
    BatchSummary

    Examples
    --------
    >>> s = run_experiment("experiments/robots_vs_time.yaml", workers=2)  # doctest: +SKIP
    >>> s.completed, s.failed  # doctest: +SKIP
    (12, 0)
    """
    if (
        isinstance(checkpoint_every, bool)
        or not isinstance(checkpoint_every, int)
        or (checkpoint_every < 0)
    ):
        raise ExperimentError(f"checkpoint_every must be an integer >= 0, got {checkpoint_every!r}")
    if not isinstance(experiment, Experiment):
        experiment = load_experiment(experiment)
    out = Path(out_dir) if out_dir is not None else Path("results/experiments") / experiment.name
    columns = result_columns(experiment)
    if (out / RESULTS).exists() and not resume:
        raise ExperimentError(
            f"{out / RESULTS} exists: pass --resume to continue that batch, or choose another --out"
        )
    client = _connect(scheduler) if scheduler else None  # fail before writing anything
    out.mkdir(parents=True, exist_ok=True)
    done = _clean_previous(out, columns, experiment) if resume else set()
    _write_plan(experiment, out)
    todo = [c for c in experiment.cases if c.case_id not in done]
    if workers is None:
        workers = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
    workers = max(1, min(int(workers), len(todo) or 1))

    logs = {
        RESULTS: CsvLog(out / RESULTS, columns),
        TIMESERIES: CsvLog(out / TIMESERIES, SERIES_COLUMNS),
        TIMING: CsvLog(out / TIMING, TIMING_COLUMNS),
    }
    progress = Progress(len(experiment.cases), len(done), enabled=show_progress)
    started = time.monotonic()
    completed = failed = 0
    interrupted = False
    ckpt = (str(out / CHECKPOINTS), checkpoint_every) if checkpoint_every else (None, 0)
    outcomes = _dask(todo, client, ckpt) if client is not None else _local(todo, workers, ckpt)
    try:
        for outcome in outcomes:
            # series first: a results row marks the run as finished
            logs[TIMESERIES].write(outcome["series"])
            logs[TIMING].write([outcome["timing"]])
            logs[TIMESERIES].sync()
            logs[TIMING].sync()
            logs[RESULTS].write([[outcome["row"].get(c) for c in columns]])
            logs[RESULTS].sync()
            if outcome["traceback"]:
                with (out / ERRORS).open("a", encoding="utf-8") as fh:
                    fh.write(f"=== case {outcome['case_id']}\n{outcome['traceback']}\n")
            ok = outcome["row"]["status"] == "ok"
            completed += 1
            failed += 0 if ok else 1
            progress.update(ok, outcome["case_id"])
            if on_result is not None:
                on_result(outcome)
            if stop_after is not None and completed >= stop_after and completed < len(todo):
                interrupted = True
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # cancels the cases not yet started
        for log in logs.values():
            log.close()
    if not interrupted:
        _finalize(experiment, out, columns)
    return BatchSummary(
        out,
        len(experiment.cases),
        len(done),
        completed,
        failed,
        interrupted,
        time.monotonic() - started,
    )


def main(argv: list[str] | None = None) -> int:
    """Console entry point ``maes-batch``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="maes-batch",
        description="Run every case of a MAES experiment file in direct mode, in parallel.",
    )
    parser.add_argument("experiment", help="experiment YAML file (see docs/experiments.md)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local worker processes (default: the usable cores)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (instead of local workers)",
    )
    parser.add_argument(
        "--out", default=None, help="output folder (default: results/experiments/<name>)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted batch in --out, skipping finished cases",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=0,
        metavar="TICKS",
        help="each run checkpoints every TICKS ticks; --resume continues interrupted runs",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    if args.checkpoint_every < 0:
        parser.error(f"--checkpoint-every must be >= 0, got {args.checkpoint_every}")
    try:
        experiment = load_experiment(args.experiment)
        print(f"maes-batch: {experiment.name}: {len(experiment.cases)} runs", file=sys.stderr)
        summary = run_experiment(
            experiment,
            args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            resume=args.resume,
            checkpoint_every=args.checkpoint_every,
            show_progress=not args.quiet,
        )
    except ExperimentError as err:
        print(f"maes-batch: error: {err}", file=sys.stderr)
        return 2
    if summary.interrupted:
        print(
            f"maes-batch: interrupted after {summary.skipped + summary.completed} of "
            f"{summary.total} runs; continue with --resume --out {summary.out_dir}",
            file=sys.stderr,
        )
        return 130
    print(
        f"maes-batch: {summary.completed} runs in {summary.wall_time:.1f} s "
        f"({summary.skipped} skipped, {summary.failed} failed); results in {summary.out_dir}",
        file=sys.stderr,
    )
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())
