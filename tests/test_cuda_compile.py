"""Compile test: every kernel instantiation of cuda_kernels.KERNELS built for sm_80 and sm_90.

NVRTC needs no GPU; it comes from the nvidia-cuda-nvrtc-cu12 wheel that
requirements/test.txt installs. The test skips (never fails) only when
neither NVRTC nor nvcc exists on the machine.
"""
import pytest

from coosparse._cuda import _sources, compile_check

ARCHES = compile_check.ARCHES

_lib = compile_check.load_nvrtc()
_nvcc = compile_check.nvcc_path()
needs_nvrtc = pytest.mark.skipif(_lib is None, reason="no NVRTC library installed")
needs_nvcc = pytest.mark.skipif(_nvcc is None, reason="no nvcc on PATH")


def test_a_compiler_exists():
    if _lib is None and _nvcc is None:
        pytest.skip("neither NVRTC nor nvcc is available: the CUDA sources cannot be compiled here")


@needs_nvrtc
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("fname", sorted(_sources.KERNELS))
def test_nvrtc_builds_every_instantiation(fname, arch):
    lowered, cubin_bytes = compile_check.nvrtc_compile(_lib, fname, arch)
    assert set(lowered) == set(_sources.KERNELS[fname])
    assert all(lowered.values())
    assert cubin_bytes > 0


@needs_nvrtc
def test_nvrtc_reports_a_missing_instantiation(monkeypatch):
    fname = "gather.cu"
    monkeypatch.setitem(_sources.KERNELS, fname, ("coo_gather_rows_copy<struct no_such_type>",))
    with pytest.raises(compile_check.CompileError):
        compile_check.nvrtc_compile(_lib, fname, "sm_90")


@needs_nvrtc
def test_errors_point_at_the_real_file(monkeypatch, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('#include "coo_common.cuh"\n\nextern "C" __global__ void coo_bad_kernel() { undefined_name; }\n')
    monkeypatch.setattr(_sources, "KERNEL_DIR", str(tmp_path))
    monkeypatch.setitem(_sources.KERNELS, "bad.cu", ("coo_bad_kernel",))
    with pytest.raises(compile_check.CompileError, match=r"bad\.cu\(3\)"):
        compile_check.nvrtc_compile(_lib, "bad.cu", "sm_80")


@needs_nvcc
@pytest.mark.parametrize("fname", sorted(_sources.KERNELS))
def test_nvcc_fallback_builds(fname):
    assert compile_check.nvcc_compile(fname, "sm_90") > 0


def test_table_names_follow_the_convention():
    import re

    for fname, names in _sources.KERNELS.items():
        algo = fname[:-3]
        assert names, fname
        for n in names:
            assert re.match(rf"coo_{algo}_[a-z0-9_]+(<[a-z_ <>]+>)?$", n), (fname, n)
