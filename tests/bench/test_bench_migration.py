"""The migration bench cases (coosparse/bench/cases_migration.py) at size small: every library's
call gives the same dense meaning (no timing here)."""
import io

import numpy as np
import pytest

from coosparse import COO
from coosparse.bench import cases_migration

pytest.importorskip("scipy.sparse")


def canonical(r):
    """(indices, values) of the coalesced array without explicit zeros: comparable without densifying."""
    import coosparse

    c = coosparse.eliminate_zeros(coosparse.asarray(r).coalesce())
    return c.indices, c.values


@pytest.fixture(scope="module")
def cases():
    return {(c.op, c.workload): c for c in cases_migration.cases("small")}


def test_every_op_is_there(cases):
    assert {op for op, _ in cases} == set(cases_migration.OPS)


def test_row_normalise_and_topk_agree(cases):
    for (op, _), case in cases.items():
        if op not in ("row normalise (A / rs[:, None])", "topk per row"):
            continue
        results = {i.library: i.fn() for i in case.impls}
        mine = results.pop("coosparse")
        assert isinstance(mine, COO)
        for lib, r in results.items():
            if lib == "torch":  # (values, indices) of the dense rows
                want = np.zeros(mine.shape)
                np.put_along_axis(want, r.indices.numpy(), r.values.numpy(), axis=1)
                np.testing.assert_array_equal(mine.to_dense(), want, err_msg=f"{op} vs {lib}")
                continue
            (gi, gv), (wi, wv) = canonical(mine), canonical(r)
            np.testing.assert_array_equal(gi, wi, err_msg=f"{op} vs {lib}")
            np.testing.assert_allclose(gv, wv, err_msg=f"{op} vs {lib}")


def test_files_agree(cases):
    for op in ("save_npz", "load_npz"):
        case = next(c for (o, _), c in cases.items() if o == op)
        results = {i.library: i.fn() for i in case.impls}
        if op == "load_npz":
            ri, rv = canonical(results.pop("coosparse"))
            for lib, r in results.items():
                i, v = canonical(r)
                np.testing.assert_array_equal(i, ri, err_msg=lib)
                np.testing.assert_array_equal(v, rv, err_msg=lib)
        else:
            import coosparse

            for lib, data in results.items():
                assert isinstance(data, bytes) and coosparse.load_npz(io.BytesIO(data)).nnz > 0, lib
