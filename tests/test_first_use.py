"""First use in a fresh environment: the compile notice, ``python -m coosparse warmup``, and
the warm-up on a read-only install (the cache falls back to a temporary directory).

Each case runs fresh interpreters with their own empty Numba cache. Nothing here
measures time: the notice's threshold is set to a millisecond, which any compilation
exceeds, and the warm-up is checked by what a later process does not compile.
"""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from coosparse._kernels.numba import notice

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTICE = "coosparse: compiling Numba kernels"

# a process that calls to_dense and a reduction, then reports what Numba compiled
PROBE = """
    import numpy as np, coosparse
    from numba.core import event
    compiled = []
    class L(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", L())
    a = coosparse.COO(np.array([[0, 1, 1], [2, 0, 2]]), np.array([1.0, 2.0, 3.0]), (3, 3), sorted=True,
                      unique=True, check=False)
    assert a.to_dense().sum() == 6.0
    assert a.to_dense().tolist() == [[0.0, 0.0, 1.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0]]
    print("compiled", len(compiled), sorted(set(compiled)))
"""


def _run(args, env, cwd=REPO, timeout=600):
    full = dict(os.environ)
    full.pop("COOSPARSE_COMPILE_NOTICE", None)
    full.update(env)
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=full, cwd=cwd,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def _python(code, env, **kw):
    return _run(["-c", textwrap.dedent(code)], env, **kw)


def test_threshold_setting():
    for raw, want in [("", 1.0), ("1", 1.0), ("on", 1.0), ("0", None), ("off", None), ("2.5", 2.5),
                      ("-1", None), ("nonsense", 1.0)]:
        os.environ["COOSPARSE_COMPILE_NOTICE"] = raw
        try:
            assert notice.threshold() == want, raw
        finally:
            del os.environ["COOSPARSE_COMPILE_NOTICE"]


def test_message_names_the_kernels_and_the_cache():
    text = notice.message(["scatter._scatter_set_part", "scatter._scatter_set_part", "sort._pack_part"], "/c/d")
    assert "scatter._scatter_set_part, sort._pack_part" in text  # each once, in order
    assert "cached in /c/d" in text and "python -m coosparse warmup" in text and "COOSPARSE_COMPILE_NOTICE=0" in text


def test_notice_once_when_compiling_and_never_when_cached_or_silenced(tmp_path):
    code = """
        import numpy as np, coosparse
        a = coosparse.random((200, 200), nnz=3000, duplicates=True, seed=0)
        a.to_dense(); a.coalesce(); a.coalesce().sum(axis=1)
        print("ok")
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "COOSPARSE_COMPILE_NOTICE": "0.001"}
    rc, out, err = _python(code, env)
    assert rc == 0 and out.strip() == "ok", err
    assert err.count(NOTICE) == 1, err  # once, though three calls compiled
    assert "_part" in err.split(NOTICE)[1].split(")")[0]  # names the kernels it waits for
    rc, out, err = _python(code, env)  # the same cache: nothing compiles, nothing said
    assert rc == 0 and NOTICE not in err, err
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "other"), "COOSPARSE_COMPILE_NOTICE": "0"}
    rc, out, err = _python(code, env)
    assert rc == 0 and NOTICE not in err, err


def test_warmup_cli_lists_and_refuses_unknown_operations():
    rc, out, err = _run(["-m", "coosparse", "warmup", "--list"], {})
    assert rc == 0 and "coalesce" in out and "float64" in out
    rc, out, err = _run(["-m", "coosparse", "warmup", "--ops", "coalesce,frobnicate"], {})
    assert rc == 2 and "frobnicate" in err
    rc, out, err = _run(["-m", "coosparse"], {})
    assert rc == 2


def _read_only_copy(tmp_path):
    """The package copied as an installed tree whose kernel directory cannot hold Numba's cache."""
    site = tmp_path / "site"
    pkg = site / "coosparse"
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    shutil.copytree(os.path.join(REPO, "coosparse"), pkg, ignore=ignore)
    shutil.copytree(os.path.join(REPO, "interop"), pkg / "interop", ignore=ignore)
    shutil.copytree(os.path.join(REPO, "cuda_kernels"), pkg / "cuda_kernels", ignore=ignore)
    # a file where Numba's in-tree cache directory would go: no cache can be written there
    (pkg / "_kernels" / "numba" / "__pycache__").write_text("read-only install")
    blocked = tmp_path / "home-is-a-file"
    blocked.write_text("")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {"PYTHONPATH": str(site), "XDG_CACHE_HOME": str(blocked / "cache"), "HOME": str(blocked),
           "TMPDIR": str(tmpdir), "NUMBA_CACHE_DIR": ""}
    return site, tmpdir, env


def test_warmup_fills_the_fallback_cache_of_a_read_only_install(tmp_path):
    site, tmpdir, env = _read_only_copy(tmp_path)
    rc, out, err = _run(["-m", "coosparse", "warmup", "--dtypes", "float64,int64", "--ops", "to_dense,sum(axis=1)",
                         "--jobs", "2", "--no-progress"], env, cwd=str(tmp_path))
    assert rc == 0, err
    assert "coosparse warmup: 2 dtype(s)" in err
    fallback = tmpdir / f"coosparse-numba-cache-{os.getuid()}"
    cached = [f for _, _, fs in os.walk(fallback) for f in fs if f.endswith(".nbi")]
    assert cached, f"nothing cached in {fallback}: {err}"
    # a later process of that install finds the kernels: the probe compiles nothing of coosparse's
    rc, out, err = _python(PROBE, env, cwd=str(tmp_path))
    assert rc == 0, err
    assert out.startswith("compiled "), out
    names = out.split(" ", 2)[2]
    assert "_part" not in names, out


def test_warmup_covers_the_row_merges_of_three_sparse_axes(tmp_path):
    # a product, a sum and a mask of 3-D operands large enough to merge row by row over the trailing
    # axes' keys: after the warm-up of those steps, a later process compiles none of their kernels
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "COOSPARSE_COMPILE_NOTICE": "0"}
    rc, out, err = _run(["-m", "coosparse", "warmup", "--dtypes", "float64", "--ops",
                         "a*b (3-D),a+b (3-D),sparse_mask (3-D)", "--no-progress"], env)
    assert rc == 0, err
    probe = PROBE.split("    a = coosparse.COO")[0] + """
    a = coosparse.random((300, 90, 170), nnz=45_000, seed=7).coalesce()
    b = coosparse.random((300, 90, 170), nnz=35_000, seed=8).coalesce()
    da, db = a.to_dense(), b.to_dense()
    compiled.clear()  # (the operands' own kernels were not warmed: only the three operations are)
    got = (a * b, a + b, coosparse.sparse_mask(a, b))
    names = sorted(set(compiled))
    for g, want in zip(got, (da * db, da + db, da * (db != 0))):
        assert np.array_equal(g.to_dense(), want)
    print("rows", all(x._cached_companion(("trailing keys",)) is not None for x in (a, b)))
    print("compiled", len(names), names)
"""
    rc, out, err = _python(probe, env)
    assert rc == 0, err
    # the probe took the row merges with keys (else the warm-up was not tested), and compiled none
    # of coosparse's kernels
    assert "rows True" in out, out
    names = out.split("compiled ", 1)[1]
    assert "_part" not in names, out


def test_cached_kernels_load_without_numba_registries_and_compiling_still_works(tmp_path):
    # a warm process loads coosparse's kernels without importing Numba's typing and lowering
    # registries (they are only read by the compiler); a kernel that is not cached, and a user's own
    # njit function, still compile afterwards in the same process
    first = """
        import numpy as np, coosparse
        a = coosparse.COO(np.array([[3, 1, 3, 0]]), np.array([1.0, 2.0, 4.0, 0.5]), (5,))
        print(a.coalesce().values.tolist())
    """
    later = """
        import sys
        import numpy as np, coosparse
        a = coosparse.COO(np.array([[3, 1, 3, 0]]), np.array([1.0, 2.0, 4.0, 0.5]), (5,))
        c = a.coalesce()
        assert c.indices.tolist() == [[0, 1, 3]] and c.values.tolist() == [0.5, 2.0, 5.0], c
        print("registries", "numba.np.arraymath" in sys.modules)
        f = coosparse.COO(a.indices, a.values.astype(np.float32), (5,)).coalesce()  # not cached: compiles
        assert f.values.tolist() == [0.5, 2.0, 5.0], f
        import numba
        @numba.njit
        def user(x):
            return np.sort(x)[::-1].sum() + np.linalg.norm(x)
        print("user", round(user(np.arange(4.0)), 6))
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "COOSPARSE_COMPILE_NOTICE": "0"}
    rc, out, err = _python(first, env)
    assert rc == 0 and out.strip() == "[0.5, 2.0, 5.0]", err
    rc, out, err = _python(later, env)
    assert rc == 0, err
    assert "registries False" in out, out
    assert f"user {round(6.0 + 14 ** 0.5, 6)}" in out, out


def test_a_light_load_that_fails_takes_numbas_own_path():
    from coosparse._kernels.numba import cache

    class MovedInternals:  # a Numba whose private loading helper changed
        def _load_overload(self, sig, target_context):
            raise AttributeError("moved")

        def load_overload(self, sig, target_context):
            return ("numba's own load", sig)

    assert cache._load_light(MovedInternals(), "sig", object()) == ("numba's own load", "sig")


def test_first_compile_does_not_import_scipy_linalg_and_blas_code_still_compiles(tmp_path):
    # Numba's compiler imports numba.np.arraymath, which imported scipy.linalg only to ask whether
    # BLAS is there; coosparse's first compilation imports arraymath with that answered by whether
    # SciPy is installed. A user's own BLAS-backed njit code still compiles and runs (Numba then
    # imports scipy.linalg for real), and gives NumPy's results.
    code = """
        import sys
        import numpy as np, coosparse
        a = coosparse.COO(np.array([[3, 1, 3, 0]]), np.array([1.0, 2.0, 4.0, 0.5]), (5,))
        c = a.coalesce()
        assert c.indices.tolist() == [[0, 1, 3]] and c.values.tolist() == [0.5, 2.0, 5.0], c
        print("arraymath", "numba.np.arraymath" in sys.modules, "scipy.linalg", "scipy.linalg" in sys.modules)
        import numba
        from numba.np import arraymath, linalg
        assert arraymath.ensure_blas is linalg.ensure_blas  # Numba's own check is back in place
        @numba.njit
        def user(x, y):
            return np.dot(x, y), np.vdot(x[0], y[:, 0]), np.linalg.solve(x, y)
        x = np.array([[2.0, 1.0], [1.0, 3.0]])
        y = np.array([[1.0, 0.5], [2.0, -1.0]])
        got = user(x, y)
        assert np.allclose(got[0], x @ y) and np.isclose(got[1], np.vdot(x[0], y[:, 0]))
        assert np.allclose(got[2], np.linalg.solve(x, y))
        print("user ok", "scipy.linalg" in sys.modules)
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "COOSPARSE_COMPILE_NOTICE": "0"}
    rc, out, err = _python(code, env)
    assert rc == 0, err
    assert "arraymath True scipy.linalg False" in out, out
    assert "user ok True" in out, out


def test_arraymath_import_is_left_alone_once_imported():
    from numba.np import arraymath, linalg

    from coosparse._kernels.numba import cache

    before = arraymath.ensure_blas
    cache.import_arraymath_lightly()  # already imported in this process: nothing to do
    assert arraymath.ensure_blas is before is linalg.ensure_blas


def test_kernels_do_not_load_third_party_numba_extensions_but_user_code_still_does(tmp_path):
    # Numba runs every installed package's numba_extensions entry point before a process's first
    # compile or cache load (pydata/sparse registers one, so our first call imported it); coosparse's
    # kernels loading from the cache skip that (a compilation still runs them: the compiler's own
    # refresh does), and the user's first own jitted call still runs them
    code = """
        import sys
        import numpy as np, coosparse
        from numba.core import entrypoints
        a = coosparse.COO(np.array([[3, 1, 3, 0]]), np.array([1.0, 2.0, 4.0, 0.5]), (5,))
        c = a.coalesce()
        assert c.indices.tolist() == [[0, 1, 3]] and c.values.tolist() == [0.5, 2.0, 5.0], c
        print("extensions after ours", entrypoints._already_initialized, "sparse" in sys.modules)
        import numba
        @numba.njit
        def user(x):
            return x.sum()
        assert user(np.arange(4.0)) == 6.0
        print("extensions after the user's", entrypoints._already_initialized)
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "COOSPARSE_COMPILE_NOTICE": "0"}
    rc, out, err = _python(code, env)  # cold: compiles, so the compiler loads the extensions
    assert rc == 0, err
    assert "extensions after ours True" in out and "extensions after the user's True" in out, out
    rc, out, err = _python(code, env)  # warm: our kernels load from the cache
    assert rc == 0, err
    assert "extensions after ours False False" in out, out
    assert "extensions after the user's True" in out, out
