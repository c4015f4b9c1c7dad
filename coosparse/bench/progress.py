"""A progress bar: tqdm when installed (a soft dependency), else plain lines on stderr."""
from __future__ import annotations

import sys
import time


class _Plain:
    def __init__(self, total, desc):
        self.total, self.n, self.desc = total, 0, desc
        self.t0 = time.perf_counter()

    def _line(self, text):
        pct = f"{100 * self.n / self.total:3.0f}%" if self.total else "  ?%"
        sys.stderr.write(f"[{pct} {self.n}/{self.total} {time.perf_counter() - self.t0:5.0f}s] {text}\n")
        sys.stderr.flush()

    def set_postfix_str(self, text):
        self._line(text)

    def update(self, n=1):
        self.n += n

    def refresh(self):
        pass

    def write(self, text):
        sys.stderr.write(text + "\n")

    def close(self):
        self._line("done")


class Progress:
    """Counts cases; the total grows as case modules report how many they have."""

    def __init__(self, total=0, desc="bench", enabled=True):
        self._bar = None
        if not enabled:
            return
        try:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="case", file=sys.stderr, dynamic_ncols=True,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}]{postfix}")
        except ImportError:
            self._bar = _Plain(total, desc)

    def add_total(self, n):
        if self._bar is not None:
            self._bar.total += n
            self._bar.refresh()

    def status(self, text):
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def advance(self, n=1):
        if self._bar is not None:
            self._bar.update(n)

    def write(self, text):
        if self._bar is not None:
            self._bar.write(text)
        else:
            sys.stderr.write(text + "\n")

    def close(self):
        if self._bar is not None:
            self._bar.close()
