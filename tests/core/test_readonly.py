"""A COO is immutable (SPEC 9): its ``indices`` and ``values`` are read-only views on the CPU, the
caller's own arrays stay writeable and are not copied, and the kernels never see read-only twins."""
import pickle

import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import make


def test_parts_are_read_only_views_of_the_callers_arrays():
    idx = np.array([[0, 2, 2]], dtype=np.int64)
    vals = np.array([1.0, 2.0, 3.0])
    a = COO(idx, vals, (4,))
    for part in (a.indices, a.values):
        assert not part.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a.values[0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        a.indices[0, 0] = 3
    np.testing.assert_array_equal(a.to_dense(), [1.0, 0.0, 5.0, 0.0])
    # no copy: the same memory, and the caller keeps a writeable array
    assert np.shares_memory(a.values, vals) and np.shares_memory(a.indices, idx)
    assert vals.flags.writeable and idx.flags.writeable
    vals[0] = 7.0  # the owner writes through its own array (a view shares it)
    assert a.values[0] == 7.0


def test_converted_parts_are_read_only_too():
    a = COO([[0, 1]], [1, 2], (3,))  # lists: new arrays, still frozen
    assert not a.values.flags.writeable and not a.indices.flags.writeable
    b = COO(np.array([[0, 1]], dtype=np.int32), np.ones(2), (3,))  # int32 indices: converted
    assert not b.indices.flags.writeable and b.indices.dtype == np.int64


def test_results_of_operations_are_read_only():
    a = make((6, 5), 12, "none", seed=1)
    for r in (a.coalesce(), a + a, a * 2, a.T, a[1:], np.exp(a), a.sum(axis=0), a.copy(), a.astype(np.float32),
              coosparse.concatenate([a, a]), a @ a.T):
        assert not r.values.flags.writeable and not r.indices.flags.writeable, r


def test_copy_is_independent():
    vals = np.array([1.0, 2.0])
    a = COO([[0, 1]], vals, (2,))
    c = a.copy()
    vals[0] = 9.0
    assert c.values[0] == 1.0 and a.values[0] == 9.0


@pytest.mark.parametrize("protocol", [2, 5])
def test_pickled_parts_come_back_usable(protocol):
    a = make((7, 6), 15, "none", seed=2)
    b = pickle.loads(pickle.dumps(a, protocol=protocol))
    assert not b.values.flags.writeable
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())
    # the memory under the view is writeable (protocol 5 keeps the flag of what it pickles)
    base = b.values
    while base.base is not None and isinstance(base.base, np.ndarray):
        base = base.base
    assert base.flags.writeable


def test_kernels_are_not_compiled_for_read_only_arrays():
    """The kernel layer hands Numba writeable views, so no kernel gets a read-only specialisation."""
    import numba

    from coosparse._kernels.numba import coalesce, gather, intersect, linear_index, segment, sort, union

    def readonly():
        out = set()
        for mod in (coalesce, gather, intersect, linear_index, segment, sort, union):
            for name in dir(mod):
                f = getattr(mod, name)
                for sig in getattr(f, "signatures", ()):
                    if any(isinstance(t, numba.types.Array) and not t.mutable for t in sig):
                        out.add(f"{mod.__name__}.{name}{sig}")
        return out

    before = readonly()  # (a read-only dense operand of another test, e.g. np.broadcast_to's, is its own)
    a = make((40, 30), 200, "none", seed=3)
    c = make((40, 30), 150, "coalesced", seed=4)
    a.coalesce(), a * c, c + c, (a @ c.T), a.sum(axis=1), a[3:9], np.sqrt(abs(a))
    assert readonly() - before == set()


def test_backend_parts(backend):
    a = backend.put(make((5, 4), 8, "coalesced", seed=5))
    b = a + a
    np.testing.assert_array_equal(backend.get(b).to_dense(), 2 * backend.get(a).to_dense())
    if backend.device == "cpu":
        assert not b.values.flags.writeable
