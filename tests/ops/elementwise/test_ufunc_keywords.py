"""NumPy ufunc keywords through ``COO.__array_ufunc__``: each is NumPy's, or refused as NumPy refuses it."""
import numpy as np
import pytest

import coosparse
from coosparse import COO


@pytest.mark.parametrize("kw, exc", [
    ({"order": "Z"}, ValueError), ({"order": ""}, ValueError), ({"order": 1}, TypeError),
    ({"subok": None}, TypeError), ({"subok": "x"}, TypeError), ({"subok": 1}, TypeError),
])
def test_bad_order_and_subok_raise_as_in_numpy(kw, exc):
    x = np.array([0.0, 1.0, 2.0])
    a = coosparse.asarray(x)
    with pytest.raises(exc):
        np.add(x, 1, **kw)
    for call in (lambda: np.add(a, 1, **kw), lambda: np.sqrt(a, **kw), lambda: np.divmod(a, 2, **kw)):
        with pytest.raises(exc):
            call()


@pytest.mark.parametrize("order", ["C", "F", "A", "K", "c", "k", None])
def test_valid_order_and_subok_are_accepted(order):
    a = coosparse.asarray(np.array([0.0, 1.0, 2.0]))
    r = np.add(a, 1, order=order, subok=False)
    assert isinstance(r, COO)
    np.testing.assert_array_equal(r.to_dense(), [1.0, 2.0, 3.0])


def test_where_true_scalars_mean_every_element():
    a = coosparse.asarray(np.array([0.0, 1.0, 2.0]))
    for where in (True, np.True_):
        np.testing.assert_array_equal(np.add(a, 1, where=where).to_dense(), [1.0, 2.0, 3.0])
    for where in (False, np.False_, np.array([True, False, True])):
        with pytest.raises(TypeError, match="where="):
            np.add(a, 1, where=where)
