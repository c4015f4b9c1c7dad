"""Operands for the elementwise tests: COO arrays with exactly the requested flags, and the
comparison of a result with its NumPy reference (values, dtype, shape, true flags)."""
import numpy as np

import coosparse
from coosparse import COO


# flag combinations: (sorted, unique)
FLAGS = {
    "coalesced": (True, True),
    "sorted": (True, False),   # sorted, with duplicates
    "unique": (False, True),   # random order, no duplicates
    "none": (False, False),    # random order, with duplicates
}


def make(shape, nnz, flags="none", *, sparse_ndim=None, dtype=np.float64, seed=0, pool=None):
    """A COO with exactly the given flags (duplicates really present when not unique).

    ``pool``: draw the linear indices from these keys (so two operands overlap).
    """
    rng = np.random.default_rng(seed)
    sorted_, unique = FLAGS[flags]
    sparse_ndim = len(shape) if sparse_ndim is None else sparse_ndim
    sshape, dshape = shape[:sparse_ndim], shape[sparse_ndim:]
    total = int(np.prod(sshape, dtype=object))
    if pool is None:
        pool = np.arange(total)
    if unique:
        nnz = min(nnz, len(pool))
        keys = rng.choice(pool, size=nnz, replace=False)
    else:
        keys = rng.choice(pool, size=nnz, replace=True)
        if nnz >= 2:
            keys[-1] = keys[0]  # at least one duplicate
    keys = np.asarray(keys, dtype=np.int64)
    if sorted_:
        keys = np.sort(keys, kind="stable")
    else:
        keys = rng.permutation(keys)
        if nnz >= 2 and np.all(keys[1:] >= keys[:-1]):
            keys = keys[::-1].copy()
    idx = (np.stack(np.unravel_index(keys, sshape)).astype(np.int64) if sparse_ndim
           else np.zeros((0, nnz), np.int64))
    vals = rng.integers(-5, 10, size=(nnz,) + tuple(dshape))
    if np.dtype(dtype) == np.bool_:
        vals = vals > 2
    elif np.dtype(dtype).kind == "c":
        vals = vals + 1j * rng.integers(-3, 4, size=vals.shape)
    elif np.dtype(dtype).kind == "u":
        vals = np.abs(vals)
    return COO(idx, np.asarray(vals).astype(dtype), shape, sorted=sorted_, unique=unique)


def close(got, want, dtype):
    if np.dtype(dtype).kind in "fc":
        tol = 1e-2 if np.dtype(dtype) in (np.float16, np.complex64, np.float32) else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def pair(fa, fb, shape=(6, 7), nnz=25, **kw):
    pool = np.random.default_rng(99).choice(int(np.prod(shape[:kw.get("sparse_ndim", len(shape))])),
                                            size=20, replace=False)
    a = make(shape, nnz, fa, seed=1, pool=pool, **kw)
    b = make(shape, nnz - 7, fb, seed=2, pool=pool, **kw)
    return a, b


DTYPES = [np.dtype(t) for t in coosparse.SUPPORTED_DTYPES]


def check_flags(r):
    """A True flag is true (SPEC 1)."""
    if not isinstance(r, COO) or r.nnz <= 1:
        return
    r = r.to("cpu")
    keys = np.ravel_multi_index(tuple(r.indices), r.sparse_shape) if r.sparse_ndim else np.zeros(r.nnz)
    if r.is_sorted:
        assert np.all(np.diff(keys) >= 0)
    if r.is_unique:
        assert len(np.unique(keys)) == r.nnz


def dense(x):
    return x.to("cpu").to_dense() if isinstance(x, COO) else (x.get() if hasattr(x, "get") else x)


def same(r, ref):
    """``r`` (COO or dense) equals the NumPy reference: values (NaN equal), dtype, shape."""
    got = dense(r)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    assert got.shape == ref.shape
    if ref.dtype.kind in "fc":
        wide = ref.dtype in (np.float64, np.complex128)
        np.testing.assert_allclose(got, ref, rtol=1e-6 if wide else 1e-2, atol=1e-9 if wide else 1e-2,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref)
    check_flags(r)
