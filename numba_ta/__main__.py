"""``python -m numba_ta``: the ``numba-ta`` command (:func:`numba_ta.cli.main`)."""

import sys

from numba_ta.cli import main

if __name__ == "__main__":
    sys.exit(main())
