"""Strided scatter against torch and NumPy: as_strided_scatter and COO.to_dense().

At ``medium`` the workloads are: a 16,777,216-element
float32 input with a stride-2 view of 8,388,608 elements, and 2,000,000
uncoalesced entries in a (4096, 4096) float64 array. ``small`` and ``large``
take a quarter and four times the elements (the to_dense density stays
~12%). ``memcpy`` (``np.copyto`` of the same bytes into a preallocated
buffer) is the roofline reference; ``coosparse-out`` writes into a reused
buffer (``out=``), which pays no page faults either.
"""
from __future__ import annotations

import numpy as np

import coosparse
from coosparse._kernels.backend import array_namespace

from .harness import Case, Impl, gpu_peers, on_device, torch_coo

#: as_strided_scatter input elements per size; the src view is half of it at stride 2
N_INPUT = {"small": 4_194_304, "medium": 16_777_216, "large": 67_108_864}
#: to_dense: (dense shape, uncoalesced entries) per size
TO_DENSE = {
    "small": ((2048, 2048), 500_000),
    "medium": ((4096, 4096), 2_000_000),
    "large": ((8192, 8192), 8_000_000),
}


def _want(libraries, device):
    return lambda lib: ((libraries is None or lib in libraries)
                        and (device == "cpu" or lib in gpu_peers(device) + ("memcpy",)))


def _gpu_strided_impls(x, src, view, stride, want):
    """On a GPU: torch CUDA's as_strided_scatter, and a device-to-device copy of the same bytes (the roofline)."""
    impls = [Impl("coosparse", lambda: coosparse.as_strided_scatter(x, src, view, stride))]
    if want("torch") and type(x).__module__.startswith("cupy"):
        try:
            import torch

            xt, st = torch.as_tensor(x, device="cuda"), torch.as_tensor(src, device="cuda")
            impls.append(Impl("torch", lambda: torch.as_strided_scatter(xt, st, view, stride)))
        except ImportError:
            pass
    if want("memcpy"):
        xp = array_namespace(x)
        buf = xp.empty(x.nbytes + src.nbytes, dtype=np.uint8)
        both = xp.concatenate([x.view(np.uint8), src.view(np.uint8)])
        impls.append(Impl("memcpy", lambda: xp.copyto(buf, both), note="device-to-device copy of input+src bytes"))
    return impls


def strided_case(size="medium", libraries=None, device="cpu"):
    want = _want(libraries, device)
    rng = np.random.default_rng(0)
    n_input = N_INPUT[size]
    x = rng.random(n_input, dtype=np.float32)
    src = rng.random(n_input // 2, dtype=np.float32)
    view, stride = (src.shape[0],), (2,)
    moved = 2 * x.nbytes + src.nbytes  # bytes that must move at least: read input and src, write the result
    label = f"f32 {x.size / 1e6:.1f}M, src {src.size / 1e6:.1f}M stride 2"
    if device != "cpu":
        x, src = on_device(x, device), on_device(src, device)
        return Case("as_strided_scatter", label, _gpu_strided_impls(x, src, view, stride, want),
                    input_bytes=x.nbytes + src.nbytes, params={"bytes_moved": moved})
    impls = [Impl("coosparse", lambda: coosparse.as_strided_scatter(x, src, view, stride))]
    reuse = np.empty_like(x)  # out=: a buffer used before (pages mapped), as a caller in a loop has
    impls.append(Impl("coosparse-out", lambda: coosparse.as_strided_scatter(x, src, view, stride, out=reuse),
                      note="out= a preallocated buffer"))
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
    return Case("as_strided_scatter", label, impls, input_bytes=x.nbytes + src.nbytes, params={"bytes_moved": moved})


def to_dense_case(size="medium", libraries=None, device="cpu"):
    want = _want(libraries, device)
    shape, nnz = TO_DENSE[size]
    a = on_device(coosparse.random(shape, nnz=nnz, duplicates=True, seed=0), device)
    impls = [Impl("coosparse", lambda: a.to_dense())]
    t = torch_coo(a) if want("torch") else None
    if t is not None:
        impls.append(Impl("torch", lambda: t.to_dense()))
    if want("numpy") and device == "cpu":
        def numpy_add_at():
            out = np.zeros(a.shape)
            np.add.at(out, (a.indices[0], a.indices[1]), a.values)
            return out

        impls.append(Impl("numpy", numpy_add_at, note="np.zeros + np.add.at"))
    return Case("to_dense", f"uncoalesced {nnz:,} in {shape[0]}^2 f64", impls,
                input_bytes=a.indices.nbytes + a.values.nbytes)


def cases(size="medium", libraries=None, device="cpu"):
    return [strided_case(size, libraries, device), to_dense_case(size, libraries, device)]
