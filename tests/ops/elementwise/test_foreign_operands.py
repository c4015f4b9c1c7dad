"""Other libraries' arrays and non-arrays as operands of every operator and ufunc.

Each call either computes the NumPy answer of the dense meaning (scipy.sparse
operands, lists) or raises TypeError naming what is not supported (torch
tensors, masked arrays, memoryviews, None, strings); never another library's
internal error for an operand it cannot take, never a dropped mask, and never
one bool for an elementwise ``==`` with an array.
"""
import operator
import warnings

import numpy as np
import pytest

import coosparse
from coosparse import COO

OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
             operator.pow, operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge,
             operator.matmul]
UFUNCS = [np.add, np.multiply, np.maximum, np.arctan2, np.hypot, np.equal, np.logical_and, np.copysign]


def _a():
    return COO([[0, 1, 1], [1, 0, 2]], np.array([1.0, -2.0, 3.0]), (2, 3))


def _foreign(kind):
    d = _a().to_dense()
    if kind == "torch":
        torch = pytest.importorskip("torch")
        return torch.tensor(d)
    if kind == "torch sparse":
        torch = pytest.importorskip("torch")
        return torch.tensor(d).to_sparse()
    if kind == "masked":
        return np.ma.masked_array(d, mask=[[0, 1, 0], [0, 0, 0]])
    if kind == "memoryview":
        return memoryview(np.ascontiguousarray(d))
    if kind == "pydata":
        sparse = pytest.importorskip("sparse")
        return sparse.COO.from_numpy(d)
    return {"None": None, "str": "x"}[kind]


def _calls(f):
    """(name, call) for every operator and ufunc with ``f`` on either side of the COO."""
    a = _a()
    out = []
    for op in OPERATORS + UFUNCS:
        out.append((f"{op.__name__}(a, f)", lambda op=op: op(a, f)))
        out.append((f"{op.__name__}(f, a)", lambda op=op: op(f, a)))
    return out


# (pydata/sparse arrays are operands: tests/interop/test_pydata.py)
@pytest.mark.parametrize("kind", ["torch", "torch sparse", "masked", "memoryview", "None", "str"])
def test_operands_it_does_not_take_are_refused(kind):
    f = _foreign(kind)
    for name, call in _calls(f):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                r = call()
        except TypeError as e:
            msg = str(e)
            assert msg, name
            if kind.startswith("torch") and "(a, f)" in name and not name.startswith("matmul"):
                assert "torch" in msg, (name, msg)
            if kind == "masked":
                assert "mask" in msg or "not converted to a dense" in msg, (name, msg)
            continue
        except ValueError as e:  # a product took the operand (the torch bridge): its shapes do not fit
            assert name.startswith("matmul") and kind.startswith("torch") and "shapes" in str(e), (name, e)
            continue
        # only a str's own answers (its % and *): == and != never answer Python's identity bool
        assert kind == "str" and isinstance(r, str), (name, type(r))
        assert name.split("(")[0] in ("mod", "mul", "add"), name


def test_masked_arrays_never_lose_their_mask():
    a, m = _a(), _foreign("masked")
    calls = (lambda: a + m, lambda: np.add(a, m), lambda: a * m, lambda: coosparse.add(a, m),
             lambda: a @ m.T, lambda: coosparse.where(a > 0, a, m), lambda: coosparse.asarray(m),
             lambda: coosparse.sparse_mask(m, a), lambda: coosparse.multiply(a, m))
    for call in calls:
        with pytest.raises(TypeError, match="mask"):
            call()


def test_equality_with_an_array_is_never_one_bool():
    a = _a()
    for f in (_foreign("memoryview"), _foreign("masked")):
        for call in (lambda: a == f, lambda: a != f, lambda: f == a):
            try:
                r = call()
            except TypeError:
                continue
            assert not isinstance(r, bool)
    for call in (lambda: a == None, lambda: a != None):  # noqa: E711 (never Python's identity answer)
        with pytest.raises(TypeError, match="NoneType"):
            call()


@pytest.mark.parametrize("fmt", ["csr", "coo", "csc"])
def test_scipy_operands_compute_the_dense_meaning(fmt):
    sp = pytest.importorskip("scipy.sparse")
    a = _a()
    s = sp.coo_array(a.to_dense() + 1).asformat(fmt)
    d, e = a.to_dense(), s.toarray()
    for op in (operator.add, operator.sub, operator.mul, operator.lt, operator.eq, np.maximum, np.hypot):
        got = op(a, s)
        got = got.to_dense() if isinstance(got, COO) else np.asarray(got)
        np.testing.assert_allclose(got, op(d, e))
