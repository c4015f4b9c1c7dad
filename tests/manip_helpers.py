"""Helpers of the shape / indexing / joining / searching tests.

``reference(a)`` is the dense meaning of a COO computed without coosparse
kernels (duplicates summed by ``np.add.at``, the fill where nothing is
stored); ``assert_coo(out, expected)`` compares a result with a dense NumPy
answer and checks that its flags are true; ``same_or_raises(ours, numpys)``
runs a call both ways, NumPy's answer or its exception type being the point.
"""
import numpy as np
import pytest

from coosparse import COO
from reference import dense_reference


def reference(a):
    """Dense meaning of COO ``a`` (fill included), from its parts only."""
    a = a.to("cpu")
    out = np.array(dense_reference(a.indices, a.values, a.shape))  # a 0-d bool result is a scalar
    fill = a.fill_value
    nan = np.asarray(fill).dtype.kind in "fc" and bool(np.isnan(fill))
    if nan or fill != 0:
        stored = np.zeros(a.sparse_shape, dtype=bool)
        if a.sparse_ndim:
            stored[tuple(a.indices)] = True
        elif a.nnz:
            stored[()] = True
        out[~stored] = fill
    return out


def linear(a):
    """Row-major positions of the stored indices as Python ints (exact for wide shapes)."""
    a = a.to("cpu")
    keys = [0] * a.nnz
    for d, n in enumerate(a.sparse_shape):
        row = a.indices[d].tolist()
        keys = [k * n + r for k, r in zip(keys, row)]
    return keys


def check_flags(a):
    """A flag that is True must be true (SPEC 1)."""
    keys = linear(a)
    if a.is_sorted:
        assert all(x <= y for x, y in zip(keys, keys[1:])), "is_sorted is True but the keys are not sorted"
    if a.is_unique:
        assert len(set(keys)) == len(keys), "is_unique is True but an index repeats"


def close(got, expected):
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if expected.dtype.kind in "fc":
        tol = 1e-2 if expected.dtype in (np.float16,) else 1e-5
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def assert_coo(out, expected, dtype=None):
    """``out`` is a COO equal to the dense ``expected`` with true flags."""
    assert isinstance(out, COO), type(out)
    assert out.shape == np.shape(expected), (out.shape, np.shape(expected))
    if dtype is not None:
        assert out.dtype == dtype, (out.dtype, dtype)
    check_flags(out)
    close(reference(out), expected)


def from_dense_fill(x, fill=0, sparse_ndim=None):
    """COO of the elements of ``x`` that differ from ``fill`` (pydata's ``COO.from_numpy(x, fill)``)."""
    x = np.asarray(x)
    sparse_ndim = x.ndim if sparse_ndim is None else sparse_ndim
    blocks = x.reshape(x.shape[:sparse_ndim] + (int(np.prod(x.shape[sparse_ndim:])),))
    if np.asarray(fill).dtype.kind in "fc" and np.isnan(fill):
        differs = ~np.isnan(blocks)
    else:
        differs = blocks != fill
    mask = differs.any(axis=-1) if blocks.shape[-1] else np.zeros(blocks.shape[:-1], dtype=bool)
    if sparse_ndim == 0:
        n = int(mask)
        return COO(np.zeros((0, n), np.int64), x[None][:n], x.shape, fill_value=fill)
    nz = np.nonzero(mask)
    return COO(np.array(nz, dtype=np.int64).reshape(sparse_ndim, -1), x[nz], x.shape,
               sorted=True, unique=True, fill_value=fill)


def same_or_raises(ours, numpys):
    """(ours(), numpys()) where NumPy answers; where it raises, ``ours()`` must raise the same type,
    and the result is None."""
    try:
        want = numpys()
    except Exception as e:  # noqa: BLE001 -- the type is the point
        with pytest.raises(type(e)):
            ours()
        return None
    return ours(), want
