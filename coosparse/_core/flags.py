"""Verification of flag hints (SPEC 1: a flag that is True is always true)."""
from __future__ import annotations

import numpy as np

from .._kernels.backend import backend_for
from .keys import is_wide, joint_keys, strides_of

_CHUNK = 1 << 16
"""Entries per piece of the CPU's order check: the piece's keys and comparisons stay in cache."""


def verify_flags(indices, sparse_shape, sorted, unique):
    """Raise ValueError naming the first position where a True hint is false.

    ``indices`` are within ``sparse_shape`` (the constructor checked them first).
    """
    if sorted:
        if isinstance(indices, np.ndarray) and indices.shape[0] and not is_wide(sparse_shape):
            decrease, repeat = _first_disorder_in_pieces(indices, sparse_shape, unique)
        else:
            (keys,), _ = joint_keys([indices], sparse_shape)
            decrease, repeat = _first_disorder(keys, unique)
        if decrease >= 0 or repeat >= 0:
            what, pos = ("sorted", decrease) if decrease >= 0 else ("unique", repeat)
            raise ValueError(
                f"flag hint {what}=True is false: entry {pos} (index "
                f"{tuple(int(v) for v in indices[:, pos])}) "
                + ("comes before its predecessor" if what == "sorted" else "repeats its predecessor")
            )
        return
    (keys,), bound = joint_keys([indices], sparse_shape)
    if unique:
        sorted_keys, perm = backend_for(keys).sort_pairs(keys, bound)
        dup = sorted_keys[1:] == sorted_keys[:-1]
        if bool(dup.any()):  # synchronize!
            j = int(dup.argmax())
            # the sort is stable, so the earlier entry comes first
            first, second = int(perm[j]), int(perm[j + 1])
            raise ValueError(
                f"flag hint unique=True is false: entries {first} and {second} share index "
                f"{tuple(int(v) for v in indices[:, first])}"
            )


def _first_disorder(keys, strict):
    """(first position whose key is below its predecessor's, first that repeats it when ``strict``),
    each -1 when there is none."""
    # compared in place: a difference array would be one more pass over 8 bytes per entry
    bad = keys[1:] < keys[:-1] if not strict else keys[1:] <= keys[:-1]
    if not bool(bad.any()):  # synchronize!
        return -1, -1
    before = keys[1:] < keys[:-1]
    if bool(before.any()):  # synchronize!
        return int(before.argmax()) + 1, -1
    return -1, int(bad.argmax()) + 1


def _first_disorder_in_pieces(indices, sparse_shape, strict):
    """:func:`_first_disorder` of the linear keys, computed piece by piece on the CPU.

    The keys of a whole array cost a pass that writes 8 B per entry and a second that reads
    them back; a piece's keys never leave the cache (a 2M-entry 2-D check 26 -> 2.6 ms).
    A decrease anywhere wins over an earlier repeat, as in the whole-array check.
    """
    strides = strides_of(sparse_shape)[0]
    n = indices.shape[1]
    repeat = -1
    keys = np.empty(min(n, _CHUNK + 1), dtype=np.int64)
    term = np.empty_like(keys)
    for lo in range(0, n - 1, _CHUNK):
        hi = min(n, lo + _CHUNK + 1)  # one entry past the piece: its successor's first key
        k, t = keys[:hi - lo], term[:hi - lo]
        np.multiply(indices[0, lo:hi], strides[0], out=k)
        for d in range(1, indices.shape[0]):
            np.multiply(indices[d, lo:hi], strides[d], out=t)
            k += t
        decrease, rep = _first_disorder(k, strict and repeat < 0)
        if decrease >= 0:
            return lo + decrease, -1
        if rep >= 0:
            repeat = lo + rep
    return -1, repeat
