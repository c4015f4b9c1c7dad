"""Verification of flag hints (SPEC 1: a flag that is True is always true)."""
from __future__ import annotations

from ._keys import joint_keys


def verify_flags(indices, sparse_shape, sorted, unique):
    """Raise ValueError naming the first position where a True hint is false."""
    (keys,), bound = joint_keys([indices], sparse_shape)
    if sorted:
        step = keys[1:] - keys[:-1]
        bad = step < 0 if not unique else step <= 0
        if bool(bad.any()):  # synchronize!
            what = "sorted" if bool((step < 0).any()) else "unique"  # synchronize!
            pos = int((step < 0).argmax() if what == "sorted" else bad.argmax()) + 1
            raise ValueError(
                f"flag hint {what}=True is false: entry {pos} (index "
                f"{tuple(int(v) for v in indices[:, pos])}) "
                + ("comes before its predecessor" if what == "sorted" else "repeats its predecessor")
            )
        return
    if unique:
        from ._backend import backend_for

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


def lying_flag_error(operand=None, unique=False):
    """The ValueError for a True flag that a kernel's cheap check found false (``check=False`` input).

    One wording for the Numba layer's checks (O(1) ends, the fused merges'
    in-pass order count); the CUDA layer's ORDER report (``_cuda/errors.py``)
    reads the same way.
    """
    who = f"the {operand} operand's" if operand else "an operand's"
    flag = "sorted=True is false (or unique=True)" if unique else "sorted=True is false"
    how = "out of order or repeat" if unique else "out of order"
    return ValueError(
        f"{who} flag {flag}: its indices are {how}; an array built with check=False carries a "
        "wrong flag; rebuild it with check=True, or without the flag"
    )
