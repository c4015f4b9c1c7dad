"""as_strided_scatter(..., out=) and the parallel first touch of large outputs."""
import zlib

import numpy as np
import pytest

import coosparse
from strategies import full_range_values as random_values
from test_scatter import random_input, random_view, reference


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.complex64, np.bool_], ids=str)
@pytest.mark.parametrize("overlap", [False, True], ids=["disjoint", "overlapping"])
def test_out_matches_reference(backend, dtype, overlap):
    # a seed that does not follow Python's per-process string hash (draws must repeat)
    rng = np.random.default_rng(zlib.crc32(f"{np.dtype(dtype)} {overlap} out".encode()))
    done = 0
    for _ in range(40):
        x = random_input(rng, dtype)  # C, F, sliced, reversed or 0-d
        size, stride, offset = random_view(rng, x.size, overlap)
        src = random_values(rng, size, dtype)
        try:
            want = reference(x, src, size, stride, offset)
        except IndexError:
            continue
        keep = x.copy()
        buf = backend.put(np.array(random_values(rng, x.shape, dtype)))  # garbage: every element is written
        got = coosparse.as_strided_scatter(backend.put(x), backend.put(src), size, stride, offset, out=buf)
        assert got is buf
        np.testing.assert_array_equal(backend.get(buf), want)
        np.testing.assert_array_equal(x, keep)
        done += 1
    assert done >= 10


@pytest.mark.parametrize("use_out", [False, True])
def test_large_output_split_between_threads(backend, use_out):
    # above 8 MiB the CPU layer copies and scatters in per-thread output ranges
    rng = np.random.default_rng(4)
    n = (1 << 21) + 1001  # float32: just over 8 MiB
    x = rng.random(n, dtype=np.float32)
    src = rng.random(n // 2, dtype=np.float32)
    want = x.copy()
    want[1::2][: n // 2] = src
    out = backend.put(np.full(n, np.nan, np.float32)) if use_out else None
    got = coosparse.as_strided_scatter(backend.put(x), backend.put(src), (n // 2,), (2,), 1, out=out)
    if use_out:
        assert got is out
    np.testing.assert_array_equal(backend.get(got), want)


def test_out_errors_before_any_write(backend):
    x = backend.put(np.arange(12.0).reshape(3, 4))
    src = backend.put(np.ones(3))
    view = ((3,), (4,), 1)

    def call(out, src=src, x=x):
        return coosparse.as_strided_scatter(x, src, *view, out=out)

    bad = {
        "shape": (ValueError, "shape", backend.put(np.full((4, 3), -7.0))),
        "dtype": (TypeError, "dtype", backend.put(np.full((3, 4), -7, np.float32))),
        "contiguity": (ValueError, "C-contiguous", backend.put(np.full((4, 3), -7.0)).T),
    }
    for what, (err, msg, out) in bad.items():
        keep = backend.get(out).copy()
        with pytest.raises(err, match=msg):
            call(out)
        np.testing.assert_array_equal(backend.get(out), keep, err_msg=what)
    with pytest.raises(ValueError, match="overlaps input"):
        call(x)
    big = backend.put(np.full((2, 3, 4), -7.0))
    with pytest.raises(ValueError, match="overlaps src"):
        call(big[0], src=big[0, :, 1])
    np.testing.assert_array_equal(backend.get(big), np.full((2, 3, 4), -7.0))
    with pytest.raises(TypeError, match="same kind"):
        call([[0.0] * 4] * 3)
    if backend.device == "cpu":
        ro = np.full((3, 4), -7.0)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            call(ro)
    else:  # a host buffer for a device input
        host = np.full((3, 4), -7.0)
        with pytest.raises(TypeError, match="same kind"):
            call(host)
        np.testing.assert_array_equal(host, -7.0)


def test_out_zero_size_and_zero_d(backend):
    x = np.arange(6.0).reshape(2, 3)
    buf = backend.put(np.zeros((2, 3)))
    got = coosparse.as_strided_scatter(backend.put(x), backend.put(np.zeros((0, 4))), (0, 4), (100, 7), 3, out=buf)
    assert got is buf
    np.testing.assert_array_equal(backend.get(buf), x)
    s = backend.put(np.array(0.0))
    got = coosparse.as_strided_scatter(backend.put(np.array(4.0)), backend.put(np.array(9.0)), (), (), 0, out=s)
    assert got is s and backend.get(s) == 9.0
