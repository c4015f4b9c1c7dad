"""Reliability regression tests: no input crashes the process, no silent wrong answer.

One test (or a few) per class of the issue. Anything that could kill the
interpreter (fork, a missing bounds check) runs in a subprocess, so a crash
fails the test instead of the run.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse.ops.dense import scatter_into

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(code, timeout=240, env=None):
    """Run ``code`` in a fresh interpreter: (returncode, stdout + stderr)."""
    full_env = dict(os.environ)
    full_env.pop("NUMBA_THREADING_LAYER", None)
    full_env.update(env or {})
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, cwd=REPO, env=full_env)
    return p.returncode, p.stdout + p.stderr


# ----------------------------------------------------------------------------- out-of-range indices
def expect_error(backend, exc, fn, match, device_match=None):
    """``fn()`` refuses bad input with ``exc``, as each kernel layer promises.

    numba: ``fn()`` itself raises ``exc`` with a message matching ``match``,
    before anything is written. cuda-emulated / cuda: raising at once would
    synchronise, so the kernels report through the error word (docs/cuda.md):
    ``exc`` comes from ``fn()`` at a synchronising point or from the next
    ``check_device_errors()``, with a message matching ``device_match``; the
    report is cleared once raised.
    """
    if backend.device == "cpu":
        with pytest.raises(exc, match=match):
            fn()
        return
    with pytest.raises(exc, match=device_match):
        fn()
        backend.check_errors()
    backend.check_errors()  # raised once, then clear


def kernels_report(backend):
    """True where kernels report bad input instead of raising at once: a GPU, or its emulation
    without host validation (COOSPARSE_EMULATION_VALIDATE=1 makes it raise as the CPU does)."""
    if backend.device == "cpu":
        return False
    if backend.name == "cuda-emulated":
        from coosparse._kernels.cuda import emulated

        return not emulated._layer._validate
    return True


def _bad_arrays():
    """check=False arrays with an index outside (3, 3): far out, aliasing a valid key, negative."""
    v = np.array([1.0, 2.0])
    return {
        "huge": COO(np.array([[0, 10**9], [1, 1]]), v, (3, 3), check=False),
        "aliasing": COO(np.array([[0, 1], [5, 1]]), v, (3, 3), check=False),  # key 5 == (1, 2)
        "negative": COO(np.array([[0, 1], [-1, 1]]), v, (3, 3), check=False),
    }


OPS_ON_BAD = {  # (bad COO, good COO, dense ones((3, 3))), all on the backend's device
    "sparse_mask(dense, bad)": lambda a, g, x: coosparse.sparse_mask(x, a),
    "sparse_mask(bad, good)": lambda a, g, x: coosparse.sparse_mask(a, g),
    "sparse_mask(good, bad)": lambda a, g, x: coosparse.sparse_mask(g, a),
    "multiply(bad, dense)": lambda a, g, x: coosparse.multiply(a, x),
    "multiply(bad, good)": lambda a, g, x: coosparse.multiply(a, g),
    "multiply(bad, good, compact=False)": lambda a, g, x: coosparse.multiply(a, g, compact=False),
    "to_dense": lambda a, g, x: a.to_dense(),
    "bad + dense": lambda a, g, x: a + x,
    "dense - bad": lambda a, g, x: x - a,
    "mask_projection(bad, good)": lambda a, g, x: coosparse.mask_projection(a, g),
    "mask_projection(good, bad)": lambda a, g, x: coosparse.mask_projection(g, a),
    "coalesce": lambda a, g, x: a.coalesce(),
    "add(bad, good, coalesce=True)": lambda a, g, x: coosparse.add(a, g, coalesce=True),
}
OUT_OF_BOUNDS = r"out of bounds for dimension \d with size 3"


@pytest.mark.parametrize("kind", ["huge", "aliasing", "negative"])
@pytest.mark.parametrize("op", sorted(OPS_ON_BAD))
def test_out_of_range_indices_raise_index_error(backend, kind, op):
    a = backend.put(_bad_arrays()[kind])
    good = backend.put(coosparse.random((3, 3), nnz=4, seed=0))
    x = backend.put(np.ones((3, 3)))
    before = backend.get(a.indices), backend.get(a.values)
    expect_error(backend, IndexError, lambda: OPS_ON_BAD[op](a, good, x), OUT_OF_BOUNDS, "out of bounds")
    np.testing.assert_array_equal(backend.get(a.indices), before[0])
    np.testing.assert_array_equal(backend.get(a.values), before[1])


def test_out_of_range_scatter_writes_nothing(backend):
    a = backend.put(COO(np.array([[0, 2, 7]]), np.array([1.0, 2.0, 3.0]), (3,), check=False))
    out = backend.put(np.full(3, 5.0))
    expect_error(backend, IndexError, lambda: scatter_into(out, a), "index 7 at position 2", "out of bounds")
    # the CPU raises before writing; a GPU skips the bad entry and writes the others
    want = [6.0, 5.0, 7.0] if kernels_report(backend) else [5.0, 5.0, 5.0]
    np.testing.assert_array_equal(backend.get(out), want)


@pytest.mark.parametrize("n", [2, 5000, 70_000])  # serial, small and multi-part coalesce routes
def test_out_of_range_coalesce_every_route(backend, n):
    rng = np.random.default_rng(n)
    idx = rng.integers(0, 50, size=(2, n))
    idx[1, n // 2] = 50
    a = backend.put(COO(idx, np.ones(n), (50, 50), check=False))
    expect_error(backend, IndexError, a.coalesce, "index 50 at position", "out of bounds")


def test_out_of_range_wide_shape(backend):
    a = backend.put(COO(np.array([[0, 2**40], [1, -3]]), np.ones(2), (2**40, 2**40), check=False))
    expect_error(backend, IndexError, a.coalesce, "out of bounds", "out of bounds")


def test_index_on_zero_size_dimension(backend):
    a = backend.put(COO(np.array([[0, 0]]), np.ones(2), (0,), check=False))
    x = backend.put(np.ones(0))
    for f in (a.coalesce, a.to_dense, lambda: coosparse.sparse_mask(x, a)):
        expect_error(backend, IndexError, f, "out of bounds", "out of bounds")


def test_sparse_mask_dense_out_of_range_in_subprocess():
    # the original crash: a far index gathered from a dense array segfaulted
    rc, out = run_python("""
        import numpy as np, coosparse
        m = coosparse.COO(np.array([[0, 10**9]]), np.ones(2), (4,), check=False)
        try:
            coosparse.sparse_mask(np.ones(4), m)
        except IndexError as e:
            print("IndexError", e)
    """)
    assert rc == 0 and "IndexError" in out, out


# ----------------------------------------------------------------------------- uint64 >= 2**63
@pytest.mark.parametrize("check", [True, False])
def test_uint64_indices_beyond_int64_are_refused(check):
    idx = np.array([[1, 2**63 + 5]], dtype=np.uint64)
    with pytest.raises(IndexError, match="2\\*\\*63"):
        COO(idx, np.ones(2), (2**64,), check=check)
    ok = COO(np.array([[2**63 - 1]], dtype=np.uint64), np.ones(1), (2**64,), check=check)
    assert int(ok.indices[0, 0]) == 2**63 - 1


# ----------------------------------------------------------------------------- add / subtract dtypes
def _dup(values, dtype):
    return COO(np.zeros((1, len(values)), np.int64), np.array(values, dtype=dtype), (2,))


@pytest.mark.parametrize("coalesce", [False, True])
def test_add_sums_duplicates_in_their_own_dtype(coalesce):
    b = _dup([True, True], bool)  # means True
    i = COO([[0]], np.array([5]), (2,))
    for x in (b, b.coalesce()):
        assert coosparse.add(x, i, coalesce=coalesce).to_dense().tolist() == [6, 0]
        assert coosparse.add(i, x, coalesce=coalesce).to_dense().tolist() == [6, 0]
    assert (b + np.array([5, 0])).tolist() == [6, 0]
    u = _dup([200, 100], np.uint8)  # means 44
    z = COO([[1]], np.array([0], dtype=np.int16), (2,))
    for x in (u, u.coalesce()):
        assert coosparse.add(x, z, coalesce=coalesce).to_dense().tolist() == [44, 0]
        assert coosparse.subtract(z, x, coalesce=coalesce).to_dense().tolist() == [-44, 0]
    assert (u + np.array([0, 1], np.int16)).tolist() == [44, 1]  # a dense result: the union's scatter-add
    assert (np.array([0, 1], np.int16) - u).tolist() == [-44, 1]
    assert (u + np.zeros(2, np.int16)).to_dense().tolist() == [44, 0]  # one value over the operand: a COO
    f = _dup([1.0, 2.0**-24], np.float32)  # float32 sum rounds the tiny part away
    assert coosparse.add(f, COO([[1]], np.array([0.0]), (2,))).to_dense()[0] == 1.0


# ----------------------------------------------------------------------------- mask_projection
def test_mask_projection_accumulate_unmatched_inf_nan_is_zero():
    x = COO([[0, 1, 2]], np.array([np.inf, np.nan, 2.0]), (4,))
    m = COO([[2, 2]], np.ones(2), (4,))
    with np.errstate(all="raise"):
        r = coosparse.mask_projection(x, m, accumulate=True)
    assert r.values.tolist() == [0.0, 0.0, 4.0]
    assert coosparse.mask_projection(x, m).values.tolist() == [0.0, 0.0, 2.0]


# ----------------------------------------------------------------------------- lying flags
def test_lying_sorted_flag_is_named(backend):
    n, shape = 50_000, (1000, 1000)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 1000, size=(2, n))
    src = backend.put(COO(idx[:, ::-1].copy(), rng.random(n), shape))
    lie = backend.put(COO(idx, rng.random(n), shape, sorted=True, unique=True, check=False))
    for f in (lambda: coosparse.multiply(src, lie), lambda: coosparse.sparse_mask(lie, src),
              lambda: coosparse.mask_projection(src, lie)):
        expect_error(backend, ValueError, f, "flag sorted=True is false", "flag sorted=True is false")


@pytest.mark.parametrize("rows", [[0, 1, 2], [2, 2, 0, 1], [1]])
def test_rows_looked_up_in_keys_out_of_order_or_far_apart(backend, rows):
    """A few rows of a flagged-sorted array are looked up by a galloping search whose first guess
    scales by the keys' density: keys out of order (a sorted flag that lies) or spanning all of
    int64 (indices outside the shape) made that a division by zero (ZeroDivisionError). A lie
    gives some memory-safe result (or a named error); keys in order give the right rows."""
    vals = np.arange(1.0, 5.0)
    lie = backend.put(COO(np.array([[2, 0, 2, 1], [1, 1, 1, 0]]), vals, (3, 2), sorted=True, unique=True,
                          check=False))
    try:
        out = backend.get(lie[backend.put(np.array(rows))])
        backend.check_errors()
        assert out.shape == (len(rows), 2) and out.nnz <= 4 * len(rows)
    except (ValueError, IndexError) as e:  # a lie may be named where that is free
        assert "sorted" in str(e) or "out of bounds" in str(e)
    # sorted, with leading indices outside the shape at both ends of int64 (never read through here)
    far = backend.put(COO(np.array([[-2**63, 0, 1, 2**63 - 1], [0, 0, 1, 0]]), vals, (3, 2), sorted=True,
                          unique=True, check=False))
    out = backend.get(far[backend.put(np.array(rows))])
    want = np.array([[2.0, 0.0], [0.0, 3.0], [0.0, 0.0]])[rows]  # the entries inside the shape
    np.testing.assert_array_equal(out.to_dense(), want)


# ----------------------------------------------------------------------------- read-only memory
def _read_only(x):
    """``x``'s values in memory that cannot be made writeable (as a read-only memory map's)."""
    x = np.ascontiguousarray(x)
    return np.frombuffer(x.tobytes(), dtype=x.dtype).reshape(x.shape)


@pytest.mark.parametrize("dtype", [np.float64, np.bool_, np.complex64])
@pytest.mark.parametrize("nnz", [1, 3000])
def test_arrays_over_read_only_memory_join_by_rows(backend, dtype, nnz):
    """concatenate along the second axis and tile join the pieces row by row in one kernel that
    takes them as one tuple: a COO over read-only memory beside another piece failed to compile
    (Numba's TypingError, read-only and writeable arrays in one tuple)."""
    rng = np.random.default_rng(nnz)
    shape = (60, 70)
    flat = np.sort(rng.choice(shape[0] * shape[1], nnz, replace=False))
    idx = np.array(np.unravel_index(flat, shape))
    vals = (rng.random(nnz) < 0.7) if dtype == np.bool_ else rng.standard_normal(nnz).astype(dtype)
    ro = COO(_read_only(idx), _read_only(vals), shape, sorted=True, unique=True)
    rw = COO(idx, vals, shape, sorted=True, unique=True)
    assert not ro.values.base.flags.writeable
    d = rw.to_dense()
    x, y = backend.put(ro), backend.put(rw)
    for got, want in [(coosparse.concatenate([x, y], axis=1), np.concatenate([d, d], axis=1)),
                      (coosparse.concatenate([y, x, x, y, x], axis=1), np.concatenate([d, d, d, d, d], axis=1)),
                      (coosparse.tile(x, (2, 3)), np.tile(d, (2, 3)))]:
        np.testing.assert_array_equal(backend.get(got).to_dense(), want)


# ----------------------------------------------------------------------------- unclear errors
def test_big_endian_operands_are_converted():
    a = coosparse.random((4, 4), nnz=5, seed=0)
    x = np.arange(16.0).reshape(4, 4)
    xb = x.astype(">f8")
    np.testing.assert_array_equal(coosparse.multiply(a, xb).values, coosparse.multiply(a, x).values)
    np.testing.assert_array_equal(coosparse.sparse_mask(xb, a).values, coosparse.sparse_mask(x, a).values)
    np.testing.assert_array_equal(a + xb, a + x)
    b = COO(a.indices, a.values.astype(">f8"), a.shape)
    assert b.dtype == np.float64 and b.dtype.isnative
    assert coosparse.from_dense(xb).dtype.isnative
    with pytest.raises(TypeError, match="byte order"):
        a.astype(">f4")


def test_empty_list_indices_are_int64():
    a = COO([[], []], [], (2, 2))
    assert a.indices.dtype == np.int64 and a.nnz == 0 and a.to_dense().shape == (2, 2)
    with pytest.raises(TypeError, match="integers"):
        COO(np.zeros((2, 1)), [1.0], (2, 2))  # a float array the user gave is still refused


@pytest.mark.parametrize("x", [np.ones(3), None, [1, 2]])
def test_to_dense_of_a_non_coo_is_a_type_error(x):
    with pytest.raises(TypeError, match="to_dense expects a COO"):
        coosparse.to_dense(x)


def test_random_nnz_and_huge_dimensions():
    with pytest.raises(TypeError, match="nnz must be an integer"):
        coosparse.random((5,), nnz=2.7)
    a = coosparse.random((2**70,), nnz=3, seed=0)
    assert a.nnz == 3 and a.is_unique and (a.indices >= 0).all()
    assert coosparse.random((5,), nnz=np.int64(2)).nnz == 2


def test_to_scipy_float16_is_a_value_error():
    pytest.importorskip("scipy")
    a = coosparse.random((3, 3), nnz=2, dtype=np.float16, seed=0)
    for fmt in ("coo", "csr", "csc"):
        with pytest.raises(ValueError, match="float16"):
            a.to_scipy(fmt)


def test_multiply_broadcast_grows_like_numpy_and_names_incompatible_shapes():
    # a COO operand grows by broadcasting as NumPy's arrays do
    a = coosparse.random((3,), nnz=2, seed=0)
    r = coosparse.multiply(a, np.ones((2, 3)))
    assert r.shape == (2, 3) and r.nnz == 2 * a.nnz
    np.testing.assert_array_equal(r.to_dense(), a.to_dense() * np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(3,\) \(4,\)"):
        coosparse.multiply(a, np.ones(4))
    b = coosparse.random((3, 3), nnz=3, seed=0)
    assert coosparse.multiply(b, np.ones((3, 1))).shape == (3, 3)  # dense broadcast over sparse dims


@pytest.mark.parametrize("dense_shape", [(3,), (0,), (2, 0)])
def test_hybrid_coalesce_nnz_zero_prune(dense_shape):
    a = COO(np.zeros((1, 0), np.int64), np.zeros((0,) + dense_shape), (4,) + dense_shape)
    for r in (a.coalesce(prune=True), COO(a.indices, a.values, a.shape, check=False).coalesce(prune=True)):
        assert r.nnz == 0 and r.shape == a.shape


# ----------------------------------------------------------------------------- torch bridge
def test_to_torch_negative_strides_in_subprocess():
    pytest.importorskip("torch")
    rc, out = run_python("""
        import numpy as np, coosparse
        from coosparse.interop.torch import to_torch
        t = to_torch(np.arange(6.0)[::-2])
        print(t.tolist())
        a = coosparse.random((3, 4), nnz=4, seed=0)
        s = to_torch(coosparse.COO(a.indices, a.values[::-1], a.shape))
        print(bool((s.to_dense().numpy() == coosparse.COO(a.indices, a.values[::-1], a.shape).to_dense()).all()))
    """)
    assert rc == 0, out
    assert "[5.0, 3.0, 1.0]" in out and "True" in out


def test_torch_bridge_dtype_and_stride_errors():
    torch = pytest.importorskip("torch")
    from coosparse.interop import torch as ct

    with pytest.raises(TypeError, match="bfloat16"):
        ct.as_strided_scatter(torch.zeros(4, dtype=torch.bfloat16), torch.ones(2, dtype=torch.bfloat16), (2,), (1,))
    with pytest.raises(TypeError, match="bfloat16"):
        ct.from_torch(torch.zeros(2, dtype=torch.bfloat16))
    with pytest.raises(IndexError, match="stride 9223372036854775808"):
        ct.as_strided_scatter(torch.zeros(4), torch.ones(2), (2,), (2**63,))
    # a stride that no address uses (size 1) may be anything, as in the NumPy function
    torch.testing.assert_close(ct.as_strided_scatter(torch.zeros(4), torch.ones(1), (1,), (2**63,), 2),
                               torch.tensor([0.0, 0.0, 1.0, 0.0]))


def test_torch_from_torch_out_of_range_is_an_index_error():
    torch = pytest.importorskip("torch")
    from coosparse.interop import torch as ct

    t = torch.sparse_coo_tensor(torch.tensor([[0, 10**9]]), torch.ones(2), (4,), check_invariants=False)
    with pytest.raises(IndexError):
        ct.sparse_mask(torch.ones(4), t)
    with pytest.raises(IndexError):
        ct.to_dense(t)


# ----------------------------------------------------------------------------- fork safety
FORK_SCRIPT = """
    import multiprocessing as mp, os, sys
    import numpy as np, coosparse

    def work(seed):
        a = coosparse.random((400, 400), nnz=40_000, duplicates=True, seed=seed)
        b = coosparse.random((400, 400), nnz=40_000, seed=seed + 1).coalesce()
        return float(a.to_dense().sum() + coosparse.multiply(a, b).values.sum()
                     + coosparse.sparse_mask(np.ones((400, 400)), a).values.sum() + a.coalesce().values.sum())

    if __name__ == "__main__":
        want = [work(s) for s in range(4)]  # the parent runs every parallel kernel first
        import numba
        try:
            layer = numba.threading_layer()
        except ValueError:  # not started: the kernels run on coosparse's own threads
            layer = None
        print("layer", layer, flush=True)
        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map_async(work, range(4)).get(timeout=120)
        assert got == want, (got, want)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if work(0) == want[0] else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        print("fork ok", flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_pool_and_fork_after_parallel_kernels():
    rc, out = run_python(FORK_SCRIPT, timeout=400)
    assert rc == 0 and "fork ok" in out, out
    assert "layer None" in out, out  # no kernel starts a Numba threading layer


@pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                    reason="GNU OpenMP is the Linux default")
def test_fork_from_an_openmp_parent_runs_the_kernels():
    # other code started GNU OpenMP (which cannot run in a forked child): coosparse's kernels do
    # not use a threading layer, so a forked child still runs them, with the parent's results
    rc, out = run_python("""
        import os, numpy as np, coosparse, numba

        @numba.njit(parallel=True)
        def user_kernel(x):
            s = 0.0
            for i in numba.prange(x.shape[0]):
                s += x[i]
            return s

        user_kernel(np.ones(10_000))
        assert numba.threading_layer() == "omp", numba.threading_layer()
        a = coosparse.random((300, 300), nnz=40_000, duplicates=True, seed=0)
        want = a.to_dense(), a.coalesce().values, (a.coalesce() + a.coalesce()).values
        pid = os.fork()
        if pid == 0:
            got = a.to_dense(), a.coalesce().values, (a.coalesce() + a.coalesce()).values
            os._exit(0 if all(np.array_equal(g, w) for g, w in zip(got, want)) else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
    """, env={"NUMBA_THREADING_LAYER": "omp"}, timeout=400)
    if rc != 0 and "threading layer" in out.lower() and "omp" in out.lower():
        pytest.skip("no OpenMP layer here")
    assert rc == 0 and "child 0" in out, out


def test_threads_share_the_kernels():
    import threading

    a = coosparse.random((300, 300), nnz=30_000, duplicates=True, seed=5)
    b = coosparse.random((300, 300), nnz=30_000, seed=6).coalesce()
    want = coosparse.multiply(a, b).values, a.to_dense()
    errors = []

    def go():
        try:
            for _ in range(3):
                np.testing.assert_array_equal(coosparse.multiply(a, b).values, want[0])
                np.testing.assert_array_equal(a.to_dense(), want[1])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=go) for _ in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


# ----------------------------------------------------------------------------- read-only installs
def test_read_only_cache_falls_back_to_a_temp_dir():
    rc, out = run_python("""
        import os, sys, numpy as np
        from coosparse._kernels.numba import cache
        from numba.core import config
        config.CACHE_DIR = ""
        # /proc refuses new files even for root: stands for a read-only package and home
        chosen = cache.configure_cache_dir(package_dir="/proc/coosparse-ro", user_dir="/proc/numba-ro")
        assert chosen and config.CACHE_DIR == chosen, chosen
        import coosparse
        coosparse.random((30, 30), nnz=50, seed=0).to_dense()
        print("cached", any(f.endswith(".nbi") for _, _, fs in os.walk(chosen) for f in fs))
    """)
    assert rc == 0 and "cached True" in out, out


def test_user_cache_dir_wins():
    rc, out = run_python("""
        from coosparse._kernels.numba import cache
        from numba.core import config
        print(repr(cache.configure_cache_dir(package_dir="/proc/x", user_dir="/proc/y")), config.CACHE_DIR)
    """, env={"NUMBA_CACHE_DIR": "/tmp/coosparse-user-choice"})
    assert rc == 0 and out.strip().startswith("None /tmp/coosparse-user-choice"), out


# ----------------------------------------------------------------------------- fused merges
@pytest.mark.parametrize("idx", [[[0, 1, 2], [1, 45, 3]], [[0, 1, 60], [1, 5, 3]], [[-1, 1, 2], [1, 5, 3]],
                                 [[0, 1, 2], [1, -5, 3]]])
def test_fused_merges_refuse_out_of_range(backend, idx):
    # both operands coalesced, same dtype: multiply and add take the fused merge kernels
    g = backend.put(coosparse.random((50, 40), nnz=300, seed=1).coalesce())
    bad = backend.put(COO(np.array(idx), np.ones(3), (50, 40), sorted=True, unique=True, check=False))
    for f in (lambda: coosparse.multiply(bad, g), lambda: coosparse.multiply(g, bad),
              lambda: coosparse.add(bad, g), lambda: coosparse.subtract(g, bad)):
        expect_error(backend, IndexError, f, "out of bounds for dimension", "out of bounds")


def test_fused_merges_name_a_lying_flag(backend):
    g = backend.put(coosparse.random((50, 40), nnz=300, seed=1).coalesce())
    lie = backend.put(COO(np.array([[3, 1, 2], [1, 5, 3]]), np.ones(3), (50, 40), sorted=True, unique=True,
                          check=False))
    # (lie, the smaller operand, is the probe of the products: the GPU merges check the
    # order of a match's probe and of both sides of a union, docs/cuda.md)
    for f in (lambda: coosparse.multiply(lie, g), lambda: coosparse.multiply(g, lie),
              lambda: coosparse.add(lie, g), lambda: coosparse.add(g, lie)):
        expect_error(backend, ValueError, f, "flag sorted=True", "flag sorted=True")


def test_fused_union_checks_the_order_past_the_other_sides_end(backend):
    # the lie sits after the last key of the other side: the merge over keys reads those
    # entries alone, and still checks their order (the union's result would not be sorted)
    g = backend.put(COO(np.array([[0, 1], [0, 0]]), np.ones(2), (50, 40)).coalesce())
    lie = backend.put(COO(np.array([[5, 30, 20], [0, 0, 0]]), np.ones(3), (50, 40), sorted=True, unique=True,
                          check=False))
    for f in (lambda: coosparse.add(lie, g), lambda: coosparse.add(g, lie),
              lambda: coosparse.subtract(g, lie), lambda: np.maximum(g, lie)):
        expect_error(backend, ValueError, f, "flag sorted=True", "flag sorted=True")


def test_linear_index_checks_sizes_in_the_same_pass(backend):
    # the kernel-API row behind every bounds check above
    from coosparse._kernels.backend import backend_for

    idx = backend.put(np.array([[0, 1, 2, 0], [1, 5, 2, -1]]))
    be = backend_for(idx)
    strides = np.array([3, 1])
    assert backend.get(be.linear_index(idx, strides)).tolist() == [1, 8, 8, -1]  # no sizes: no check
    expect_error(backend, IndexError, lambda: be.linear_index(idx, strides, (3, 3)),
                 r"index 5 at position 1 is out of bounds for dimension 1 with size 3", "out of bounds")
    if kernels_report(backend):
        # a GPU gives the bad entries a key no kernel reads or writes through, and reports them
        keys = backend.get(be.linear_index(idx, strides, (3, 3)))
        assert keys.tolist()[::2] == [1, 8] and (keys[1::2] < -(2**61)).all()
        with pytest.raises(IndexError, match="out of bounds"):
            backend.check_errors()
