"""Every reduction with every ``dtype=`` against NumPy on the dense meaning (float16 and bool included).

NumPy casts the elements to ``dtype`` and reduces there; float16 sums and
products run in float32 until the end (a partial product beyond float16's
range is not inf, so no inf times a fill of 0 gives NaN); a product of bools is
their logical and. The statistics (mean, var, std and their nan forms) refuse
an integer or bool ``dtype=`` with TypeError (NumPy truncates there).
"""
import warnings

import numpy as np
import pytest

import coosparse
from coosparse import COO

DTYPES = [np.dtype(t) for t in coosparse.SUPPORTED_DTYPES]
ARITHMETIC = [np.sum, np.prod, np.nansum, np.nanprod, np.cumsum, np.cumprod]
STATISTICS = [np.mean, np.nanmean, np.var, np.std, np.nanvar, np.nanstd]


def _arrays(src):
    """A few COOs of dtype ``src`` (duplicates, a non-zero fill, values that overflow float16's products)."""
    rng = np.random.default_rng(src.num)
    out = []
    for fill in (None, "first"):
        idx = rng.integers(0, 3, (2, 7))
        if src == np.bool_:
            v = rng.random(7) < 0.6
        elif src.kind in "iu":
            v = rng.integers(0 if src.kind == "u" else -3, 4, 7).astype(src)
        else:
            v = rng.choice([300.0, -300.0, 0.5, 2.0, 1.5, 0.0], 7).astype(src)
        out.append(COO(idx, v, (3, 4), fill_value=v[0] if fill else None))
    return out


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind in "fc":
        tol = {np.float16: 2e-2, np.float32: 1e-4, np.complex64: 1e-4}.get(want.dtype.type, 1e-9)
        np.testing.assert_allclose(got.astype(complex), want.astype(complex), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("func", ARITHMETIC + STATISTICS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("src", DTYPES, ids=str)
def test_every_dtype_argument_matches_numpy(func, src, backend):
    for a in _arrays(src):
        d = a.to_dense()
        x = backend.put(a)
        for dt in [None] + DTYPES:
            for axis in (None, 0, 1):
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    try:
                        want = func(d, axis=axis, dtype=dt)
                    except (TypeError, ValueError):
                        with pytest.raises((TypeError, ValueError)):
                            func(x, axis=axis, dtype=dt)
                        continue
                    if func in STATISTICS and dt is not None and dt.kind not in "fc":
                        with pytest.raises(TypeError, match=f"dtype {dt} is not a floating-point or complex"):
                            func(x, axis=axis, dtype=dt)
                        continue
                    got = backend.get(func(x, axis=axis, dtype=dt))
                got = got.to_dense() if isinstance(got, COO) else got
                if func in (np.var, np.std, np.nanvar, np.nanstd):
                    if dt is not None and dt.kind == "c":
                        want = want.real  # (the variance is real: NumPy's has a zero imaginary part)
                    # the exact statistic, rounded: NumPy squares float16 inputs in float16 (also with a wider
                    # dtype=, for the nan forms) and overflows; coosparse computes in float32 at least
                    with np.errstate(all="ignore"), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        src = d if dt is None else d.astype(dt)  # (NumPy casts to dtype= first)
                        wide = src.astype(np.complex128 if src.dtype.kind == "c" else np.float64)
                        want = func(wide, axis=axis).astype(want.dtype)
                _close(got, want)


def test_the_issue_cases(backend):
    a = backend.put(COO([[0, 0, 1, 2, 2]], [0.75, 0.5, -1.5, 1.5, -1.5], (4,)))
    r = coosparse.prod(a, dtype=bool)
    assert r.dtype == np.bool_ and not bool(backend.get(r).to_dense())
    assert bool(backend.get(np.prod(a[:2], dtype=bool)).to_dense())
    assert not bool(backend.get(np.prod(a[:2], dtype=bool, initial=False)).to_dense())
    h = backend.put(COO([[0, 1]], np.array([300.0, -300.0], np.float16), (3,)))
    for f in (coosparse.prod, np.prod, np.nanprod):
        got = backend.get(f(h)).to_dense()
        assert got.dtype == np.float16 and got == 0 and not np.isnan(got)


def test_a_complex_fill_is_summed_part_by_part(backend):
    # the fill times the number of implicit elements, real and imaginary parts apart: a complex
    # product would compute inf * 0 = NaN for the imaginary part where NumPy's sums give 0
    for fill in (complex(np.inf, 0), complex(0, -np.inf), complex(2, -1)):
        for a in (COO(np.zeros((1, 0), np.int64), np.zeros(0, np.complex64), (2,), fill_value=fill),
                  COO([[0], [1]], np.array([1 + 1j], np.complex128), (2, 3), fill_value=fill)):
            d = a.to_dense()
            for f in (np.sum, np.mean, np.nansum):
                for axis in (None, 0, -1):
                    with np.errstate(all="ignore"), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = backend.get(f(backend.put(a), axis=axis)).to_dense()
                        _close(got, f(d, axis=axis))


def test_a_statistic_casts_to_its_dtype_first(backend):
    # the elements are cast to dtype= first (as NumPy's mean does): 588245967 is inf in float16, so the
    # variance of [inf, inf] is NaN, not the 0 of a float32 computation cast at the end (NumPy's var
    # subtracts its float16 mean from the int32 elements and answers inf)
    a = COO(np.zeros((1, 0), np.int64), np.zeros(0, np.int32), (2,), fill_value=588245967)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = backend.get(np.var(backend.put(a), dtype=np.float16)).to_dense()
        assert got.dtype == np.float16 and np.isnan(got)
        assert np.isnan(np.var(a.to_dense().astype(np.float16).astype(np.float64)))


def test_a_float16_dtype_casts_the_elements_first(backend):
    # 4e9 is inf in float16: the product of [inf, 0] is NaN, as NumPy's (not the 0 of a float32 product)
    a = COO([[0]], np.array([4_000_000_000], np.uint32), (2,))
    with np.errstate(all="ignore"):
        for f in (np.prod, np.sum, np.nanprod):
            got = backend.get(f(backend.put(a), dtype=np.float16)).to_dense()
            _close(got, f(a.to_dense(), dtype=np.float16))


@pytest.mark.parametrize("name", ["std", "nanstd"])
def test_a_float16_standard_deviation_is_the_root_of_the_wide_variance(name, backend):
    # the variance of [28704, 0] (about 2.06e8) is beyond float16 while its root (14352) is not: the
    # root is taken in float32 and rounded once, never the root of an overflowed float16 variance
    a = COO([[1]], np.array([0], np.int16), (2,), fill_value=np.int16(28701))
    f = getattr(np, name)
    want = f(a.to_dense().astype(np.float16).astype(np.float64))
    for x in (backend.put(a), backend.put(a.astype(np.float16))):
        with np.errstate(all="ignore"):
            got = backend.get(f(x, dtype=np.float16)).to_dense()
        assert got.dtype == np.float16 and np.isfinite(got)
        _close(got, np.float16(want))
    got = backend.get(getattr(coosparse, name)(backend.put(a.astype(np.float16)), axis=0)).to_dense()
    _close(got, np.float16(want))
