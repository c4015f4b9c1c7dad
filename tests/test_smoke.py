"""A first end-to-end check; the thorough suites live beside it."""
import numpy as np

import coosparse
from reference import dense_of


def test_coalesce_sums_duplicates_in_order(backend):
    a = backend.put(coosparse.COO([[3, 1, 3]], np.array([1.0, 2.0, 4.0]), (5,)))
    c = backend.get(a.coalesce())
    assert c.is_coalesced
    np.testing.assert_array_equal(c.indices, [[1, 3]])
    np.testing.assert_array_equal(c.values, [2.0, 5.0])
    np.testing.assert_array_equal(backend.get(a.to_dense()), dense_of(a))
