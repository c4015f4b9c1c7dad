"""The ``sampled_transpose`` row (SDDMM's copy of the columns its mask names): the distinct
columns in the order of their first entry, copied exactly, the same numbers and bits on the
Numba layer (vector blocks with streaming stores, or element by element) and the emulated CUDA
layer (a stable sort and CuPy's copy)."""
import numpy as np
import pytest

from coosparse._kernels.numba import layer as nb
from coosparse._kernels.numba import transpose as tr

emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")


def _reference(a, cols):
    kk, nn = a.shape
    rowmap, want_cols = {}, []
    for c in cols:
        if 0 <= c < nn:
            want_cols.append(rowmap.setdefault(int(c), len(rowmap)))
        else:
            want_cols.append(-1)
    order = sorted(rowmap, key=rowmap.get)
    return np.ascontiguousarray(a[:, order].T), np.array(want_cols, dtype=np.int64), len(order)


def _aligned(shape, dtype, skew=0):
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.full(nbytes + 128, 0xAB, np.uint8)
    at = -buf.ctypes.data % 64 + skew
    return buf, at, buf[at:at + nbytes].view(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(8, 64), (16, 203), (17, 130), (64, 1000), (3, 40)])
@pytest.mark.parametrize("skew", [0, 8])  # whole aligned lines (8-byte items stream) or not
def test_sampled_transpose_numba(dtype, shape, skew):
    rng = np.random.default_rng(41)
    kk, nn = shape
    a = (rng.standard_normal(shape) * 1e3).astype(dtype)
    # repeats, columns never named, and bad columns (negative, past the end) among them
    cols = rng.integers(-3, nn + 3, size=3 * nn)
    cols[::7] = cols[0]
    want, want_cols, m = _reference(a, cols)
    for nthreads in (1, 3):
        buf, at, out = _aligned((nn, kk), dtype, skew)
        got, got_cols, gm = tr.sampled_transpose(a, cols, nthreads, out)
        assert got is out and gm == m and got_cols.dtype == np.int32
        assert np.array_equal(got_cols, want_cols)
        assert got[:m].tobytes() == want.tobytes()
        assert (buf[:at] == 0xAB).all() and (buf[at + m * kk * np.dtype(dtype).itemsize:] == 0xAB).all()
    # strided rows of a (element by element)
    wide = np.repeat(a, 2, axis=1)[:, ::2]
    got, got_cols, gm = nb.sampled_transpose(wide, cols)
    assert gm == m and np.array_equal(got_cols, want_cols) and got[:m].tobytes() == want.tobytes()


def test_sampled_transpose_no_valid_column():
    a = np.arange(64.0).reshape(8, 8)
    out, cols2, m = nb.sampled_transpose(a, np.array([-1, 8, 100]))
    assert m == 0 and np.array_equal(cols2, [-1, -1, -1])
    out, cols2, m = nb.sampled_transpose(a, np.zeros(0, np.int64))
    assert m == 0 and cols2.shape == (0,)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex64])
@pytest.mark.parametrize("shape", [(8, 64), (5, 300), (64, 1000)])
def test_sampled_transpose_cuda_matches_numba(dtype, shape):
    if not emulated.available():
        pytest.skip("emulated CUDA layer unavailable")
    from coosparse._kernels.cuda import emulated_host as H

    rng = np.random.default_rng(42)
    kk, nn = shape
    a = (rng.standard_normal(shape) * 1e3).astype(dtype)
    cols = rng.integers(-2, nn + 2, size=2 * nn)
    want, want_cols, m = nb.sampled_transpose(a, cols)
    got, got_cols, gm = H.sampled_transpose(a, cols)
    assert gm == m
    got_cols = np.asarray(got_cols)
    assert got_cols.dtype == want_cols.dtype and np.array_equal(got_cols, want_cols)
    assert np.asarray(got)[:m].tobytes() == want[:m].tobytes()
