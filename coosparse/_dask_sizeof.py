"""Dask's ``sizeof`` for a COO: its index and value bytes (the scheduler's memory accounting and
spilling depend on it). Registered by the ``dask.sizeof`` entry point (:mod:`._dask_hook`) and by
:func:`coosparse.dask.register`; imports Dask only when registering.
"""
from __future__ import annotations

from ._core.coo import COO

_sizeof_done = False


def coo_sizeof(a):
    """Bytes held by a COO: its index and value arrays (plus a small constant)."""
    return int(a.indices.nbytes + a.values.nbytes) + 200


def register_sizeof(sizeof=None):
    """Register :func:`coo_sizeof` with ``dask.sizeof`` (idempotent)."""
    global _sizeof_done
    if _sizeof_done:
        return
    if sizeof is None:
        from dask.sizeof import sizeof  # optional dependency: imported only when asked to register

    sizeof.register(COO, coo_sizeof)
    _sizeof_done = True
