"""torch's own sparse tests, run through the bridge.

Inputs and expected values are ported from pytorch's ``test/test_sparse.py``
(``test_to_dense_with_gradcheck``, ``test_to_dense_hybrid``, ``test_contig``,
``test_contig_hybrid``, ``test_basic``, ``test_scalar``, ``test_sparse_mask``,
``test_sparse_mask_hybrid``, ``_test_basic_ops_shape`` / ``test_basic_ops``,
``test_add_dense_sparse_mismatch``, ``test_add_noncontiguous``). Where torch's
test compares against torch's own dense arithmetic, so do we: the expected
value is what torch computes. Bridge differences are stated where they occur
(coosparse raises ``ValueError`` where torch raises ``RuntimeError``).
"""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coosparse.interop import torch as ct  # noqa: E402

DTYPES = [torch.float64, torch.complex128]


def sparse(i, v, size, dtype=None):
    return torch.sparse_coo_tensor(torch.tensor(i, dtype=torch.int64), torch.as_tensor(v, dtype=dtype), size)


def gen_sparse(sparse_shape, dense_shape, nnz, dtype, coalesced, seed):
    """torch's genSparseTensor in spirit: nnz random entries; uncoalesced ones repeat half their indices."""
    g = torch.Generator().manual_seed(seed)
    shape = list(sparse_shape) + list(dense_shape)
    if nnz and 0 in sparse_shape:
        nnz = 0
    v = torch.randn((nnz,) + tuple(dense_shape), generator=g, dtype=torch.float64).to(dtype)
    if sparse_shape:
        i = torch.stack([torch.randint(0, max(s, 1), (nnz,), generator=g) for s in sparse_shape])
    else:
        i = torch.zeros((0, nnz), dtype=torch.int64)
    if not coalesced and nnz >= 2:
        i[:, nnz // 2:] = i[:, : nnz - nnz // 2]  # duplicates
    x = torch.sparse_coo_tensor(i, v, shape, dtype=dtype)
    return x.coalesce() if coalesced else x


# ------------------------------------------------------------------------- to_dense
@pytest.mark.parametrize("dtype", DTYPES)
def test_to_dense(dtype):
    x = sparse([[0, 1, 2, 2], [0, 0, 0, 3], [0, 0, 1, 4]], torch.tensor([2, 1, 3, 4], dtype=dtype), (3, 4, 5))
    res = torch.zeros(3, 4, 5, dtype=dtype)
    res[0, 0, 0], res[1, 0, 0], res[2, 0, 1], res[2, 3, 4] = 2, 1, 3, 4
    for _ in range(3):  # torch: "Tests triple to_dense for memory corruption"
        torch.testing.assert_close(ct.to_dense(x), res)
    x = sparse([[0, 1, 2, 2], [0, 0, 0, 3], [0, 0, 1, 4]], torch.empty(4, 0, dtype=dtype), (3, 4, 5, 0))
    assert ct.to_dense(x).shape == (3, 4, 5, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_dense_hybrid(dtype):
    i = [[0, 1, 2, 2], [0, 0, 0, 3]]
    x = sparse(i, torch.tensor([[2, 3], [1, 2], [3, 4], [4, 5]], dtype=dtype), (3, 4, 2))
    res = torch.tensor([
        [[2, 3], [0, 0], [0, 0], [0, 0]],
        [[1, 2], [0, 0], [0, 0], [0, 0]],
        [[3, 4], [0, 0], [0, 0], [4, 5]],
    ], dtype=dtype)
    torch.testing.assert_close(ct.to_dense(x), res)
    xd = x.detach().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda t: ct.to_dense(t), (xd,), masked=True) if dtype == torch.float64 else True
    x = sparse(i, torch.empty(4, 2, 0, dtype=dtype), (3, 4, 2, 0))
    assert ct.to_dense(x).shape == (3, 4, 2, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar(dtype):
    a = torch.sparse_coo_tensor(torch.zeros((0, 1), dtype=torch.int64), torch.tensor([12.3], dtype=dtype), ())
    assert ct.coalesce(a).is_coalesced()
    torch.testing.assert_close(ct.to_dense(a), torch.tensor(12.3, dtype=dtype))
    a = torch.sparse_coo_tensor(torch.zeros((0, 2), dtype=torch.int64), torch.tensor([12.3, 12.3], dtype=dtype), ())
    torch.testing.assert_close(ct.to_dense(a), torch.tensor(12.3 * 2, dtype=dtype))
    assert ct.coalesce(a)._nnz() == 1
    a = torch.sparse_coo_tensor(torch.zeros((0, 0), dtype=torch.int64), torch.zeros(0, dtype=dtype), ())
    torch.testing.assert_close(ct.to_dense(a), torch.tensor(0, dtype=dtype))


# ------------------------------------------------------------------------- coalesce
CONTIG = [
    # (indices, values, size, expected indices, expected values): test_contig
    ([[1, 0, 35, 14, 39, 6, 71, 66, 40, 27], [92, 31, 62, 50, 22, 65, 89, 74, 56, 34]],
     [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], (100, 100),
     [[0, 1, 6, 14, 27, 35, 39, 40, 66, 71], [31, 92, 65, 50, 34, 62, 22, 56, 74, 89]],
     [2, 1, 6, 4, 10, 3, 5, 9, 8, 7]),
    ([[2, 0, 2, 1], [0, 0, 3, 0], [1, 0, 4, 0]], [3, 2, 4, 1], (3, 4, 5),
     [[0, 1, 2, 2], [0, 0, 0, 3], [0, 0, 1, 4]], [2, 1, 3, 4]),
    ([[0, 0, 2, 0], [0, 0, 3, 0], [0, 0, 4, 0]], [3, 2, 4, 1], (3, 4, 5),  # duplicate indices
     [[0, 2], [0, 3], [0, 4]], [6, 4]),
    # test_contig_hybrid
    ([[2, 0, 2, 1], [0, 0, 3, 0], [1, 0, 4, 0]], [[3, 3, 3], [2, 2, 2], [4, 4, 4], [1, 1, 1]], (3, 4, 5, 3),
     [[0, 1, 2, 2], [0, 0, 0, 3], [0, 0, 1, 4]], [[2, 2, 2], [1, 1, 1], [3, 3, 3], [4, 4, 4]]),
    ([[0, 0, 2, 0], [0, 0, 3, 0], [0, 0, 4, 0]], [[3, 2, 3], [2, 1, 1], [4, 3, 4], [1, 1, 1]], (3, 4, 5, 3),
     [[0, 2], [0, 3], [0, 4]], [[6, 4, 5], [4, 3, 4]]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CONTIG)))
def test_contig(dtype, case):
    i, v, size, exp_i, exp_v = CONTIG[case]
    y = ct.coalesce(sparse(i, v, size, dtype))
    assert y.is_coalesced()
    torch.testing.assert_close(y._indices(), torch.tensor(exp_i))
    torch.testing.assert_close(y._values(), torch.tensor(exp_v, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_contig_hybrid_long(dtype):
    i = [[1, 0, 35, 14, 39, 6, 71, 66, 40, 27], [92, 31, 62, 50, 22, 65, 89, 74, 56, 34]]
    v = [[k, k + 1] for k in range(1, 11)]
    y = ct.coalesce(sparse(i, v, (100, 100, 2), dtype))
    torch.testing.assert_close(y._indices(), torch.tensor([[0, 1, 6, 14, 27, 35, 39, 40, 66, 71],
                                                           [31, 92, 65, 50, 34, 62, 22, 56, 74, 89]]))
    exp = [[2, 3], [1, 2], [6, 7], [4, 5], [10, 11], [3, 4], [5, 6], [9, 10], [8, 9], [7, 8]]
    torch.testing.assert_close(y._values(), torch.tensor(exp, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_basic_coalesce_duplicates(dtype):
    # test_basic: "Make sure that coalesce handles duplicate indices correctly"
    i = [[9, 0, 0, 0, 8, 1, 1, 1, 2, 7, 2, 2, 3, 4, 6, 9]]
    v = torch.tensor([[k ** 2, k] for k in range(16)], dtype=dtype)
    x = sparse(i, v, (10, 2), dtype)
    y = ct.coalesce(x)
    assert y._nnz() == 9
    torch.testing.assert_close(y._indices(), x.coalesce()._indices())
    torch.testing.assert_close(y._values(), x.coalesce()._values())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("coalesced", [True, False])
def test_coalesce_matches_torch(dtype, coalesced):
    # test_coalesce's shapes: empty sparse/dense parts and nnz 0 included
    for empty_i, empty_v, empty_nnz in itertools.product([True, False], repeat=3):
        sparse_size = [] if empty_i else [2, 1]
        dense_size = [1, 0, 2] if empty_v else [1, 2]
        t = gen_sparse(sparse_size, dense_size, 0 if empty_nnz else 5, dtype, coalesced, seed=7)
        y = ct.coalesce(t)
        assert y.is_coalesced()
        torch.testing.assert_close(ct.to_dense(y), t.to_dense())
        if t._nnz():
            torch.testing.assert_close(y._indices(), t.coalesce()._indices())
            torch.testing.assert_close(y._values(), t.coalesce()._values())


# ------------------------------------------------------------------------- sparse_mask
@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_mask_fixed(dtype):
    i = [[1, 3, 0, 4], [2, 1, 2, 3]]
    x = sparse(i, torch.tensor([1, 2, 3, 4], dtype=dtype), (5, 4)).coalesce()
    dense = torch.arange(1, 21).reshape(5, 4).to(dtype)
    expected = sparse(i, torch.tensor([7, 14, 3, 20], dtype=dtype), (5, 4)).coalesce()
    for lhs in (dense, dense.to_sparse()):
        r = ct.sparse_mask(lhs, x)
        torch.testing.assert_close(r.coalesce(), expected)
        assert r.is_coalesced() == x.is_coalesced()
    x = sparse(i, torch.empty(4, 0, dtype=dtype), (5, 4, 0)).coalesce()
    r = ct.sparse_mask(torch.empty(5, 4, 0, dtype=dtype), x)
    assert r._values().shape == (4, 0)


def test_sparse_mask_hybrid_fixed():
    i = [[1, 3, 0, 4], [2, 1, 2, 3]]
    x = sparse(i, torch.tensor([[1, 2], [2, 3], [3, 4], [4, 5]]), (5, 4, 2)).coalesce()
    dense = torch.tensor([
        [[1, 3], [2, 2], [3, 3], [4, 2]],
        [[5, 7], [6, 7], [7, 9], [8, 9]],
        [[9, 2], [10, 4], [11, 1], [12, 3]],
        [[13, 5], [14, 1], [15, 1], [16, 6]],
        [[17, 7], [18, 2], [19, 7], [20, 1]],
    ])
    expected = sparse(i, torch.tensor([[7, 9], [14, 1], [3, 3], [20, 1]]), (5, 4, 2)).coalesce()
    for lhs in (dense, dense.to_sparse(2)):
        torch.testing.assert_close(ct.sparse_mask(lhs, x).coalesce(), expected)


@pytest.mark.parametrize("coalesced", [True, False])
@pytest.mark.parametrize("shapes", [
    ([5, 6], []), ([10, 10, 10], []), ([50, 30, 20], []), ([5, 5, 5, 5, 5, 5], []), ([10, 10, 0], []),
    ([5, 6], [2, 3]), ([10, 10, 10], [3]), ([10, 10, 10], [2, 0]),
])
@pytest.mark.parametrize("nnz", [(9, 12), (0, 12), (9, 0), (0, 0)])
def test_sparse_mask_shapes(coalesced, shapes, nnz):
    # _test_sparse_mask_shape: mask each random operand by the other; compare with torch
    si, sv = shapes
    x1 = gen_sparse(si, sv, nnz[0], torch.float64, coalesced, seed=1)
    x2 = gen_sparse(si, sv, nnz[1], torch.float64, coalesced, seed=2)
    for lhs, mask in ((x1, x2), (x1.to_dense(), x2), (x2, x1)):
        want = lhs.sparse_mask(mask)
        got = ct.sparse_mask(lhs, mask)
        torch.testing.assert_close(got.to_dense(), want.to_dense())
        assert got.is_coalesced() == mask.is_coalesced()


def test_sparse_mask_repetitions():
    # "check repetitions and matchings in the intersection"
    g = torch.Generator().manual_seed(0)
    lhs = torch.randint(0, 5, (100,), generator=g)
    rhs = torch.randint(0, 5, (100,), generator=g).to_sparse()
    torch.testing.assert_close(ct.sparse_mask(lhs.to_sparse(), rhs), ct.sparse_mask(lhs, rhs))
    torch.testing.assert_close(ct.sparse_mask(lhs, rhs), lhs.sparse_mask(rhs))


def test_sparse_mask_coalesce_flags():
    g = torch.Generator().manual_seed(3)
    sparse_c = torch.rand(3, 3, generator=g).to_sparse()
    sparse_unc = torch.rand(3, 3, generator=g).to_sparse()._coalesced_(False)
    for lhs, rhs in [(sparse_c, sparse_unc), (sparse_unc, sparse_c)]:
        r = ct.sparse_mask(lhs, rhs)
        torch.testing.assert_close(r.coalesce(), ct.sparse_mask(lhs.to_dense(), rhs).coalesce())
        assert r.is_coalesced() == rhs.is_coalesced()


# ------------------------------------------------------------------------- add / subtract / mul
BASIC_SHAPES = [
    (9, 12, [5, 6], []), (9, 12, [10, 10, 10], []), (9, 12, [50, 30, 20], []),
    (9, 12, [5, 5, 5, 5, 5, 5], []), (0, 12, [10, 10, 10], []), (9, 0, [10, 10, 10], []),
    (0, 0, [10, 10, 10], []), (0, 0, [10, 10, 0], []), (0, 0, [], []),
    (9, 12, [5, 6], [2, 3]), (9, 12, [10, 10, 10], [3]), (9, 12, [50, 30, 20], [2]),
    (0, 12, [10, 10, 10], [2]), (9, 12, [10, 10, 10], [2, 0]), (0, 0, [10, 10, 0], [2, 0]),
]


@pytest.mark.parametrize("coalesced", [True, False])
@pytest.mark.parametrize("case", BASIC_SHAPES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_basic_ops(coalesced, case):
    nnz1, nnz2, si, sv = case
    x1 = gen_sparse(si, sv, nnz1, torch.float64, coalesced, seed=11)
    x2 = gen_sparse(si, sv, nnz2, torch.float64, coalesced, seed=12)
    d1, d2 = x1.to_dense(), x2.to_dense()
    flag = x1.is_coalesced()
    torch.testing.assert_close(ct.add(x1, x2).to_dense(), d1 + d2)
    torch.testing.assert_close(ct.subtract(x1, x2).to_dense(), d1 - d2)
    torch.testing.assert_close(ct.multiply(x1, x2).to_dense(), d1 * d2)
    torch.testing.assert_close(ct.multiply(x1, 37.5).to_dense(), d1 * 37.5)
    torch.testing.assert_close(ct.multiply(37.5, x1).to_dense(), d1 * 37.5)
    torch.testing.assert_close((x1 * 37.5).to_dense(), ct.multiply(x1, 37.5).to_dense())
    y = ct.coalesce(x1)
    assert y.is_coalesced() and x1.is_coalesced() == flag  # the input keeps its flag
    torch.testing.assert_close(y.to_dense(), d1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_add_dense_sparse_mismatch(dtype):
    # torch raises RuntimeError "add: expected 'self' and 'other' to have same size"; the bridge ValueError
    for dense_size, sparse_dims_shape, dense_dims_shape, sparse_size in [
        ([3, 4], [1, 4], [4, 4, 4], [3, 4, 4]),
        ([3, 4, 0], [1, 4], [4, 4, 4, 0], [3, 4, 4, 0]),
    ]:
        x = torch.zeros(dense_size, dtype=dtype)
        y = torch.sparse_coo_tensor(torch.zeros(sparse_dims_shape, dtype=torch.int64),
                                    torch.ones(dense_dims_shape, dtype=dtype), sparse_size)
        with pytest.raises(RuntimeError, match="same size"):
            x + y
        with pytest.raises(ValueError, match="shapes do not match"):
            ct.add(x, y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_add_noncontiguous(dtype):
    indices = torch.tensor([[1, 2], [0, 2]])
    values = torch.tensor([1.0], dtype=dtype).expand(2, 3, 4, 5)
    x = torch.sparse_coo_tensor(indices, values, dtype=dtype)
    assert not x._values().is_contiguous()
    torch.testing.assert_close(ct.add(x, x).to_dense(), x.to_dense() + x.to_dense())


# ------------------------------------------------------------------------- torch's promotion
PROMOTION = [
    # (sparse dtype, other, torch's result dtype)
    (torch.int64, 1.0, torch.float32),
    (torch.bool, 1.0, torch.float32),
    (torch.int64, True, torch.int64),
    (torch.int8, 1000, torch.int8),
    (torch.uint8, -1, torch.uint8),
    (torch.float16, 2, torch.float16),
    (torch.float32, 1j, torch.complex64),
    (torch.int64, torch.ones(3, 4, dtype=torch.float16), torch.float16),
    (torch.int64, torch.ones(3, 4, dtype=torch.complex64), torch.complex64),
    (torch.float32, torch.ones(3, 4, dtype=torch.int64), torch.float32),
    (torch.int32, torch.tensor(2.5, dtype=torch.float64), torch.float64),  # 0-d tensor
    (torch.int8, torch.ones(4, dtype=torch.int8) * 100, torch.int8),  # broadcast dense, wraps
    (torch.float32, torch.ones(3, 1, dtype=torch.float64), torch.float64),
]


@pytest.mark.parametrize("case", range(len(PROMOTION)))
@pytest.mark.parametrize("order", ["sparse first", "other first"])
def test_multiply_follows_torch(case, order):
    sdt, other, want = PROMOTION[case]
    g = torch.Generator().manual_seed(case)
    s = (torch.randint(-3, 4, (3, 4), generator=g) * (torch.rand(3, 4, generator=g) < 0.5)).to(sdt).to_sparse()
    args = (s, other) if order == "sparse first" else (other, s)
    got = ct.multiply(*args)
    ref = args[0] * args[1] if order == "sparse first" or isinstance(other, torch.Tensor) else s * other
    assert got.dtype == ref.dtype == want
    torch.testing.assert_close(got.to_dense(), ref.to_dense(), check_dtype=True)


@pytest.mark.parametrize("a_dt,b_dt", [(torch.int64, torch.float32), (torch.int8, torch.int16),
                                       (torch.bool, torch.int64), (torch.float16, torch.float64)])
def test_add_follows_torch(a_dt, b_dt):
    a = torch.tensor([[0, 1, 0], [2, 0, 3]]).to(a_dt).to_sparse()
    b = torch.tensor([[1, 0, 0], [1, 1, 0]]).to(b_dt).to_sparse()
    got, want = ct.add(a, b), a + b
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.to_dense(), want.to_dense())
    want = a + b * 3
    torch.testing.assert_close(ct.add(a, b, alpha=3).to_dense(), want.to_dense())


def test_add_alpha_rules_follow_torch():
    a = torch.tensor([1, 0, 2], dtype=torch.int8).to_sparse()
    with pytest.raises(RuntimeError):
        torch.add(a, a, alpha=1.5)
    with pytest.raises(TypeError, match="alpha must not be a float"):
        ct.add(a, a, alpha=1.5)
    # an alpha int8 cannot hold: torch refuses it (RuntimeError), so does the bridge (ValueError)
    with pytest.raises(RuntimeError, match="overflow"):
        torch.add(a, a, alpha=1000)
    with pytest.raises(ValueError, match="alpha 1000 does not fit"):
        ct.add(a, a, alpha=1000)
    torch.testing.assert_close(ct.add(a, a, alpha=100).to_dense(), torch.add(a, a, alpha=100).to_dense())


def test_multiply_grows_sparse_is_a_documented_error():
    s = torch.tensor([1.0, 0.0, 2.0]).to_sparse()
    assert (s * torch.ones(2, 3)).shape == (2, 3)  # torch grows the sparse operand
    with pytest.raises(ValueError, match="torch would grow the sparse operand"):
        ct.multiply(s, torch.ones(2, 3))


def test_multiply_broadcast_dense_gradient():
    s = torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], dtype=torch.float64).to_sparse().requires_grad_(True)
    d = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    ct.multiply(s, d).to_dense().sum().backward()
    s2 = s.detach().to_dense().requires_grad_(True)
    d2 = d.detach().clone().requires_grad_(True)
    (s2 * d2).sum().backward()
    torch.testing.assert_close(d.grad, d2.grad)
    np.testing.assert_allclose(s.grad.to_dense().numpy(), (s2.grad * (s2 != 0)).numpy())
