"""The Numba layer's rows of the ``linalg`` and ``spgemm`` families (``layer.py`` holds the others
and re-exports these): products of a sparse operand, their row pointers and their flag checks."""
import numpy as np

from ..bounds import lying_flag_error, raise_out_of_bounds
from .families import Family as _Family
from .threads import count as _nthreads

_la = _Family(globals(), "_la", "linalg")
_sg = _Family(globals(), "_sg", "spgemm")
_sort = _Family(globals(), "_sort", "sort")

# ---- linalg --------------------------------------------------------------------------------------
_ZERO_BASE = np.zeros(1, dtype=np.int64)


def _raise_linalg_flags(flags, keys=None, bound=None):
    """IndexError (naming the first key outside ``bound`` when given) / ValueError for kernel flags."""
    if not np.count_nonzero(flags):  # (the common case, in one cheap call)
        return
    if flags[:, 0].any():
        if keys is not None:
            raise_out_of_bounds(keys.reshape(1, -1), (int(bound),))
        raise IndexError("an index lies outside the shape (an array built with check=False holds indices "
                         "outside its shape)")
    if flags[:, 1].any():
        raise lying_flag_error()


def _check_bases(row, base, nrows, rows_per_batch, span, nd):
    """The batch bases of a product: one per batch of ``rows_per_batch`` output rows, each leaving
    ``span`` rows of the ``nd``-row dense operand inside it (None: as many as the largest base
    leaves). IndexError otherwise: O(batches), on the host, before the kernel reads them (the
    CUDA kernels check each read and report instead). Returns the span."""
    rpb = max(int(rows_per_batch), 1)
    need = -(-int(nrows) // rpb)
    if base.shape[0] < need:
        raise IndexError(f"{row}: batch_base has {base.shape[0]} entries for {need} batches")
    if not need:
        return int(nd) if span is None else int(span)
    lo, hi = int(base[:need].min()), int(base[:need].max())
    span = max(int(nd) - hi, 0) if span is None else int(span)
    if lo < 0 or hi + span > int(nd):
        raise IndexError(f"{row}: a batch base leaves the dense operand's {nd} rows")
    return span


def row_offsets(rows, nrows):
    """CSR row pointer of non-decreasing ``rows`` in [0, nrows): int64[nrows + 1].

    Rows outside [0, nrows) raise IndexError, rows that step down ValueError
    (a sorted flag that lies), both found in the pass that builds the pointer.
    """
    out, flags = _la.row_offsets(rows, int(nrows), _nthreads())
    _raise_linalg_flags(flags, rows, nrows)
    return out


def spmm(offsets, perm, cols, values, dense, rows_per_batch, batch_base, col_bound=None, out_rows=None,
         out_nrows=None):
    """COO rows (offsets, perm) x dense, each output element summed in grouped order.

    ``cols`` must lie in [0, col_bound) (default: the rows of ``dense``); IndexError otherwise.
    ``out_rows`` (with ``out_nrows``, one dense batch: ``batch_base`` None): the output row of each
    row of ``offsets``, increasing in [0, out_nrows) (ValueError otherwise); the result then has
    ``out_nrows`` rows, zero in the rows not listed (a matrix's non-empty rows alone).
    """
    if out_rows is not None:
        return _spmm_listed_rows(offsets, perm, cols, values, dense, batch_base, col_bound, out_rows, out_nrows)
    if batch_base is None:  # one dense batch for every row
        rows_per_batch, batch_base = offsets.shape[0], _ZERO_BASE
        col_bound = dense.shape[0] if col_bound is None else col_bound
    else:  # (the default bound: the columns every batch can read)
        col_bound = _check_bases("spmm", batch_base, offsets.shape[0] - 1, rows_per_batch, col_bound,
                                 dense.shape[0])
    out, flags = _la.spmm(offsets, perm, cols, values, dense, rows_per_batch, batch_base, int(col_bound),
                          _nthreads())
    _raise_linalg_flags(flags)
    return out


def _spmm_listed_rows(offsets, perm, cols, values, dense, batch_base, col_bound, out_rows, out_nrows):
    """:func:`spmm` with ``out_rows``: SpMV in one kernel; other products by rows, then placed."""
    out_rows, nout = np.ascontiguousarray(out_rows, dtype=np.int64), int(out_nrows)
    if batch_base is not None or out_rows.shape != (offsets.shape[0] - 1,) or nout < 0:
        raise ValueError("spmm: out_rows takes one dense batch and one output row per row of offsets")
    col_bound = dense.shape[0] if col_bound is None else int(col_bound)
    bad = "spmm: out_rows must increase in [0, out_nrows)"
    if dense.shape[1] == 1 and perm is None:
        out, flags = _la.spmv_rows(offsets, out_rows, nout, cols, values, dense.reshape(-1), col_bound, _nthreads())
        if np.count_nonzero(flags):  # (the common case in one cheap call: no ufunc reduction)
            if flags[:, 1].any():
                raise ValueError(bad)
            _raise_linalg_flags(flags)
        return out.reshape(nout, 1)
    if out_rows.shape[0] and (out_rows[0] < 0 or out_rows[-1] >= nout or (out_rows[1:] <= out_rows[:-1]).any()):
        raise ValueError(bad)
    rows = spmm(offsets, perm, cols, values, dense, 1, None, col_bound)
    out = np.zeros((nout, dense.shape[1]), dtype=rows.dtype)
    out[out_rows] = rows
    return out


def spmm_unsorted(rows, cols, values, dense, nrows, rows_per_batch, batch_base, col_bound=None):
    """COO (rows in any order) x dense, each output element summed in stored order.

    Rows must lie in [0, nrows) and ``cols`` in [0, col_bound); IndexError otherwise.
    """
    nthreads = _nthreads()
    if nthreads > _la.OWNERSHIP_MAX_THREADS and rows.shape[0] * dense.shape[1] >= _la.SERIAL_WORK:
        # many threads would each scan every row index: group the rows by a stable sort instead
        # (the same order within a row, so the same bits); row_offsets checks the sorted rows
        sorted_rows, perm = _sort.sort_pairs(rows, max(int(nrows), 1), nthreads)
        return spmm(row_offsets(sorted_rows, nrows), perm, cols, values, dense, rows_per_batch, batch_base,
                    col_bound)
    if batch_base is None:  # one dense batch for every row
        rows_per_batch, batch_base = int(nrows) + 1, _ZERO_BASE
        col_bound = dense.shape[0] if col_bound is None else col_bound
    else:
        col_bound = _check_bases("spmm_unsorted", batch_base, int(nrows), rows_per_batch, col_bound,
                                 dense.shape[0])
    out, flags = _la.spmm_unsorted(rows, cols, values, dense, int(nrows), rows_per_batch, batch_base,
                                   int(col_bound), nthreads)
    _raise_linalg_flags(flags)
    return out


def dense_spmm(dense, batch_base, rows_per_batch, batch_offsets, perm, krow, cols, values, ncols):
    """dense x COO, each output element summed over its column's entries in stored order.

    ``krow`` must lie in [0, dense.shape[1]) and ``cols`` in [0, ncols); IndexError otherwise.
    """
    if batch_offsets is None:
        batch_offsets = np.array([0, krow.shape[0]], dtype=np.int64)
    if batch_base is None:  # one dense batch for every batch of the COO
        batch_base = np.zeros(batch_offsets.shape[0] - 1, dtype=np.int64)
    else:
        nb_ = batch_offsets.shape[0] - 1
        _check_bases("dense_spmm", batch_base, nb_ * int(rows_per_batch), rows_per_batch, int(rows_per_batch),
                     dense.shape[0])
    out, flags = _la.dense_spmm(dense, batch_base, rows_per_batch, batch_offsets, perm, krow, cols, values, ncols,
                                _nthreads())
    _raise_linalg_flags(flags)
    return out


def sddmm(rows, row_stride, cols, col_stride, x, x_inner, y, y_inner, k, row_bound=None, col_bound=None):
    """Dot products of x rows and y columns at the entries (eight fixed lanes each). ``rows`` must lie
    in [0, row_bound) and ``cols`` in [0, col_bound) (None: 2**63, i.e. only negatives refused)."""
    out, flags = _la.sddmm(rows, row_stride, _bound(row_bound), cols, col_stride, _bound(col_bound), x, x_inner,
                           y, y_inner, k, _nthreads())
    _raise_linalg_flags(flags)
    return out


def dense_transpose(a, out=None):
    """A C-contiguous copy of 2-D ``a``'s transpose, copied in cache-sized tiles (into ``out``)."""
    return _la.dense_transpose(a, _nthreads(), out)


def number_columns(cols, ncols, cols_out=None):
    """(cols2, rowmap, m): the distinct columns ``cols`` names in [0, ncols), in first-entry order."""
    return _la.number_columns(cols, int(ncols), cols_out)


def sampled_transpose(a, cols, out=None, numbering=None):
    """(out, cols2, m): ``number_columns`` (or ``numbering``), the numbered columns as out's rows."""
    return _la.sampled_transpose(a, cols, _nthreads(), out, numbering)


def _bound(b):
    return 2**63 if b is None else min(int(b), 2**63)


def spgemm(a_offsets, a_rows, a_perm, a_cols, a_values, b_offsets, b_perm, b_cols, b_values, ncols,
           a_row_bound=None):
    """Sparse x sparse: ([row; col] int64[2, m], values) of the coalesced product, sums in expansion order.

    A's columns must lie in [0, K) (K = rows of B's pointer), the B columns reached
    in [0, ncols) and the row keys ``a_rows`` in [0, a_row_bound), increasing:
    IndexError / ValueError otherwise, from the passes that read them.
    """
    return _sg.spgemm(a_offsets, a_rows, a_perm, a_cols, a_values, b_offsets, b_perm, b_cols, b_values, ncols,
                      _bound(a_row_bound), _nthreads(), _raise_linalg_flags)
