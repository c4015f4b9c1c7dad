"""Files: the zip members written and read without np.savez / np.load (interop/zipio.py) — valid
archives for every reader, CRCs checked, the fallbacks (compressed, non-seekable, past 4 GiB), and
the widened index rows' bounds and order checks, against np.load and the constructor."""
import io
import subprocess
import time
import zipfile

import numpy as np
import pytest

import coosparse
from coosparse import COO
from coosparse.interop import npz, zipio
from operands import make

sparse = pytest.importorskip("sparse")


@pytest.fixture(autouse=True, params=["kernels", "small-file paths"])
def paths(request, monkeypatch):
    """Every test twice: with the folded CRC and the widening pass taken at any size (the tests'
    files are small), and with the library's thresholds (zlib's CRC, NumPy's widening)."""
    if request.param == "kernels":
        monkeypatch.setattr(zipio, "FOLDED_CRC_FROM", 0)
        monkeypatch.setattr(npz, "_WIDEN_FROM", 2)
    return request.param


def saved(a, **kw):
    f = io.BytesIO()
    coosparse.save_npz(f, a, **kw)
    return f.getvalue()


def _members(data):
    with np.load(io.BytesIO(data)) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("shape, nnz", [((300, 500), 4000), ((7,), 3), ((4, 5, 6), 50), ((3, 4), 0),
                                        ((3, 4), 1)])
def test_archives_are_valid_for_zipfile_numpy_and_pydata(shape, nnz, compressed):
    a = make(shape, nnz, "none", seed=3)
    data = saved(a, compressed=compressed)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None  # every member's CRC
        assert all(i.compress_type == (zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED)
                   for i in z.infolist())
    m = _members(data)
    c = a.coalesce()
    np.testing.assert_array_equal(m["coords"], c.indices)
    np.testing.assert_array_equal(m["data"], c.values)
    np.testing.assert_array_equal(m["shape"], shape)
    assert m["format"][()] == "coo" and m["format"].shape == () and m["sorted"].shape == ()
    np.testing.assert_array_equal(sparse.load_npz(io.BytesIO(data)).todense(), a.to_dense())
    b = coosparse.load_npz(io.BytesIO(data))
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())
    assert b.is_coalesced and b.indices.dtype == np.int64


def test_unzip_accepts_the_archive(tmp_path):
    path = tmp_path / "a.npz"
    coosparse.save_npz(path, make((300, 200), 2000, "none", seed=1), compressed=False)
    try:
        r = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        pytest.skip("no unzip on this machine")
    assert r.returncode == 0 and "No errors detected" in r.stdout


class WriteOnly(io.RawIOBase):
    """A stream that can only be written (a pipe, a socket): no seek, no tell."""

    def __init__(self):
        self.chunks = []

    def writable(self):
        return True

    def write(self, b):
        self.chunks.append(bytes(b))
        return len(b)


def test_a_stream_that_cannot_seek_gets_the_same_archive():
    a = make((400, 300), 5000, "none", seed=2)
    s = WriteOnly()
    coosparse.save_npz(s, a, compressed=False)
    data = b"".join(s.chunks)
    m, ref = _members(data), _members(saved(a, compressed=False))
    assert m.keys() == ref.keys()
    for k in m:
        np.testing.assert_array_equal(m[k], ref[k])
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None


def test_names_get_the_extension_as_numpy_gives_it(tmp_path):
    a = make((5, 5), 6, "none", seed=4)
    coosparse.save_npz(str(tmp_path / "x"), a, compressed=False)
    coosparse.save_npz(tmp_path / "y.npz", a, compressed=False)
    for name in ("x.npz", "y.npz"):
        np.testing.assert_array_equal(coosparse.load_npz(tmp_path / name).to_dense(), a.to_dense())


def test_an_archive_in_the_middle_of_a_stream_reads_back():
    a = make((50, 40), 300, "none", seed=5)
    f = io.BytesIO()
    f.write(b"x" * 100)  # zip offsets are relative to where the archive starts
    coosparse.save_npz(f, a, compressed=False)
    f.seek(100)
    np.testing.assert_array_equal(coosparse.load_npz(io.BytesIO(f.getvalue()[100:])).to_dense(), a.to_dense())
    with zipfile.ZipFile(f) as z:  # and zipfile reads it with the prefix in front
        assert z.testzip() is None


def test_a_bytesio_holds_exactly_the_archive_a_file_gets(tmp_path, monkeypatch):
    # the in-memory file is sized once for the whole archive before the pieces go in
    monkeypatch.setattr(zipio.time, "localtime", lambda: time.struct_time((2026, 12, 2, 20, 0, 0, 2, 336, 0)))
    a = make((300, 200), 3000, "none", seed=7)
    path = tmp_path / "a.npz"
    coosparse.save_npz(path, a, compressed=False)
    expected = path.read_bytes()
    f = io.BytesIO()
    coosparse.save_npz(f, a, compressed=False)
    assert f.getvalue() == expected and f.tell() == len(expected)
    # over the middle of a longer stream, as over a file: the archive's bytes replaced, the rest kept
    g = io.BytesIO(b"p" * 7 + b"t" * (len(expected) + 50))
    g.seek(7)
    coosparse.save_npz(g, a, compressed=False)
    assert g.getvalue() == b"p" * 7 + expected + b"t" * 50 and g.tell() == 7 + len(expected)


def _data_offsets(data):
    """Where each member's array data starts in the archive ``data``: (name, offset, dtype)."""
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for m in (zipio.stored_member(z, i.filename[:-4]) for i in z.infolist()):
            out.append((m.info.filename, m.data, m.dtype))
    return out


@pytest.mark.parametrize("prefix", [0, 3, 64])
def test_every_member_starts_aligned(prefix):
    """Uncompressed archives pad each local header (an extra field, as zipalign does) so that every
    member's data starts on a multiple of 64 bytes from the archive's start."""
    for seed, (shape, nnz) in enumerate([((300, 500), 4000), ((7,), 3), ((4, 5, 6), 50), ((3, 4), 0)]):
        a = make(shape, nnz, "none", seed=seed)
        f = io.BytesIO(b"p" * prefix)
        f.seek(prefix)
        coosparse.save_npz(f, a, compressed=False)
        data = f.getvalue()[prefix:]
        offsets = _data_offsets(data)
        assert len(offsets) == 8 and all(at % 64 == 0 for _, at, _ in offsets), offsets
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            assert z.testzip() is None
        np.testing.assert_array_equal(coosparse.load_npz(io.BytesIO(data)).to_dense(), a.to_dense())
        np.testing.assert_array_equal(sparse.load_npz(io.BytesIO(data)).todense(), a.to_dense())


def test_a_bytesio_is_read_where_it_lies(paths, monkeypatch):
    """The index rows of an archive in an ``io.BytesIO`` are widened from the BytesIO's own bytes (no
    copy); the result owns its memory, and the file may be written afterwards."""
    read = []
    real = zipio.read_stored
    monkeypatch.setattr(zipio, "read_stored", lambda m, **kw: read.append(m.info.filename) or real(m, **kw))
    a = make((300, 400), 5000, "none", seed=11).coalesce()
    data = saved(a, compressed=False)
    f = io.BytesIO(data)
    with np.load(f) as z:
        view = zipio.in_place(zipio.stored_member(z.zip, "coords"))
    assert view is not None and not view.flags.writeable and np.shares_memory(view, np.frombuffer(data, np.uint8))
    np.testing.assert_array_equal(view, a.indices)
    f.seek(0)
    b = coosparse.load_npz(f)
    assert ("coords.npy" in read) == (paths != "kernels") and "data.npy" in read
    for part in (b.indices, b.values):
        assert not np.shares_memory(part, np.frombuffer(data, np.uint8))
    f.seek(0)
    f.write(b"\0" * len(data))  # the BytesIO copies the bytes it shares before it changes them
    np.testing.assert_array_equal(b.indices, a.indices)
    np.testing.assert_array_equal(b.values, a.values)
    assert b.is_coalesced and data[:2] == b"PK"


def test_a_bytesio_with_a_buffer_exported_still_loads():
    a = make((300, 400), 5000, "none", seed=12)
    f = io.BytesIO(saved(a, compressed=False))
    held = f.getbuffer()  # getvalue() now copies; the load is the same
    np.testing.assert_array_equal(coosparse.load_npz(f).to_dense(), a.to_dense())
    del held


def test_members_not_aligned_are_read_into_memory(paths, monkeypatch):
    """np.savez's archives (scipy's, pydata's) do not align their members: the rows are read."""
    a = make((300, 400), 5000, "none", seed=13)
    f = io.BytesIO()
    c = a.coalesce()
    np.savez(f, format=np.array("coo"), shape=np.array(a.shape), data=c.values,
             coords=c.indices.astype(np.int32), fill_value=np.array(0.0))
    data = f.getvalue()
    coords = [at for name, at, _ in _data_offsets(data) if name == "coords.npy"]
    assert coords[0] % 4, "np.savez happened to align the rows: pick another name order"
    places = []
    real = zipio.in_place
    monkeypatch.setattr(zipio, "in_place", lambda m: places.append(real(m)) or places[-1])
    np.testing.assert_array_equal(coosparse.load_npz(io.BytesIO(data)).to_dense(), a.to_dense())
    assert places == ([None] if paths == "kernels" else [])


def test_past_the_zip32_limit_the_archive_is_zipfiles(monkeypatch):
    a = make((60, 60), 500, "none", seed=6)
    monkeypatch.setattr(zipio, "_ZIP32_LIMIT", 1000)  # as if the arrays were 4 GiB
    data = saved(a, compressed=False)
    monkeypatch.undo()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None
        # zipfile's local headers (force_zip64: a zip64 extra field of 20 bytes; ours have none)
        assert zipio._LOCAL_HEADER.unpack(data[:zipio._LOCAL_HEADER.size])[11] == 20
    np.testing.assert_array_equal(coosparse.load_npz(io.BytesIO(data)).to_dense(), a.to_dense())


def _flip(data, member, offset_in_data):
    """``data`` with one byte of ``member``'s array data changed (its CRC no longer holds)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(member + ".npy")
    raw = bytearray(data)
    head = zipio._LOCAL_HEADER.unpack(raw[info.header_offset:info.header_offset + zipio._LOCAL_HEADER.size])
    start = info.header_offset + zipio._LOCAL_HEADER.size + head[10] + head[11]
    pos = start + info.file_size - 1 - offset_in_data
    raw[pos] ^= 0x01
    return bytes(raw)


@pytest.mark.parametrize("member", ["coords", "data"])
def test_a_changed_byte_fails_the_crc(member):
    a = make((300, 300), 3000, "none", dtype=np.float64, seed=7)
    data = _flip(saved(a, compressed=False), member, 5)
    with pytest.raises(zipfile.BadZipFile, match="CRC"):
        coosparse.load_npz(io.BytesIO(data))


def test_a_member_shorter_than_its_header_says_is_refused():
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w") as z:
        for name, arr in dict(format=np.array("coo"), shape=np.array([10, 10]),
                              coords=np.zeros((2, 3), dtype=np.int32)).items():
            with z.open(name + ".npy", "w") as m:
                np.lib.format.write_array(m, arr)
        with z.open("data.npy", "w") as m:  # the header says 4 values, the member holds 3
            np.lib.format.write_array_header_1_0(m, {"descr": "<f8", "fortran_order": False, "shape": (4,)})
            m.write(np.ones(3).tobytes())
    f.seek(0)
    with pytest.raises(zipfile.BadZipFile, match="holds 24 bytes of data where its header says 32"):
        coosparse.load_npz(f)


def _file(coords, data, shape, **flags):
    """An uncompressed coo file with int32 coords, as save_npz writes them (the widening pass)."""
    f = io.BytesIO()
    nodes = dict(format=np.array("coo"), shape=np.array(shape), data=np.asarray(data, dtype=np.float64),
                 coords=np.asarray(coords, dtype=np.int32), fill_value=np.array(0.0))
    nodes.update({k: np.array(v) for k, v in flags.items()})
    np.savez(f, **nodes)
    f.seek(0)
    return f


def test_widened_indices_out_of_bounds_are_named_as_the_constructor_names_them():
    coords = [[0, 1, 2, 3], [2, 3, 9, 1]]
    with pytest.raises(IndexError, match="index 9 at position 2 is out of bounds for dimension 1 with size 4"):
        coosparse.load_npz(_file(coords, [1, 2, 3, 4], (4, 4)))
    with pytest.raises(IndexError, match="index -1 at position 3 is out of bounds for dimension 0"):
        coosparse.load_npz(_file([[0, 1, 2, -1], [0, 0, 0, 0]], [1, 2, 3, 4], (4, 4)))


def test_widened_indices_claims_are_verified():
    ok = [[0, 0, 1, 3], [1, 2, 0, 3]]
    a = coosparse.load_npz(_file(ok, [1, 2, 3, 4], (4, 4), sorted=True, unique=True))
    assert a.is_sorted and a.is_unique
    with pytest.raises(ValueError, match="claims flag hint sorted=True is false: entry 2"):
        coosparse.load_npz(_file([[0, 1, 0, 3], [1, 2, 0, 3]], [1, 2, 3, 4], (4, 4), sorted=True, unique=True))
    with pytest.raises(ValueError, match="claims flag hint unique=True is false: entry 2"):
        coosparse.load_npz(_file([[0, 1, 1, 3], [1, 2, 2, 3]], [1, 2, 3, 4], (4, 4), sorted=True, unique=True))
    # sorted with repeats, claimed sorted only: fine
    b = coosparse.load_npz(_file([[0, 1, 1, 3], [1, 2, 2, 3]], [1, 2, 3, 4], (4, 4), sorted=True, unique=False))
    assert b.is_sorted and not b.is_unique
    # unique claimed on unsorted keys: the full check (a sort) decides
    c = coosparse.load_npz(_file([[3, 0, 1, 2], [0, 0, 0, 0]], [1, 2, 3, 4], (4, 4), sorted=False, unique=True))
    assert c.is_unique and not c.is_sorted
    with pytest.raises(ValueError, match="unique=True is false: entries 0 and 2"):
        coosparse.load_npz(_file([[3, 0, 3, 2], [0, 0, 0, 0]], [1, 2, 3, 4], (4, 4), sorted=False, unique=True))


@pytest.mark.parametrize("coords, flags", [([[0, 0, 1, 3], [1, 2, 0, 3]], (True, True)),
                                           ([[0, 1, 1, 3], [1, 2, 2, 3]], (True, False)),
                                           ([[0, 2, 1, 3], [1, 2, 2, 3]], (False, False))])
def test_widened_indices_find_the_flags_when_asked(coords, flags):
    f = _file(coords, [1, 2, 3, 4], (4, 4))
    assert (lambda a: (a.is_sorted, a.is_unique))(coosparse.load_npz(f)) == (False, False)
    f.seek(0)
    a = coosparse.load_npz(f, verify_flags=True)
    assert (a.is_sorted, a.is_unique) == flags
    np.testing.assert_array_equal(a.indices, coords)


@pytest.mark.parametrize("seed", range(6))
def test_widened_loads_match_the_constructor_on_random_files(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 9, size=rng.integers(1, 4)))
    n = int(rng.integers(2, 9000))
    coords = np.stack([rng.integers(0, s, n) for s in shape])
    if rng.random() < 0.5:  # sorted, with or without repeats
        keys = np.ravel_multi_index(tuple(coords), shape)
        coords = coords[:, np.argsort(keys, kind="stable")]
    f = _file(coords, rng.random(n), shape)
    a = coosparse.load_npz(f, verify_flags=True)
    ref = COO(coords.astype(np.int64), rng.random(n), shape)
    keys = np.ravel_multi_index(tuple(coords), shape)
    assert a.is_sorted == bool((np.diff(keys) >= 0).all())
    assert a.is_unique == (a.is_sorted and bool((np.diff(keys) > 0).all()))
    np.testing.assert_array_equal(a.indices, ref.indices)


@pytest.mark.parametrize("seed", range(4))
def test_widened_loads_name_the_index_the_constructor_names(seed):
    rng = np.random.default_rng(100 + seed)
    shape = (50, 70)
    n = 12000  # past two pieces of the widening pass
    coords = np.stack([rng.integers(0, s, n) for s in shape])
    for _ in range(int(rng.integers(1, 4))):
        d, pos = int(rng.integers(0, 2)), int(rng.integers(0, n))
        coords[d, pos] = rng.choice([-1, shape[d], 2**30])
    with pytest.raises(IndexError) as want:
        COO(coords, np.ones(n), shape)
    with pytest.raises(IndexError) as got:
        coosparse.load_npz(_file(coords, np.ones(n), shape))
    assert str(got.value) == str(want.value)


def test_the_paths_are_the_ones_named(paths, monkeypatch):
    calls = []
    widen = npz._widened_load
    monkeypatch.setattr(npz, "_widened_load", lambda *a: calls.append(1) or widen(*a))
    a = make((40, 40), 300, "none", seed=9)
    np.testing.assert_array_equal(coosparse.load_npz(io.BytesIO(saved(a, compressed=False))).to_dense(),
                                  a.to_dense())
    assert bool(calls) == (paths == "kernels")


@pytest.mark.parametrize("order", [">", "<"])
def test_index_rows_of_either_byte_order_load(order):
    """Big-endian rows (a file from another machine) are not the widening kernel's: NumPy reads them."""
    a = make((300, 400), 5000, "none", seed=14).coalesce()
    f = io.BytesIO()
    np.savez(f, format=np.array("coo"), shape=np.array(a.shape), data=a.values.astype(order + "f8"),
             coords=a.indices.astype(order + "i4"), fill_value=np.array(0.0), sorted=np.array(True),
             unique=np.array(True))
    f.seek(0)
    b = coosparse.load_npz(f)
    np.testing.assert_array_equal(b.indices, a.indices)
    np.testing.assert_array_equal(b.values, a.values)
    assert b.indices.dtype == np.int64 and b.is_coalesced
