"""Build every kernel instantiation for real GPU targets, without a GPU.

NVRTC runs on any machine: it is loaded with ctypes from the
``nvidia-cuda-nvrtc-cu12`` wheel (or ``$COOSPARSE_NVRTC``, or the system's
``libnvrtc``). Each file of ``cuda_kernels.KERNELS`` is compiled as the GPU
loader compiles it (``#line 1 "<file>"`` + source, the same options), with
every instantiation of the table registered as a name expression, so a
template that fails to instantiate is an error, not a silently missing
kernel; its lowered (mangled) name must come back, and a cubin is produced
for each architecture. Without NVRTC, ``nvcc -cubin`` is the fallback (the
instantiations are forced by taking their addresses).

Run ``python -m coosparse._cuda.compile_check [sm_80 sm_90 ...]``.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from . import _sources

ARCHES = ("sm_80", "sm_90")


class CompileError(RuntimeError):
    pass


def _nvrtc_candidates():
    env = os.environ.get("COOSPARSE_NVRTC")
    if env:
        yield env
    try:
        import nvidia.cuda_nvrtc as pkg  # the nvidia-cuda-nvrtc-cu12 wheel

        for root in pkg.__path__:
            yield from sorted(glob.glob(os.path.join(root, "lib", "libnvrtc.so*")))
    except ImportError:
        pass
    try:
        import nvidia.cu13 as pkg13  # CUDA 13 wheels lay their libraries here

        for root in pkg13.__path__:
            yield from sorted(glob.glob(os.path.join(root, "lib", "libnvrtc.so*")))
    except ImportError:
        pass
    for pattern in ("/usr/local/cuda*/lib64/libnvrtc.so*", "/usr/local/cuda*/targets/*/lib/libnvrtc.so*"):
        yield from sorted(glob.glob(pattern))
    found = ctypes.util.find_library("nvrtc")
    if found:
        yield found


def load_nvrtc():
    """The NVRTC library (ctypes.CDLL), or None when none is installed."""
    for path in _nvrtc_candidates():
        if "builtins" in os.path.basename(path) or ".alt." in os.path.basename(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            lib.nvrtcVersion  # noqa: B018 (probe)
            return lib
        except (OSError, AttributeError):
            continue
    return None


def nvrtc_version(lib):
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def _check(lib, rc, what, prog=None):
    if rc != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        msg = lib.nvrtcGetErrorString(rc).decode()
        log = _log(lib, prog) if prog is not None else ""
        raise CompileError(f"{what}: {msg}\n{log}")


def _log(lib, prog):
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    return buf.value.decode(errors="replace")


def nvrtc_compile(lib, fname, arch):
    """Compile kernel file ``fname`` for ``arch`` (e.g. 'sm_90').

    Returns ``{name_expression: lowered_name}`` and the cubin's size in bytes.
    Raises CompileError with NVRTC's log on any error.
    """
    src = _sources.program_source(fname).encode()
    names = _sources.name_expressions(fname)
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(fname).encode(),
                                       0, None, None), "nvrtcCreateProgram")
    try:
        for n in names:
            _check(lib, lib.nvrtcAddNameExpression(prog, n.encode()), f"nvrtcAddNameExpression({n})")
        opts = [o.encode() for o in _sources.nvrtc_options(arch)]
        argv = (ctypes.c_char_p * len(opts))(*opts)
        rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
        _check(lib, rc, f"{fname} for {arch}", prog)
        lowered = {}
        for n in names:
            out = ctypes.c_char_p()
            _check(lib, lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)),
                   f"nvrtcGetLoweredName({n})")
            lowered[n] = out.value.decode()
        size = ctypes.c_size_t()
        _check(lib, lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
        return lowered, size.value
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def nvcc_path():
    return shutil.which("nvcc")


def nvcc_compile(fname, arch, nvcc=None):
    """Fallback: ``nvcc -cubin`` of ``fname`` with every instantiation forced; returns cubin size."""
    nvcc = nvcc or nvcc_path()
    refs = ", ".join(f"(const void*)&{n}" for n in _sources.name_expressions(fname))
    text = _sources.program_source(fname) + f"\n__device__ const void* coo_compile_check_refs[] = {{{refs}}};\n"
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.cu")
        with open(src, "w") as f:
            f.write(text)
        out = os.path.join(tmp, "k.cubin")
        cmd = [nvcc, "-cubin", f"-arch={arch}", f"-I{_sources.INCLUDE_DIR}", src, "-o", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise CompileError(f"{fname} for {arch} (nvcc):\n{r.stderr}")
        return os.path.getsize(out)


def check_all(arches=ARCHES, use="auto"):
    """Compile every file for every arch; returns rows (file, arch, n_instantiations, cubin bytes, tool)."""
    lib = load_nvrtc() if use in ("auto", "nvrtc") else None
    if lib is None and (use == "nvrtc" or (use == "auto" and nvcc_path() is None)):
        raise CompileError("neither NVRTC nor nvcc is available")
    rows = []
    for arch in arches:
        for fname in _sources.KERNELS:
            if lib is not None:
                lowered, size = nvrtc_compile(lib, fname, arch)
                rows.append((fname, arch, len(lowered), size, "nvrtc %d.%d" % nvrtc_version(lib)))
            else:
                size = nvcc_compile(fname, arch)
                rows.append((fname, arch, len(_sources.name_expressions(fname)), size, "nvcc"))
    return rows


def main(argv=None):
    arches = tuple(argv or sys.argv[1:]) or ARCHES
    rows = check_all(arches)
    for fname, arch, n, size, tool in rows:
        print(f"{fname:<20} {arch:<6} {n:>3} instantiations  cubin {size:>7} B  ({tool})")
    total = sum(r[2] for r in rows)
    print(f"{total} instantiations compiled for {', '.join(arches)}")


if __name__ == "__main__":
    main()
