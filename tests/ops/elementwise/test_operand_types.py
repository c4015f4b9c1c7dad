"""Operands the engine does not take: a clear TypeError, never Python's identity fallback (``a == None``
as the scalar False) and never a silently dropped mask; other array libraries still answer."""
import fractions

import numpy as np
import pytest

import coosparse
from operands import dense, make

OTHERS = [None, "text", {}, {"a": 1}, memoryview(b"ab"), fractions.Fraction(1, 2), object(), [object()]]


@pytest.mark.parametrize("other", OTHERS, ids=lambda o: type(o).__name__)
def test_equality_with_unsupported_operands_raises(other):
    a = make((2, 3), 3, "coalesced")
    for op in ("==", "!="):
        with pytest.raises(TypeError, match=type(other).__name__):
            eval(f"a {op} other")
        with pytest.raises(TypeError, match=type(other).__name__):
            eval(f"other {op} a")


def test_equality_with_a_torch_tensor_raises():
    torch = pytest.importorskip("torch")
    a = make((2, 3), 3, "coalesced")
    t = torch.ones(2, 3)
    for f in (lambda: a == t, lambda: a != t, lambda: t == a):
        with pytest.raises(TypeError, match="Tensor.*coosparse.asarray"):
            f()
    with pytest.raises(TypeError):
        a + t


@pytest.mark.parametrize("op", ["+", "*", "==", "<", "-"])
def test_masked_arrays_are_refused(op):
    a = make((2, 3), 3, "coalesced")
    m = np.ma.masked_array(np.ones((2, 3)), mask=[[1, 0, 0], [0, 0, 1]])
    with pytest.raises(TypeError, match="masked"):
        eval(f"a {op} m")
    # the masked array's own operator runs first and asks for a dense COO: refused too
    with pytest.raises(TypeError, match="masked|not converted to a dense"):
        eval(f"m {op} a")
    with pytest.raises(TypeError, match="masked"):
        np.add(a, m)
    with pytest.raises(TypeError, match="masked"):
        coosparse.multiply(a, m)


def test_other_array_libraries_still_answer():
    da = pytest.importorskip("dask.array")
    a = make((4, 3), 5, "coalesced")
    x = da.from_array(np.arange(12.0).reshape(4, 3), chunks=2)
    for r, want in ((a == x, dense(a) == np.arange(12.0).reshape(4, 3)),
                    (x != a, np.arange(12.0).reshape(4, 3) != dense(a))):
        assert isinstance(r, da.Array)
        got = r.compute()
        np.testing.assert_array_equal(got.to_dense() if isinstance(got, coosparse.COO) else got, want)


def test_supported_comparisons_unchanged():
    a = make((2, 3), 3, "coalesced")
    assert isinstance(a == 1.0, coosparse.COO) and isinstance(a == np.float32(1), coosparse.COO)
    np.testing.assert_array_equal(dense(a == [[1.0, 2.0, 3.0]] * 2), dense(a) == [[1.0, 2.0, 3.0]] * 2)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex128, np.int64, np.uint64, np.uint32])
@pytest.mark.parametrize("k", [2**64, -(2**64) - 1, 2**70, 10**400], ids=["2**64", "-2**64-1", "2**70", "10**400"])
def test_python_ints_beyond_64_bits(backend, dtype, k):
    # NEP 50: NumPy converts a Python int to the array's dtype (inf for a float one, an OverflowError
    # where it does not fit an integer one); coosparse asked np.isinf / np.isfinite about the int
    # itself (an object beyond 64 bits) and raised their TypeError for // and /
    a = coosparse.COO([[0, 1, 1]], np.array([3, 2, 1], dtype), (4,), fill_value=1)
    x = a.to_dense()
    for op in ("a // k", "k // a", "a / k", "k / a", "a % k", "a * k"):
        try:
            with np.errstate(all="ignore"):
                want = eval(op.replace("a", "x"))
        except (OverflowError, TypeError) as e:  # (complex // is NumPy's TypeError)
            with pytest.raises(type(e)):
                eval(op, {"a": backend.put(a), "k": k})
            continue
        with np.errstate(all="ignore"):
            got = backend.get(eval(op, {"a": backend.put(a), "k": k}))
        got = got.to_dense() if isinstance(got, coosparse.COO) else got
        np.testing.assert_array_equal(got, want)
