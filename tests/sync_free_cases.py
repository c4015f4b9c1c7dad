"""The operations documented as sync-free, as runnable cases: one list for CI and the GPU check.

``tests/kernels/test_cuda_strict.py`` runs each case on the emulated device inside
``strict.sync_free()`` (no host<->device transfer allowed); ``scripts/
gpu_check.py`` runs each one behind a ~1 s spin kernel (the host must return
before the stream drains) and inside a CUDA-graph capture. An operation
documented as sync-free gets a case here (docs/cuda.md, "Adding a kernel").
"""
from __future__ import annotations

import numpy as np

import coosparse


def random_coo(rng, shape, nnz, *, sorted=False, unique=False, sparse_ndim=None, dtype=np.float64, scale=1.0):
    """A COO of ``shape`` with ``nnz`` random entries (``unique``: distinct indices), flags as asked."""
    sparse_ndim = len(shape) if sparse_ndim is None else sparse_ndim
    sparse = shape[:sparse_ndim]
    total = int(np.prod(sparse))
    if unique:
        keys = rng.permutation(np.unique(rng.integers(0, total, int(nnz * 1.3) + 8))[:nnz])
    else:
        keys = rng.integers(0, total, nnz)
    if sorted:
        keys = np.sort(keys)
    idx = np.stack(np.unravel_index(keys, sparse)).astype(np.int64)
    vals = (rng.standard_normal((keys.shape[0],) + tuple(shape[sparse_ndim:])) * scale).astype(dtype)
    return coosparse.COO(idx, vals, shape, sorted=sorted, unique=unique, check=False)


def cases(put, n=400, seed=3):
    """name -> zero-argument callable on inputs already moved with ``put`` (an upload inside would count).

    ``n`` entries per operand (at least 400; the test suite: a few hundred; the GPU check: ~10**6).
    """
    if n < 400:
        raise ValueError("n must be at least 400 (the strided views need the room)")
    rng = np.random.default_rng(seed)
    rows = max(n // 10, 40)
    shape = (rows, 30)
    c = put(random_coo(rng, shape, n, sorted=True, unique=True))  # coalesced probe
    u = put(random_coo(rng, shape, n))  # uncoalesced, any order
    u32 = put(random_coo(rng, shape, n, dtype=np.float32))
    s = put(random_coo(rng, shape, n // 2, sorted=True))  # sorted with duplicates
    q = put(random_coo(rng, shape, n // 2, unique=True))  # unique, any order
    h = put(random_coo(rng, (rows, 10, 3, 2), n // 4, sparse_ndim=2))  # hybrid, 6-element blocks
    m2 = put(random_coo(rng, (rows, 10), n // 8))
    x = put(rng.standard_normal(shape))
    xh = put(rng.standard_normal((rows, 10, 3, 2)))
    inp = put(rng.standard_normal(5 * n).astype(np.float32))
    src = rng.standard_normal(2 * n).astype(np.float32)
    r = n // 50
    src1, src2, src3, src4 = (put(src), put(src[: 50 * r].reshape(r, 50)), put(src[:20]),
                              put(src[: 30 * r].reshape(r, 30)))
    g = random_coo(rng, shape, n // 2, unique=True)
    g15 = put(coosparse.COO(g.indices, g.values, shape, unique=True, check=False, fill_value=1.5))
    # linear algebra: the products whose output size is known
    rhs = put(rng.standard_normal((30, 8)))  # c @ rhs, u @ rhs
    lhs = put(rng.standard_normal((8, rows)))  # lhs @ c
    vec = put(rng.standard_normal(30))
    b3 = put(random_coo(rng, (3, rows, 30), n, sorted=True, unique=True))  # batched, sorted
    rhs3 = put(rng.standard_normal((3, 30, 4)))
    hrhs = put(rng.standard_normal((2, 5)))  # h (rows, 10, 3, 2) @ hrhs: batched over (rows, 10)
    fx, fy = put(rng.standard_normal((rows, 16))), put(rng.standard_normal((16, 30)))
    fyt = put(rng.standard_normal((30, 16))).T  # a transposed view (strided reads)
    ops = {
        "multiply(u, c, compact=False)": lambda: coosparse.multiply(u, c, compact=False),
        "multiply(u, u, compact=False)": lambda: coosparse.multiply(u, u, compact=False),
        "multiply(u, u32, compact=False)": lambda: coosparse.multiply(u, u32, compact=False),
        "multiply(coo, dense)": lambda: coosparse.multiply(u, x),
        "multiply(hybrid, dense)": lambda: coosparse.multiply(h, xh),
        "multiply(coo, scalar)": lambda: u * 2.5,
        "sparse_mask(coo, mask)": lambda: coosparse.sparse_mask(c, u),
        "sparse_mask(unsorted probe)": lambda: coosparse.sparse_mask(u, c),
        "sparse_mask(dense, mask)": lambda: coosparse.sparse_mask(x, u),
        "sparse_mask(dense hybrid, mask)": lambda: coosparse.sparse_mask(xh, m2),
        "mask_projection": lambda: coosparse.mask_projection(u, c),
        "mask_projection(accumulate)": lambda: coosparse.mask_projection(u, s, accumulate=True),
        "add by concatenation": lambda: coosparse.add(u, c),
        "to_dense (uncoalesced)": lambda: u.to_dense(),
        "to_dense (sorted, duplicates)": lambda: s.to_dense(),
        "to_dense (unique)": lambda: q.to_dense(),
        "to_dense (F order)": lambda: u.to_dense(order="F"),
        "to_dense (hybrid)": lambda: h.to_dense(),
        "as_strided_scatter (fused fill)": lambda: coosparse.as_strided_scatter(inp, src1, (2 * n,), (2,)),
        "as_strided_scatter (2-d view)": lambda: coosparse.as_strided_scatter(inp, src2, (r, 50), (100, 2), 1),
        "as_strided_scatter (wide gaps)": lambda: coosparse.as_strided_scatter(inp, src3, (20,), (99,), 3),
        "as_strided_scatter (overlapping)": lambda: coosparse.as_strided_scatter(inp, src4, (r, 30), (10, 1), 5),
        "COO(check=False)": lambda: coosparse.COO(u.indices, u.values, shape, check=False),
        # the elementwise engine (coosparse/ops/elementwise/engine.py): one operand's pattern, values by the namespace's f
        "exp(coalesced)": lambda: np.exp(c),
        "exp(unique, fill 1.5)": lambda: np.exp(g15),
        "negative(uncoalesced)": lambda: -u,
        "coalesced > 0": lambda: c > 0,
        "coalesced + 1": lambda: c + 1,
        "uncoalesced / 2": lambda: u / 2,
        "multiply(uncoalesced, fill 1.5) (one annihilator)": lambda: np.multiply(u, g15),
        "matmul(sorted coo, dense)": lambda: coosparse.matmul(c, rhs),
        "matmul(unsorted coo, dense)": lambda: u @ rhs,
        "matmul(coo, vector)": lambda: coosparse.matmul(u, vec),
        "matmul(batched coo, dense)": lambda: coosparse.matmul(b3, rhs3),
        "matmul(hybrid coo, dense)": lambda: coosparse.matmul(h, hrhs),
        "matmul(dense, coo)": lambda: lhs @ u,
        "matmul(dense, sorted coo)": lambda: coosparse.matmul(lhs, c),
        "sampled_matmul(mask, x, y)": lambda: coosparse.sampled_matmul(u, fx, fy),
        "sampled_matmul(sorted mask, x, y.T)": lambda: coosparse.sampled_matmul(c, fx, fyt),
    }
    # ---- reductions: over dense axes only (sums of any array; the others of a
    # coalesced one, since they coalesce first), and over every axis (one output entry)
    hc = put(random_coo(rng, (rows, 10, 3, 2), n // 4, sparse_ndim=2, sorted=True, unique=True))
    hf = put(random_coo(rng, (rows, 10, 3, 2), n // 4, sparse_ndim=2)._with(fill_value=1.5))
    ops.update({
        "sum(hybrid, dense axis)": lambda: coosparse.sum(h, axis=3),
        "sum(hybrid with a fill, dense axes)": lambda: coosparse.sum(hf, axis=(2, 3)),
        "mean(hybrid, dense axis)": lambda: coosparse.mean(h, axis=-1),
        "max(coalesced hybrid, dense axes)": lambda: coosparse.max(hc, axis=(2, 3)),
        "prod(coalesced hybrid, dense axis)": lambda: coosparse.prod(hc, axis=2),
        "var(coalesced hybrid, dense axis)": lambda: coosparse.var(hc, axis=3),
        "argmax(coalesced hybrid, dense axis)": lambda: coosparse.argmax(hc, axis=3),
        "any(coalesced hybrid, dense axis)": lambda: coosparse.any(hc, axis=3),
        "cumulative_sum(coalesced hybrid, dense axis)": lambda: coosparse.cumulative_sum(hc, axis=3),
        "sum over every axis": lambda: coosparse.sum(u),
        "max over every axis (coalesced)": lambda: coosparse.max(c),
        "prod over every axis (coalesced)": lambda: coosparse.prod(c),
    })
    # ---- shape, indexing and joining: output sizes known from the inputs
    ops.update(_shape_cases(rng, put, c, u, s, h, rows))
    return ops


def _shape_cases(rng, put, c, u, s, h, rows):
    """The sync-free shape, indexing and joining operations (the others search or compact: their output sizes are data)."""
    one = put(random_coo(rng, (rows, 1, 30), 200))  # a length-1 axis to squeeze
    k = put(random_coo(rng, (20, 20), 30, sorted=True, unique=True))  # kron: nnz**2 entries, kept small
    return {
        "transpose (a.T)": lambda: u.T,
        "transpose (dense axes of a hybrid)": lambda: coosparse.transpose(h, (0, 1, 3, 2)),
        "moveaxis (dense axis made sparse)": lambda: coosparse.moveaxis(h, 2, 0),
        "reshape": lambda: coosparse.reshape(u, (rows * 3, 10)),
        "reshape (hybrid)": lambda: coosparse.reshape(h, (rows * 10, 3, 2)),
        "expand_dims": lambda: coosparse.expand_dims(u, 1),
        "squeeze": lambda: coosparse.squeeze(one, 1),
        "flip": lambda: coosparse.flip(u),
        "a[:, ::-1, None]": lambda: c[:, ::-1, None],
        "a[:] (sorted)": lambda: c[:],
        "a[..., int] (dense axis)": lambda: h[..., 1],
        "concatenate (axis 0)": lambda: coosparse.concatenate([c, u, s]),
        "concatenate (axis 1, sorted: merged)": lambda: coosparse.concatenate([c, s], axis=1),
        "stack (axis 1, sorted: merged)": lambda: coosparse.stack([c, c], axis=1),
        "pad": lambda: coosparse.pad(c, ((1, 2), (0, 3))),
        "to_hybrid (fewer dense dims)": lambda: coosparse.to_hybrid(h, 1),
        "kron": lambda: coosparse.kron(k, k),
    }
