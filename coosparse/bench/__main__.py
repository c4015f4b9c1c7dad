"""``python -m coosparse.bench`` (the target of ``make bench``); see :mod:`coosparse.bench.cli`."""
import sys

from .harness import ensure_fixed_mmap_threshold

if __name__ == "__main__":
    # before anything allocates: large blocks must go back to the OS for peak memory to be exact
    ensure_fixed_mmap_threshold()
    from .cli import main

    sys.exit(main())
