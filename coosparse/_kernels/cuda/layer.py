"""The CUDA kernel layer, written once: the kernel API over ``xp`` + a launcher.

:class:`CudaLayer` gathers the rows of every family (``<family>.py``, one
mixin each, in the kernel API's family order) over :class:`~.base.LayerBase`
(conventions: ``base.py``).
"""
from __future__ import annotations

from .base import LayerBase, _sort_in_place
from .coalesce import CoalesceRows
from .elementwise import ElementwiseRows
from .files import FilesRows
from .gather import GatherRows
from .indexing import IndexingRows
from .intersect import IntersectRows
from .join import JoinRows
from .linalg import LinalgRows
from .linear_index import LinearIndexRows
from .reduce import ReduceRows
from .scatter import ScatterRows
from .segment import SegmentRows
from .sort import SortRows
from .spgemm import SpgemmRows
from .union import UnionRows


class CudaLayer(FilesRows, SpgemmRows, LinalgRows, JoinRows, IndexingRows, ReduceRows, ElementwiseRows, UnionRows, IntersectRows, ScatterRows, CoalesceRows, GatherRows, SegmentRows, SortRows, LinearIndexRows, LayerBase):
    """Kernel API over ``xp`` and ``launch``.

    Parameters
    ----------
    name : str
        Backend name ('cuda' or 'cuda-emulated').
    xp : module
        Array namespace (``cupy``, or the emulated device's ``strict.xp``).
    launch : callable
        ``launch(kernel_name_expression, nthreads, args)`` runs the kernel on
        a 1-D grid covering ``nthreads`` threads, in stream order.
    stable_argsort : callable
        ``stable_argsort(keys) -> int64 permutation`` (stable).
    validate : bool
        Check index bounds on the host before launching (a bad index raises
        ``IndexError`` at once). Off on a GPU, where the check would
        synchronise, and by default in emulation, which then behaves as a GPU:
        the kernels are memory-safe and report through the error word.
    sort : callable, optional
        Keys-only sort of unique int64 words; may sort in place and must
        return the sorted array (default: ``a.sort()``, in place).
    peek : callable, optional
        Host view of a device array for ``validate`` (emulation: no transfer
        counted). Without it validation reads through ``.get()``.
    """

    def __init__(self, name, xp, launch, stable_argsort, validate, sort=None, peek=None):
        self._sort = sort or _sort_in_place
        self.name = name
        self.xp = xp
        self._launch = launch
        self._argsort = stable_argsort
        self._validate = validate
        self._peek = peek or (lambda a: a.get())
        self._err_words = {}  # device id -> uint64[1] error word
