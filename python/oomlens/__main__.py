"""The ``oomlens`` command: the engine's own command line (``oomlens::cli::run``), the
same program as the Rust binary, run inside this package's extension module."""

from __future__ import annotations

import signal
import sys
from typing import Optional, Sequence

from . import _native

__all__ = ["main"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs ``oomlens`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    # The engine does not come back to Python until it is done: let Ctrl-C end the
    # command at once, as it ends the binary.
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    except (ValueError, OSError):  # not the main thread
        previous = None
    # The engine writes to the process's standard output and error directly.
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return _native.main(["oomlens", *args])
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    sys.exit(main())
