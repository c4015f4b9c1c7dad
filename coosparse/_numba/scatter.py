"""Strided scatter into a flat buffer: the kernel behind to_dense and dense + COO.

``target`` is a 1-D view of the destination's memory, ``addresses[i]`` the
element offset of entry i's first dense element and ``inner[c]`` the offset of
its c-th dense element, so targets with any strides are served. Entries are
applied sequentially in order, which makes duplicate sums deterministic.
"""
import numba as nb


@nb.njit(cache=True, nogil=True)
def scatter_add(target, addresses, values, inner):
    n = addresses.shape[0]
    k = inner.shape[0]
    for i in range(n):
        a = addresses[i]
        for c in range(k):
            target[a + inner[c]] += values[i, c]


@nb.njit(cache=True, nogil=True)
def scatter_set(target, addresses, values, inner):
    n = addresses.shape[0]
    k = inner.shape[0]
    for i in range(n):
        a = addresses[i]
        for c in range(k):
            target[a + inner[c]] = values[i, c]
