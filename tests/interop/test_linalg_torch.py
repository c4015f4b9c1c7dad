"""The torch bridge's linear algebra: matmul and sampled_matmul (autograd), spmm_parts and
sddmm_parts (custom ops, torch.compile), against torch's own operations.

Includes ports of torch's test_sparse.py cases for ``mm``, ``addmm``, ``bmm``, ``mv``,
``dsmm``/``hsmm``/``smm``, ``sparse.mm`` gradcheck and ``sparse_matmul`` (sparse x sparse
with gradients), with their shapes and expectations; our operation stands in for torch's.
"""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coosparse.interop import torch as ct  # noqa: E402
from torch.autograd import gradcheck as _gradcheck  # noqa: E402

F64 = torch.float64


def gradcheck(fn, inputs, **kw):
    slow = kw.pop("slow", False)
    return _gradcheck(fn, inputs, fast_mode=not slow, check_batched_grad=False, **kw)


@pytest.fixture(autouse=True, scope="module")
def _one_numba_thread():
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(old)


def gen_sparse(shape, nnz, coalesced, dtype=F64, sparse_dim=None, seed=0):
    """Like torch's _gen_sparse: random indices; uncoalesced ones repeat half of their entries."""
    g = torch.Generator().manual_seed(seed)
    sd = len(shape) if sparse_dim is None else sparse_dim
    idx = torch.stack([torch.randint(0, max(s, 1), (nnz,), generator=g) for s in shape[:sd]]) if nnz and \
        all(s for s in shape[:sd]) else torch.zeros((sd, 0), dtype=torch.int64)
    n = idx.shape[1]
    vals = torch.randn((n,) + tuple(shape[sd:]), generator=g, dtype=F64).to(dtype)
    if dtype.is_complex:
        vals = vals + 1j * torch.randn(vals.shape, generator=g, dtype=F64).to(dtype)
    if not coalesced and n >= 2:
        h = n // 2
        idx = torch.cat([idx, idx[:, :h]], 1)
        vals = torch.cat([vals, torch.randn((h,) + tuple(shape[sd:]), generator=g, dtype=F64).to(dtype)])
    t = torch.sparse_coo_tensor(idx, vals, shape, check_invariants=False)
    return t.coalesce() if coalesced else t


def dense_of(t):
    return t.detach().to_dense()


COALESCED = [True, False]


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("coalesced", COALESCED)
@pytest.mark.parametrize("dtype", [torch.float32, F64, torch.complex128])
def test_matmul_values(coalesced, dtype):
    a = gen_sparse((7, 5), 12, coalesced, dtype)
    b = gen_sparse((5, 6), 10, coalesced, dtype, seed=1)
    x = torch.randn(5, 3, dtype=F64).to(dtype)
    y = torch.randn(4, 7, dtype=F64).to(dtype)
    tol = dict(rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ct.matmul(a, x), dense_of(a) @ x, **tol)
    torch.testing.assert_close(ct.matmul(y, a), y @ dense_of(a), **tol)
    c = ct.matmul(a, b)
    assert c.is_sparse and c.is_coalesced()
    torch.testing.assert_close(c.to_dense(), dense_of(a) @ dense_of(b), **tol)


def test_matmul_errors():
    a = gen_sparse((2, 3), 4, True)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        ct.matmul(a, torch.ones(4, 2, dtype=F64))
    with pytest.raises(TypeError, match="dtypes"):
        ct.matmul(a, torch.ones(3, 2, dtype=torch.float32))
    with pytest.raises(TypeError):
        ct.matmul(torch.ones(2, 3), torch.ones(3, 2))


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("coalesced", COALESCED)
def test_gradcheck_sparse_dense(coalesced):
    a = gen_sparse((5, 4), 8, coalesced).requires_grad_()
    b = torch.randn(4, 3, dtype=F64, requires_grad=True)
    d = torch.randn(3, 5, dtype=F64, requires_grad=True)
    assert gradcheck(lambda s, x: ct.matmul(s, x), (a, b), masked=True)
    assert gradcheck(lambda x, s: ct.matmul(x, s), (d, a), masked=True)
    v = torch.randn(4, dtype=F64, requires_grad=True)
    assert gradcheck(lambda s, x: ct.matmul(s, x), (a, v), masked=True)
    w = torch.randn(5, dtype=F64, requires_grad=True)
    assert gradcheck(lambda x, s: ct.matmul(x, s), (w, a), masked=True)


@pytest.mark.parametrize("coalesced", COALESCED)
def test_gradcheck_values_tensor(coalesced):
    """The sparse tensor built inside the function: duplicates each get their index's gradient."""
    a = gen_sparse((5, 4), 8, coalesced)
    idx, vals = a._indices(), a._values().clone().requires_grad_()
    b = torch.randn(4, 3, dtype=F64, requires_grad=True)
    assert gradcheck(lambda v, x: ct.matmul(torch.sparse_coo_tensor(idx, v, (5, 4)), x), (vals, b))
    assert gradcheck(lambda v, x: ct.matmul(x.T, torch.sparse_coo_tensor(idx, v, (5, 4))), (vals, torch.randn(
        5, 2, dtype=F64, requires_grad=True)))


@pytest.mark.parametrize("coalesced", COALESCED)
def test_gradcheck_hybrid_batched_broadcast_complex(coalesced):
    h = gen_sparse((2, 5, 4), 6, coalesced, sparse_dim=2).requires_grad_()  # dense trailing dim
    b = torch.randn(4, 3, dtype=F64, requires_grad=True)
    assert gradcheck(lambda s, x: ct.matmul(s, x), (h, b), masked=True)
    a3 = gen_sparse((2, 5, 4), 10, coalesced).requires_grad_()
    assert gradcheck(lambda s, x: ct.matmul(s, x), (a3, b), masked=True)
    a2 = gen_sparse((5, 4), 8, coalesced).requires_grad_()
    bb = torch.randn(3, 4, 2, dtype=F64, requires_grad=True)
    assert gradcheck(lambda s, x: ct.matmul(s, x), (a2, bb), masked=True)
    ac = gen_sparse((5, 4), 8, coalesced, torch.complex128).requires_grad_()
    bc = torch.randn(4, 3, dtype=torch.complex128, requires_grad=True)
    assert gradcheck(lambda s, x: ct.matmul(s, x), (ac, bc), masked=True)


@pytest.mark.parametrize("coalesced", COALESCED)
def test_gradcheck_sparse_sparse(coalesced):
    a = gen_sparse((4, 5), 8, coalesced).requires_grad_()
    b = gen_sparse((5, 3), 7, coalesced, seed=2).requires_grad_()
    assert gradcheck(lambda x, y: ct.matmul(x, y).to_dense(), (a, b), masked=True)
    assert gradcheck(lambda x, y: ct.to_dense(ct.matmul(x, y)), (a, b), masked=True)


@pytest.mark.parametrize("coalesced", COALESCED)
def test_sampled_matmul_values_and_gradcheck(coalesced):
    mask = gen_sparse((5, 3), 7, coalesced)
    x = torch.randn(5, 4, dtype=F64, requires_grad=True)
    y = torch.randn(4, 3, dtype=F64, requires_grad=True)
    r = ct.sampled_matmul(mask, x, y)
    assert torch.equal(r._indices(), mask._indices()) and r.is_coalesced() == mask.is_coalesced()
    want = (x @ y).detach()[tuple(mask._indices())]
    torch.testing.assert_close(r._values().detach(), want)
    assert gradcheck(lambda p, q: ct.sampled_matmul(mask, p, q).to_dense(), (x, y))
    if coalesced:  # torch's own SDDMM (CSR) agrees
        ref = torch.sparse.sampled_addmm(mask.to_sparse_csr(), x.detach(), y.detach(), beta=0.0)
        torch.testing.assert_close(r.detach().to_dense(), ref.to_dense())
    xb = torch.randn(2, 5, 4, dtype=F64, requires_grad=True)
    mb = gen_sparse((2, 5, 3), 9, coalesced)
    assert gradcheck(lambda p, q: ct.sampled_matmul(mb, p, q).to_dense(), (xb, y))


# ----------------------------------------------------------------------------- torch.compile
def test_custom_ops_gradcheck_and_opcheck():
    a = gen_sparse((5, 4), 8, True)
    idx, vals = a._indices(), a._values().clone().requires_grad_()
    b = torch.randn(4, 3, dtype=F64, requires_grad=True)
    assert gradcheck(lambda v, x: ct.spmm_parts(idx, v, (5, 4), x), (vals, b))
    assert gradcheck(lambda v, x: ct.spmm_parts(idx, v, (5, 4), x, transpose=True),
                     (vals, torch.randn(5, 2, dtype=F64, requires_grad=True)))
    assert gradcheck(lambda v, x: ct.spmm_parts(idx, v, (5, 4), x), (vals, torch.randn(4, dtype=F64, requires_grad=True)))
    x = torch.randn(5, 3, dtype=F64, requires_grad=True)
    y = torch.randn(3, 4, dtype=F64, requires_grad=True)
    assert gradcheck(lambda p, q: ct.sddmm_parts(idx, p, q), (x, y))
    torch.library.opcheck(torch.ops.coosparse.spmm_parts.default, (idx, vals.detach(), [5, 4], b.detach(), False))
    torch.library.opcheck(torch.ops.coosparse.sddmm_parts.default, (idx, x.detach(), y.detach()))


def test_custom_ops_compile():
    a = gen_sparse((6, 5), 9, True)
    idx, vals = a._indices(), a._values()
    x = torch.randn(5, 4, dtype=F64)
    y = torch.randn(4, 5, dtype=F64)

    def layer(v, p, q):
        h = ct.spmm_parts(idx, v, (6, 5), p)  # (6, 4)
        return h.sum() + ct.sddmm_parts(idx, h, q).sum()

    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    v = vals.clone().requires_grad_()
    p = x.clone().requires_grad_()
    out = compiled(v, p, y)
    out.backward()
    v2 = vals.clone().requires_grad_()
    p2 = x.clone().requires_grad_()
    ref = layer(v2, p2, y)
    ref.backward()
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(v.grad, v2.grad)
    torch.testing.assert_close(p.grad, p2.grad)


# ----------------------------------------------------------------------------- ports of torch's test_sparse.py
@pytest.mark.parametrize("coalesced", COALESCED)
@pytest.mark.parametrize("dtype", [F64, torch.complex128])
def test_torch_mm_addmm(coalesced, dtype):
    # test_mm: torch.addmm / torch.mm with a sparse (di, dj) operand
    for di, dj, dk, nnz in [(10, 100, 100, 20), (100, 1000, 200, 20), (64, 10000, 300, 20), (0, 100, 100, 0),
                            (10, 0, 100, 0), (10, 100, 0, 0), (10, 100, 0, 20)]:
        x = gen_sparse((di, dj), nnz, coalesced, dtype)
        t = torch.randn(di, dk, dtype=F64).to(dtype)
        y = torch.randn(dj, dk, dtype=F64).to(dtype)
        alpha, beta = 0.37, 0.81
        res = beta * t + alpha * ct.matmul(x, y)
        torch.testing.assert_close(res, torch.addmm(t, dense_of(x), y, beta=beta, alpha=alpha))
        torch.testing.assert_close(ct.matmul(x, y), torch.mm(dense_of(x), y))


@pytest.mark.parametrize("coalesced", COALESCED)
def test_torch_bmm(coalesced):
    for num, di, dj, dk, nnz in [(10, 10, 100, 99, 20), (10, 100, 1000, 200, 20), (10, 64, 10000, 300, 20),
                                 (10, 0, 100, 99, 0), (10, 10, 0, 100, 0), (10, 10, 100, 0, 0), (10, 10, 100, 0, 20)]:
        num = num if dj * dk <= 100_000 else 3  # torch's shapes; fewer batches of the largest ones
        mats = [gen_sparse((di, dj), nnz, coalesced, seed=s) for s in range(num)]
        a = torch.stack(mats)
        b = torch.randn(num, dj, dk, dtype=F64)
        ab = ct.matmul(a, b)
        for i in range(num):
            torch.testing.assert_close(ab[i], dense_of(mats[i]) @ b[i])
    a = torch.rand(10, 23, 32, dtype=F64)
    a[3] = 0
    a[6] = 0
    a = a.to_sparse()
    b = torch.rand(10, 32, 10, dtype=F64)
    b[4] = 0
    b[6] = 0
    ab = ct.matmul(a, b)
    for i in range(10):
        torch.testing.assert_close(ab[i], a[i].to_dense() @ b[i])
    # the transposed check of torch's test: (b^T sparse) @ (a^T dense), transposed back
    ab_t = ct.matmul(b.transpose(1, 2).to_sparse(), a.transpose(1, 2).to_dense()).transpose(1, 2)
    torch.testing.assert_close(ab, ab_t)


@pytest.mark.parametrize("coalesced", COALESCED)
def test_torch_mv(coalesced):
    for di, dj, dk, nnz in [(10, 100, 100, 20), (100, 1000, 1000, 20), (64, 10000, 10000, 20), (0, 100, 100, 0),
                            (10, 0, 0, 0), (10, 100, 100, 0), (10, 100, 100, 20)]:
        x = gen_sparse((di, dj), nnz, coalesced)
        t = torch.randn(dk, dtype=F64)
        torch.testing.assert_close(ct.matmul(x, t), dense_of(x) @ t)
    with pytest.raises(ValueError):
        ct.matmul(gen_sparse((10, 100), 20, coalesced), torch.randn(10, dtype=F64))


@pytest.mark.parametrize("coalesced", COALESCED)
def test_torch_dsmm_hsmm_saddmm(coalesced):
    for di, dj, dk, nnz in [(7, 5, 3, 20), (1000, 100, 100, 20), (3000, 64, 300, 20), (0, 100, 100, 0),
                            (1000, 0, 100, 0), (1000, 100, 0, 0), (1000, 100, 0, 20)]:
        x = gen_sparse((di, dj), nnz, coalesced)
        y = torch.randn(dj, dk, dtype=F64)
        torch.testing.assert_close(ct.matmul(x, y), dense_of(x) @ y)
        # saddmm / sspaddmm: sparse t + x @ y, through the sparse-sparse product
        t = gen_sparse((di, dk), nnz, coalesced, seed=3)
        r = ct.add(t, ct.matmul(x, y.to_sparse())) if dk and di else None
        if r is not None:
            torch.testing.assert_close(r.to_dense(), dense_of(t) + dense_of(x) @ y)


@pytest.mark.parametrize("coalesced", COALESCED)
@pytest.mark.parametrize("broadcast", [False, True])
@pytest.mark.parametrize("alpha_beta", [None, (1, 0), (1, 1)])
def test_torch_sparse_addmm_gradcheck(coalesced, broadcast, alpha_beta):
    alpha, beta = alpha_beta or (0.43, 0.71)
    m, n, p, nnz = 7, 8, 9, 20
    d1 = torch.randn((), dtype=F64, requires_grad=True) if broadcast else torch.randn(n, p, dtype=F64, requires_grad=True)
    d2 = torch.randn(m, p, dtype=F64, requires_grad=True)
    s = gen_sparse((n, m), nnz, coalesced).requires_grad_()
    y = beta * d1 + alpha * ct.matmul(s, d2)
    torch.testing.assert_close(y, torch.addmm(d1, dense_of(s), d2, beta=beta, alpha=alpha))
    assert gradcheck(lambda s_, a, b: beta * a + alpha * ct.matmul(s_, b), (s, d1, d2), masked=True)


@pytest.mark.parametrize("coalesced", COALESCED)
@pytest.mark.parametrize("transposed", [False, True])
def test_torch_sparse_mm_gradcheck(coalesced, transposed):
    d1, d2, d3, nnz = 7, 8, 9, 20
    d = (torch.randn(d3, d2, dtype=F64).t() if transposed else torch.randn(d2, d3, dtype=F64)).requires_grad_()
    s = gen_sparse((d1, d2), nnz, coalesced).requires_grad_()
    torch.testing.assert_close(ct.matmul(s, d), dense_of(s) @ d.detach())
    assert gradcheck(lambda a, b: ct.matmul(a, b), (s, d), masked=True)


@pytest.mark.parametrize("coalesced", COALESCED)
def test_torch_sparse_matmul(coalesced):
    """torch's test_sparse_matmul: sparse x sparse values, coalesced result, gradients."""
    def check(n, m, p, nnz, grads):
        a = gen_sparse((n, m), nnz, coalesced, seed=n * 100 + m * 10 + p)
        b = gen_sparse((m, p), nnz, coalesced, seed=n * 100 + m * 10 + p + 1)
        r = ct.matmul(a, b)
        torch.testing.assert_close(r.to_dense(), dense_of(a) @ dense_of(b))
        assert r.is_coalesced()
        idx = r._indices()
        assert idx.shape[1] < 2 or bool(((idx[0, 1:] > idx[0, :-1]) | ((idx[0, 1:] == idx[0, :-1])
                                                                       & (idx[1, 1:] > idx[1, :-1]))).all())
        if grads:
            a.requires_grad_(True)
            b.requires_grad_(True)
            assert gradcheck(lambda x, y: ct.matmul(x, y).to_dense(), (a, b), masked=True)
            # a gradient with a custom sparsity pattern (the output's indices, random values)
            c = ct.matmul(a, b)
            g = torch.rand_like(c.detach().to_dense()).sparse_mask(c.detach().coalesce())
            c.backward(g)
            ad = dense_of(a).requires_grad_(True)
            bd = dense_of(b).requires_grad_(True)
            (ad @ bd).backward(g.to_dense())
            torch.testing.assert_close(a.grad.to_dense(), ad.grad.sparse_mask(a.detach().coalesce()).to_dense())
            torch.testing.assert_close(b.grad.to_dense(), bd.grad.sparse_mask(b.detach().coalesce()).to_dense())

    for n, m, p in itertools.product(range(2, 5), range(2, 8), range(2, 8)):
        check(n, m, p, 10, grads=(n + m + p) % 11 == 0)  # values everywhere, gradients on a spread subset
    check(0, 0, 0, 0, False)
    check(0, 10, 0, 0, False)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)"):
        ct.matmul(gen_sparse((2, 3), 10, coalesced), gen_sparse((4, 2), 10, coalesced))
    with pytest.raises(TypeError, match="dtypes"):
        a = gen_sparse((2, 2), 10, coalesced)
        ct.matmul(a.to(F64), a.to(torch.float32))
    # test_backward_noncontiguous
    for _ in range(3):
        a = torch.eye(5, dtype=F64).to_sparse().requires_grad_(True)
        b = torch.eye(5, dtype=F64).to_sparse()
        out = ct.matmul(a, b)
        out.coalesce().values().sum().backward()
        torch.testing.assert_close(a.grad.to_dense(), a.detach().to_dense())
