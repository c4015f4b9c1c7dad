"""pydata/sparse's file tests, ported (sparse/numba_backend/tests/test_io.py), plus the exchange of
files between the two libraries.

Adaptations, each marked: COO only (pydata's GCXS/CSR/CSC formats are read through pydata, not
written); errors are coosparse's (ValueError naming what is wrong, where pydata raises
AttributeError or KeyError); flags: a coalesced array comes back coalesced.
"""
import numpy as np
import pytest

import coosparse
from coosparse import COO

sparse = pytest.importorskip("sparse")


def assert_eq(x, y):
    np.testing.assert_array_equal(x.todense(), y.todense())


@pytest.mark.parametrize("compression", [True, False])
@pytest.mark.parametrize("format", ["coo"])  # adapted: COO only
def test_save_load_npz_formats(tmp_path, compression, format):
    x = coosparse.random((4, 5), density=0.25, format=format, seed=1)
    y = x.todense()
    filename = tmp_path / "mat.npz"
    coosparse.save_npz(filename, x, compressed=compression)
    z = coosparse.load_npz(filename)
    assert x.format == z.format
    assert_eq(x, z)
    np.testing.assert_array_equal(y, z.todense())
    assert x.fill_value == z.fill_value


@pytest.mark.parametrize("shape, format", [((), "coo"), ((10,), "coo"), ((2, 3, 4), "coo")])
def test_save_load_npz_dimensions(tmp_path, shape, format):
    sparse_arr = COO.from_numpy(np.array(5.0)) if shape == () else coosparse.random(shape, density=0.3, seed=2)
    filename = tmp_path / "mat_dim.npz"
    coosparse.save_npz(filename, sparse_arr)
    z = coosparse.load_npz(filename)
    assert type(sparse_arr) is type(z)
    assert_eq(sparse_arr, z)


@pytest.mark.parametrize("format", ["coo"])
@pytest.mark.parametrize("fill_value", [1.5, np.nan])
def test_save_load_npz_fill_value(tmp_path, format, fill_value):
    x = coosparse.random((4, 5), density=0.3, format=format, fill_value=fill_value, seed=3)
    filename = tmp_path / "mat_fv.npz"
    coosparse.save_npz(filename, x)
    z = coosparse.load_npz(filename)
    assert x.format == z.format
    assert_eq(x, z)
    if np.isnan(fill_value):
        assert np.isnan(z.fill_value)
    else:
        assert z.fill_value == fill_value


def test_load_unknown_format_exception(tmp_path):
    filename = tmp_path / "unknown_fmt.npz"
    np.savez(filename, format="unknown_format", data=np.array([1, 2]))
    with pytest.raises(ValueError, match="unknown sparse format"):  # adapted: pydata raises AttributeError
        coosparse.load_npz(filename)


def test_load_corrupted_archive_exception(tmp_path):
    filename = tmp_path / "corrupted.npz"
    np.savez(filename, a=np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="no sparse array"):  # adapted: pydata raises KeyError
        coosparse.load_npz(filename)


@pytest.mark.parametrize("format", ["coo"])
def test_load_corrupted_tagged_archive_exception(tmp_path, format):
    filename = tmp_path / f"corrupted_{format}.npz"
    np.savez(filename, format=format)
    with pytest.raises(ValueError, match="missing"):  # adapted: pydata raises KeyError
        coosparse.load_npz(filename)


def test_save_invalid_type_exception(tmp_path):
    filename = tmp_path / "invalid_type.npz"
    with pytest.raises(ValueError, match="Cannot save array of type"):
        coosparse.save_npz(filename, [1, 2, 3])
    with pytest.raises(ValueError, match="Cannot save array of type"):
        coosparse.save_npz(filename, np.array([1, 2, 3]))


# ---- added: each library reads the other's files
@pytest.mark.parametrize("fill_value", [0.0, 1.5, np.nan])
def test_files_cross_between_the_libraries(tmp_path, fill_value):
    x = coosparse.random((6, 5, 4), density=0.3, fill_value=fill_value, seed=4, duplicates=True)
    coosparse.save_npz(tmp_path / "ours.npz", x)
    p = sparse.load_npz(tmp_path / "ours.npz")
    np.testing.assert_array_equal(p.todense(), x.todense())
    sparse.save_npz(tmp_path / "theirs.npz", p)
    z = coosparse.load_npz(tmp_path / "theirs.npz")
    np.testing.assert_array_equal(z.todense(), x.todense())
    np.testing.assert_array_equal(np.asarray(z.fill_value), np.asarray(x.fill_value))
