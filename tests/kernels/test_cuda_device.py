"""Device plumbing: COO.to, coosparse.asarray(..., device=), and mixing devices."""
import numpy as np
import pytest
import scipy.sparse as sp

import coosparse
from coosparse._kernels.backend import backend_for
from reference import dense_of


def _has_gpu():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


needs_gpu = pytest.mark.skipif(not _has_gpu(), reason="no CUDA device")


def test_asarray_from_every_kind_of_input():
    d = np.array([[0, 2.0], [3.0, 0]])
    a = coosparse.asarray(d)
    assert a.is_coalesced and a.device == "cpu"
    np.testing.assert_array_equal(a.to_dense(), d)
    assert coosparse.asarray(a) is a
    assert coosparse.asarray(a, device="cpu") is a
    b = coosparse.asarray(sp.coo_array(d))
    np.testing.assert_array_equal(b.to_dense(), d)
    c = coosparse.asarray([[0, 1], [0, 0]], dtype=np.float32)
    assert c.dtype == np.float32 and c.nnz == 1
    h = coosparse.asarray(np.ones((2, 3)), sparse_ndim=1)
    assert h.sparse_ndim == 1 and h.values.shape == (2, 3)


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cuda:-1", 3])
def test_asarray_rejects_bad_devices(device):
    with pytest.raises(ValueError, match="device"):
        coosparse.asarray(np.eye(2), device=device)


def test_mixing_devices_raises():
    class FakeDevice:
        id = 0

    class FakeCupyArray:
        __module__ = "cupy._core.core"
        device = FakeDevice()

    with pytest.raises(ValueError, match="different devices"):
        backend_for(np.zeros(2), FakeCupyArray())


@needs_gpu
def test_round_trip_through_the_gpu():
    a = coosparse.COO([[3, 1, 3]], np.array([1.0, 2.0, 4.0]), (5,))
    g = a.to("cuda")
    assert g.device.startswith("cuda") and g.to("cuda") is g
    back = g.to("cpu")
    np.testing.assert_array_equal(back.indices, a.indices)
    np.testing.assert_array_equal(back.values, a.values)
    assert (back.is_sorted, back.is_unique) == (a.is_sorted, a.is_unique)
    assert coosparse.asarray(np.eye(3), device="cuda").device.startswith("cuda")
    np.testing.assert_array_equal(dense_of(g.coalesce()), dense_of(a))


@needs_gpu
def test_gpu_and_cpu_operands_do_not_mix():
    import cupy

    from coosparse.ops.dense import scatter_into

    a = coosparse.COO([[0, 2]], np.array([1.0, 2.0]), (3,))
    with pytest.raises(ValueError, match="different devices"):
        scatter_into(cupy.zeros(3), a)
    if hasattr(coosparse, "multiply"):
        with pytest.raises(ValueError, match="different devices"):
            coosparse.multiply(a, a.to("cuda"))
