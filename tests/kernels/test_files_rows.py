"""The files family's rows on every layer: ``crc32`` is zlib's CRC-32 (folded by carry-less
multiplication on the Numba layer where the CPU has it), ``widen_indices`` the int64 copy of a
file's index rows with their bounds and key order, against NumPy."""
import zlib

import numpy as np
import pytest

from coosparse._kernels.backend import backend_for, read_only, use_cpu_backend
from coosparse._kernels.numba import files, layer


@pytest.fixture(params=["numba", "cuda-emulated"])
def rows(request):
    with use_cpu_backend(request.param):
        yield backend_for(np.zeros(1))


@pytest.mark.parametrize("n", [0, 1, 15, 63, 64, 65, 127, 128, 4095, 4096, 4097, 5000, 65543, 1 << 20])
def test_crc32_is_zlibs(rows, n):
    rng = np.random.default_rng(n)
    b = rng.integers(0, 256, n + 16, dtype=np.uint8)
    for off in (0, 1, 7, 13):
        for start in (0, 1, 0xFFFFFFFF, 123456789):
            x = b[off:off + n]
            assert rows.crc32(x, start) == zlib.crc32(x, start), (n, off, start)
            assert rows.crc32(memoryview(x), start) == zlib.crc32(x, start)


@pytest.mark.parametrize("n", [64, 65, 79, 80, 127, 128, 129, 191, 192, 193, 255, 256, 1000])
def test_folding_kernel_is_zlibs_around_its_blocks(n):
    """The kernel itself on 16-byte-aligned buffers: one 64-byte block (no lane folded ahead),
    two, and the 16-byte and single-byte tails after the last whole block."""
    if not files.folding_available():
        pytest.skip("no PCLMULQDQ for Numba to compile for")
    b = np.random.default_rng(n).integers(0, 256, n + 16, dtype=np.uint8)
    x = read_only(b[-b.ctypes.data % 16:][:n])  # (the one specialisation the layer compiles)
    assert x.ctypes.data % 16 == 0 and x.shape[0] == n
    for start in (0, 1, 0xFFFFFFFF):
        assert int(files.crc32_folded(x, start, files.TABLE)) == zlib.crc32(x, start), (n, start)


def test_crc32_of_pieces_chains_as_zlibs():
    x = np.random.default_rng(1).integers(0, 256, 300_000, dtype=np.uint8)
    crc = 0
    for lo in range(0, x.shape[0], 70_001):
        crc = layer.crc32(x[lo:lo + 70_001], crc)
    assert crc == zlib.crc32(x)


def test_the_files_rows_read_read_only_memory_with_one_specialisation():
    """``bytes`` (read-only memory, as an ``io.BytesIO`` holds a file) and writeable arrays both go
    to the kernels as read-only arrays: one compiled specialisation each, which cannot write."""
    raw = np.random.default_rng(3).integers(0, 256, 100_003, dtype=np.uint8)
    frozen = bytes(raw)
    assert layer.crc32(frozen) == layer.crc32(raw) == zlib.crc32(frozen)
    assert layer.crc32(np.frombuffer(frozen, dtype=np.uint8), 7) == zlib.crc32(frozen, 7)
    src = np.stack([np.arange(5000) % 70, np.arange(5000) % 90]).astype(np.int32)
    ro = np.frombuffer(src.tobytes(), dtype=np.int32).reshape(src.shape)
    assert not ro.flags.writeable
    for x in (src, ro):
        out, outside, decrease, repeat = layer.widen_indices(x, (70, 90))
        np.testing.assert_array_equal(out, src)
        assert out.flags.writeable and not outside
        assert (decrease, repeat) == _reference(src, (70, 90))[2:]
    assert src.flags.writeable  # the caller's array keeps its flag
    kernels = [files.widen_part] + ([files.crc32_folded] if files.folding_available() else [])
    for kernel in kernels:
        assert kernel.signatures and all(not sig[0 if kernel is files.crc32_folded else 2].mutable
                                         for sig in kernel.signatures), kernel


def test_crc32_without_the_instruction_is_zlibs(monkeypatch):
    monkeypatch.setattr(files, "folding_available", lambda: False)
    x = np.arange(100_000, dtype=np.int64)
    assert layer.crc32(x) == zlib.crc32(x)


def _reference(src, sizes):
    out = src.astype(np.int64)
    outside = any(bool(((out[d] < 0) | (out[d] >= sizes[d])).any()) for d in range(len(sizes)))
    if outside or out.shape[1] == 0:
        return out, outside, -1, -1
    keys = np.ravel_multi_index(tuple(out), sizes)
    down = np.flatnonzero(keys[1:] < keys[:-1])
    same = np.flatnonzero(keys[1:] == keys[:-1])
    decrease = int(down[0]) + 1 if down.size else -1
    repeat = int(same[0]) + 1 if same.size else -1
    return out, outside, decrease, repeat


@pytest.mark.parametrize("seed", range(12))
def test_widen_indices_against_numpy(rows, seed):
    rng = np.random.default_rng(seed)
    sizes = tuple(int(s) for s in rng.integers(1, 40, size=rng.integers(1, 4)))
    n = int(rng.choice([0, 1, 2, 100, 4096, 4097, 9000]))
    src = np.stack([rng.integers(0, s, n) for s in sizes]).astype(rng.choice([np.int8, np.int16, np.int32, np.uint16]))
    if n and rng.random() < 0.6:
        keys = np.ravel_multi_index(tuple(src.astype(np.int64)), sizes)
        src = src[:, np.argsort(keys, kind="stable")]
        if rng.random() < 0.5:
            keys = np.ravel_multi_index(tuple(src.astype(np.int64)), sizes)
            keep = np.concatenate([[True], keys[1:] != keys[:-1]])
            src = np.ascontiguousarray(src[:, keep])
        if src.shape[1] > 2 and rng.random() < 0.5:  # one step down somewhere
            j = int(rng.integers(1, src.shape[1]))
            src[:, [j - 1, j]] = src[:, [j, j - 1]]
    if n and rng.random() < 0.2 and src.dtype.kind == "i":
        src[int(rng.integers(0, len(sizes))), int(rng.integers(0, src.shape[1]))] = -1
    out, outside, decrease, repeat = rows.widen_indices(src, sizes)
    want = _reference(src, sizes)
    np.testing.assert_array_equal(np.asarray(out), want[0])
    assert np.asarray(out).dtype == np.int64
    assert outside == want[1]
    if not outside:
        assert (decrease, repeat) == want[2:]


@pytest.mark.parametrize("seed", range(8))
def test_widen_indices_in_parts_finds_what_one_pass_finds(monkeypatch, seed):
    """Parts meet at arbitrary entries: a step down or a repeat across a part boundary is found."""
    rng = np.random.default_rng(50 + seed)
    sizes = (30, 40)
    n = 10_000
    keys = np.sort(rng.choice(sizes[0] * sizes[1], n, replace=True))
    src = np.stack(np.unravel_index(keys, sizes)).astype(np.int32)
    j = int(rng.integers(1, n))
    if seed % 2:
        src[:, [j - 1, j]] = src[:, [j, j - 1]]
    want = _reference(src, sizes)
    monkeypatch.setattr(layer, "_parts", lambda total, serial_below=0: (int(rng.integers(2, 40)), 2))
    out, outside, decrease, repeat = layer.widen_indices(src, sizes)
    np.testing.assert_array_equal(out, want[0])
    assert (outside, decrease, repeat) == want[1:]
