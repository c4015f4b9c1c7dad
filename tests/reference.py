"""Dense NumPy references the tests compare against (no coosparse kernels used)."""
import numpy as np


def dense_reference(indices, values, shape):
    """Dense meaning of COO data: duplicates summed (np.add.at), float16 in float32, bool as any."""
    indices = np.asarray(indices)
    values = np.asarray(values)
    dtype = values.dtype
    acc = np.float32 if dtype == np.float16 else (np.int64 if dtype == np.bool_ else dtype)
    out = np.zeros(shape, dtype=acc)
    if indices.shape[0] == 0:  # no sparse dims: every entry adds to the whole (dense) array
        out += values.astype(acc).sum(axis=0)
    else:
        np.add.at(out, tuple(indices), values.astype(acc))
    if dtype == np.bool_:
        return out != 0
    return out.astype(dtype)


def dense_of(a):
    """Dense reference of a COO (moved to the CPU first)."""
    a = a.to("cpu")
    return dense_reference(a.indices, a.values, a.shape)
