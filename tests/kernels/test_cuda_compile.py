"""Compile test: every kernel instantiation of cuda_kernels.KERNELS built for sm_80 and sm_90.

NVRTC needs no GPU; it comes from the nvidia-cuda-nvrtc-cu12 wheel that
requirements/test.txt installs. The test skips (never fails) only when
neither NVRTC nor nvcc exists on the machine.
"""
import os
import shutil
import subprocess

import pytest

from coosparse._kernels.cuda import compile_check
from coosparse._kernels.cuda import sources as _sources

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


# ---------------------------------------------------------------------- float semantics
FLOAT_FILES = ("segment.cu", "intersect.cu", "scatter.cu", "union.cu")  # the files that add or multiply floats


def _cupy_options(user_options):
    """The option list CuPy 14's RawModule hands NVRTC for ``user_options``, read off the installed CuPy."""
    cupy_compiler = pytest.importorskip("cupy.cuda.compiler")
    seen = []

    class Stop(Exception):
        pass

    def spy(source, options=(), *args, **kwargs):
        seen.append(tuple(options))
        raise Stop

    saved = {n: getattr(cupy_compiler, n) for n in ("_compile_using_nvrtc_no_warning",
                                                      "_get_arch_for_options_for_nvrtc")}
    cupy_compiler._compile_using_nvrtc_no_warning = spy
    # (the real one asks the device; without a GPU, answer for sm_90 as it would on an H100/H200)
    cupy_compiler._get_arch_for_options_for_nvrtc = lambda arch=None: ("-arch=sm_90", "cubin")
    try:
        with pytest.raises(Stop):
            cupy_compiler._compile_with_cache_cuda("", tuple(user_options), "90", name_expressions=None)
    finally:
        for n, f in saved.items():
            setattr(cupy_compiler, n, f)
    return list(seen[0])


def test_cupy_rawmodule_appends_ftz_true():
    # why the loader does not use cupy.RawModule: whatever we pass, -ftz=true comes last and wins
    opts = _cupy_options(_sources.nvrtc_options())
    assert "-ftz=false" in opts and "-ftz=true" in opts
    assert opts.index("-ftz=true") > opts.index("-ftz=false")


@pytest.mark.parametrize("fname", FLOAT_FILES)
def test_cupy_option_set_would_flush_subnormals(fname):
    from coosparse._kernels.cuda.compile_check import CupyNVRTC, compile_file, ftz_instructions

    try:
        nvrtc = CupyNVRTC()
    except Exception as e:  # noqa: BLE001 (no NVRTC for CuPy here)
        pytest.skip(f"CuPy's NVRTC binding unavailable: {e}")
    opts = [o for o in _cupy_options(_sources.nvrtc_options()) if not o.startswith(("-arch", "--pch"))]
    ptx, _ = compile_file(nvrtc, fname, "compute_90", options=opts + ["--gpu-architecture=compute_90"])
    assert ftz_instructions(ptx), "CuPy's own option set was expected to produce .ftz arithmetic"


@needs_nvrtc
@pytest.mark.parametrize("arch", ["compute_80", "compute_90"])
@pytest.mark.parametrize("fname", sorted(_sources.KERNELS))
def test_loader_options_keep_subnormals(fname, arch):
    # the option list the GPU loader uses: no flush-to-zero instruction reaches the PTX
    from coosparse._kernels.cuda.compile_check import CtypesNVRTC, compile_file, ftz_instructions

    ptx, lowered = compile_file(CtypesNVRTC(_lib), fname, arch)
    assert set(lowered) == set(_sources.KERNELS[fname])
    assert ftz_instructions(ptx) == []


@pytest.mark.parametrize("fname", sorted(_sources.KERNELS))
def test_gpu_loader_compiles_without_ftz(fname, tmp_path, monkeypatch):
    # the GPU backend's own build path (CuPy's NVRTC binding, our options), PTX target
    backend = pytest.importorskip("coosparse._kernels.cuda.backend")
    from coosparse._kernels.cuda.compile_check import ftz_instructions

    try:
        backend.compiler()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"CuPy's NVRTC binding unavailable: {e}")
    monkeypatch.setenv("COOSPARSE_CACHE_DIR", str(tmp_path))
    ptx, lowered = backend.build(fname, "compute_90")
    assert set(lowered) == set(_sources.KERNELS[fname])
    assert b".entry" in ptx and ftz_instructions(ptx) == []


@needs_nvrtc
@pytest.mark.skipif(shutil.which("ptxas") is None and not os.path.exists("/usr/local/cuda/bin/ptxas"),
                    reason="no ptxas")
def test_ptx_assembles_for_sm90_without_spills(tmp_path):
    # the PTX the driver would JIT, assembled for Hopper; register use and spills reported
    from coosparse._kernels.cuda.compile_check import CtypesNVRTC, compile_file

    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    for fname in sorted(_sources.KERNELS):
        ptx, _ = compile_file(CtypesNVRTC(_lib), fname, "compute_90")
        src = tmp_path / (fname + ".ptx")
        src.write_bytes(ptx.rstrip(b"\0"))
        r = subprocess.run([ptxas, "-arch=sm_90", "-v", str(src), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert " 0 bytes spill stores" in r.stderr or "spill" not in r.stderr, (fname, r.stderr)
