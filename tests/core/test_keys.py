"""Linear keys (SPEC 2) and the sort kernels behind coalesce."""
import numpy as np
import pytest

from coosparse._core.keys import INT64_LIMIT, is_wide, joint_keys, key_bound, linear_keys, unravel_keys
from coosparse._kernels.numba import sort as nbsort


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4, 5), (131072, 131072), (2**31, 2**31, 1)])
def test_linear_keys_row_major_and_inverse(backend, shape):
    rng = np.random.default_rng(0)
    idx = np.stack([rng.integers(0, s, 100) for s in shape])
    keys = backend.get(linear_keys(backend.put(idx), shape))
    np.testing.assert_array_equal(keys, np.ravel_multi_index(tuple(idx), shape))
    np.testing.assert_array_equal(backend.get(unravel_keys(backend.put(keys), shape)), idx)
    assert key_bound(shape) == int(np.prod(shape, dtype=object))


def test_wide_detection_is_exact():
    assert not is_wide((2**62, 1)) and not is_wide((2**63 - 1,))
    assert is_wide((2**32, 2**31)) and is_wide((2**63,)[:0] + (2**21, 2**21, 2**21))
    assert key_bound(()) == 1 and key_bound((0, 5)) == 1


def test_joint_ranks_of_wide_shape_keep_order_and_equality():
    shape = (2**40, 2**40)
    a = np.array([[2**40 - 1, 0, 5, 0], [0, 2**40 - 1, 5, 3]])
    b = np.array([[5, 0], [5, 2**40 - 1]])
    (ka, kb), bound = joint_keys([a, b], shape)
    assert bound == 4
    np.testing.assert_array_equal(ka, [3, 1, 2, 0])
    np.testing.assert_array_equal(kb, [2, 1])


@pytest.mark.parametrize(
    "n, bound",
    [(0, 5), (1, 5), (2, 1), (40, 1), (40, 3), (1000, 7), (5000, 2**34), (300_000, 2**20),
     (300_000, 2**40), (3000, 2**62), (70_000, 2**62)],
)
def test_sort_pairs_is_the_stable_argsort(n, bound):
    # packed words where key bits + position bits fit in 63, the pair sort otherwise
    keys = np.random.default_rng(n).integers(0, bound, n)
    sk, perm = nbsort.sort_pairs(keys, bound, 2)
    want = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(perm, want)
    np.testing.assert_array_equal(sk, keys[want])
    assert nbsort.fits_packed(bound, n) == (bound < 2**62 or n < 3)


def test_sort_pairs_skewed_keys():
    # one huge bucket plus a few singletons: the in-bucket sort runs on a large range
    rng = np.random.default_rng(4)
    keys = np.where(rng.random(200_000) < 0.99, rng.integers(0, 1000, 200_000), rng.integers(0, 2**33, 200_000))
    sk, perm = nbsort.sort_pairs(keys, 2**33, 2)
    np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))


def test_int64_limit():
    assert INT64_LIMIT == 2**63
