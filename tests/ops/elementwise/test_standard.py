"""The Array API's answers where NumPy's differ (coosparse.floor_divide and the // operators), and the
namespace's functions on the NumPy scalars a COO is indexed down to."""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import dense, make

INF = np.inf


def standard_floor_divide(x1, x2):
    """The standard's special cases, element by element (the rest is NumPy's)."""
    with np.errstate(all="ignore"):
        r = np.floor_divide(x1, x2)
        fix = np.isinf(x1) | np.isinf(x2)
        return np.where(fix, np.floor(np.true_divide(x1, x2)), r)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_floor_divide_special_cases(backend, dtype):
    x1 = np.array([INF, INF, -INF, -INF, 1.0, -1.0, 1.0, -1.0, 7.0, -7.0, INF, 0.0, np.nan, 5.0], dtype)
    x2 = np.array([2.0, -2.0, 2.0, -2.0, -INF, INF, INF, -INF, 2.0, 2.0, INF, 3.0, 2.0, 0.0], dtype)
    want = standard_floor_divide(x1, x2)
    np.testing.assert_array_equal(np.signbit(want[4:6]), [True, True])  # the standard's -0
    a, b = COO.from_numpy(x1), COO.from_numpy(x2)
    for r in (coosparse.floor_divide(backend.put(a), backend.put(b)), backend.put(a) // backend.put(b),
              backend.put(a) // backend.put(x2)):
        got = dense(backend.get(r))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    c = backend.put(a)
    c //= backend.put(b)
    np.testing.assert_array_equal(dense(backend.get(c)), want)
    # NumPy's own function keeps NumPy's answer
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(dense(backend.get(np.floor_divide(backend.put(a), backend.put(b)))),
                                      np.floor_divide(x1, x2))


def test_finite_and_integer_floor_division_is_numpys():
    a = make((5, 4), 9, "none", dtype=np.int32, seed=1)
    b = np.arange(1, 21, dtype=np.int32).reshape(5, 4) - 10
    b[b == 0] = 3
    np.testing.assert_array_equal(dense(a // b), dense(a) // b)
    f = make((5, 4), 9, "none", seed=2)
    np.testing.assert_array_equal(dense(f // 0.7), dense(f) // 0.7)
    with pytest.warns(RuntimeWarning, match="divide by zero"):  # NumPy's own warning is kept
        coosparse.floor_divide(np.float64(1.0), np.float64(0.0))


def test_namespace_functions_take_numpy_scalars():
    """a[i, j] of a COO is a NumPy scalar: the namespace's functions answer for it as NumPy does."""
    a = make((3, 4), 6, "coalesced", dtype=np.uint16, seed=3)
    s = a[1, 2]
    assert isinstance(s, np.generic)
    assert coosparse.equal(s, s) == np.equal(s, s)
    assert coosparse.equal(s, np.array(s)) and not coosparse.equal(s, s + 1)  # 0-d arrays are scalars too
    with pytest.raises(TypeError, match="at least one operand must be a COO"):
        coosparse.equal(s, np.array([s, s + 1]))  # a dense array is never taken for a COO
    assert coosparse.add(1, 2) == 3 and coosparse.abs(np.float32(-2)) == 2
    r = coosparse.all(np.bool_(True))
    assert isinstance(r, COO) and bool(r)
    assert float(coosparse.sum(np.float64(6.0))) == 6.0
    with pytest.raises(TypeError, match="COO"):
        coosparse.sum("abc")
    with pytest.raises(TypeError, match="COO"):
        coosparse.sum(np.arange(4.0))
    with pytest.raises(TypeError, match="at least one operand must be a COO"):
        coosparse.elemwise(lambda x, y: x + y, 1, 2)  # pydata's elemwise still needs a sparse operand
