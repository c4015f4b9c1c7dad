"""Ports of pydata/sparse's linear-algebra tests (sparse/numba_backend/tests/test_dot.py,
test_einsum.py and the outer/vecdot tests of test_coo.py), with their shapes, axes and
subscripts; their ``sparse.random(shape, density)`` becomes ``coosparse.random``, their
GCXS format has no counterpart (COO only) and their ``assert_eq`` a dense comparison.

Where we differ on purpose (documented in docs/linalg.md): a dense operand in einsum gives a
dense result (pydata: COO), matmul with NaN does not warn (pydata warns through scipy), einsum's casting= is NumPy's (pydata
ignores it).
"""
import contextlib
import operator

import numpy as np
import pytest

import coosparse
from coosparse import COO
from reference import dense_of


def srandom(shape, density=0.5, seed=0, dtype=np.float64, fill_value=None):
    rng = np.random.default_rng(seed)
    total = int(np.prod(shape, dtype=object))
    a = coosparse.random(shape, nnz=int(round(density * total)), seed=rng, dtype=dtype, sorted=True)
    if fill_value is not None:
        a = COO(a.indices, a.values, a.shape, sorted=True, unique=True, fill_value=fill_value)
    return a


def assert_eq(got, want):
    if isinstance(got, COO):
        got = dense_of(got)
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


TENSORDOT_CASES = [
    [(3, 4), (4, 3), (1, 0)],
    [(3, 4), (4, 3), (0, 1)],
    [(3, 4, 5), (4, 3), (1, 0)],
    [(3, 4), (5, 4, 3), (1, 1)],
    [(3, 4), (5, 4, 3), ((0, 1), (2, 1))],
    [(3, 4), (5, 4, 3), ((1, 0), (1, 2))],
    [(3, 4, 5), (4,), (1, 0)],
    [(4,), (3, 4, 5), (0, 1)],
    [(4,), (4,), (0, 0)],
    [(4,), (4,), 0],
]


@pytest.mark.parametrize("a_shape,b_shape,axes", TENSORDOT_CASES)
def test_tensordot(a_shape, b_shape, axes):
    sa, sb = srandom(a_shape, seed=1), srandom(b_shape, seed=2)
    a, b = dense_of(sa), dense_of(sb)
    want = np.tensordot(a, b, axes)
    sa_sb = coosparse.tensordot(sa, sb, axes)
    assert_eq(sa_sb, want)
    assert isinstance(sa_sb, COO)
    sa_b = coosparse.tensordot(sa, b, axes)
    a_sb = coosparse.tensordot(a, sb, axes)
    assert_eq(sa_b, want)
    assert_eq(a_sb, want)
    assert isinstance(sa_b, np.ndarray) and isinstance(a_sb, np.ndarray)


def test_tensordot_empty():
    x1 = np.empty((0, 0, 0))
    s1 = coosparse.from_dense(x1)
    assert_eq(coosparse.tensordot(s1, s1), np.tensordot(x1, x1))


def test_tensordot_valueerror():
    x1 = coosparse.from_dense(np.array(1.0))
    with pytest.raises(ValueError):
        x1 @ x1


MATMUL_CASES = [
    ((3, 1, 6, 5), (2, 1, 4, 5, 6)),
    ((2, 1, 4, 5, 6), (3, 1, 6, 5)),
    ((1, 1, 5), (3, 5, 6)),
    ((3, 4, 5), (1, 5, 6)),
    ((3, 4, 5), (3, 5, 6)),
    ((3, 4, 5), (5, 6)),
    ((4, 5), (5, 6)),
    ((5,), (5, 6)),
    ((4, 5), (5,)),
    ((5,), (5,)),
    ((3, 4), (1, 2, 4, 3)),
]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_CASES)
def test_matmul(a_shape, b_shape):
    sa, sb = srandom(a_shape, seed=3), srandom(b_shape, seed=4)
    a, b = dense_of(sa), dense_of(sb)
    want = np.matmul(a, b)
    assert_eq(coosparse.matmul(sa, sb), want)
    assert_eq(coosparse.matmul(sa, b), coosparse.matmul(a, sb))
    assert_eq(coosparse.matmul(sa, b), want)
    if a.ndim == 2 or b.ndim == 2:  # scipy.sparse operands, as pydata's test passes them
        import scipy.sparse

        conv = (lambda x, s: scipy.sparse.coo_array(x) if x.ndim == 2 else s)
        assert_eq(coosparse.matmul(conv(a, sa), conv(b, sb)), want)
    assert_eq(operator.matmul(sa, sb), operator.matmul(a, b))


def test_matmul_errors():
    sa, sb = srandom((3, 4, 5, 6)), srandom((3, 6, 5, 6))
    with pytest.raises(ValueError):
        coosparse.matmul(sa, sb)


DOT_CASES = [((1, 4, 5), (3, 5, 6)), ((3, 4, 5), (1, 5, 6)), ((3, 4, 5), (3, 5, 6)), ((3, 4, 5), (5, 6)),
             ((4, 5), (5, 6)), ((5,), (5, 6)), ((4, 5), (5,)), ((5,), (5,))]


@pytest.mark.parametrize("a_shape,b_shape", DOT_CASES)
def test_dot(a_shape, b_shape):
    sa, sb = srandom(a_shape, seed=5), srandom(b_shape, seed=6)
    a, b = dense_of(sa), dense_of(sb)
    e = np.dot(a, b)
    assert_eq(sa.dot(sb), e)
    assert_eq(coosparse.dot(sa, sb), e)
    assert_eq(coosparse.dot(a, sb), e)
    e = operator.matmul(a, b)
    assert_eq(operator.matmul(sa, sb), e)
    assert_eq(operator.matmul(a, sb), e)
    assert_eq(operator.matmul(sa, b), e)


@pytest.mark.parametrize("a_dense,b_dense,o_type", [(False, False, COO), (False, True, np.ndarray),
                                                    (True, False, np.ndarray)])
def test_dot_type(a_dense, b_dense, o_type):
    a, b = srandom((3, 4), 0.8), srandom((4, 5), 0.8, seed=1)
    a = dense_of(a) if a_dense else a
    b = dense_of(b) if b_dense else b
    assert isinstance(coosparse.dot(a, b), o_type)


DOT_FORMATS = [lambda x: x, lambda x: dense_of(x)]


@pytest.mark.parametrize("format1", DOT_FORMATS)
@pytest.mark.parametrize("format2", DOT_FORMATS)
def test_small_values(format1, format2):
    s1 = format1(COO([[0, 10]], np.array([3.6e-100, 7.2e-009]), (20,)))
    s2 = format2(COO([[0, 0], [4, 28]], np.array([3.8e-25, 4.5e-225]), (20, 50)))
    if not isinstance(s1, COO) and not isinstance(s2, COO):
        return
    x1 = dense_of(s1) if isinstance(s1, COO) else s1
    x2 = dense_of(s2) if isinstance(s2, COO) else s2
    assert_eq(s1 @ s2, x1 @ x2)


@pytest.mark.parametrize("dtype1", [np.complex64, np.complex128])
@pytest.mark.parametrize("dtype2", [np.complex64, np.complex128])
@pytest.mark.parametrize("format1", DOT_FORMATS)
@pytest.mark.parametrize("format2", DOT_FORMATS)
@pytest.mark.parametrize("ndim1", (1, 2))
@pytest.mark.parametrize("ndim2", (1, 2))
def test_complex(dtype1, dtype2, format1, format2, ndim1, ndim2):
    s1 = format1(srandom((20,) * ndim1, seed=7, dtype=dtype1))
    s2 = format2(srandom((20,) * ndim2, seed=8, dtype=dtype2))
    if not isinstance(s1, COO) and not isinstance(s2, COO):
        return
    x1 = dense_of(s1) if isinstance(s1, COO) else s1
    x2 = dense_of(s2) if isinstance(s2, COO) else s2
    got = s1 @ s2
    want = x1 @ x2
    np.testing.assert_allclose(dense_of(got) if isinstance(got, COO) else got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype1", [np.complex64, np.complex128])
@pytest.mark.parametrize("dtype2", [np.complex64, np.complex128])
@pytest.mark.parametrize("ndim1", (1, 2))
@pytest.mark.parametrize("ndim2", (1, 2))
def test_dot_dense(dtype1, dtype2, ndim1, ndim2):
    a = dense_of(srandom((20,) * ndim1, seed=9, dtype=dtype1))
    b = dense_of(srandom((20,) * ndim2, seed=10, dtype=dtype2))
    assert_eq(coosparse.dot(a, b), np.dot(a, b))
    assert_eq(coosparse.matmul(a, b), np.matmul(a, b))
    if ndim1 == 2 and ndim2 == 2:
        assert_eq(coosparse.tensordot(a, b), np.tensordot(a, b))


def test_nonzero_fill_value_refused():
    xs = srandom((2, 3), fill_value=1.0)
    ys = srandom((3, 4))
    with pytest.raises(ValueError):
        coosparse.dot(xs, ys)


@pytest.mark.parametrize("shape1", [(2,), (2, 3), (2, 3, 4)])
@pytest.mark.parametrize("shape2", [(2,), (2, 3), (2, 3, 4)])
def test_outer(shape1, shape2):
    s1, s2 = srandom(shape1, seed=11), srandom(shape2, seed=12)
    assert_eq(coosparse.outer(s1, s2), np.outer(dense_of(s1), dense_of(s2)))


# ----------------------------------------------------------------------------- test_einsum.py
EINSUM_CASES = [
    "a,->a", "ab,->ab", ",ab,->ab", ",,->", "a,ab,abc->abc", "a,b,ab->ab", "ea,fb,gc,hd,abcd->efgh",
    "ea,fb,abcd,gc,hd->efgh", "abcd,ea,fb,gc,hd->efgh", "acdf,jbje,gihb,hfac,gfac,gifabc,hfac",
    "cd,bdhe,aidb,hgca,gc,hgibcd,hgac", "abhe,hidj,jgba,hiab,gab", "bde,cdh,agdb,hica,ibd,hgicd,hiac",
    "chd,bde,agbc,hiad,hgc,hgi,hiad", "chd,bde,agbc,hiad,bdi,cgh,agdb", "bdhe,acad,hiab,agac,hibd",
    "ab,ab,c->", "ab,ab,c->c", "ab,ab,cd,cd->", "ab,ab,cd,cd->ac", "ab,ab,cd,cd->cd", "ab,ab,cd,cd,ef,ef->",
    "ab,cd,ef->abcdef", "ab,cd,ef->acdf", "ab,cd,de->abcde", "ab,cd,de->be", "ab,bcd,cd->abcd",
    "ab,bcd,cd->abd", "eb,cb,fb->cef", "dd,fb,be,cdb->cef", "bca,cdb,dbf,afc->", "dcc,fce,ea,dbf->ab",
    "fdf,cdd,ccd,afe->ae", "abcd,ad", "ed,fcd,ff,bcf->be", "baa,dcf,af,cde->be", "bd,db,eac->ace",
    "fff,fae,bef,def->abd", "efc,dbc,acf,fd->abe", "ab,ab", "ab,ba", "abc,abc", "abc,bac", "abc,cba",
    "ab,bc", "ab,cb", "ba,bc", "ba,cb", "abcd,cd", "abcd,ab", "abcd,cdef", "abcd,cdef->feba", "abcd,efdc",
    "aab,bc->ac", "ab,bcc->ac", "aab,bcc->ac", "baa,bcc->ac", "aab,ccb->ac", "aab,fa,df,ecc->bde",
    "ecb,fef,bad,ed->ac", "bcf,bbb,fbf,fc->", "bb,ff,be->e", "bcb,bb,fc,fff->", "fbb,dfd,fc,fc->",
    "afd,ba,cc,dc->bf", "adb,bc,fa,cfc->d", "bbd,bda,fc,db->acf", "dba,ead,cad->bce", "aef,fbc,dca->bde",
    "abab->ba", "...ab,...ab", "...ab,...b->...a", "a...,a...", "a...,a...",
]


@pytest.mark.parametrize("subscripts", EINSUM_CASES)
@pytest.mark.parametrize("density", [0.1, 1.0])
def test_einsum(subscripts, density):
    d = 4
    terms = subscripts.split("->")[0].split(",")
    arrays = [srandom((d,) * len(t), density, seed=i) for i, t in enumerate(terms)]
    out = coosparse.einsum(subscripts, *arrays)
    want = np.einsum(subscripts, *(dense_of(s) for s in arrays))
    assert isinstance(out, COO)
    assert np.allclose(dense_of(out), want)


@pytest.mark.parametrize("sub", [[[0, 0]], [[0, Ellipsis]], [[Ellipsis, 1], [Ellipsis]], [[0, 1], [0]]])
@pytest.mark.parametrize("density", [0.1, 1.0])
def test_einsum_nosubscript(sub, density):
    x = srandom((4, 4), density)
    assert np.allclose(dense_of(coosparse.einsum(x, *sub)), np.einsum(dense_of(x), *sub))


def test_einsum_input_fill_value():
    x = srandom((2,), fill_value=2.0)
    with pytest.raises(ValueError):
        coosparse.einsum("cba", x)


def test_einsum_no_input():
    with pytest.raises(ValueError):
        coosparse.einsum()


@pytest.mark.parametrize("subscript", ["a+b->c", "i->&", "i->ij", "ij->jij", "a..,a...", ".i...", "a,a->->"])
def test_einsum_invalid_input(subscript):
    x, y = srandom((2,)), srandom((2,), seed=1)
    with pytest.raises(ValueError):
        coosparse.einsum(subscript, x, y)


@pytest.mark.parametrize("subscript", [0, [0, 0]])
def test_einsum_type_error(subscript):
    x, y = srandom((2,)), srandom((2,), seed=1)
    with pytest.raises(TypeError):
        coosparse.einsum(subscript, x, y)


FORMAT_CASES = [(("coo",), "coo"), (("dense",), "dense"), (("coo", "coo"), "coo"), (("coo", "dense"), "dense"),
                (("dense", "coo"), "dense"), (("dense", "dense"), "dense"), (("dense", "coo", "coo"), "dense")]


@pytest.mark.parametrize("formats,expected", FORMAT_CASES)
def test_einsum_format(formats, expected):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 2, 2)) if f == "dense" else srandom((2, 2, 2), seed=i)
              for i, f in enumerate(formats)]
    eq = {1: "abc->bc", 2: "abc,cda->abd", 3: "abc,cad,dea->abe"}[len(inputs)]
    out = coosparse.einsum(eq, *inputs)
    assert ("coo" if isinstance(out, COO) else "dense") == expected
    want = np.einsum(eq, *(dense_of(x) if isinstance(x, COO) else x for x in inputs))
    assert np.allclose(dense_of(out) if isinstance(out, COO) else out, want)


def test_einsum_shape_check():
    x = srandom((2, 3, 4))
    with pytest.raises(ValueError):
        coosparse.einsum("aab", x)
    y = srandom((2, 3, 4), seed=1)
    with pytest.raises(ValueError):
        coosparse.einsum("abc,acb", x, y)


@pytest.mark.parametrize("dtype", [np.int64, np.complex128])
def test_einsum_dtype(dtype):
    x = srandom((3, 3))
    x = COO(x.indices, x.values * 10.0, (3, 3))
    # pydata ignores casting=; NumPy (and coosparse) refuse float -> int64 under the default 'safe'
    with pytest.raises(TypeError, match="cast") if dtype == np.int64 else contextlib.nullcontext():
        coosparse.einsum("ij,i->j", x, coosparse.from_dense(np.ones(3)), dtype=dtype)
    result = coosparse.einsum("ij,i->j", x, coosparse.from_dense(np.ones(3)), dtype=dtype, casting="unsafe")
    assert result.dtype == dtype
