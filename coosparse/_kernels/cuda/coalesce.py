"""CUDA rows of the coalesce family: coalesce of a narrow shape, composed of the linear index, sort and segment rows.

No kernel of its own (no coalesce.cu): the composition gives the Numba layer's
fused kernel's bits.
"""
from __future__ import annotations

from ..bounds import row_major_sizes


class CoalesceRows:
    """The coalesce rows of :class:`~coosparse._kernels.cuda.layer.CudaLayer` (helpers: ``base.LayerBase``)."""

    def coalesce_linear(self, indices, strides, bound, values):
        """Distinct linear indices in increasing order (unravelled) and their ordered sums.

        Composed of this layer's own kernels (linear index, stable sort,
        segment heads, ordered segment sums, unravel), so the sums are
        bit-identical to the Numba layer's fused kernel. Synchronises once
        (segment_starts sizes the output).
        """
        keys = self.linear_index(indices, strides, row_major_sizes(strides, bound))  # bounds: reported
        sorted_keys, perm = self.sort_pairs(keys, bound)
        starts = self.segment_starts(sorted_keys)  # synchronize! (output size)
        sums = self.segment_sum(values, perm, starts)
        return self.unravel_index(sorted_keys[starts[:-1]], strides), sums
