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


# ---------------------------------------------------------------- the sign of zero
def assert_bits(got, want):
    """Equal values with equal signs of zero (each part of a complex); NaN equals NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    pairs = [(got.real, want.real), (got.imag, want.imag)] if got.dtype.kind == "c" else [(got, want)]
    for g, w in pairs:
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok])
        np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]), err_msg="sign of zero differs")


def dense_meaning(a):
    """Index by index: the fill's bits, or the entries summed in stored order from the first (float16 in
    float32, as the library accumulates), in pure NumPy scalars."""
    acc = np.dtype(np.float32 if a.dtype == np.float16 else a.dtype)
    out = np.full(a.shape, a.fill_value, dtype=a.dtype)
    sums = {}
    with np.errstate(all="ignore"):  # (inf - inf is NaN, as the library's sum)
        for i in range(a.nnz):
            key = tuple(int(v) for v in a.indices[:, i])
            v = np.asarray(a.values[i]).astype(acc)
            sums[key] = v.copy() if key not in sums else sums[key] + v
        for key, v in sums.items():
            out[key] = v.astype(a.dtype)
    return out
