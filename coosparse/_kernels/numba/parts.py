"""Part geometry shared by the kernel families: the contiguous range of part ``t``.

Kernels run part by part (``threads.run_parts``): a part kernel ``fn(t, nparts, ...)``
works on ``part_range(t, nparts, n)``, or cuts a sorted array with ``lower_bound``.
The helpers are inlined into each kernel (no compilation of their own).
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


@nb.njit(cache=True, nogil=True, inline="always")
def lower_bound(a, lo, hi, k):
    """The first i in [lo, hi) with a[i] >= k (hi if none), for a[lo:hi] ascending.

    ``np.searchsorted(a[lo:hi], k) + lo``, as a loop: Numba's searchsorted compiles
    its generic comparisons (complex and float orderings) as functions of their own.
    """
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo
