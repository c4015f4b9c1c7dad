"""Per-row merges of two CSR matrices through their row pointers (2-D, pointers cached with the arrays).

Arrays of three or more sparse axes merge this way too (``row_multiply``, ``row_mask_values`` and
``row_add`` given ``keys``): the row pointer of the leading axis and a row of linear keys of the
trailing axes (a companion of each array, checked when it was built).

The product (``row_multiply``) and the sparse mask (``row_mask_values``) of the intersection
family and the union (``row_add``; the elementwise family's ``row_gather_write`` reuses its
count) of two sorted matrices merge each row's two column runs. The rows come from the pointers, so only the column index is read
(8 bytes an entry, not 16), and every merge step is branch-free: it reads one column of each
side and advances the side(s) whose column is not larger (a random-key merge mispredicts a
branch per step otherwise).

Both share one count pass (``_row_count_part``): the columns of a block of rows are first
checked in loops of their own (inside the bounds, strictly increasing within each row), then
each row is merged by a loop that does nothing but count the matches.
Checking inside the merge put six more operations and two more loop-carried values into each
step (the merge is a chain of dependent loads: 2.5-3x slower measured). Indices are unsigned:
a signed index costs a wrap-around of negative indices in Numba, inside that chain. The write
passes then merge again, writing straight into the output.

Helpers of kernel families, not a family of its own: no kernel API row lands here.
"""
import numba as nb
import numpy as np

from ..bounds import first_out_of_bounds, lying_flag_error, raise_out_of_bounds
from .parts import row_range
from .threads import plan, run_parts

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)
# the count pass counts matches through a bitmap of the columns (one row of it per part) up to
# this many columns (128 KiB a part, in L2); wider matrices merge each row
_BITS_MAX_COLUMNS = 1 << 20


def raise_merge_flags(flags, limits, *index_arrays, in_order=True):
    """IndexError / ValueError for what a fused merge pass counted (flags[:, 0]: an index may be
    outside ``limits``, looked for in ``index_arrays``; flags[:, 1]: keys out of order)."""
    if not in_order:
        flags = flags.copy()
        flags[:, 1] += 1
    if flags[:, 0].any():
        sizes = tuple(int(v) for v in limits)
        for idx in index_arrays:
            if first_out_of_bounds(idx, sizes) is not None:
                raise_out_of_bounds(idx, sizes)
    if flags[:, 1].any():
        raise lying_flag_error(unique=True)


_BLOCK = 256  # rows checked together: their columns stay in cache for the merge that follows


@nb.njit(cache=True, nogil=True)
def _row_count_part(t, nparts, ap, bp, acol, bcol, limit, matches, flags, bits):
    """matches[t + 1]: the columns both sides of part t's rows hold; flags[t]: (a column outside
    ``limit``, columns decreasing within a row, a column repeated within a row, the part's entries
    on both sides). ``bits`` (nparts, words) zeros: part t counts through its own row (one bit per
    column); rows of no words: through a merge of each row."""
    rlo, rhi = row_range(t, nparts, ap, bp)
    bad = down = dup = np.int64(0)
    cnt = np.uint64(0)
    bm = bits[t]
    use_bits = bm.shape[0] > 0
    for rb in range(rlo, rhi, _BLOCK):
        re = rhi if rb + _BLOCK > rhi else rb + _BLOCK
        # the block's columns of each side checked as one flat run (loops without a branch, which
        # vectorise); a pair across a row start is not an order and is taken back below
        alo, ahi, blo, bhi = np.uint64(ap[rb]), np.uint64(ap[re]), np.uint64(bp[rb]), np.uint64(bp[re])
        dn = eq = np.int64(0)
        for q in range(alo, ahi):
            bad |= np.int64(np.uint64(acol[q]) >= limit)
        for q in range(blo, bhi):
            bad |= np.int64(np.uint64(bcol[q]) >= limit)
        for q in range(alo + _ONE, ahi):
            dn += np.int64(acol[q] < acol[q - _ONE])
            eq += np.int64(acol[q] == acol[q - _ONE])
        for q in range(blo + _ONE, bhi):
            dn += np.int64(bcol[q] < bcol[q - _ONE])
            eq += np.int64(bcol[q] == bcol[q - _ONE])
        if bad != 0:
            break  # a column outside the limit: the caller raises (and no bit is addressed by it)
        for r in range(rb, re):
            i, ie, j, je = np.uint64(ap[r]), np.uint64(ap[r + 1]), np.uint64(bp[r]), np.uint64(bp[r + 1])
            # a non-empty row's start past the block's first entry: its pair with the entry
            # before was counted above (reads stay at i: no index below the block's start)
            ca = (i < ie) & (i > alo)
            ip = i - _ONE if ca else i
            dn -= np.int64(ca & (acol[i] < acol[ip]))
            eq -= np.int64(ca & (acol[i] == acol[ip]))
            cb = (j < je) & (j > blo)
            jp = j - _ONE if cb else j
            dn -= np.int64(cb & (bcol[j] < bcol[jp]))
            eq -= np.int64(cb & (bcol[j] == bcol[jp]))
            if use_bits:
                # a's columns set, b's tested, a's cleared: loads and stores that do not wait on
                # each other, where a merge waits on each comparison. Reached only with every
                # column of the block inside the limit (the break above): each addresses a bit
                # of the part's row
                if i < ie and j < je:
                    for q in range(i, ie):
                        c = np.uint64(acol[q])
                        bm[c >> _SIX] |= _ONE << (c & _LOW6)
                    for q in range(j, je):
                        c = np.uint64(bcol[q])
                        cnt += (bm[c >> _SIX] >> (c & _LOW6)) & _ONE
                    for q in range(i, ie):
                        bm[np.uint64(acol[q]) >> _SIX] = np.uint64(0)
                continue
            while i < ie and j < je:
                ka = acol[i]
                kb = bcol[j]
                ta = ka <= kb
                tb = kb <= ka
                cnt += np.uint64(ta & tb)
                i += np.uint64(ta)
                j += np.uint64(tb)
        down |= dn
        dup |= eq
    matches[t + 1] = cnt
    flags[t, 0] = bad
    flags[t, 1] = down
    flags[t, 2] = dup
    flags[t, 3] = (ap[rhi] - ap[rlo]) + (bp[rhi] - bp[rlo])


def _row_counts(a_idx, b_idx, ap, bp, limits, nthreads, keys=None):
    """(matches[1:] per part, entries per part, dup found, nparts, nthreads) of the count pass, after
    raising IndexError for a column outside ``limits[1]`` and ValueError for columns out of order.
    ``keys``: the two rows to merge in place of the columns ``a_idx[1]``, ``b_idx[1]``."""
    nparts, nthreads = plan(a_idx.shape[1] + b_idx.shape[1], nthreads)
    matches = np.zeros(nparts + 1, dtype=np.int64)
    flags = np.zeros((nparts, 4), dtype=np.int64)
    limit = int(limits[1])
    bits = np.zeros((nparts, (limit + 63) // 64 if limit <= _BITS_MAX_COLUMNS else 0), dtype=np.uint64)
    acol, bcol = (a_idx[1], b_idx[1]) if keys is None else keys
    run_parts(_row_count_part, nparts, nthreads, ap, bp, acol, bcol, np.uint64(limit), matches, flags, bits)
    raise_merge_flags(flags[:, :2], limits, a_idx, b_idx)
    return matches, flags[:, 3], bool(flags[:, 2].any()), nparts, nthreads


# ---- product ----------------------------------------------------------------------------------
@nb.njit(cache=True, nogil=True)
def _row_multiply_part(t, nparts, sp, pp, scol, pcol, svals, pvals, per, out_idx, out_vals):
    rlo, rhi = row_range(t, nparts, sp, pp)
    u = np.uint64(per[t])
    uend = np.uint64(per[t + 1])
    k = svals.shape[1]
    # one value per entry (no dense dimension) through flat views: an inner loop over k per step
    # costs about as much as the rest of the step, and a column view [:, 0] (its stride known
    # only at run time) measured 15% slower than these unit-stride ones (the arrays are
    # C-contiguous: row_multiply)
    sv, pv, ov = svals.reshape(-1), pvals.reshape(-1), out_vals.reshape(-1)
    rows, cols = out_idx[0], out_idx[1]
    for r in range(rlo, rhi):
        if u >= uend:
            break
        i, ie, j, je = np.uint64(sp[r]), np.uint64(sp[r + 1]), np.uint64(pp[r]), np.uint64(pp[r + 1])
        row = np.int64(r)
        # every step writes the slot of the next match (kept when it matches); the part's last
        # match ends its merge, so no step writes into the next part's output
        if k == 1:
            while i < ie and j < je and u < uend:
                ks = scol[i]
                kp = pcol[j]
                ts = ks <= kp
                tp = kp <= ks
                rows[u] = row
                cols[u] = ks
                ov[u] = sv[i] * pv[j]
                u += np.uint64(ts & tp)
                i += np.uint64(ts)
                j += np.uint64(tp)
            continue
        while i < ie and j < je and u < uend:
            ks = scol[i]
            kp = pcol[j]
            ts = ks <= kp
            tp = kp <= ks
            rows[u] = row
            cols[u] = ks
            for c in range(k):
                out_vals[u, c] = svals[i, c] * pvals[j, c]
            u += np.uint64(ts & tp)
            i += np.uint64(ts)
            j += np.uint64(tp)


@nb.njit(cache=True, nogil=True)
def _row_multiply_nd_part(t, nparts, sp, pp, skey, pkey, strail, svals, pvals, per, out_idx, out_vals):
    """_row_multiply_part for operands of three or more sparse axes: each row merges the keys of the
    trailing axes (``skey``, ``pkey``), and a match takes the source's trailing index rows
    (``strail``). A kernel of its own, as _row_add_nd_part is (the 2-D merge keeps its one column)."""
    rlo, rhi = row_range(t, nparts, sp, pp)
    u = np.uint64(per[t])
    uend = np.uint64(per[t + 1])
    k = svals.shape[1]
    dt = strail.shape[0]
    sv, pv, ov = svals.reshape(-1), pvals.reshape(-1), out_vals.reshape(-1)
    rows, o1, o2, s1, s2 = out_idx[0], out_idx[1], out_idx[-1], strail[0], strail[-1]
    for r in range(rlo, rhi):
        if u >= uend:
            break
        i, ie, j, je = np.uint64(sp[r]), np.uint64(sp[r + 1]), np.uint64(pp[r]), np.uint64(pp[r + 1])
        row = np.int64(r)
        # (see _row_multiply_part: every step writes the slot of the next match)
        while i < ie and j < je and u < uend:
            ks = skey[i]
            kp = pkey[j]
            ts = ks <= kp
            tp = kp <= ks
            rows[u] = row
            if dt == 2:  # (three sparse axes: the two trailing rows through 1-D views)
                o1[u] = s1[i]
                o2[u] = s2[i]
            else:
                for x in range(dt):
                    out_idx[x + 1, u] = strail[x, i]
            if k == 1:
                ov[u] = sv[i] * pv[j]
            else:
                for c in range(k):
                    out_vals[u, c] = svals[i, c] * pvals[j, c]
            u += np.uint64(ts & tp)
            i += np.uint64(ts)
            j += np.uint64(tp)


def row_multiply(src_idx, src_values, probe_idx, probe_values, sp, pp, limits, nthreads, keys=None):
    """The product of two sorted operands through their row pointers ``sp``, ``pp`` (built from
    their leading rows, which they checked): (indices, values), or None when either side repeats a
    column within a row (the merge over keys sums the probe's duplicates and keeps the source's).

    Matrices merge their columns. ``keys``: the (source, probe) linear keys of the trailing axes of
    operands of three or more sparse axes, merged in their place (checked by the caller;
    ``limits[1]``: the trailing axes' size). Columns outside ``limits[1]`` raise IndexError and
    columns out of order within a row ValueError, before anything is written.
    """
    per, _, dup, nparts, nthreads = _row_counts(src_idx, probe_idx, sp, pp, limits, nthreads, keys)
    if dup:
        return None
    np.cumsum(per, out=per)
    total = int(per[-1])
    out_idx = np.empty((src_idx.shape[0], total), dtype=np.int64)
    out_vals = np.empty((total, src_values.shape[1]), dtype=src_values.dtype)
    if not total:
        return out_idx, out_vals
    src_values, probe_values = np.ascontiguousarray(src_values), np.ascontiguousarray(probe_values)
    if keys is None:
        run_parts(_row_multiply_part, nparts, nthreads, sp, pp, src_idx[1], probe_idx[1], src_values,
                  probe_values, per, out_idx, out_vals)
    else:
        run_parts(_row_multiply_nd_part, nparts, nthreads, sp, pp, keys[0], keys[1], src_idx[1:], src_values,
                  probe_values, per, out_idx, out_vals)
    return out_idx, out_vals


# ---- union -----------------------------------------------------------------------------------
@nb.njit(cache=True, nogil=True)
def _row_add_part(t, nparts, ap, bp, acol, bcol, sizes, a_values, b_values, negate, out_idx, out_val):
    rlo, rhi = row_range(t, nparts, ap, bp)
    u = np.uint64(sizes[t])
    k = a_values.shape[1]
    # one value per entry through flat views (see _row_multiply_part); the arrays are C-contiguous
    # (row_add)
    av, bv, ov = a_values.reshape(-1), b_values.reshape(-1), out_val.reshape(-1)
    rows, cols = out_idx[0], out_idx[1]
    # each step's value is picked from [b alone, a alone, both] by index: a float chosen by an
    # integer comparison (`s if ta else x`) compiles to a branch on x86 (no cmov for a float
    # register), which a merge of random columns mispredicts every other step (measured: the
    # pass took twice as long)
    pick = np.empty(3, dtype=out_val.dtype)
    for r in range(rlo, rhi):
        i, ie, j, je = np.uint64(ap[r]), np.uint64(ap[r + 1]), np.uint64(bp[r]), np.uint64(bp[r + 1])
        row = np.int64(r)
        if k == 1:
            while i < ie and j < je:
                ka = acol[i]
                kb = bcol[j]
                ta = ka <= kb
                tb = kb <= ka
                rows[u] = row
                cols[u] = ka if ta else kb
                _pick_sum(pick, av[i], bv[j], negate)
                # one side alone keeps its value as it is (a -0.0 stays -0.0)
                ov[u] = pick[np.uint64(ta) + np.uint64(ta & tb)]
                i += np.uint64(ta)
                j += np.uint64(tb)
                u += _ONE
        else:
            while i < ie and j < je:
                ka = acol[i]
                kb = bcol[j]
                ta = ka <= kb
                tb = kb <= ka
                rows[u] = row
                cols[u] = ka if ta else kb
                w = np.uint64(ta) + np.uint64(ta & tb)
                for c in range(k):
                    _pick_sum(pick, a_values[i, c], b_values[j, c], negate)
                    out_val[u, c] = pick[w]
                i += np.uint64(ta)
                j += np.uint64(tb)
                u += _ONE
        for q in range(i, ie):
            rows[u] = row
            cols[u] = acol[q]
            for c in range(k):
                out_val[u, c] = a_values[q, c]
            u += _ONE
        for q in range(j, je):
            rows[u] = row
            cols[u] = bcol[q]
            for c in range(k):
                out_val[u, c] = -b_values[q, c] if negate else b_values[q, c]
            u += _ONE


@nb.njit(cache=True, nogil=True, inline="always")
def _pick_sum(pick, x, y, negate):
    """pick = [b's value alone, a's alone, the two combined] of a union step (a - b with negate)."""
    if negate:
        pick[0] = -y
        pick[2] = x - y
    else:
        pick[0] = y
        pick[2] = x + y
    pick[1] = x


def row_union_offsets(a_idx, b_idx, ap, bp, limits, nthreads, keys=None):
    """(sizes, nthreads): the prefix-summed union sizes of the parts of a per-row union (parts cut by
    ``parts.row_range``), after the count pass found every column inside ``limits[1]`` and strictly
    increasing within its row (IndexError / ValueError otherwise). ``keys``: as ``_row_counts``."""
    sizes, entries, dup, nparts, nthreads = _row_counts(a_idx, b_idx, ap, bp, limits, nthreads, keys)
    if dup:
        raise lying_flag_error(unique=True)
    # a part's union holds its entries of both sides less the columns both hold
    sizes[1:] = entries - sizes[1:]
    np.cumsum(sizes, out=sizes)
    return sizes, nthreads


def row_add(a_idx, b_idx, a_values, b_values, ap, bp, limits, negate, nthreads, keys=None):
    """The sum (difference with ``negate``) of two sorted operands through their row pointers ``ap``,
    ``bp`` (built from their leading rows, which they checked). Matrices merge their columns;
    ``keys`` as in :func:`row_multiply` (an output entry then takes the trailing index rows of the
    side it comes from). Columns outside ``limits[1]`` raise IndexError and columns not strictly
    increasing within a row ValueError, before anything is written."""
    sizes, nthreads = row_union_offsets(a_idx, b_idx, ap, bp, limits, nthreads, keys)
    a_values, b_values = np.ascontiguousarray(a_values), np.ascontiguousarray(b_values)
    total = int(sizes[-1])
    out_idx = np.empty((a_idx.shape[0], total), dtype=np.int64)
    out_val = np.empty((total, a_values.shape[1]), dtype=a_values.dtype)
    if keys is None:
        run_parts(_row_add_part, sizes.shape[0] - 1, nthreads, ap, bp, a_idx[1], b_idx[1], sizes, a_values,
                  b_values, negate, out_idx, out_val)
    else:
        run_parts(_row_add_nd_part, sizes.shape[0] - 1, nthreads, ap, bp, keys[0], keys[1], a_idx[1:], b_idx[1:],
                  sizes, a_values, b_values, negate, out_idx, out_val)
    return out_idx, out_val


@nb.njit(cache=True, nogil=True)
def _row_add_nd_part(t, nparts, ap, bp, akey, bkey, atr, btr, sizes, a_values, b_values, negate, out_idx, out_val):
    """_row_add_part for operands of three or more sparse axes: each row merges the keys of the
    trailing axes (``akey``, ``bkey``), and an output entry takes the trailing index rows (``atr``,
    ``btr``) of the side it comes from. A kernel of its own: _row_add_part given the trailing rows
    (a branch on their count in each step) ran the 2-D union about 10% slower."""
    rlo, rhi = row_range(t, nparts, ap, bp)
    u = np.uint64(sizes[t])
    k = a_values.shape[1]
    dt = atr.shape[0]
    av, bv, ov = a_values.reshape(-1), b_values.reshape(-1), out_val.reshape(-1)
    rows = out_idx[0]
    o1, o2, a1, a2, b1, b2 = out_idx[1], out_idx[-1], atr[0], atr[-1], btr[0], btr[-1]
    pick = np.empty(3, dtype=out_val.dtype)  # (see _row_add_part)
    for r in range(rlo, rhi):
        i, ie, j, je = np.uint64(ap[r]), np.uint64(ap[r + 1]), np.uint64(bp[r]), np.uint64(bp[r + 1])
        row = np.int64(r)
        while i < ie and j < je:
            ka = akey[i]
            kb = bkey[j]
            ta = ka <= kb
            tb = kb <= ka
            rows[u] = row
            if dt == 2:  # (three sparse axes: the two trailing rows through 1-D views)
                o1[u] = a1[i] if ta else b1[j]
                o2[u] = a2[i] if ta else b2[j]
            else:
                for x in range(dt):
                    out_idx[x + 1, u] = atr[x, i] if ta else btr[x, j]
            w = np.uint64(ta) + np.uint64(ta & tb)
            if k == 1:
                _pick_sum(pick, av[i], bv[j], negate)
                ov[u] = pick[w]
            else:
                for c in range(k):
                    _pick_sum(pick, a_values[i, c], b_values[j, c], negate)
                    out_val[u, c] = pick[w]
            i += np.uint64(ta)
            j += np.uint64(tb)
            u += _ONE
        for q in range(i, ie):
            rows[u] = row
            for x in range(dt):
                out_idx[x + 1, u] = atr[x, q]
            for c in range(k):
                out_val[u, c] = a_values[q, c]
            u += _ONE
        for q in range(j, je):
            rows[u] = row
            for x in range(dt):
                out_idx[x + 1, u] = btr[x, q]
            for c in range(k):
                out_val[u, c] = -b_values[q, c] if negate else b_values[q, c]
            u += _ONE


# ---- sparse mask ------------------------------------------------------------------------------
@nb.njit(cache=True, nogil=True)
def _row_mask_part(t, nparts, sp, pp, scol, pcol, limit, pvals, out, flags):
    """out[i]: the probe's value at source entry i's column (in its row), 0 where the probe has
    none; flags[t]: (a row's first or last column outside ``limit``, columns decreasing within a
    row, the probe repeating a column within a row). One pass: the output's size is the source's."""
    rlo, rhi = row_range(t, nparts, sp, pp)
    bad = down = dup = np.int64(0)
    k = pvals.shape[1]
    pv, ov = pvals.reshape(-1), out.reshape(-1)  # flat views (see _row_multiply_part; C-contiguous: row_mask_values)
    pick = np.empty(2, dtype=out.dtype)
    pick[0] = 0
    for r in range(rlo, rhi):
        i, ie, j, je = np.uint64(sp[r]), np.uint64(sp[r + 1]), np.uint64(pp[r]), np.uint64(pp[r + 1])
        for q in range(i + _ONE, ie):
            down |= np.int64(scol[q] < scol[q - _ONE])  # the source may repeat a column: each reads it
        for q in range(j + _ONE, je):
            down |= np.int64(pcol[q] < pcol[q - _ONE])
            dup |= np.int64(pcol[q] == pcol[q - _ONE])
        if i < ie:
            bad |= np.int64(np.uint64(scol[i]) >= limit) | np.int64(np.uint64(scol[ie - _ONE]) >= limit)
        if j < je:
            bad |= np.int64(np.uint64(pcol[j]) >= limit) | np.int64(np.uint64(pcol[je - _ONE]) >= limit)
        # every step writes source entry i (a zero, unless it matches); the step that consumes it
        # writes last. A match advances the source only: its repeats read the same probe entry.
        # The value is picked by index from [0, the probe's] (see _row_add_part: a float chosen
        # by a comparison is a branch)
        if k == 1:
            while i < ie and j < je:
                ks = scol[i]
                kp = pcol[j]
                pick[1] = pv[j]
                ov[i] = pick[np.uint64(ks == kp)]
                i += np.uint64(ks <= kp)
                j += np.uint64(kp < ks)
        else:
            while i < ie and j < je:
                ks = scol[i]
                kp = pcol[j]
                w = np.uint64(ks == kp)
                for c in range(k):
                    pick[1] = pvals[j, c]
                    out[i, c] = pick[w]
                i += np.uint64(ks <= kp)
                j += np.uint64(kp < ks)
        for q in range(i, ie):
            for c in range(k):
                out[q, c] = 0
    flags[t, 0] = bad
    flags[t, 1] = down
    flags[t, 2] = dup


def row_mask_values(src_idx, probe_idx, probe_values, sp, pp, limits, nthreads, keys=None):
    """The probe's values at the source's entries (zeros where it has none), through the row pointers
    ``sp``, ``pp`` of two sorted operands: values[n, k], or None when the probe repeats a column
    within a row (its repeats are summed by the merge over keys then).

    Matrices merge their columns; ``keys`` as in :func:`row_multiply`. Columns outside
    ``limits[1]`` raise IndexError and columns out of order within a row ValueError; the output
    (fresh) is returned only when neither was found.
    """
    n = src_idx.shape[1]
    nparts, nthreads = plan(n + probe_idx.shape[1], nthreads)
    out = np.empty((n, probe_values.shape[1]), dtype=probe_values.dtype)
    flags = np.zeros((nparts, 3), dtype=np.int64)
    scol, pcol = (src_idx[1], probe_idx[1]) if keys is None else keys
    run_parts(_row_mask_part, nparts, nthreads, sp, pp, scol, pcol, np.uint64(limits[1]),
              np.ascontiguousarray(probe_values), out, flags)
    # columns out of order make a row's first and last column no bound: then every column is looked at
    flags[:, 0] |= flags[:, 1]
    raise_merge_flags(flags[:, :2], limits, src_idx, probe_idx)
    return None if flags[:, 2].any() else out
