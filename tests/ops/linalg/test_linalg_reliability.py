"""The reliability contract for the linear-algebra kernels: bad input is refused, never a crash.

Arrays built with ``check=False`` may hold indices outside their shape (far out,
aliasing a valid key of another row or batch, negative) and flags that lie.
Every product refuses them: on the CPU with the IndexError of ``coosparse._kernels.bounds``
(naming the operand's dimension, position and value) or the ValueError of
``coosparse._kernels.bounds.lying_flag_error``, raised before a result is returned; on a GPU
(and its emulation) the kernels skip the entry and report through the error word,
raised at the next synchronising call or by ``check_device_errors()``
(``expect_error`` of test_reliability checks both forms).
"""
import numpy as np
import pytest

import coosparse
from coosparse import COO
from test_reliability import _bad_arrays, expect_error, run_python

OUT_OF_BOUNDS = r"\w+: index -?\d+ at position \d is out of bounds for dimension \d with size 3"
# a GPU's error word: an index checked by a product kernel or linear_index, or a row key met by a sort first
DEVICE = "out of bounds|outside the shape"


def T(a):
    """The transpose of a 2-D COO (its index rows swapped), unchecked as ``a``."""
    return COO(a.indices[::-1].copy(), a.values, a.shape[::-1], check=False)


def _ops():
    """(bad COO, good COO (3, 3), dense (3, 2), dense (2, 3)) -> call; every role the COO can take."""
    return {
        "bad @ dense": lambda a, g, x, y: a @ x,
        "bad @ vector": lambda a, g, x, y: a @ x[:, 0].copy(),
        "bad.T @ dense": lambda a, g, x, y: T(a) @ x,
        "dense @ bad": lambda a, g, x, y: y @ a,
        "vector @ bad": lambda a, g, x, y: y[0].copy() @ a,
        "dense @ bad.T": lambda a, g, x, y: y @ T(a),
        "bad @ good": lambda a, g, x, y: a @ g,
        "good @ bad": lambda a, g, x, y: g @ a,
        "bad.T @ good": lambda a, g, x, y: T(a) @ g,
        "good @ bad.T": lambda a, g, x, y: g @ T(a),
        "sampled_matmul(bad)": lambda a, g, x, y: coosparse.sampled_matmul(a, x, y),
        "sampled_matmul(bad.T)": lambda a, g, x, y: coosparse.sampled_matmul(T(a), x, y),
        "tensordot(bad, dense, 1)": lambda a, g, x, y: coosparse.tensordot(a, x, 1),
        "einsum(ij,jk)": lambda a, g, x, y: coosparse.einsum("ij,jk->ik", a, x),
    }


OPS = _ops()


@pytest.mark.parametrize("kind", ["huge", "aliasing", "negative"])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("sorted_flag", [False, True])
def test_out_of_range_indices_are_refused(backend, kind, op, sorted_flag):
    a = _bad_arrays()[kind]
    if sorted_flag:  # the flag path (row offsets, cached) reads the same indices
        a = COO(a.indices, a.values, a.shape, sorted=True, unique=True, check=False)
    a = backend.put(a)
    g = backend.put(coosparse.random((3, 3), nnz=4, seed=0))
    x = backend.put(np.arange(6.0).reshape(3, 2))
    y = backend.put(np.arange(6.0).reshape(2, 3))
    before = backend.get(a.indices), backend.get(a.values)
    expect_error(backend, IndexError, lambda: OPS[op](a, g, x, y), OUT_OF_BOUNDS, DEVICE)
    np.testing.assert_array_equal(backend.get(a.indices), before[0])
    np.testing.assert_array_equal(backend.get(a.values), before[1])


BATCHED = {  # a (2, 3, 3) COO whose index (0, 5, 1) would alias (1, 2, 1) in a fused (batch, row) key
    "bad @ dense": lambda a, p: a @ p(np.ones((2, 3, 2))),
    "dense @ bad": lambda a, p: p(np.ones((2, 2, 3))) @ a,
    "bad @ COO": lambda a, p: a @ p(coosparse.from_dense(np.ones((2, 3, 3)))),
    "COO @ bad": lambda a, p: p(coosparse.from_dense(np.ones((2, 3, 3)))) @ a,
    "sampled_matmul": lambda a, p: coosparse.sampled_matmul(a, p(np.ones((2, 3, 4))), p(np.ones((2, 4, 3)))),
    "sampled_matmul, x broadcast": lambda a, p: coosparse.sampled_matmul(a, p(np.ones((3, 4))),
                                                                      p(np.ones((2, 4, 3)))),
    "sampled_matmul, both broadcast": lambda a, p: coosparse.sampled_matmul(a, p(np.ones((1, 3, 4))),
                                                                         p(np.ones((4, 3)))),
    "tensordot over two axes": lambda a, p: coosparse.tensordot(a, p(np.ones((3, 3))), ([1, 2], [0, 1])),
}


@pytest.mark.parametrize("where", ["batch", "row", "col"])
@pytest.mark.parametrize("op", sorted(BATCHED))
def test_batched_indices_never_alias(backend, where, op):
    idx = np.array([[0, 1, 0], [1, 2, 0], [1, 0, 2]])
    d = {"batch": 0, "row": 1, "col": 2}[where]
    idx[d, 0] = {"batch": 2, "row": 5, "col": 3}[where]  # each aliases a valid fused key
    shape = (2, 3, 3)
    if op == "sampled_matmul, both broadcast":
        shape, idx = (1, 3, 3), idx.copy()
        idx[0] = np.where(np.arange(3) == 0, idx[0], 0) if where == "batch" else 0
    a = backend.put(COO(idx, np.ones(3), shape, check=False))
    expect_error(backend, IndexError, lambda: BATCHED[op](a, backend.put), "out of bounds", DEVICE)


def test_size_one_broadcast_axis_is_checked(backend):
    # a (1, 3, 3) COO broadcast against 2 batches: its batch index is never read, so it is checked apart
    a = backend.put(COO(np.array([[4, 0], [0, 1], [1, 2]]), np.ones(2), (1, 3, 3), check=False))
    x = backend.put(np.ones((2, 3, 2)))
    expect_error(backend, IndexError, lambda: a @ x, "out of bounds", DEVICE)
    c = backend.put(coosparse.from_dense(np.ones((2, 3, 3))))
    expect_error(backend, IndexError, lambda: a @ c, "out of bounds",
                 "out of bounds")


@pytest.mark.parametrize("n", [3, 100_000])  # serial and multi-part kernels
def test_lying_sorted_flag_is_named(backend, n):
    rng = np.random.default_rng(0)
    idx = np.sort(rng.integers(0, 1000, size=(2, n)), axis=1)
    idx[0, [n // 3, 2 * n // 3]] = idx[0, [2 * n // 3, n // 3]]  # two rows swapped: out of order
    lie = backend.put(COO(idx, rng.random(n), (1000, 1000), sorted=True, unique=True, check=False))
    good = backend.put(coosparse.random((1000, 1000), nnz=50, seed=2).coalesce())
    x = backend.put(np.ones((1000, 3)))
    for f in (lambda: lie @ x, lambda: lie @ good, lambda: good @ lie):
        expect_error(backend, ValueError, f, "flag sorted=True is false", "flag sorted=True")


def test_bad_sorted_array_is_refused_every_time():
    # the row offsets of a sorted COO are cached: a refused array must not leave a cache entry
    a = COO(np.array([[0, 7], [1, 1]]), np.ones(2), (3, 3), sorted=True, unique=True, check=False)
    for _ in range(2):
        with pytest.raises(IndexError, match=OUT_OF_BOUNDS):
            a @ np.ones((3, 2))


def test_valid_results_unchanged_by_the_checks(backend):
    rng = np.random.default_rng(3)
    a = coosparse.random((40, 30), nnz=200, seed=4)
    x, y = rng.random((30, 5)), rng.random((5, 40))
    ad = a.to_dense()
    f, g = rng.random((40, 6)), rng.random((6, 30))
    d = backend.put
    np.testing.assert_allclose(backend.get(d(a) @ d(x)), ad @ x)
    np.testing.assert_allclose(backend.get(d(y) @ d(a)), y @ ad)
    np.testing.assert_allclose(backend.get((d(a) @ d(T(a))).to_dense()), ad @ ad.T)
    s = backend.get(coosparse.sampled_matmul(d(a), d(f), d(g)))
    np.testing.assert_allclose(s.values, (f @ g)[tuple(s.indices)])


def test_the_original_crashes_in_a_subprocess():
    # /tmp/linalg_bad.py of the report: these segfaulted or answered wrongly before the checks
    rc, out = run_python("""
        import numpy as np, coosparse
        from coosparse import COO
        a = COO(np.array([[0, 3, 10**9], [1, 2, 0]]), np.ones(3), (4, 5), check=False)
        b = COO(np.array([[0, 1, 2], [1, 10**9, 0]]), np.ones(3), (4, 5), check=False)
        x = np.ones((5, 2)); y = np.ones((2, 4)); fx = np.ones((4, 3)); fy = np.ones((3, 5))
        t = COO(np.array([[1, 0], [0, 3]]), np.ones(2), (5, 4))
        ops = {"a@x": lambda: a @ x, "b@x": lambda: b @ x, "y@a": lambda: y @ a, "y@b": lambda: y @ b,
               "a@bT": lambda: a @ t, "bT": lambda: t @ b,
               "sddmm a": lambda: coosparse.sampled_matmul(a, fx, fy),
               "sddmm b": lambda: coosparse.sampled_matmul(b, fx, fy),
               "a@vec": lambda: a @ np.ones(5), "b@vec": lambda: b @ np.ones(5),
               "a_sorted@x": lambda: COO(a.indices, np.ones(3), (4, 5), check=False, sorted=True, unique=True) @ x,
               "b_sorted@x": lambda: COO(b.indices, np.ones(3), (4, 5), check=False, sorted=True, unique=True) @ x}
        for case, f in ops.items():
            try:
                f()
                print(case, "NO ERROR")
            except Exception as e:
                print(case, type(e).__name__, str(e)[:60])
    """)
    assert rc == 0, out
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith(" ")]
    assert len(lines) == 12 and all(" IndexError " in ln for ln in lines), out


# ----------------------------------------------------------------------------- products memory cannot hold
@pytest.fixture
def small_memory(monkeypatch):
    """A machine of 1 MiB: a product's size check then refuses products of ordinary size."""
    from coosparse._kernels import bounds

    monkeypatch.setattr(bounds, "memory_bytes", lambda: 2**20)


def _outer_pair(n):
    """(n, 1) x (1, n): every product is a distinct entry of the result (n * n of them)."""
    a = COO(np.stack([np.arange(n), np.zeros(n, np.int64)]), np.ones(n), (n, 1), sorted=True, unique=True)
    b = COO(np.stack([np.zeros(n, np.int64), np.arange(n)]), np.ones(n), (1, n), sorted=True, unique=True)
    return a, b


def test_a_product_memory_cannot_hold_is_refused_before_counting(backend, small_memory):
    # 10**6 entries of 24 bytes under 1 MiB: refused from the sizes, before SpGEMM's counting pass
    # (the CPU: a bound from one pass over A; a GPU: its O(nnz) count of the products it would expand)
    a, b = (backend.put(x) for x in _outer_pair(1000))
    want = ("{op}: the result would hold 1000000 entries at most" if backend.device == "cpu" else
            "COO x COO product: the result would hold 1000000 products")
    with pytest.raises(MemoryError, match=want.format(op="matmul")):
        a @ b
    with pytest.raises(MemoryError, match=want.format(op="tensordot")):
        coosparse.tensordot(a, b, 1)


def test_the_issue_product_is_refused():
    # 10**10 entries (224 GiB): refused from the sizes; without the check the counting pass took 36-50 s
    a, b = _outer_pair(10**5)
    with pytest.raises(MemoryError, match=r"would hold 10000000000 entries at most"):
        a @ b


def test_many_products_into_few_entries_are_not_refused(backend, small_memory):
    # 2 x 50000 times 50000 x 2: 200000 products, 4 entries. The CPU's result is bounded by the
    # columns of each row; a GPU's expansion holds every product, so there it is refused by count
    rng = np.random.default_rng(3)
    a = COO(np.stack([np.repeat([0, 1], 50000), np.tile(np.arange(50000), 2)]), rng.random(10**5), (2, 50000))
    b = COO(np.stack([np.repeat(np.arange(50000), 2), np.tile([0, 1], 50000)]), rng.random(10**5), (50000, 2))
    x, y = backend.put(a), backend.put(b)
    if backend.device == "cpu":
        out = x @ y
        np.testing.assert_allclose(out.to_dense(), a.to_dense() @ b.to_dense())
    else:
        with pytest.raises(MemoryError, match="200000 products"):
            x @ y


def test_an_empty_product_does_not_read_the_other_operand(backend):
    # documented (docs/reliability.md): with check=False, only the indices an operation reads are
    # checked; a product with an empty operand needs none of the other's, returns the right
    # (empty) result, and the bad operand is still refused by any operation that reads it
    bad = COO([[0, 7], [1, 0]], [1.0, 2.0], (3, 3), check=False)
    empty = COO(np.zeros((2, 0), np.int64), np.zeros(0), (3, 3))
    for x, y in ((empty, bad), (bad, empty)):
        out = backend.put(x) @ backend.put(y)
        assert isinstance(out, COO) and out.shape == (3, 3) and out.nnz == 0
    out = backend.get(coosparse.matmul(backend.put(bad), backend.put(np.zeros((3, 0)))))  # no element to compute
    assert out.shape == (3, 0)
    with pytest.raises(IndexError):
        backend.put(bad) @ backend.put(COO([[0], [0]], [1.0], (3, 3)))
        backend.check_errors()


def test_sorted_duplicates_with_dense_blocks(backend):
    # a sorted COO with duplicates and a dense block: once the blocks become entries (a product, or an
    # operand aligned to more sparse dimensions) the copies interleave, so the result is not sorted,
    # and no kernel may rely on the flag (products refused it as a lying flag)
    a = COO([[0, 0]], np.array([[[1], [2]], [[3], [4]]], np.int8), (1, 2, 1), sorted=True)
    d = a.to_dense()
    x = backend.put(a)
    one = np.ones((1, 1), np.int8)
    np.testing.assert_array_equal(backend.get(x @ backend.put(one)), d @ one)
    np.testing.assert_array_equal(backend.get(coosparse.einsum("bij,bjk->bik", x, backend.put(one[None]))),
                                  np.einsum("bij,bjk->bik", d, one[None]))
    b = COO([[0], [0]], np.array([3], np.int8), (1, 1))
    np.testing.assert_array_equal(backend.get((x @ backend.put(b)).to_dense()), d @ b.to_dense())
    c = COO([[0, 0], [0, 1], [0, 0]], np.array([5, 7], np.int8), (1, 2, 1), sorted=True, unique=True)
    for r, want in ((x * backend.put(c), d * c.to_dense()), (x + backend.put(c), d + c.to_dense())):
        r = backend.get(r)
        np.testing.assert_array_equal(r.to_dense(), want)
        if r.is_sorted and r.nnz > 1:  # a True flag is true
            keys = [tuple(col) for col in r.indices.T.tolist()]
            assert keys == sorted(keys)


# ----------------------------------------------------------------------------- outputs in their own pages
def _outputs_in_own_pages(monkeypatch):
    """Every product output the Numba layer maps on its own (``linalg.fresh``) mapped so, whatever
    its size; returns the linalg module."""
    from coosparse._kernels.numba import linalg as la
    from coosparse._kernels.numba import spgemm as sg

    monkeypatch.setattr(la, "OWN_PAGES_FROM", 1)
    monkeypatch.setattr(sg, "_one_pass", lambda products, entries: False)  # SpGEMM's two-pass output
    return la


def _matrices(dtype=np.float64):
    rng = np.random.default_rng(11)
    a = coosparse.random((60, 40), density=0.2, seed=1).astype(dtype).coalesce()
    b = coosparse.random((40, 30), density=0.2, seed=2).astype(dtype).coalesce()
    return a, b, rng.random((40, 5)).astype(dtype)


def test_an_output_memory_cannot_hold_is_a_memory_error(monkeypatch):
    """An output the system cannot map is NumPy's MemoryError (an OSError from mmap before), a size
    past int64 NumPy's ValueError without a mapping of a wrapped-around size, and a mapping refused
    for another reason falls back to NumPy's allocation (the product's result is unchanged)."""
    import errno
    import mmap

    la = _outputs_in_own_pages(monkeypatch)
    with pytest.raises(MemoryError):
        la.fresh((2**45,), np.float64)  # 256 TiB: more than a 47-bit address space
    real_mmap = mmap.mmap
    sizes = []

    def record(fileno, length, *args, **kwargs):
        sizes.append(length)
        return real_mmap(fileno, length, *args, **kwargs)

    monkeypatch.setattr(mmap, "mmap", record)
    with pytest.raises(ValueError, match="too big"):
        la.fresh((2**32 + 1, 2**32), np.float64)  # np.prod wraps to 2**32 elements: 32 GiB
    assert sizes == []
    a, b, x = _matrices()
    want_ax, want_ab = a.to_dense() @ x, a.to_dense() @ b.to_dense()

    def refuse(*args, **kwargs):
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(mmap, "mmap", refuse)
    np.testing.assert_allclose(a @ x, want_ax)
    np.testing.assert_allclose(a @ x[:, 0], want_ax[:, 0])
    np.testing.assert_allclose((a @ b).to_dense(), want_ab)


def _mapped(arr):
    owner = arr
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    import mmap

    return isinstance(owner.obj if isinstance(owner, memoryview) else owner, mmap.mmap)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int64])
def test_outputs_in_their_own_pages_outlive_the_call_in_every_form(monkeypatch, dtype):
    """A product's output in a mapping of its own stays valid through every object that keeps it
    (views, slices, torch tensors, DLPack, the COO of a SpGEMM, its arrays and torch form) after the
    result itself is gone and collected; copies (pickle, np.resize, to_dense) are plain arrays."""
    import gc
    import pickle

    torch = pytest.importorskip("torch")
    from coosparse.interop.torch import to_torch

    _outputs_in_own_pages(monkeypatch)
    a, b, x = _matrices(dtype)
    want_ax, want_ab = a.to_dense() @ x, a.to_dense() @ b.to_dense()
    out = a @ x
    assert _mapped(out) and not out.flags.owndata
    np.testing.assert_allclose(out, want_ax, rtol=1e-5)
    want_ax = out.copy()  # (the forms below must hold these very bits)
    view, col, tensor, dl = out[3:9], out[:, 2], torch.from_numpy(out), np.from_dlpack(out)
    copies = pickle.loads(pickle.dumps(out)), np.resize(out, (2, 3)), out.copy()
    c = a @ b
    assert _mapped(c.indices) and _mapped(c.values)
    np.testing.assert_allclose(c.to_dense(), want_ab, rtol=1e-5)
    want_ab = c.to_dense()
    c_idx, c_vals, c_tail, c_torch = c.indices, c.values, c.values[1:], to_torch(c)
    c_dense, c_pickled = c.todense(), pickle.loads(pickle.dumps(c))
    del out, c
    gc.collect()
    np.testing.assert_array_equal(view, want_ax[3:9])
    np.testing.assert_array_equal(col, want_ax[:, 2])
    np.testing.assert_array_equal(tensor.numpy(), want_ax)
    np.testing.assert_array_equal(dl, want_ax)
    np.testing.assert_array_equal(copies[0], want_ax)
    np.testing.assert_array_equal(copies[1], np.resize(want_ax, (2, 3)))
    assert not any(_mapped(y) for y in copies + (c_dense,))
    rebuilt = np.zeros_like(want_ab)
    rebuilt[tuple(c_idx)] = c_vals
    np.testing.assert_array_equal(rebuilt, want_ab)
    np.testing.assert_array_equal(c_tail, c_vals[1:])
    np.testing.assert_array_equal(c_torch.to_dense().numpy(), want_ab)
    np.testing.assert_array_equal(c_dense, want_ab)
    np.testing.assert_array_equal(c_pickled.to_dense(), want_ab)


def test_an_error_after_the_output_is_mapped_frees_it(monkeypatch):
    """A column index outside the shape is found by the kernel, after the output was mapped: the
    call raises IndexError and the mapping is not kept alive by anything once the error is handled."""
    import gc
    import weakref

    la = _outputs_in_own_pages(monkeypatch)
    made = []
    real = la.fresh

    def tracked(shape, dtype):
        out = real(shape, dtype)
        made.append(weakref.ref(out))
        return out

    monkeypatch.setattr(la, "fresh", tracked)
    bad = COO(np.array([[0, 1, 2], [1, 7, 0]]), np.ones(3), (3, 3), sorted=True, unique=True, check=False)
    for x in (np.ones((3, 4)), np.ones(3)):
        with pytest.raises(IndexError, match="out of bounds"):
            bad @ x
    gc.collect()
    assert len(made) == 2 and all(r() is None for r in made)
