"""Part geometry shared by the kernel families: the contiguous range of part ``t``.

Kernels run part by part (``threads.run_parts``): a part kernel ``fn(t, nparts, ...)``
works on ``part_range(t, nparts, n)``. The helper is inlined into each kernel (no
compilation of its own).
"""
import numba as nb


@nb.njit(cache=True, nogil=True, inline="always")
def part_range(t, nparts, n):
    """[lo, hi): part t of nparts contiguous parts of range(n) (the last ones may be empty)."""
    c = (n + nparts - 1) // nparts
    lo = t * c
    hi = lo + c
    # conditional expressions, not min(): Numba compiles its min() for tuples separately
    return (n if lo > n else lo), (n if hi > n else hi)
