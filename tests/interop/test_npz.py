"""Files (SPEC 12): save_npz / load_npz round trips, pydata/sparse and scipy.sparse files both ways,
and files that must not be trusted."""
import io
import struct
import zipfile

import numpy as np
import pytest

import coosparse
from coosparse import COO
from operands import DTYPES, FLAGS, check_flags, dense, make

sparse = pytest.importorskip("sparse")
sp = pytest.importorskip("scipy.sparse")


def roundtrip(a, **kw):
    f = io.BytesIO()
    coosparse.save_npz(f, a, **kw)
    f.seek(0)
    return coosparse.load_npz(f), f


@pytest.mark.parametrize("flags", list(FLAGS))
@pytest.mark.parametrize("compressed", [True, False])
def test_roundtrip_keeps_meaning_fill_and_coalesces(flags, compressed):
    a = make((6, 5, 4), 30, flags, seed=1)
    for fill in (0.0, 2.5, np.nan, -0.0):
        x = COO(a.indices, a.values.astype(float), a.shape, sorted=a.is_sorted, unique=a.is_unique, fill_value=fill)
        b, _ = roundtrip(x, compressed=compressed)
        np.testing.assert_array_equal(b.to_dense(), x.to_dense())
        np.testing.assert_array_equal(np.asarray(b.fill_value), np.asarray(x.fill_value))
        assert b.is_coalesced and b.dtype == x.dtype and b.shape == x.shape
        check_flags(b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype(dtype):
    a = make((4, 6), 9, "none", dtype=dtype, seed=2)
    b, _ = roundtrip(a)
    assert b.dtype == dtype
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())


@pytest.mark.parametrize("shape, sparse_ndim", [((), 0), ((7,), 1), ((3, 4, 2), 2), ((3, 4, 2), 1), ((0, 3), 2),
                                                ((2**40, 2**30), 2)])
def test_shapes_hybrids_and_empty(shape, sparse_ndim):
    if not shape:
        a = COO(np.zeros((0, 1), np.int64), np.array([5.0]), ())
    elif shape[0] == 2**40:  # a huge shape: keys past 2**63 never appear, the file holds the indices
        a = COO([[2**40 - 1, 0, 2**40 - 1], [5, 2**30 - 1, 5]], np.array([1.0, 2.0, 3.0]), shape)
    else:
        a = make(shape, 5 if 0 not in shape else 0, "unique", sparse_ndim=sparse_ndim, seed=3)
    b, f = roundtrip(a)
    assert b.shape == a.shape and b.sparse_ndim == a.sparse_ndim
    if a.size < 10**6:
        np.testing.assert_array_equal(b.to_dense(), a.to_dense())
    else:
        np.testing.assert_array_equal(b.indices, a.coalesce().indices)
    f.seek(0)
    p = sparse.load_npz(f)  # pydata reads every file save_npz writes (hybrids as all-sparse)
    assert p.shape == a.shape
    if a.size < 10**6:
        np.testing.assert_array_equal(p.todense(), a.to_dense())


def test_pydata_reads_the_coalesced_array():
    # pydata marks what it loads as sorted and duplicate-free without checking: the file must be so
    a = COO([[3, 1, 3, 0]], np.array([1.0, 2.0, 4.0, 0.0]), (5,))
    f = io.BytesIO()
    coosparse.save_npz(f, a)
    f.seek(0)
    p = sparse.load_npz(f)
    np.testing.assert_array_equal(p.coords, [[0, 1, 3]])
    np.testing.assert_array_equal((p + p).todense(), 2 * a.to_dense())


@pytest.mark.parametrize("fill", [0.0, 1.5, np.nan])
@pytest.mark.parametrize("shape", [(4, 5), (10,), (2, 3, 4)])
def test_reads_pydata_files(shape, fill, tmp_path):
    p = sparse.random(shape, density=0.3, fill_value=fill, random_state=4)
    path = tmp_path / "p.npz"
    sparse.save_npz(path, p)
    for verify in (False, True):
        a = coosparse.load_npz(path, verify_flags=verify)
        np.testing.assert_array_equal(a.to_dense(), p.todense())
        np.testing.assert_array_equal(np.asarray(a.fill_value), np.asarray(p.fill_value))
        assert a.is_coalesced == verify  # the file records no flags: found only when asked
    g = sparse.random((4, 5), density=0.3, format="gcxs", random_state=5)
    sparse.save_npz(tmp_path / "g.npz", g)
    np.testing.assert_array_equal(coosparse.load_npz(tmp_path / "g.npz").to_dense(), g.todense())


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "dia"])
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_reads_scipy_files(fmt, kind, tmp_path):
    d = np.random.default_rng(6).standard_normal((6, 4)) * (np.random.default_rng(7).random((6, 4)) < 0.4)
    m = getattr(sp, f"{fmt}_{kind}")(d) if fmt != "bsr" else getattr(sp, f"bsr_{kind}")(d, blocksize=(2, 2))
    sp.save_npz(tmp_path / "m.npz", m)
    a = coosparse.load_npz(tmp_path / "m.npz")
    np.testing.assert_array_equal(a.to_dense(), d)
    check_flags(a)
    b = coosparse.load_npz(tmp_path / "m.npz", verify_flags=True)
    check_flags(b)
    if fmt == "csr":
        assert b.is_coalesced  # scipy's csr of a dense array is canonical: found when asked


def test_reads_scipy_nd_coo(tmp_path):
    m = sp.coo_array(np.arange(24.0).reshape(2, 3, 4) % 5)
    sp.save_npz(tmp_path / "n.npz", m)
    np.testing.assert_array_equal(coosparse.load_npz(tmp_path / "n.npz").to_dense(), m.toarray())


def test_paths_and_foreign_inputs(tmp_path):
    a = make((5, 5), 6, "coalesced", seed=8)
    coosparse.save_npz(str(tmp_path / "a"), a)  # a name without the extension gets it, as np.savez
    np.testing.assert_array_equal(coosparse.load_npz(tmp_path / "a.npz").to_dense(), a.to_dense())
    coosparse.save_npz(tmp_path / "p.npz", a.to_pydata())
    coosparse.save_npz(tmp_path / "s.npz", a.to_scipy("csr"))
    for name in ("p.npz", "s.npz"):
        np.testing.assert_array_equal(coosparse.load_npz(tmp_path / name).to_dense(), a.to_dense())


def test_device_arrays_are_written_from_the_host(backend):
    a = make((5, 4), 7, "none", seed=9)
    b, _ = roundtrip(backend.put(a))
    assert b.device == "cpu"
    np.testing.assert_array_equal(b.to_dense(), a.to_dense())


def _write(path, **nodes):
    np.savez(path, **nodes)
    return path


def test_untrusted_files_are_refused(tmp_path):
    ok = dict(format=np.array("coo"), shape=np.array([4, 4]), data=np.array([1.0, 2.0]),
              coords=np.array([[0, 1], [2, 3]]), fill_value=np.array(0.0))
    with pytest.raises(ValueError, match="unknown sparse format"):
        coosparse.load_npz(_write(tmp_path / "u.npz", **{**ok, "format": np.array("lil2")}))
    with pytest.raises(ValueError, match="no sparse array"):
        coosparse.load_npz(_write(tmp_path / "c.npz", a=np.array([1, 2, 3])))
    with pytest.raises(ValueError, match="missing"):
        coosparse.load_npz(_write(tmp_path / "m.npz", format=np.array("coo"), shape=np.array([4])))
    with pytest.raises(IndexError, match="out of bounds"):
        coosparse.load_npz(_write(tmp_path / "b.npz", **{**ok, "coords": np.array([[0, 9], [2, 3]])}))
    with pytest.raises(ValueError, match="coords"):
        coosparse.load_npz(_write(tmp_path / "s.npz", **{**ok, "coords": np.array([[0, 1, 2], [2, 3, 3]])}))
    with pytest.raises(ValueError, match="claims.*sorted"):
        coosparse.load_npz(_write(tmp_path / "l.npz", **{**ok, "coords": np.array([[1, 0], [2, 3]]),
                                                        "sorted": np.array(True), "unique": np.array(True)}))
    with pytest.raises(ValueError, match="shape"):
        coosparse.load_npz(_write(tmp_path / "n.npz", **{**ok, "shape": np.array([4, -4])}))
    with pytest.raises(ValueError, match="indptr"):
        coosparse.load_npz(_write(tmp_path / "p.npz", format=np.array(b"csr"), shape=np.array([2, 2]),
                                  data=np.ones(2), indices=np.array([0, 1]), indptr=np.array([0, 3, 2])))
    with pytest.raises(ValueError, match="allow_pickle=False"):
        np.savez(tmp_path / "o.npz", format=np.array("coo"), shape=np.array([2]), data=np.array([object()]),
                 coords=np.array([[0]]))
        coosparse.load_npz(tmp_path / "o.npz")  # never unpickles


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("bad", ["float indices", "float indptr", "0-d indices", "2-D indices", "2-D data"])
def test_compressed_files_with_malformed_parts_are_refused(tmp_path, fmt, bad):
    # a float index was cast to int64 (1.7 read as 1) and a 0-d one raised 'tuple index out of range'
    parts = dict(format=np.array(fmt), shape=np.array([2, 3] if fmt == "csr" else [3, 2]), data=np.ones(2),
                 indices=np.array([1, 2]), indptr=np.array([0, 1, 2]))
    parts.update({"float indices": dict(indices=np.array([1.7, 2.0])), "float indptr": dict(indptr=np.array([0, 1.5, 2])),
                  "0-d indices": dict(indices=np.array(1), data=np.ones(1), indptr=np.array([0, 1, 1])),
                  "2-D indices": dict(indices=np.array([[1], [2]])), "2-D data": dict(data=np.ones((2, 1)))}[bad])
    with pytest.raises(ValueError, match=f"the '{fmt}' file's"):
        coosparse.load_npz(_write(tmp_path / "f.npz", **parts))
    parts.update(indices=np.array([1, 2]), indptr=np.array([0, 1, 2]), data=np.ones(2))
    assert coosparse.load_npz(_write(tmp_path / "g.npz", **parts)).nnz == 2


@pytest.mark.parametrize("key, value", [("sorted", np.array([True, False])), ("sorted", np.array("False")),
                                        ("unique", np.array([1])), ("sparse_ndim", np.array(1.7)),
                                        ("sparse_ndim", np.array([1, 2]))])
def test_flags_and_split_must_be_single_integers(tmp_path, key, value):
    # an array of flags raised NumPy's ambiguous truth value; a float sparse_ndim was truncated
    ok = dict(format=np.array("coo"), shape=np.array([2, 3]), data=np.array([1.0, 2.0]), coords=np.array([[0, 1], [1, 2]]))
    with pytest.raises(ValueError, match=f"the file's '{key}' must be a single"):
        coosparse.load_npz(_write(tmp_path / "f.npz", **ok, **{key: value}))


def test_a_cut_member_header_and_scipy_coo_parts_are_refused(tmp_path):
    # an unclosed .npy header raised the tokenizer's TokenError, a 0-d 'row' an IndexError
    f = io.BytesIO()
    coosparse.save_npz(f, COO([[0, 1]], np.array([1.0, 2.0]), (3,)), compressed=False)
    raw = f.getvalue()
    at = raw.index(b"}", raw.index(b"data.npy"))
    with pytest.raises(ValueError, match="'data.npy' has a malformed .npy header"):
        coosparse.load_npz(io.BytesIO(raw[:at] + b" " + raw[at + 1:]))
    with pytest.raises(ValueError, match="'row' and 'col' must be 1-D"):
        coosparse.load_npz(_write(tmp_path / "r.npz", format=np.array("coo"), shape=np.array([2, 3]),
                                  row=np.array(0), col=np.arange(9), data=np.ones(9)))


def _patched(raw, member, field, fmt, value):
    """``raw`` (an archive) with a field of ``member``'s central directory record replaced
    (``field``: its byte offset in the record; zipfile reads sizes, method and flags from there)."""
    at = raw.index(b"PK\x01\x02")
    while raw[at + 46:at + 46 + len(member)] != member.encode():
        at = raw.index(b"PK\x01\x02", at + 4)
    return raw[:at + field] + struct.pack(fmt, value) + raw[at + field + struct.calcsize(fmt):]


@pytest.mark.parametrize("damage, kind", [
    ("stream", zipfile.BadZipFile),  # zlib's "Error -3 while decompressing data", no member named
    ("cut", zipfile.BadZipFile),  # zlib's again ("invalid stored block lengths")
    ("method", zipfile.BadZipFile),  # NotImplementedError "That compression method is not supported"
    ("encrypted", zipfile.BadZipFile),  # RuntimeError
    ("npy header", ValueError),  # NumPy's "the magic string is not correct", no member named
])
def test_a_damaged_member_is_named(damage, kind):
    f = io.BytesIO()
    coosparse.save_npz(f, COO([[0, 1, 2]], np.arange(3.0), (5,)), compressed=damage != "npy header")
    raw = f.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        info = z.getinfo("data.npy")
    name_len, extra_len = struct.unpack_from("<2H", raw, info.header_offset + 26)  # the local header's
    start = info.header_offset + 30 + name_len + extra_len
    if damage == "stream":
        raw = raw[:start] + bytes([0xFF] * 4) + raw[start + 4:]
    elif damage == "cut":  # a stream that never ends, its size past the end of the file
        raw = _patched(raw[:start] + bytes([58]) + raw[start + 1:], "data.npy", 20, "<L", 10**9)
    elif damage == "method":
        raw = _patched(raw, "data.npy", 10, "<H", 99)
    elif damage == "encrypted":
        raw = _patched(raw, "data.npy", 8, "<H", 1)
    else:
        raw = raw[:start + 3] + b"#" + raw[start + 4:]
    with pytest.raises(kind, match="'data.npy'"):
        coosparse.load_npz(io.BytesIO(raw))


def test_what_is_not_an_npz_archive_is_named(tmp_path):
    one = io.BytesIO()
    np.save(one, np.arange(3))  # np.load gives an array: was "does not support the context manager protocol"
    with pytest.raises(ValueError, match="holds one .npy array"):
        coosparse.load_npz(io.BytesIO(one.getvalue()))
    with pytest.raises(ValueError, match="is empty"):  # was an EOFError
        coosparse.load_npz(io.BytesIO(b""))
    (tmp_path / "t.txt").write_text("coords,data\n")
    with pytest.raises(ValueError, match="'.*t.txt' is not an .npz archive"):  # was "contains pickled data"
        coosparse.load_npz(tmp_path / "t.txt")
    raw = io.BytesIO()
    coosparse.save_npz(raw, COO([[0]], np.ones(1), (2,)))
    raw = raw.getvalue()
    end = raw.rindex(b"PK\x01\x02")  # the last central record's "version needed": 99.0
    raw = raw[:end + 6] + struct.pack("<H", 990) + raw[end + 8:]
    with pytest.raises(zipfile.BadZipFile, match="zipfile cannot read"):  # was a NotImplementedError
        coosparse.load_npz(io.BytesIO(raw))


def test_saving_a_dense_array_is_refused():
    for x in (np.ones(3), [1, 2, 3]):
        with pytest.raises(ValueError, match="Cannot save array of type"):
            coosparse.save_npz(io.BytesIO(), x)


def test_files_are_what_pydata_and_numpy_expect(tmp_path):
    a = make((4, 3, 2), 5, "none", sparse_ndim=2, seed=10)
    coosparse.save_npz(tmp_path / "h.npz", a)
    with np.load(tmp_path / "h.npz") as f:
        assert {"format", "shape", "data", "coords", "fill_value", "sorted", "unique", "sparse_ndim"} == set(f.files)
        assert f["format"][()] == "coo" and f["coords"].dtype == np.int32 and int(f["sparse_ndim"]) == 2
        np.testing.assert_array_equal(f["shape"], [4, 3, 2])
    assert dense(a).shape == (4, 3, 2)


@pytest.mark.parametrize("shape, stored", [((2**31, 3), np.int32), ((3, 2**31), np.int32),
                                           ((2**31 + 1, 3), np.int64), ((2, 2**40), np.int64)])
def test_file_indices_are_int32_when_every_dimension_fits(shape, stored):
    """int32 coords as scipy stores its indices (a third fewer bytes for 2-D float64); widened on load."""
    top = [n - 1 for n in shape]
    a = COO(np.array([[0, top[0]], [top[1], 0]]), np.array([1.0, 2.0]), shape)
    f = io.BytesIO()
    coosparse.save_npz(f, a)
    f.seek(0)
    with np.load(f) as z:
        assert z["coords"].dtype == stored
        np.testing.assert_array_equal(z["coords"], a.indices)
    f.seek(0)
    b = coosparse.load_npz(f)
    assert b.indices.dtype == np.int64 and b.is_coalesced
    np.testing.assert_array_equal(b.indices, a.indices)
    f.seek(0)
    np.testing.assert_array_equal(sparse.load_npz(f).coords, a.indices)
