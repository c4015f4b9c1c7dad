"""The compressed companions of an immutable COO: arrays derived from it once and cached with it.

A ``COO`` never changes and its flags are exact, so what is derived from its
parts (a CSR row pointer, an int32 copy of an index row, the non-empty rows)
stays valid for its lifetime. ``CompanionsMixin`` gives ``COO`` the cache,
the public :meth:`~CompanionsMixin.row_pointer` and ``nbytes``, which counts
what the cache holds. It reads only the array's stored attributes (``_values``,
``_indices``, ``_shape``, ``_sorted``) and imports nothing above the kernel
backend.
"""
from __future__ import annotations

import threading

import numpy as np

from .._kernels.backend import backend_for
from .keys import strides_of

_COMPANION_LOCK = threading.Lock()


class CompanionsMixin:
    """Cached companions of an immutable array (mixed into ``COO``)."""

    __slots__ = ()

    @property
    def nbytes(self):
        """Bytes held: indices, values and the cached companions (:meth:`row_pointer`, SpMV's int32
        column copy, the row reductions' non-empty rows, the trailing axes' keys of the per-row
        merges); pydata's ``nbytes``."""
        cache = self.__dict__.get("_companions")
        extra = 0
        for c in (cache.values() if cache else ()):
            extra += sum(int(p.nbytes) for p in c) if isinstance(c, tuple) else int(c.nbytes)
        return self.sparse_ndim * self.nnz * 8 + int(self._values.nbytes) + extra  # int64 indices

    def row_pointer(self, *, cache=True):
        """The compressed leading dimension of a sorted array (a CSR row pointer), cached with it.

        ``ptr[i]`` is the position of the first entry whose leading index is
        at least ``i``: the entries of row ``i`` are ``ptr[i]:ptr[i + 1]``.
        The array is immutable and its flags are exact, so the pointer stays
        valid for its lifetime; it is built once (one pass over the leading
        index row), kept on the array (counted in :attr:`nbytes`: ``8 *
        (shape[0] + 1)`` bytes) and used by the operations that read rows:
        row reductions, row gathers and slices, SpMV/SpMM, the per-row merges
        of multiply and add. Copies and pickles do not carry it, nor do results
        of operations, except those that compute their own pointer on the way
        (``a.T.coalesce()``, ``concatenate`` along the second axis).

        Operations build it only where it is small (``shape[0] <= 2 * nnz +
        1024``; a hypersparse leading dimension keeps the pointer-free paths).
        Where that memory matters, pass ``cache=False`` (built, not kept) or
        call :meth:`drop_companions`.

        Bad input: leading indices outside the shape raise IndexError and a
        ``sorted`` flag that lies ValueError, in the pass that builds the
        pointer (nothing is cached then). On a GPU the kernel reports them
        through the error word instead (at the next synchronising call); the
        pointer it cached is memory-safe but meaningless, and later
        operations that reuse it do not report again (products build their
        own pointers on a GPU for that reason).

        Parameters
        ----------
        cache : bool
            Keep the pointer on the array (default).

        Returns
        -------
        array of int64, shape (shape[0] + 1,)
            On the array's device; on the CPU a read-only view of the cached
            pointer (writing to it raises), as :attr:`indices` and :attr:`values` are.

        Raises
        ------
        ValueError
            The array is not sorted (``coalesce()`` it first), or is 0-d, or
            its leading dimension is dense.

        Examples
        --------
        >>> import numpy as np, coosparse
        >>> a = coosparse.COO([[0, 0, 2], [1, 3, 0]], np.ones(3), (4, 4), sorted=True, unique=True)
        >>> a.row_pointer()
        array([0, 2, 2, 3, 3])
        >>> a.nbytes
        112
        """
        ptr = self._row_pointer(cache=cache)
        if isinstance(ptr, np.ndarray):
            # the cached array serves later operations: the caller gets a read-only view of it,
            # as of indices and values
            ptr = ptr.view()
            ptr.flags.writeable = False
        return ptr

    def _row_pointer(self, cache=True):
        """:meth:`row_pointer` as cached (writeable: the kernels take it as it is)."""
        if not self._sorted:
            raise ValueError("row_pointer: the array is not sorted; call coalesce() first")
        if self.sparse_ndim == 0:
            raise ValueError("row_pointer: the array has no sparse dimension")
        return self._companion(("row_pointer", 1, self._shape[0]),
                               lambda be: be.row_offsets(self._indices[0], self._shape[0]), cache=cache)

    def _trailing_keys(self):
        """The linear keys of the sparse axes after the first (three or more sparse axes), cached: with
        :meth:`row_pointer`, what the per-row merges of multiply, sparse_mask and add read in place of
        a matrix's column (8 bytes an entry; every index checked in bounds when they are built)."""
        shape = self._shape[1:self.sparse_ndim]

        def build(be):
            return be.linear_index(self._indices[1:], np.array(strides_of(shape)[0], dtype=np.int64), shape)

        return self._companion(("trailing keys",), build)

    def _row_pointer_pays(self):
        """Whether operations should build :meth:`row_pointer`: sorted, with a leading dimension
        not much longer than nnz (``shape[0] <= 2 * nnz + 1024``), so the pointer stays small."""
        return self._sorted and self.sparse_ndim >= 1 and self._shape[0] <= 2 * self.nnz + 1024

    def _companion(self, key, build, cache=True):
        """A cached companion of this (immutable) array: ``build(kernel layer)`` once per ``key``.

        Keys used: ``("row_pointer", lead, nrows)``: the CSR pointer over the
        first ``lead`` sparse axes fused (``lead == 1``: :meth:`row_pointer`);
        ``("row_pointer", ("stable sort", lead), nrows)``: (row offsets, stable
        permutation) of an unsorted array's rows on a GPU; ``("int32 index",
        axis)``: index row ``axis`` as int32, checked in bounds (SpMV on the
        CPU, docs/linalg.md); ``("row_segments", 1, nrows)``: (non-empty rows,
        their entries' starts) of the row pointer (row reductions and SpMV on the
        CPU; two empty arrays when no row is empty); ``("row numbers", nrows)``: every
        row number, the index row of the row reductions' results when no row is empty; ``("column
        numbering", ncols)``: (numbers of the entries' columns, number of each column, [count]) of a
        2-D mask, its named columns in first-entry order (SDDMM on the CPU, docs/linalg.md);
        ``("column order",)``: an empty
        array marking a 2-D transpose of a coalesced matrix (coalesce then skips
        proving its order); ``("trailing keys",)``: :meth:`_trailing_keys`. A
        companion is an array or a tuple of arrays.
        """
        companions = self.__dict__.get("_companions")
        hit = companions.get(key) if companions else None
        if hit is not None:
            return hit
        value = build(backend_for(self._values))
        if cache:
            with _COMPANION_LOCK:
                self.__dict__.setdefault("_companions", {})[key] = value
        return value

    def _cached_companion(self, key):
        """The companion cached under ``key``, or None (never builds it)."""
        companions = self.__dict__.get("_companions")
        return companions.get(key) if companions else None

    def drop_companions(self):
        """Forget the cached companions (:meth:`row_pointer`, SpMV's int32 column copy, the row
        reductions' non-empty rows and row numbers, the trailing axes' keys): their memory is freed;
        they are rebuilt when needed again.
        Returns None."""
        self.__dict__.pop("_companions", None)
