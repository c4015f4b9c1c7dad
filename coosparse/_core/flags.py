"""Verification of flag hints (SPEC 1: a flag that is True is always true)."""
from __future__ import annotations

from .._kernels.backend import backend_for
from .keys import joint_keys


def verify_flags(indices, sparse_shape, sorted, unique):
    """Raise ValueError naming the first position where a True hint is false."""
    (keys,), bound = joint_keys([indices], sparse_shape)
    if sorted:
        # compared in place: a difference array would be one more pass over 8 bytes per entry
        bad = keys[1:] < keys[:-1] if not unique else keys[1:] <= keys[:-1]
        if bool(bad.any()):  # synchronize!
            before = keys[1:] < keys[:-1]
            what = "sorted" if bool(before.any()) else "unique"  # synchronize!
            pos = int(before.argmax() if what == "sorted" else bad.argmax()) + 1
            raise ValueError(
                f"flag hint {what}=True is false: entry {pos} (index "
                f"{tuple(int(v) for v in indices[:, pos])}) "
                + ("comes before its predecessor" if what == "sorted" else "repeats its predecessor")
            )
        return
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
