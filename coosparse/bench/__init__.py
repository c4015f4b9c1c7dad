"""The comparison benchmark (``python -m coosparse.bench``).

``harness`` times implementations side by side in one process (alternating
runs, warm-up, median and spread) and measures peak memory; the
``cases_<area>`` modules define, per operation, the coosparse call and the
peers' equivalents on the same data.
"""
