"""``python -m maes_bringup.runners.direct_cli``: a direct-mode run from the command line, with
checkpoints, resumable after a crash.

Usage::

    python -m maes_bringup.runners.direct_cli [--config maes_config.yaml] [--logic pkg.mod:fn]
        [--seed N] [--max-ticks N] [--results DIR] [--checkpoint FILE]
        [--checkpoint-every TICKS] [--resume]

With ``--checkpoint FILE`` the whole run state is written to ``FILE`` every
``--checkpoint-every`` ticks (default 1000); after a crash, the same command with ``--resume``
continues from the last checkpoint and writes the same results as an uninterrupted run
(docs/learning.md, "Snapshots and resuming"). The results folder is printed at the end.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from maes_sim.contract import DEFAULT_LOGIC


def main(argv: list[str] | None = None) -> int:
    """Run, write the results, print their folder; 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="maes_config.yaml", help="the run's config file")
    parser.add_argument("--logic", default=DEFAULT_LOGIC, help="pkg.module:function or file.py:fn")
    parser.add_argument("--seed", type=int, default=None, help="override random_seeds[0]")
    parser.add_argument("--max-ticks", type=int, default=None, help="stop after N ticks")
    parser.add_argument("--results", default="results", help="parent folder of the results")
    parser.add_argument("--checkpoint", type=Path, default=None, help="checkpoint file")
    parser.add_argument("--checkpoint-every", type=int, default=1000, metavar="TICKS")
    parser.add_argument(
        "--resume", action="store_true", help="continue from --checkpoint (it must exist)"
    )
    args = parser.parse_args(argv)
    if args.resume and (args.checkpoint is None or not args.checkpoint.is_file()):
        parser.error("--resume needs --checkpoint naming an existing checkpoint file")

    from maes_sim.core import ConfigError, SnapshotError

    from .direct import LogicError, run

    try:
        result = run(
            args.config,
            args.logic,
            seed=args.seed,
            max_ticks=args.max_ticks,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.checkpoint if args.resume else None,
        )
    except (ConfigError, SnapshotError, ValueError) as err:
        print(f"maes direct: error: {err}", file=sys.stderr)
        return 2
    except LogicError as err:
        where = (
            f"; continue with --resume --checkpoint {args.checkpoint}" if args.checkpoint else ""
        )
        print(f"maes direct: {err}{where}", file=sys.stderr)
        return 1
    folder = result.write(args.results)
    print(f"maes direct: tick {result.ticks}, {result.end_reason}; results in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
