"""``python -m coosparse.bench`` (the target of ``make bench``); see :mod:`coosparse.bench.cli`."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
