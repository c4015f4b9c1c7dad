"""Files (SPEC 12): ``save_npz`` / ``load_npz``, NumPy's ``.npz`` with pydata/sparse's keys.

A bridge like the others: the format is pydata/sparse's (``format='coo'``,
``coords``, ``data``, ``shape``, ``fill_value``), so each library reads the
other's files, plus three keys of coosparse's own that pydata ignores:
``sorted`` and ``unique`` (the flags) and ``sparse_ndim`` (a hybrid array's
split; pydata has no hybrid arrays, so the file holds every dimension as
sparse). ``load_npz`` also reads scipy.sparse's ``save_npz`` files (csr, csc and
coo directly; bsr and dia through scipy) and pydata's GCXS files (through
pydata). No library is imported to read or write a COO file.

pydata's reader marks what it loads as sorted and duplicate-free without
checking, so :func:`save_npz` always writes the coalesced array: every file it
writes is right for pydata (an uncoalesced array is coalesced first, a sort).
:func:`load_npz` never trusts a file: indices are bounds-checked, flags the file
claims are verified (one pass each; a false claim is a ValueError naming it),
and a file without flags (pydata's, scipy's) loads with both False unless
``verify_flags=True`` asks for the flags that hold.
"""
from __future__ import annotations

import contextlib
import os
import threading
import zipfile
import zlib

import numpy as np

from .._core.coo import COO
from .._core.dispatch import sparse_operand
from .._core.flags import verify_flags
from .._core.keys import is_wide, joint_keys
from .._kernels.backend import backend_for
from ..ops.coalesce import coalesce
from ..ops.shape import to_hybrid
from . import zipio

_OWN_KEYS = ("sorted", "unique", "sparse_ndim")


def save_npz(file, a, compressed=True):
    """Write ``a`` to a ``.npz`` file that coosparse and pydata/sparse both read.

    Parameters
    ----------
    file : str, os.PathLike or file-like
        As :func:`numpy.savez` takes it (a name without ``.npz`` gets the extension).
    a : COO, pydata/sparse array or scipy.sparse array
        Other libraries' arrays are converted first (fill and flags as their
        bridges give them). Moved to the CPU when it lives on a GPU.
    compressed : bool
        :func:`numpy.savez_compressed` (default) or :func:`numpy.savez`.

    Notes
    -----
    The file holds the coalesced array (see the module docstring), its fill
    value and the flags (both True), and ``sparse_ndim`` for a hybrid array.
    Its ``coords`` are int32 when every dimension has at most 2**31 elements
    (int64 otherwise); pydata/sparse keeps them int32, coosparse widens them.

    Examples
    --------
    >>> import io, numpy as np, coosparse
    >>> a = coosparse.COO([[3, 1, 3]], np.array([1.0, 2.0, 4.0]), (5,), fill_value=-1.0)
    >>> f = io.BytesIO()
    >>> coosparse.save_npz(f, a)
    >>> _ = f.seek(0)
    >>> b = coosparse.load_npz(f)
    >>> b.to_dense(), b.fill_value, b.is_coalesced
    (array([-1.,  2., -1.,  5., -1.]), np.float64(-1.0), True)
    """
    a = sparse_operand(a)
    if not isinstance(a, COO):
        raise ValueError(f"Cannot save array of type {type(a).__name__}: save_npz writes sparse arrays "
                         "(a coosparse.COO, or a pydata/sparse or scipy.sparse array); convert a dense array "
                         "with coosparse.asarray first")
    a = a.to("cpu")  # synchronize! (a GPU array is written from the host)
    sparse_ndim = a.sparse_ndim
    c = coalesce(to_hybrid(a, 0)) if a.dense_ndim else coalesce(a)
    nodes = {
        "format": np.array("coo"),
        "shape": np.array(c.shape, dtype=np.int64),
        "data": c.values,
        "coords": c.indices,
        "fill_value": np.asarray(c.fill_value),
        "sorted": np.array(True),
        "unique": np.array(True),
        "sparse_ndim": np.array(sparse_ndim, dtype=np.int64),
    }
    if not hasattr(file, "write"):  # a name, as np.savez takes it
        file = os.fspath(file)
        if not file.endswith(".npz"):
            file = file + ".npz"
    zipio.write_npz(file, [(name, node, _file_coords_dtype(c.shape) if name == "coords" else None)
                           for name, node in nodes.items()], compressed)


def _file_coords_dtype(shape):
    """The file's index type: int32 when every dimension fits (as scipy stores its index arrays),
    which pydata reads as it is and :func:`load_npz` widens; int64 otherwise.

    A third fewer bytes to write, checksum and read for a 2-D float64 array.
    """
    return np.int32 if all(n <= _INT32_SIZES for n in shape) else np.int64


_INT32_SIZES = 2**31  # an index below 2**31 fits int32


def load_npz(file, *, verify_flags=False):
    """Read a sparse array from a ``.npz`` file: coosparse's, pydata/sparse's or scipy.sparse's.

    Parameters
    ----------
    file : str, os.PathLike or file-like
    verify_flags : bool
        For a file that records no flags (pydata's, scipy's): find the flags
        that hold (one pass over the keys) instead of loading with both False.
        Flags a file does record are always verified.

    Returns
    -------
    COO
        With the file's fill value (0 for scipy files) and, for a coosparse
        file of a hybrid array, its sparse/dense split.

    Raises
    ------
    ValueError
        The file is not a sparse array file (no ``format`` or ``coords``), its
        format is unknown, its parts are inconsistent, or a flag it claims is
        false. IndexError: an index out of bounds. zipfile.BadZipFile: the
        archive or one of its members is damaged (a CRC, a cut or corrupt
        stream, a zip feature zipfile lacks), with the member named.

    Examples
    --------
    >>> import io, numpy as np, scipy.sparse as sp, coosparse
    >>> f = io.BytesIO()
    >>> sp.save_npz(f, sp.csr_array(np.array([[0.0, 2.0], [3.0, 0.0]])))
    >>> _ = f.seek(0)
    >>> coosparse.load_npz(f).to_dense()
    array([[0., 2.],
           [3., 0.]])
    """
    with _open(file) as fp:
        keys = set(fp.files)
        fmt = _format(fp, keys, file)
        if fmt == "coo":
            return _load_coo(fp, keys, verify_flags)
        if fmt in ("csr", "csc"):
            return _load_compressed(fp, keys, fmt, verify_flags)
        if fmt in ("bsr", "dia"):
            import scipy.sparse  # optional dependency: scipy's own formats, read by scipy

            return sparse_operand(scipy.sparse.load_npz(_reopen(file)))  # flags as scipy computes them, verified
        if fmt == "gcxs":
            import sparse  # optional dependency: pydata's compressed format, read by pydata

            return sparse_operand(sparse.load_npz(_reopen(file)))  # flags verified by the bridge
    raise ValueError(f"load_npz: unknown sparse format {fmt!r} in the file (coosparse reads coo, csr, csc, bsr, "
                     "dia and gcxs files)")


def _open(file):
    """np.load's archive of ``file``; a file that is no ``.npz`` archive, or one zipfile cannot
    read, is an error naming what it is (np.load answers a ``.npy`` file with an array, an empty
    one with EOFError, any other with its refusal to unpickle)."""
    try:
        fp = np.load(file, allow_pickle=False)
    except NotImplementedError as e:  # zipfile: a zip version or feature it lacks
        raise zipfile.BadZipFile(f"load_npz: {_name(file)} is a zip archive zipfile cannot read: {e}") from e
    except EOFError as e:
        raise ValueError(f"load_npz: {_name(file)} is empty") from e
    except ValueError as e:
        if "pickle" not in str(e):
            raise
        raise ValueError(f"load_npz: {_name(file)} is not an .npz archive (neither a zip nor a .npy file; "
                         f"np.load: {e})") from e
    if not isinstance(fp, np.lib.npyio.NpzFile):
        raise ValueError(f"load_npz: {_name(file)} holds one .npy array, not an .npz archive of a sparse array")
    return fp


def _format(fp, keys, file):
    if "format" in keys:
        fmt = _read(fp, "format")[()]
        fmt = fmt.decode("ascii") if isinstance(fmt, bytes) else str(fmt)
        return fmt.lower()
    if "coords" in keys and "data" in keys and "shape" in keys:
        return "coo"
    raise ValueError(f"load_npz: {_name(file)} holds no sparse array (no 'format' or 'coords' key; keys: "
                     f"{sorted(keys)})")


def _name(file):
    return repr(os.fspath(file)) if isinstance(file, (str, os.PathLike)) else "the file"


def _reopen(file):
    if hasattr(file, "seek"):
        file.seek(0)
    return file


def _need(fp, keys, names, fmt):
    _require(keys, names, fmt)
    return [_read(fp, k) for k in names]


def _require(keys, names, fmt):
    missing = [k for k in names if k not in keys]
    if missing:
        raise ValueError(f"load_npz: a {fmt!r} file needs the keys {list(names)}; missing {missing}")


def _member(fp, name, stored):
    """The member ``name`` of the open npz ``fp``: an uncompressed one (``stored``, its
    :class:`zipio.Member`) read straight into its array, any other (None) the usual way."""
    if stored is None:
        return _read(fp, name)
    with _reading(name, _UNREADABLE_STORED):
        return zipio.read_stored(stored)


# What reading a member can raise when it is damaged: zipfile's errors (a bad header, a CRC, an
# encrypted member, a compression method it lacks), zlib's and an empty EOFError for a cut or
# corrupt compressed stream, NumPy's ValueError for a bad .npy header. Most of them do not say
# which member; :func:`_reading` names it. Only a stored member is read by zipio (no zlib there),
# and its RuntimeErrors would not be the file's (a thread that cannot start).
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)
_UNREADABLE_STORED = (zipfile.BadZipFile,)


@contextlib.contextmanager
def _reading(name, unreadable):
    """Errors of reading the member ``name``: ``unreadable`` ones as BadZipFile, NumPy's
    ValueError as a ValueError, each naming the member."""
    try:
        yield
    except unreadable as e:
        raise zipfile.BadZipFile(_naming(name, e)) from e
    except ValueError as e:
        raise ValueError(_naming(name, e)) from e


def _naming(name, e):
    member = f"{name}.npy"
    text = str(e) or type(e).__name__
    return text if member in text else f"load_npz: member {member!r}: {text}"


def _read(fp, name):
    """The member ``name`` of the open npz ``fp`` (np.load's way), its read errors naming it."""
    with _reading(name, _UNREADABLE):
        return fp[name]


def _stored(fp, name):
    """``zipio.stored_member`` of ``name``, its errors naming it."""
    with _reading(name, _UNREADABLE_STORED):
        return zipio.stored_member(fp.zip, name)


def _shape(shape):
    shape = np.asarray(shape)
    if shape.ndim != 1 or shape.dtype.kind not in "iu" or (shape < 0).any():
        raise ValueError(f"load_npz: the file's shape must be a list of non-negative integers; got {shape!r}")
    return tuple(int(n) for n in shape)


def _load_coo(fp, keys, verify):
    order = None  # (first decrease, first repeat) of the keys when the widening pass found them
    if "coords" in keys:
        _require(keys, ("coords", "data", "shape"), "coo")
        shape = _shape(_read(fp, "shape"))
        stored = {k: _stored(fp, k) for k in ("coords", "data")}
        if None not in stored.values() and _widens(stored["coords"], stored["data"], shape):
            coords, order, data = _widened_load(stored["coords"], stored["data"], shape)
        else:
            data = _member(fp, "data", stored["data"])
            coords = _member(fp, "coords", stored["coords"])
    else:  # scipy's 2-D COO files
        row, col, data, shape = _need(fp, keys, ("row", "col", "data", "shape"), "coo")
        if row.ndim != 1 or row.shape != col.shape:
            raise ValueError(f"load_npz: 'row' and 'col' must be 1-D of one length; got shapes {row.shape} and {col.shape}")
        coords = np.stack([row, col])
        shape = _shape(shape)
    data = np.asarray(data)
    if coords.ndim != 2 or coords.shape != (len(shape), data.shape[0] if data.ndim else -1):
        raise ValueError(f"load_npz: 'coords' of shape {coords.shape} do not fit {data.shape[0] if data.ndim else 0} "
                         f"values of a shape of {len(shape)} dimensions")
    fill = _read(fp, "fill_value")[()] if "fill_value" in keys else None
    claims = {k: bool(_scalar(fp, k, "biu")) for k in ("sorted", "unique") if k in keys}
    if order is None:
        a = COO(coords, data, shape, fill_value=fill)  # bounds checked
    else:  # the widening pass checked the bounds
        COO._validate_layout(coords, data, shape, bounds=False)
        a = COO(coords, data, shape, fill_value=fill, check=False)
    a = _flagged(a, claims, verify, order)
    if "sparse_ndim" in keys:
        sn = int(_scalar(fp, "sparse_ndim", "iu"))
        if not 0 <= sn <= len(shape):
            raise ValueError(f"load_npz: sparse_ndim {sn} does not fit a shape of {len(shape)} dimensions")
        if sn < len(shape):
            a = to_hybrid(a, len(shape) - sn)
    return a


def _scalar(fp, key, kinds):
    """The 0-d member ``key`` of one of the dtype ``kinds``, else ValueError naming it (a file
    must not turn ``[True, False]`` into an ambiguous truth value or ``1.7`` into 1)."""
    v = _read(fp, key)
    if v.ndim != 0 or v.dtype.kind not in kinds:
        raise ValueError(f"load_npz: the file's {key!r} must be a single {'integer' if 'b' not in kinds else 'bool'}; "
                         f"got an array of dtype {v.dtype} and shape {v.shape}")
    return v[()]


def _widens(coords, data, shape):
    """Whether the file's index rows (:class:`zipio.Member`) go through the widening pass: integers
    narrower than int64 in the machine's byte order (the kernel's), laid out as the shape and the
    values say, enough of them, of a shape whose linear keys fit int64."""
    nnz = data.shape[0] if data.shape else -1
    return (coords.dtype.kind in "iu" and coords.dtype.itemsize < 8 and coords.dtype.isnative
            and coords.shape == (len(shape), nnz) and nnz >= _WIDEN_FROM and not is_wide(shape))


_WIDEN_FROM = 1 << 16
"""Entries from which the index rows take the widening pass (a kernel compiled at its first use);
fewer go through NumPy and the constructor's checks."""


def _widened_load(coords, data, shape):
    """(index rows as int64, (first decrease, first repeat) of their keys or None when some index is
    out of bounds (the constructor's check then names it), values) of two stored members.

    The index rows are read where they lie in an ``io.BytesIO`` (the archives save_npz writes keep
    every member aligned for that), else into scratch memory first; their CRC and the widening pass
    (which checks the bounds and finds the order in the same pass) run on a second thread while this
    one reads the values.
    """
    with zipio.borrowed(coords, check=False) as raw:
        done = {}

        def widen():
            try:
                zipio.check_crc(coords, raw)
                done["widened"] = backend_for(raw).widen_indices(raw, shape)
            except BaseException as e:  # raised on the calling thread
                done["error"] = e

        worker = threading.Thread(target=widen, name="coosparse-load-npz")
        worker.start()
        try:
            values = zipio.read_stored(data)
        finally:
            worker.join()  # the borrowed rows are read until then
    if "error" in done:
        raise done["error"]
    indices, outside, decrease, repeat = done["widened"]
    return indices, (None if outside else (decrease, repeat)), values


def _load_compressed(fp, keys, fmt, verify):
    data, indices, indptr, shape = _need(fp, keys, ("data", "indices", "indptr", "shape"), fmt)
    shape = _shape(shape)
    if len(shape) != 2:
        raise ValueError(f"load_npz: a {fmt!r} file needs a 2-D shape; got {shape}")
    major = shape[0] if fmt == "csr" else shape[1]
    for name, part in (("indices", indices), ("indptr", indptr)):
        # (a cast to int64 would turn index 1.7 into 1: a file's indices are read, never rounded)
        if part.ndim != 1 or part.dtype.kind not in "iu":
            raise ValueError(f"load_npz: the {fmt!r} file's {name!r} must be a 1-D array of integers; got an array "
                             f"of dtype {part.dtype} and shape {part.shape}")
    if data.ndim != 1:
        raise ValueError(f"load_npz: the {fmt!r} file's 'data' must be 1-D; got shape {data.shape}")
    indptr = indptr.astype(np.int64)  # (a uint64 past 2**63 wraps negative: refused below)
    if indptr.shape != (major + 1,) or indptr[0] != 0 or (np.diff(indptr) < 0).any() \
            or indptr[-1] != indices.shape[0] or indices.shape[0] != data.shape[0]:
        raise ValueError(f"load_npz: the {fmt!r} file's indptr does not describe {indices.shape[0]} entries "
                         f"over {major} {'rows' if fmt == 'csr' else 'columns'}")
    outer = np.repeat(np.arange(major, dtype=np.int64), np.diff(indptr))
    inner = np.asarray(indices, dtype=np.int64)
    coords = np.stack([outer, inner] if fmt == "csr" else [inner, outer])
    return _flagged(COO(coords, data, shape), {}, verify)


def _flagged(a, claims, verify, order=None):
    """``a`` with the flags the file claims (verified: a false one raises), or those that hold.

    ``order``: (first decrease, first repeat) of ``a``'s keys when already known (-1: none).
    """
    sorted_, unique_ = (order[0] < 0, order[0] < 0 and order[1] < 0) if order is not None else (None, None)
    if claims:
        s, u = claims.get("sorted", False), claims.get("unique", False)
        known = sorted_ is not None and (not s or sorted_) and (not u or unique_)
        if (s or u) and not known:  # unknown, or false: the check names the first entry that breaks it
            try:
                verify_flags(a.indices, a.sparse_shape, s, u)
            except ValueError as e:
                raise ValueError(f"load_npz: the file claims {e}") from None
        return a._with(sorted=s, unique=u)
    if verify and sorted_ is not None:
        return a._with(sorted=sorted_, unique=unique_)
    return _checked(a, verify)


def _checked(a, verify):
    """``a`` (built without flags) with the flags that hold, when asked: sorted when its keys do not
    decrease, unique when they also never repeat (one pass; an unsorted array stays not unique)."""
    if not verify or a.nnz <= 1:
        return a
    (keys,), _ = joint_keys([a.indices], a.sparse_shape)
    step = np.diff(keys)
    s = bool((step >= 0).all())
    return a._with(sorted=s, unique=s and bool((step > 0).all()))
