"""``python -m oomlens.fleet ROOT... --out fleet.parquet [--scheduler ADDR] [--workers N]``.

The command is :func:`oomlens.fleet.main`, imported from the package (not run as
``__main__``) so that the functions Dask sends to workers are found by name there."""

import sys

from oomlens.fleet import main

if __name__ == "__main__":
    sys.exit(main())
