"""Build every kernel instantiation for real GPU targets, without a GPU.

NVRTC runs on any machine. Two ways to reach it, with one interface
(:class:`CtypesNVRTC`, :class:`CupyNVRTC`):

- ctypes on the library of the ``nvidia-cuda-nvrtc-cu12`` wheel (or
  ``$COOSPARSE_NVRTC``, or the system's ``libnvrtc``): the CI compile test,
  no CuPy needed;
- CuPy's own NVRTC binding (``cupy_backends.cuda.libs.nvrtc``): what the GPU
  loader (:mod:`.backend`) uses, so it compiles with the NVRTC CuPy found.

Each file of ``cuda_kernels.KERNELS`` is compiled exactly as the GPU loader
compiles it (:func:`compile_file`: ``#line 1 "<file>"`` + source,
``sources.nvrtc_options``, every instantiation registered as a name
expression, so a template that fails to instantiate is an error, not a
silently missing kernel); its lowered (mangled) name must come back, and a
cubin (``sm_XX``) or PTX (``compute_XX``) is produced. Without NVRTC,
``nvcc -cubin`` is the fallback (the instantiations are forced by taking
their addresses).

Run ``python -m coosparse._kernels.cuda.compile_check [sm_80 sm_90 ...]``.
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

from . import sources

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


class CtypesNVRTC:
    """NVRTC through ctypes (:func:`load_nvrtc`): the CI compile test's way in."""

    def __init__(self, lib):
        self.lib = lib
        self.version = nvrtc_version(lib)

    def supported_archs(self):
        lib = self.lib
        n = ctypes.c_int()
        if not hasattr(lib, "nvrtcGetNumSupportedArchs"):
            return None
        lib.nvrtcGetNumSupportedArchs(ctypes.byref(n))
        arr = (ctypes.c_int * n.value)()
        lib.nvrtcGetSupportedArchs(arr)
        return list(arr)

    def compile(self, source, name, names, options, output):
        """(binary, {name expression: lowered name}); ``output`` is 'cubin' or 'ptx'."""
        lib = self.lib
        prog = ctypes.c_void_p()
        _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
               "nvrtcCreateProgram")
        try:
            for n in names:
                _check(lib, lib.nvrtcAddNameExpression(prog, n.encode()), f"nvrtcAddNameExpression({n})")
            opts = [o.encode() for o in options]
            argv = (ctypes.c_char_p * len(opts))(*opts)
            _check(lib, lib.nvrtcCompileProgram(prog, len(opts), argv), name, prog)
            lowered = {}
            for n in names:
                out = ctypes.c_char_p()
                _check(lib, lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)),
                       f"nvrtcGetLoweredName({n})")
                lowered[n] = out.value.decode()
            size = ctypes.c_size_t()
            get_size, get = ((lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN) if output == "cubin"
                             else (lib.nvrtcGetPTXSize, lib.nvrtcGetPTX))
            _check(lib, get_size(prog, ctypes.byref(size)), f"nvrtcGet{output.upper()}Size")
            buf = ctypes.create_string_buffer(size.value)
            _check(lib, get(prog, buf), f"nvrtcGet{output.upper()}")
            return buf.raw[: size.value], lowered
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


class CupyNVRTC:
    """NVRTC through CuPy's binding: the GPU loader's way in (the NVRTC CuPy itself uses)."""

    def __init__(self):
        from cupy_backends.cuda.libs import nvrtc

        self._nvrtc = nvrtc
        self.version = tuple(nvrtc.getVersion())

    def supported_archs(self):
        try:
            return list(self._nvrtc.getSupportedArchs())
        except Exception:
            return None

    def compile(self, source, name, names, options, output):
        nvrtc = self._nvrtc
        prog = nvrtc.createProgram(source, name, (), ())
        try:
            for n in names:
                nvrtc.addNameExpression(prog, n)
            try:
                nvrtc.compileProgram(prog, list(options))
            except nvrtc.NVRTCError as e:
                raise CompileError(f"{name}: {e}\n{nvrtc.getProgramLog(prog)}") from None
            lowered = {n: nvrtc.getLoweredName(prog, n) for n in names}
            binary = nvrtc.getCUBIN(prog) if output == "cubin" else nvrtc.getPTX(prog)
            return binary, lowered
        finally:
            nvrtc.destroyProgram(prog)


def compile_file(compiler, fname, arch, options=None):
    """Compile kernel file ``fname`` for ``arch`` ('sm_90': cubin, 'compute_90': PTX), as the loader does.

    Returns ``(binary, {name_expression: lowered_name})``. Raises CompileError
    with NVRTC's log on any error. ``options`` replaces the loader's option
    list (tests compare CuPy's own list).
    """
    opts = sources.nvrtc_options(arch) if options is None else list(options)
    return compiler.compile(sources.program_source(fname), os.path.basename(fname),
                            sources.name_expressions(fname), opts,
                            "ptx" if arch.startswith("compute_") else "cubin")


def nvrtc_compile(lib, fname, arch):
    """Compile kernel file ``fname`` for ``arch`` (e.g. 'sm_90') with the ctypes NVRTC ``lib``.

    Returns ``{name_expression: lowered_name}`` and the cubin's size in bytes.
    """
    binary, lowered = compile_file(CtypesNVRTC(lib), fname, arch)
    return lowered, len(binary)


def ftz_instructions(ptx):
    """The PTX lines that flush subnormals (``.ftz``): none may reach the kernels."""
    return [line.strip() for line in ptx.decode(errors="replace").splitlines() if ".ftz" in line]


def nvcc_path():
    return shutil.which("nvcc")


def nvcc_compile(fname, arch, nvcc=None):
    """Fallback: ``nvcc -cubin`` of ``fname`` with every instantiation forced; returns cubin size."""
    nvcc = nvcc or nvcc_path()
    refs = ", ".join(f"(const void*)&{n}" for n in sources.name_expressions(fname))
    text = sources.program_source(fname) + f"\n__device__ const void* coo_compile_check_refs[] = {{{refs}}};\n"
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.cu")
        with open(src, "w") as f:
            f.write(text)
        out = os.path.join(tmp, "k.cubin")
        cmd = [nvcc, "-cubin", f"-arch={arch}", f"-I{sources.INCLUDE_DIR}", src, "-o", out]
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
        for fname in sources.KERNELS:
            if lib is not None:
                lowered, size = nvrtc_compile(lib, fname, arch)
                rows.append((fname, arch, len(lowered), size, "nvrtc %d.%d" % nvrtc_version(lib)))
            else:
                size = nvcc_compile(fname, arch)
                rows.append((fname, arch, len(sources.name_expressions(fname)), size, "nvcc"))
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
