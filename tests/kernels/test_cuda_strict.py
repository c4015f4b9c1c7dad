"""The strict emulation of the GPU, and the defects it was built to catch .

- The emulated device refuses what CuPy refuses (API surface, NumPy operands,
  implicit conversion, host arrays handed to kernels) and counts transfers.
- Every operation documented as sync-free makes no host<->device transfer
  (defect 2: small parameters used to be uploaded with ``xp.asarray``).
- ``to_dense``/``dense + COO`` do not read NumPy-only flags (defect 1).
- With out-of-range indices and validation off, no kernel reads or writes out
  of bounds (checked by AddressSanitizer in a subprocess) and the kernels
  report through the error word (defect 4).
- The GPU loader's cache key covers the headers, and each row runs on its
  arrays' device (defect 5).

The compile-level check of defect 3 (no ``.ftz`` in the PTX) is in
tests/kernels/test_cuda_compile.py.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import coosparse
import emulation as strict
import sync_free_cases as sync_free

emulated = pytest.importorskip("coosparse._kernels.cuda.emulated")
if not emulated.available():
    pytest.skip(f"emulated CUDA layer unavailable: {emulated._build_error}", allow_module_level=True)

from coosparse._kernels.cuda.errors import check_device_errors  # noqa: E402

dev = strict.to_device
L = emulated


def coo(indices, values, shape, **kw):
    return dev(coosparse.COO(np.asarray(indices), np.asarray(values), shape, check=False, **kw))


def random_coo(rng, shape, nnz, *, sorted=False, unique=False, sparse_ndim=None, dtype=np.float64):
    sparse_ndim = len(shape) if sparse_ndim is None else sparse_ndim
    sparse = shape[:sparse_ndim]
    total = int(np.prod(sparse))
    keys = rng.choice(total, size=nnz, replace=False) if unique else rng.integers(0, total, nnz)
    if sorted:
        keys = np.sort(keys)
    idx = np.stack(np.unravel_index(keys, sparse)).astype(np.int64)
    vals = rng.standard_normal((nnz,) + shape[sparse_ndim:]).astype(dtype)
    return coosparse.COO(idx, vals, shape, sorted=sorted, unique=unique, check=False)


# ---------------------------------------------------------------------------- the device refuses what CuPy refuses
def test_recorded_surface_is_cupys():
    cupy = pytest.importorskip("cupy")
    recorded = strict.surface()
    if recorded["cupy_version"] != cupy.__version__:
        pytest.skip(f"surface recorded from CuPy {recorded['cupy_version']}, {cupy.__version__} installed")
    assert json.loads(json.dumps(strict.generate_surface())) == recorded


def test_flags_have_no_writeable():
    a = dev(np.zeros(3))
    assert a.flags.c_contiguous and a.flags["C_CONTIGUOUS"]
    with pytest.raises(AttributeError, match="writeable"):
        a.flags.writeable  # noqa: B018


def test_numpy_only_names_and_keywords_are_refused():
    numpy_only = sorted(n for n in dir(np) if not n.startswith("_") and callable(getattr(np, n))
                        and n not in strict.surface()["namespace"])
    assert numpy_only  # e.g. NumPy functions CuPy lacks
    with pytest.raises(AttributeError, match="NumPy-only"):
        getattr(strict.xp, numpy_only[0])
    with pytest.raises(TypeError, match="unexpected keyword"):
        strict.xp.argsort(dev(np.arange(3)), kind="stable", order=None)
    with pytest.raises(AttributeError, match="cupy.ndarray has no attribute 'ctypes'"):
        dev(np.zeros(2)).ctypes  # noqa: B018


def test_implicit_conversion_and_numpy_operands_are_refused():
    a = dev(np.arange(3.0))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a)
    with pytest.raises(TypeError, match="NumPy array"):
        a + np.arange(3.0)
    with pytest.raises(TypeError, match="NumPy array"):
        strict.xp.concatenate([a, np.arange(3.0)])
    with pytest.raises(TypeError, match="__index__"):
        range(a[0])
    assert isinstance(a + 1.0, strict.DeviceArray) and isinstance(a.sum(), strict.DeviceArray)  # 0-d, as CuPy


def test_numpy_protocols_defer_to_other_array_types():
    # CuPy's __array_ufunc__/__array_function__ return NotImplemented for operands of other array
    # types, so np.add(device_array, coo) reaches COO.__array_ufunc__ with the device array itself
    rng = np.random.default_rng(2)
    a = random_coo(rng, (3, 4), 5)
    x = rng.standard_normal((3, 4))
    r = np.add(dev(x), dev(a))
    assert isinstance(r, strict.DeviceArray)
    np.testing.assert_array_equal(r.get(), x + a.to_dense())

    class Other:
        pass

    assert dev(x).__array_ufunc__(np.add, "__call__", dev(x), Other()) is NotImplemented
    assert dev(x).__array_function__(np.concatenate, (strict.DeviceArray, Other), ([dev(x)],), {}) \
        is NotImplemented
    with pytest.raises(TypeError):
        np.add(dev(x), Other())


def test_operators_in_place_and_reflected():
    a = dev(np.arange(4.0))
    b = a
    b += 1
    b *= dev(np.full(4, 2.0))
    assert b is a and a.get().tolist() == [2.0, 4.0, 6.0, 8.0]
    assert (2.0 - a).get().tolist() == [0.0, -2.0, -4.0, -6.0]
    with pytest.raises(TypeError, match="NumPy array"):
        a += np.ones(4)


def test_dense_plus_coo_with_negative_strides():
    # flat_view of a negatively strided target has a non-zero base: addresses += base on the device
    rng = np.random.default_rng(9)
    a = random_coo(rng, (6, 5), 12, unique=True)  # (duplicates would be added onto x one by one)
    x = rng.standard_normal((6, 5))
    out = dev(x)[::-1, ::-1]  # a negatively strided device array
    from coosparse.ops.dense import scatter_into

    scatter_into(out, dev(a))
    np.testing.assert_array_equal(out.get(), x[::-1, ::-1] + a.to_dense())


def test_transfers_are_counted_and_forbidden_in_sync_free_regions():
    a = dev(np.arange(4))
    with strict.count_transfers() as n:
        int(a[1])
        strict.xp.asarray(np.arange(2))
        a[np.array([0, 1])]  # a host index array is uploaded
    assert n == {"h2d": 2, "d2h": 1}
    with strict.count_transfers() as n:  # data-sized results: CuPy reads a count back
        a[a > 1]
        strict.xp.nonzero(a)
        strict.xp.where(a > 1)
        (a > 1).nonzero()
        strict.xp.where(a > 1, a, 0)  # (three arguments: sized by the inputs, no read)
    assert n == {"h2d": 0, "d2h": 4}
    with strict.sync_free():
        b = a * 2 + strict.xp.zeros(4, dtype=np.int64)  # device work only
        with pytest.raises(strict.TransferError, match="device-to-host"):
            bool(b[0])
        with pytest.raises(strict.TransferError, match="host-to-device"):
            strict.xp.asarray(np.zeros(2))


def test_fresh_memory_is_poisoned():
    e = strict.xp.empty(4, dtype=np.int64).get()
    assert (e.view(np.uint8) == strict.POISON).all()


def test_kernel_launches_are_checked_against_the_signature():
    keys = dev(np.arange(5, dtype=np.int64))
    out = strict.xp.empty(5, dtype=np.int64)
    st = L._layer.dims([1])
    good = (keys, st, np.int64(1), np.int64(5), out)
    L.launch("coo_linear_index_compute", 5, good)
    bad = {
        0: (np.arange(5, dtype=np.int64), "host NumPy array"),  # CuPy: TypeError (or by value, size 1)
        1: (dev(np.ones(1, np.int64)), "by value"),  # a device array for a struct parameter
        2: (1, "numpy.int64"),  # a Python int for long long
        4: (dev(np.zeros(5, np.float64)), "dtype float64"),  # wrong element type
    }
    for pos, (arg, msg) in bad.items():
        args = list(good)
        args[pos] = arg
        with pytest.raises(TypeError, match=msg):
            L.launch("coo_linear_index_compute", 5, tuple(args))
    with pytest.raises(TypeError, match="non-contiguous"):
        L.launch("coo_linear_index_compute", 5, (dev(np.zeros((1, 10), np.int64))[:, ::2],) + good[1:])
    with pytest.raises(TypeError, match="takes 5 arguments"):
        L.launch("coo_linear_index_compute", 5, good[:4])


def test_small_parameters_must_be_host_values():
    idx = dev(np.zeros((1, 3), np.int64))
    with pytest.raises(TypeError, match="by value"):
        L.linear_index(idx, dev(np.array([1])))
    with pytest.raises(TypeError, match="host metadata"):
        L.gather_strided(dev(np.zeros(4)), dev(np.zeros(2, np.int64)), dev(np.zeros(1, np.int64)))
    with pytest.raises(ValueError, match="at most 64"):
        L._layer.dims(np.ones(65))


# ---------------------------------------------------------------------------- defect 1: NumPy-only flags
@pytest.mark.parametrize("nnz", [0, 5])
def test_to_dense_and_dense_plus_coo_on_the_device(nnz):
    rng = np.random.default_rng(nnz)
    a = random_coo(rng, (4, 5), nnz)
    np.testing.assert_array_equal(dev(a).to_dense().get(), a.to_dense())
    x = rng.standard_normal((4, 5))
    np.testing.assert_array_equal((dev(a) + dev(x)).get(), a + x)
    np.testing.assert_array_equal(coosparse.to_dense(dev(a.astype(np.float16))).get(),
                                  a.astype(np.float16).to_dense())  # the widening path


# ---------------------------------------------------------------------------- defect 2: sync-free means transfer-free
SYNC_FREE = sorted(sync_free.cases(lambda x: x))  # (the names)


@pytest.mark.parametrize("name", SYNC_FREE)
def test_sync_free_operations_make_no_transfer(name):
    fn = sync_free.cases(dev)[name]  # inputs uploaded here, outside the checked block
    fn()  # warm-up: builds the library, allocates the error word
    with strict.sync_free():
        fn()


def test_sync_free_results_are_right():
    # the same calls give the Numba layer's results (a sample: all run in the backend suites too)
    rng = np.random.default_rng(4)
    u, c = random_coo(rng, (20, 20), 100), random_coo(rng, (20, 20), 80, sorted=True, unique=True)
    got = coosparse.multiply(dev(u), dev(c), compact=False).to("cpu")
    want = coosparse.multiply(u, c, compact=False)
    np.testing.assert_array_equal(got.values, want.values)


def test_synchronising_operations_read_once():
    rng = np.random.default_rng(5)
    u = random_coo(rng, (30, 30), 200)
    a = random_coo(rng, (30, 30), 150, sorted=True, unique=True)
    b = random_coo(rng, (30, 30), 150, sorted=True, unique=True)
    du, da, db = dev(u), dev(a), dev(b)
    dx = dev(rng.standard_normal((30, 30)))
    dg = dev(coosparse.COO(a.indices, a.values, a.shape, sorted=True, unique=True, fill_value=1.5))
    for name, fn in {"coalesce": lambda: du.coalesce(), "multiply compact": lambda: coosparse.multiply(du, da),
                     "multiply c*c": lambda: coosparse.multiply(da, db), "add c+c": lambda: coosparse.add(da, db),
                     "sparse_mask + coalesce": lambda: coosparse.sparse_mask(da, du).coalesce(),
                     # reductions over sparse axes of coalesced arrays: the number of output indices
                     "sum(axis=1)": lambda: coosparse.sum(da, axis=1), "max(axis=0)": lambda: coosparse.max(da, axis=0),
                     "mean(axis=0)": lambda: coosparse.mean(da, axis=0),
                     "L.reduce_sorted": lambda: L.reduce_sorted(da.indices[0], da.values.reshape(-1, 1), "sum"),
                     "L.reduce_by_key": lambda: L.reduce_by_key(da.indices[1], da.values.reshape(-1, 1), 30, "max",
                                                                False),
                     # the elementwise engine: a union (merge_gather), a coalesce, an intersection
                     "maximum c, c": lambda: np.maximum(da, db), "sqrt(u)": lambda: np.sqrt(abs(du)),
                     "logical_and c, c": lambda: np.logical_and(da, db),
                     # a dense operand whose values decide the background (SPEC 9): a sample is read
                     "dense + COO": lambda: dx + du, "maximum(coo, dense) (dense result)": lambda: np.maximum(da, dx),
                     "multiply(fill 1.5, dense) (dense result)": lambda: dg * dx}.items():
        fn()
        with strict.count_transfers() as n:
            fn()
        assert n == {"h2d": 0, "d2h": 1}, (name, n)  # the size and the error word: one copy


def test_sparse_sparse_matmul_reads_twice():
    # SpGEMM: the number of products sizes the expansion, the number of distinct outputs the
    # result (docs/linalg.md); each read also checks the error word
    rng = np.random.default_rng(8)
    a = dev(random_coo(rng, (30, 30), 150, sorted=True, unique=True))
    b = dev(random_coo(rng, (30, 30), 150, sorted=True, unique=True))
    coosparse.matmul(a, b)
    with strict.count_transfers() as n:
        coosparse.matmul(a, b)
    assert n == {"h2d": 0, "d2h": 2}  # the number of products, the output size


@pytest.mark.parametrize("row", ["linear_index", "unravel_index", "sort_pairs", "segment_sum", "gather_rows",
                                 "scatter_add", "scatter_set", "strided_scatter_sorted", "strided_scatter_ordered",
                                 "match_merge", "match_search", "probe_sum", "multiply_matched", "gather_columns",
                                 "gather_strided", "gather_indexed", "union_columns", "gather_or_zero", "probe_sum shared",
                                 "multiply_matched shared", "scatter_set distinct", "scatter_add sorted",
                                 "segment_prod", "segment_minmax", "segment_arg",
                                 "row_offsets", "spmm", "spmm batched", "spmm_unsorted", "dense_spmm",
                                 "dense_spmm batched", "sddmm", "mask_values"])
def test_sync_free_rows_make_no_transfer(row):
    from coosparse._kernels.api import KERNEL_API

    assert row.split()[0] in KERNEL_API
    rng = np.random.default_rng(6)
    keys = dev(np.sort(rng.integers(0, 50, 40)).astype(np.int64))
    vals = dev(rng.standard_normal((40, 2)))
    first, count = L.match_search(keys, keys)
    idx2 = dev(np.stack([rng.integers(0, 5, 40), rng.integers(0, 10, 40)]).astype(np.int64))
    a_pos = dev(np.array([0, 1, -1, 2], np.int64))
    b_pos = dev(np.array([-1, 0, 1, 2], np.int64))
    starts = dev(np.array([0, 10, 40], np.int64))
    ar2 = dev(np.arange(0, 80, 2, dtype=np.int64))
    dense = dev(rng.standard_normal((50, 3)))
    batch_base = dev(np.array([0, 7], np.int64))
    boff = dev(np.array([0, 20, 40], np.int64))
    calls = {
        "linear_index": lambda: L.linear_index(idx2, np.array([10, 1])),
        "unravel_index": lambda: L.unravel_index(keys, (10, 1)),
        "sort_pairs": lambda: L.sort_pairs(keys, 50),
        "segment_sum": lambda: L.segment_sum(vals, None, starts),
        "gather_rows": lambda: L.gather_rows(vals, keys[:5]),
        "scatter_add": lambda: L.scatter_add(strict.xp.zeros(100), keys, vals, np.array([0, 1])),
        "scatter_set": lambda: L.scatter_set(strict.xp.zeros(100), keys, vals, np.array([0, 1])),
        "strided_scatter_sorted": lambda: L.strided_scatter_sorted(
            strict.xp.zeros(100, np.uint64), strict.xp.zeros(100, np.uint64), strict.xp.ones(40, np.uint64),
            0, 1, (4, 10), (20, 2), (10, 1), True),
        "strided_scatter_ordered": lambda: L.strided_scatter_ordered(
            strict.xp.zeros(100, np.uint64), strict.xp.ones(40, np.uint64), 0, 1, (4, 10), (2, 1), (10, 1)),
        "match_merge": lambda: L.match_merge(keys, keys),
        "match_search": lambda: L.match_search(keys, keys),
        "probe_sum": lambda: L.probe_sum(vals, None, first, count),
        "multiply_matched": lambda: L.multiply_matched(vals, None, vals, None, first, count),
        "gather_columns": lambda: L.gather_columns(idx2, keys[:5] % 40),
        "gather_strided": lambda: L.gather_strided(strict.xp.zeros(100), keys, np.array([0, 1])),
        "gather_indexed": lambda: L.gather_indexed(strict.xp.zeros(100), idx2, np.array([10, 1]), (5, 10), 3,
                                                   np.array([0, 1])),
        "union_columns": lambda: L.union_columns(idx2, idx2, a_pos, b_pos),
        "gather_or_zero": lambda: L.gather_or_zero(vals, a_pos),
        "probe_sum shared": lambda: L.probe_sum(vals, None, first, count, shared_runs=True),
        "multiply_matched shared": lambda: L.multiply_matched(vals, None, vals, None, first, count, shared_runs=True),
        "scatter_set distinct": lambda: L.scatter_set(strict.xp.zeros(200), keys * 0 + ar2, vals, np.array([0, 1]),
                                                      hint="distinct"),
        "scatter_add sorted": lambda: L.scatter_add(strict.xp.zeros(100), keys, vals, np.array([0, 1]),
                                                    hint="sorted"),
        "segment_prod": lambda: L.segment_prod(vals, None, starts),
        "segment_minmax": lambda: L.segment_minmax(vals, keys[::-1] % 40, starts, True),
        "segment_arg": lambda: L.segment_arg(vals, None, starts, ar2, False),
        # linear algebra: keys in [0, 50) as rows, a 50 x 3 dense operand
        "row_offsets": lambda: L.row_offsets(keys, 50),
        "spmm": lambda: L.spmm(offsets, None, keys % 7, vals[:, 0], dense, 50, None),
        "spmm batched": lambda: L.spmm(offsets, None, keys % 7, vals[:, 0], dense, 25, batch_base),
        "spmm_unsorted": lambda: L.spmm_unsorted(keys[::-1], keys % 7, vals[:, 0], dense, 50, 50, None),
        "dense_spmm": lambda: L.dense_spmm(dense.T.copy(), None, 3, None, None, keys, keys % 7, vals[:, 0], 7),
        "dense_spmm batched": lambda: L.dense_spmm(dense.T.copy(), batch_base[:2] * 0, 3, boff, None, keys,
                                                   keys % 7, vals[:, 0], 7),
        "sddmm": lambda: L.sddmm(keys, 3, keys % 7, 1, dense.reshape(-1), 1, dense.reshape(-1), 7, 3),
        # sorted (5, 10) indices from the sorted keys, as source and probe
        "mask_values": lambda: L.mask_values(sidx, sidx, vals, np.array([10, 1]), sizes=(5, 10)),
    }
    sidx = strict.xp.stack([keys // 10, keys % 10])
    offsets = L.row_offsets(keys, 50)
    calls[row]()
    with strict.sync_free():
        calls[row]()


def test_large_dense_blocks_upload_their_offsets_once():
    # documented exception: a dense block of more than 64 elements has its offsets uploaded
    rng = np.random.default_rng(7)
    a = dev(random_coo(rng, (5, 9, 9), 6, sparse_ndim=1))  # 81-element blocks
    a.to_dense()
    with strict.count_transfers() as n:
        a.to_dense()
    assert n == {"h2d": 1, "d2h": 0}


# ---------------------------------------------------------------------------- defect 4: memory safety, reported
def _bad_input_ops():
    """Operations on check=False COOs with out-of-range indices or lying flags: (name, fn, error type)."""
    big = 10**9
    bad = coo([[0, 3, big, 2, -7]], [1.0, 2.0, 3.0, 4.0, 5.0], (4,))
    bad2 = coo([[0, 1, 5, 1], [1, big, 0, -1]], [1.0, 2.0, 3.0, 4.0], (3, 3))
    liar = coo([[3, 1, 2, 2]], [1.0, 2.0, 3.0, 4.0], (4,), sorted=True, unique=True)  # flags lie
    good = coo([[0, 1, 2, 3]], [1.0, 2.0, 3.0, 4.0], (4,), sorted=True, unique=True)
    liar2 = coo([[0, 2, 1, 1], [0, 0, 1, 2]], [1.0, 2.0, 3.0, 4.0], (3, 3), sorted=True, unique=True)
    liar3 = coo([[2, 0, 1, 1], [0, 1, 2, 0]], [1.0, 2.0, 3.0, 4.0], (3, 3), sorted=True, unique=True)
    good2 = coo([[0, 1, 2], [0, 1, 2]], [1.0, 2.0, 3.0], (3, 3), sorted=True, unique=True)
    x = dev(np.arange(4.0))
    x2 = dev(np.arange(9.0).reshape(3, 3))
    liar2 = coo([[2, 0, 1, 1], [0, 1, 2, 2]], [1.0, 2.0, 3.0, 4.0], (3, 3), sorted=True, unique=True)
    good2 = coo([[0, 1, 2], [0, 1, 2]], [1.0, 2.0, 3.0], (3, 3), sorted=True, unique=True)
    bad3 = coo([[0, 1, 1, -3], [0, 2, 7, 1], [1, big, 0, 2]], [1.0, 2.0, 3.0, 4.0], (2, 3, 3))
    x3 = dev(np.arange(18.0).reshape(2, 3, 3))
    return [
        ("sparse_mask(dense, bad mask)", lambda: coosparse.sparse_mask(x, bad), IndexError),
        ("multiply(bad, dense)", lambda: coosparse.multiply(bad, x), IndexError),
        ("multiply(bad 2-d, dense)", lambda: coosparse.multiply(bad2, x2), IndexError),
        ("to_dense(bad)", lambda: bad.to_dense(), IndexError),
        ("to_dense(bad 2-d)", lambda: bad2.to_dense(), IndexError),
        ("dense + bad", lambda: x + bad, IndexError),
        ("coalesce(bad)", lambda: bad.coalesce(), IndexError),
        # keys that only take part in comparisons are reported too: keys are computed
        # with the shape, since an index outside it could alias a valid key (docs/cuda.md)
        ("multiply(bad, good, compact=False)", lambda: coosparse.multiply(bad, good, compact=False), IndexError),
        ("add(liar, good)", lambda: coosparse.add(liar, good), ValueError),
        ("add(liar, liar)", lambda: coosparse.add(liar, liar), ValueError),
        ("multiply(good, liar) (liar probes)", lambda: coosparse.sparse_mask(liar, good), ValueError),
        ("multiply(liar, good)", lambda: coosparse.multiply(liar, good), None),
        # reductions: keys sorted by the kernels, runs of keys the flags call sorted
        ("sum(bad 2-d, axis=0)", lambda: coosparse.sum(bad2, axis=0), IndexError),
        ("argmax(bad 2-d, axis=1)", lambda: coosparse.argmax(bad2, axis=1), IndexError),
        ("sum(liar 2-d, axis=1)", lambda: coosparse.sum(liar2, axis=1), ValueError),
        # ---- shape, indexing and joining
        ("reshape(bad 2-d)", lambda: coosparse.reshape(bad2, (9,)), IndexError),
        ("concatenate(liar rows, axis=1)", lambda: coosparse.concatenate([liar3, good2], axis=1), ValueError),
        ("liar[[0, 2]] (range gather)", lambda: liar3[[0, 2]], None),
        ("liar[1:] (binary search)", lambda: liar3[1:], None),
        # linear algebra
        ("matmul(bad, dense)", lambda: coosparse.matmul(bad, x), IndexError),
        ("matmul(bad 2-d, dense)", lambda: coosparse.matmul(bad2, x2), IndexError),
        ("matmul(dense, bad 2-d)", lambda: coosparse.matmul(x2, bad2), IndexError),
        ("matmul(batched bad, dense)", lambda: coosparse.matmul(bad3, x3), IndexError),
        ("matmul(dense, batched bad)", lambda: coosparse.matmul(x3, bad3), IndexError),
        ("matmul(liar 2-d, dense)", lambda: coosparse.matmul(liar2, x2), ValueError),
        ("matmul(bad 2-d, bad 2-d)", lambda: coosparse.matmul(bad2, bad2), IndexError),
        ("matmul(good 2-d, bad 2-d)", lambda: coosparse.matmul(good2, bad2), IndexError),
        ("sampled_matmul(bad 2-d, x, y)", lambda: coosparse.sampled_matmul(bad2, x2, x2), IndexError),
    ]


@pytest.mark.parametrize("case", range(len(_bad_input_ops())), ids=[c[0] for c in _bad_input_ops()])
def test_bad_input_is_reported_not_read(case):
    name, fn, error = _bad_input_ops()[case]
    try:
        fn()
        if error is None:
            check_device_errors()  # nothing was read out of range: nothing to report
            return
        check_device_errors()
    except (IndexError, ValueError) as e:
        assert error is not None and isinstance(e, error), (name, e)
        check_device_errors()  # raised once, then clear
        return
    pytest.fail(f"{name}: the bad input was not reported")


def test_kernels_stay_in_bounds_under_address_sanitizer(tmp_path):
    """Every bad-input operation above, with the kernels built by AddressSanitizer, in a subprocess."""
    cxx = emulated.compiler()
    libasan = subprocess.run([cxx, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not libasan or not os.path.isabs(libasan) or not os.path.exists(libasan):
        pytest.skip("no AddressSanitizer runtime for the host compiler")
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{os.path.dirname(__file__)!r}, {os.path.dirname(os.path.dirname(__file__))!r}]
        import test_cuda_strict as t
        from coosparse._kernels.cuda import emulated
        assert "-fsanitize=address" in emulated.CXX_FLAGS
        for name, fn, error in t._bad_input_ops():
            try:
                fn()
                t.check_device_errors()
            except (IndexError, ValueError):
                pass
            print("ok", name, flush=True)
    """))
    env = dict(os.environ, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=86",
               COOSPARSE_EMULATION_SANITIZE="address")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0 and "AddressSanitizer" not in r.stderr and "ok " not in r.stdout:
        pytest.skip(f"AddressSanitizer did not start here: {r.stderr[-500:]}")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert r.stdout.count("ok ") == len(_bad_input_ops())


# ---------------------------------------------------------------------------- defect 5: stale caches, wrong device
def test_gpu_cache_key_covers_the_headers(tmp_path, monkeypatch):
    from coosparse._kernels.cuda import sources as _sources

    kdir = tmp_path / "k"
    shutil.copytree(_sources.KERNEL_DIR, kdir, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_sources, "KERNEL_DIR", str(kdir))
    monkeypatch.setattr(_sources, "INCLUDE_DIR", str(kdir / "include"))
    before = _sources.cache_key("gather.cu", "sm_90", (12, 9))
    with open(kdir / "include" / "coo_common.cuh", "a") as f:
        f.write("\n// a header-only edit\n")
    assert _sources.cache_key("gather.cu", "sm_90", (12, 9)) != before
    assert _sources.program_source("gather.cu") == (  # the program text alone did not change
        f'#line 1 "{kdir / "gather.cu"}"\n' + (kdir / "gather.cu").read_text())


def test_gpu_loader_rebuilds_after_a_header_edit(tmp_path, monkeypatch):
    backend = pytest.importorskip("coosparse._kernels.cuda.backend")  # imports cupy; no GPU needed
    from coosparse._kernels.cuda import sources as _sources

    kdir = tmp_path / "k"
    shutil.copytree(_sources.KERNEL_DIR, kdir, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_sources, "KERNEL_DIR", str(kdir))
    monkeypatch.setattr(_sources, "INCLUDE_DIR", str(kdir / "include"))
    monkeypatch.setenv("COOSPARSE_CACHE_DIR", str(tmp_path / "cache"))

    class Compiler:  # records what the loader asks NVRTC for
        version = (12, 9)
        calls = []

        def compile(self, source, name, names, options, output):
            self.calls.append((name, tuple(options), output))
            return b"binary", {n: f"mangled_{i}" for i, n in enumerate(names)}

    c = Compiler()
    backend.build("gather.cu", "sm_90", nvrtc=c)
    backend.build("gather.cu", "sm_90", nvrtc=c)  # cached
    assert len(c.calls) == 1
    assert "-ftz=false" in c.calls[0][1] and not any(o.startswith("-ftz=true") for o in c.calls[0][1])
    with open(kdir / "include" / "coo_common.cuh", "a") as f:
        f.write("\n// a header-only edit\n")
    binary, lowered = backend.build("gather.cu", "sm_90", nvrtc=c)
    assert len(c.calls) == 2 and binary == b"binary" and set(lowered) == set(_sources.KERNELS["gather.cu"])


def test_gpu_rows_run_on_their_arrays_device(monkeypatch):
    backend = pytest.importorskip("coosparse._kernels.cuda.backend")
    import types

    entered = []

    class FakeArray:
        def __init__(self, dev_id):
            self.device = types.SimpleNamespace(id=dev_id)

    class Device:
        def __init__(self, i):
            self.i = i

        def __enter__(self):
            entered.append(self.i)

        def __exit__(self, *exc):
            return False

    fake = types.SimpleNamespace(
        ndarray=FakeArray,
        cuda=types.SimpleNamespace(Device=Device, runtime=types.SimpleNamespace(getDevice=lambda: 0)),
    )
    monkeypatch.setattr(backend, "cupy", fake)
    with backend.device_guard((np.int64(3), FakeArray(1), FakeArray(0))):
        pass
    with backend.device_guard((FakeArray(0),)):  # already current: no switch
        pass
    with backend.device_guard(([FakeArray(2)],)):  # arrays inside a list (concatenate-like rows)
        pass
    assert entered == [1, 2]
    # every kernel-API function of the GPU layer runs inside that guard
    from coosparse._kernels.api import KERNEL_API

    assert all(getattr(getattr(backend, n), "__wrapped__", None) is not None for n in KERNEL_API)


# ---------------------------------------------------------------------------- shape, indexing and joining
def test_issue12_rows_transfers():
    """search_ranges and merge_take are sync-free; mask_positions, expand_ranges, take_ranges and
    take_rows read their output size and the error word in one copy."""
    rng = np.random.default_rng(12)
    keys = dev(np.sort(rng.integers(0, 50, 40)).astype(np.int64))
    idx2 = dev(np.stack([rng.integers(0, 5, 40), rng.integers(0, 10, 40)]).astype(np.int64))
    words = dev(rng.integers(0, 2**63, (40, 2)).astype(np.uint64))
    lo = dev(np.arange(0, 50, 5, dtype=np.int64))
    start, stop = L.search_ranges(keys, lo, lo + 5)
    count = stop - start
    mask = keys > 20
    offsets = np.array([0, 15, 15, 40])  # host metadata
    ptr, rows = dev(np.arange(0, 41, 4, dtype=np.int64)), dev(np.array([3, 0, 9, 3], np.int64))
    sync_free = {
        "search_ranges": lambda: L.search_ranges(keys, lo, lo + 5),
        "merge_take": lambda: L.merge_take(keys, offsets, idx2, words),
    }
    for name, fn in sync_free.items():
        fn()
        with strict.sync_free():
            fn()
    reads_once = {
        "mask_positions": lambda: L.mask_positions(mask),
        "expand_ranges": lambda: L.expand_ranges(start, count),
        "take_ranges": lambda: L.take_ranges(idx2, words, start, count),
        "take_rows": lambda: L.take_rows(idx2, words, ptr, rows),
    }
    for name, fn in reads_once.items():
        fn()
        with strict.count_transfers() as n:
            fn()
        assert n == {"h2d": 0, "d2h": 1}, (name, n)
    with pytest.raises(TypeError, match="host metadata"):
        L.merge_take(keys, dev(offsets), idx2, words)


def test_issue12_synchronising_operations_read_little():
    # a[i:j] of a sorted array: both binary searches in one read, nothing uploaded
    rng = np.random.default_rng(13)
    a = dev(random_coo(rng, (40, 30), 300, sorted=True, unique=True))
    for key in (slice(3, 17), 5):
        a[key]
        with strict.count_transfers() as n:
            a[key]
        assert n == {"h2d": 0, "d2h": 1}, (key, n)
