"""Strided scatter against torch and NumPy: as_strided_scatter and COO.to_dense().

At ``medium`` the workloads are the issue's (issue 4): a 16,777,216-element
float32 input with a stride-2 view of 8,388,608 elements, and 2,000,000
uncoalesced entries in a (4096, 4096) float64 array. ``small`` and ``large``
take a quarter and four times the elements (the to_dense density stays
~12%). ``memcpy`` (``np.copyto`` of the same bytes into a preallocated
buffer) is the roofline reference.
"""
from __future__ import annotations

import numpy as np

import coosparse

from .harness import Case, Impl, torch_coo

#: as_strided_scatter input elements per size; the src view is half of it at stride 2
N_INPUT = {"small": 4_194_304, "medium": 16_777_216, "large": 67_108_864}
#: to_dense: (dense shape, uncoalesced entries) per size
TO_DENSE = {
    "small": ((2048, 2048), 500_000),
    "medium": ((4096, 4096), 2_000_000),
    "large": ((8192, 8192), 8_000_000),
}


def strided_case(size="medium", libraries=None):
    want = (lambda lib: libraries is None or lib in libraries)
    rng = np.random.default_rng(0)
    n_input = N_INPUT[size]
    x = rng.random(n_input, dtype=np.float32)
    src = rng.random(n_input // 2, dtype=np.float32)
    view, stride = (src.shape[0],), (2,)
    impls = [Impl("coosparse", lambda: coosparse.as_strided_scatter(x, src, view, stride))]
    if want("numpy"):
        def numpy_copy_then_view():
            out = x.copy()
            np.lib.stride_tricks.as_strided(out, view, (stride[0] * x.itemsize,))[...] = src
            return out

        impls.append(Impl("numpy", numpy_copy_then_view, note="x.copy(); as_strided(out)[...] = src"))
    if want("torch"):
        try:
            import torch

            xt, st = torch.from_numpy(x), torch.from_numpy(src)
            impls.append(Impl("torch", lambda: torch.as_strided_scatter(xt, st, view, stride)))
        except ImportError:
            pass
    if want("memcpy"):
        buf = np.empty(x.nbytes + src.nbytes, dtype=np.uint8)
        both = np.concatenate([x.view(np.uint8), src.view(np.uint8)])
        impls.append(Impl("memcpy", lambda: np.copyto(buf, both),
                          note="np.copyto of input+src bytes into a preallocated buffer"))
    # bytes that must move at least: read input and src, write the result
    moved = 2 * x.nbytes + src.nbytes
    return Case("as_strided_scatter", f"f32 {x.size / 1e6:.1f}M, src {src.size / 1e6:.1f}M stride 2", impls,
                input_bytes=x.nbytes + src.nbytes, params={"bytes_moved": moved})


def to_dense_case(size="medium", libraries=None):
    want = (lambda lib: libraries is None or lib in libraries)
    shape, nnz = TO_DENSE[size]
    a = coosparse.random(shape, nnz=nnz, duplicates=True, seed=0)
    impls = [Impl("coosparse", lambda: a.to_dense())]
    t = torch_coo(a) if want("torch") else None
    if t is not None:
        impls.append(Impl("torch", lambda: t.to_dense()))
    if want("numpy"):
        def numpy_add_at():
            out = np.zeros(a.shape)
            np.add.at(out, (a.indices[0], a.indices[1]), a.values)
            return out

        impls.append(Impl("numpy", numpy_add_at, note="np.zeros + np.add.at"))
    return Case("to_dense", f"uncoalesced {nnz:,} in {shape[0]}^2 f64", impls,
                input_bytes=a.indices.nbytes + a.values.nbytes)


def cases(size="medium", libraries=None):
    return [strided_case(size, libraries), to_dense_case(size, libraries)]
