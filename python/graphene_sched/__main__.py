"""``python -m graphene_sched ARGS`` and the ``graphene`` / ``graphene-sched`` console scripts:
the ``graphene`` command itself, run in this process by the extension module through the same
entry point as the binary (no separate binary is needed). ``python -m graphene_sched --help``
lists the commands."""

from __future__ import annotations

import signal
import sys
from typing import List, Optional

from . import _core

__all__ = ["main"]


def main(argv: Optional[List[str]] = None) -> int:
    """Runs ``graphene`` with ``argv`` (default: this process's arguments) and returns its exit
    status: 0 success, 1 failure, 2 bad flags. Run from the command line, Ctrl-C stops the
    command as it stops the binary."""
    if argv is None:
        argv = sys.argv[1:]
        # Python's own SIGINT handler would only run once the command returns.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    if isinstance(argv, (str, bytes)):
        raise _core.UsageError("argv: expected a list of arguments, not a single string")
    return int(_core.run_cli(["graphene", *argv]))


if __name__ == "__main__":
    sys.exit(main())
