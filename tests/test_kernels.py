"""Kernel policy and kernel results against their pure-Python versions, serial and parallel."""

import os
import subprocess
import sys
import threading

import numba
import numpy as np
import pytest

from numba_ta.core import cache as _cache
from numba_ta.core import kernels as _kernels
from numba_ta.core import numba_compat as _numba_compat
from numba_ta.core import state
from numba_ta.jit import entries
from numba_ta.tensor_array import engine
from numba_ta.tensor_array import storage as _storage
from numba_ta.tensor_array.engine import _repeat_keys
from numba_ta.tensor_list import listengine

DISPATCHERS = {  # the kernels and the engine's entries for the Python layer
    name: obj
    for module in (_kernels, state, engine, listengine, entries)
    for name, obj in vars(module).items()
    if isinstance(obj, numba.core.registry.CPUDispatcher)
}


@pytest.mark.jit_only("inspects the numba dispatchers")
def test_kernels_found():
    assert len(DISPATCHERS) >= 9


@pytest.mark.jit_only("inspects the dispatchers' options and cache")
@pytest.mark.parametrize("name", sorted(DISPATCHERS))
def test_decorator_policy(name):
    k = DISPATCHERS[name]
    assert k.targetoptions.get("nogil") is True
    assert k.targetoptions.get("parallel", False) is name.endswith("_par")
    assert k._cache.__class__.__name__ != "NullCache", f"{name} is not cached"
    assert not k.targetoptions.get("fastmath", False)


def _data(rng, dtype, n):
    return (rng.random(n) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128", "uint8"])
@pytest.mark.parametrize("suffix", ["", "_par"])
def test_gather_segments(rng, dtype, suffix):
    """Elements of several sizes, and zeros (negative offsets), against the plain function."""
    data = _data(rng, dtype, 40)
    src = np.array([30, -1, 0, 7, 30], dtype=np.int64)
    sizes = np.array([5, 3, 0, 4, 5], dtype=np.int64)
    outo = _storage._exclusive_cumsum(sizes)
    out = np.full(int(sizes.sum()), 3, dtype=dtype)
    py_gather = getattr(_kernels.gather_segments, "py_func", _kernels.gather_segments)  # without the JIT
    expect = py_gather(data, src, sizes, outo, out.copy())
    getattr(_kernels, "gather_segments" + suffix)(data, src, sizes, outo, out)
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(out[:5], data[30:35])
    np.testing.assert_array_equal(out[5:8], 0)
    np.testing.assert_array_equal(out[8:12], data[7:11])


@pytest.mark.parametrize("suffix", ["", "_par"])
def test_segments_roundtrip(rng, suffix):
    sizes = np.array([2, 0, 3, 1], dtype=np.int64)
    src = rng.random(int(sizes.sum()))
    srco = _storage._exclusive_cumsum(sizes)
    data = np.zeros(20)
    dst = np.array([10, 0, 4, 17], dtype=np.int64)
    getattr(_kernels, "write_segments" + suffix)(data, dst, src, srco, sizes)
    out = np.empty(src.size)
    getattr(_kernels, "gather_segments" + suffix)(data, dst, sizes, srco, out)
    np.testing.assert_array_equal(out, src)
    zero = np.array([-1, 0, 4, 17], dtype=np.int64)
    getattr(_kernels, "gather_segments" + suffix)(data, zero, sizes, srco, out)
    np.testing.assert_array_equal(out[:2], 0)


@pytest.mark.parametrize("span", [8, 10**3, 2**31 - 1], ids=["narrow", "medium", "int32-wide"])
def test_repeats_match_np_unique(rng, span):
    """Repeated indices get equal keys in the table, over a small table or, for wide spans, by rank."""
    for m in (0, 1, 2, 7, 500):
        idx = rng.integers(-span // 2, span // 2 + 1, m)
        if m > 2:
            idx[m // 2] = idx[0]  # at least one repeat
        want = np.ones(m, dtype=bool)
        if m:
            want[np.unique(idx, return_index=True)[1]] = False
        else:
            want = want[:0]
        mask = np.zeros(m, dtype=bool)
        if m:
            keys, seen = _repeat_keys(idx.astype(np.int64))
            assert keys.min() >= 0 and keys.max() < seen.size and not seen.any()
            for k in range(m):  # how the engine's checks mark repeats with the keys
                mask[k] = seen[keys[k]] != 0
                seen[keys[k]] = 1
        np.testing.assert_array_equal(mask, want)


def test_wide_indices_repeats_are_errors_at_the_right_position():
    """Wide index spans take the rank path; the first repeat still gives TF's error for its index."""
    from numba_ta import errors, raw_ops

    h, f = raw_ops.TensorArrayV3(size=0, dtype=np.float32, element_shape=[1], dynamic_size=True)
    with pytest.raises(errors.InvalidArgumentError, match=r"index 5 because it has already been written to"):
        raw_ops.TensorArrayScatterV3(handle=h, indices=[5, 2**30, 7, 5], value=np.ones((4, 1), np.float32), flow_in=f)
    assert raw_ops.TensorArraySizeV3(handle=h, flow_in=f) == 0
    n = 100_000
    h, f = raw_ops.TensorArrayV3(size=n, dtype=np.float32, element_shape=[1])
    raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(n), value=np.ones((n, 1), np.float32), flow_in=f)
    with pytest.raises(errors.InvalidArgumentError, match=r"read index 3 twice because it was cleared"):
        raw_ops.TensorArrayGatherV3(handle=h, indices=[3, n - 1, 3], flow_in=f, dtype=np.float32)
    got = raw_ops.TensorArrayGatherV3(handle=h, indices=[3, n - 1], flow_in=f, dtype=np.float32)
    np.testing.assert_array_equal(got, np.ones((2, 1), np.float32))


# --------------------------------------------------------------------------- the decorator helper


def _fresh_function(name, namespace=None):
    """A new plain function whose source file is ``<string>``: Numba has no cache locator for it."""
    ns = {} if namespace is None else namespace
    exec(f"def {name}(x):\n    return x + 1\n", ns)
    return ns[name]


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: no dispatchers")
def test_every_kernel_is_decorated_by_the_helper():
    """Every dispatcher of the modules went through ``kernel`` (the one place of the decorator policy)."""
    assert set(DISPATCHERS) == set(_kernels._KERNELS)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is cached")
def test_kernel_without_cache_locator_compiles_uncached_and_warns_once(monkeypatch, tmp_path):
    """Where Numba cannot cache (it raises at decoration), the helper compiles without the cache, warning once.

    (Without shipped code: a checkout may hold a ``numba_ta/_compiled`` folder, as CI's does.)
    """
    monkeypatch.setattr(_cache, "SHIPPED_DIR", tmp_path / "no-shipped-folder")
    monkeypatch.setattr(_kernels, "_warned_no_cache", False)
    monkeypatch.setattr(_kernels, "_KERNELS", [])
    with pytest.raises(RuntimeError, match="no locator available"):
        numba.njit(cache=True)(_fresh_function("plain"))  # what the helper guards against
    with pytest.warns(_kernels.KernelCacheWarning, match="NUMBA_CACHE_DIR") as record:
        serial = _kernels.kernel()(_fresh_function("serial"))
        par = _kernels.kernel(parallel=True)(_fresh_function("par"))
    assert len(record) == 1
    assert issubclass(_kernels.KernelCacheWarning, RuntimeWarning)
    assert serial(1) == 2 and par(2) == 3
    for k, parallel in ((serial, False), (par, True)):
        assert isinstance(k._cache, _cache.KernelCache) and not k._cache.writable
        assert not k._cache.has_shipped()
        assert k.targetoptions.get("nogil") is True
        assert k.targetoptions.get("parallel", False) is parallel
    assert _kernels._KERNELS == ["serial", "par"]


_SHIPPED_PROBE = """
import sys
from pathlib import Path
from numba_ta.core import cache as _cache
_cache.SHIPPED_DIR = Path(sys.argv[1])  # as installed: the package's own folder
if sys.argv[2] != "same":
    _cache._stamp = "other sources or options"
import shipped_mod  # from the folder on PYTHONPATH
assert shipped_mod.shipped(1) == 2
stats = shipped_mod.shipped.stats
hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
import numba


@numba.njit
def caller(x):  # compiling it links the library of shipped (loaded: its bitcode is parsed only now)
    return shipped_mod.shipped(x) * 3


assert caller(2) == 9
print("hits", hits, "misses", misses)
"""


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is cached")
def test_code_compiled_into_the_shipped_folder_is_loaded_not_compiled(tmp_path):
    """What ``python -m numba_ta.core.precompile`` compiles is loaded from the package's folder, if the sources match.

    Each step is a fresh process with its own empty ``NUMBA_CACHE_DIR``: the build (saving into
    the folder only), a process that loads it, and one whose sources differ (compiling).
    """
    (tmp_path / "shipped_mod.py").write_text(
        "from numba_ta.core import kernels\n\n\n@kernels.kernel()\ndef shipped(x):\n    return x + 1\n"
    )
    built = tmp_path / "built"

    def run(step, stamp, **env):
        cache = tmp_path / f"cache-{step}"
        cache.mkdir()
        full = {k: v for k, v in os.environ.items() if k != "NUMBA_TA_PRECOMPILE_INTO"}
        path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        full.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=path, **env)
        out = subprocess.run(
            [sys.executable, "-c", _SHIPPED_PROBE, str(built), stamp],
            env=full, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return out.strip().splitlines()[-1], list(cache.rglob("*.nbi"))

    assert run("build", "same", NUMBA_TA_PRECOMPILE_INTO=str(built)) == ("hits 0 misses 1", [])
    assert len(list(built.glob("*.nbi"))) == 1  # saved into the folder being built, not Numba's cache
    assert run("installed", "same") == ("hits 1 misses 0", [])
    line, saved = run("rebuilt", "other")
    assert line == "hits 0 misses 1" and len(saved) == 1  # compiled, and cached where Numba caches


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is cached")
def test_a_save_into_the_folder_being_built_holds_its_lock(tmp_path, monkeypatch):
    """``precompile --jobs 2`` saves from two processes into one folder: a save waits for the folder's lock.

    Numba rewrites a function's whole index on each save; two saves of one function at once
    would lose an entry.  Here the test holds the lock while another thread saves.
    """
    (tmp_path / "locked_mod.py").write_text(
        "from numba_ta.core import kernels\n\n\n@kernels.kernel()\ndef locked(x):\n    return x + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_kernels, "_KERNELS", [])
    built = tmp_path / "built"
    monkeypatch.setenv("NUMBA_TA_PRECOMPILE_INTO", str(built))
    import locked_mod

    assert locked_mod.locked(1) == 2  # compiled, and saved into the folder being built
    (sig,) = locked_mod.locked.overloads
    cache = _numba_compat.get_cache(locked_mod.locked)
    saving = threading.Thread(target=cache.save_entry, args=(sig, locked_mod.locked.overloads[sig]))
    with _cache._build_lock(str(built)):
        saving.start()
        saving.join(0.5)
        assert saving.is_alive()  # waiting for the lock (a save takes milliseconds)
    saving.join(30)
    assert not saving.is_alive()
    index = cache.index_file(str(built), _cache.source_stamp())
    assert index.load(cache.index_key(sig, locked_mod.locked.targetctx.codegen())) is not None


def test_precompile_refuses_bad_arguments(tmp_path, capsys):
    from numba_ta.core import precompile

    assert precompile.main([]) == 2
    assert precompile.main([str(tmp_path), "--jobs", "3"]) == 2
    assert "--jobs must be 1 to 2" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing compiled, no manifest


def test_source_stamp_covers_the_sources_and_numba_options(monkeypatch):
    stamp = _cache.source_stamp()
    assert len(stamp) == 64 and stamp == _cache.source_stamp()
    monkeypatch.setattr(_cache, "_stamp", None)
    monkeypatch.setattr(numba.core.config, "BOUNDSCHECK", not numba.core.config.BOUNDSCHECK)
    assert _cache.source_stamp() != stamp


def test_kernel_helper_lets_other_errors_through(monkeypatch):
    """Only Numba's "no locator" error selects the uncached fallback; any other error propagates."""

    def broken_njit(**options):
        def decorate(func):
            raise RuntimeError("some other numba failure")

        return decorate

    monkeypatch.setattr(_kernels, "njit", broken_njit)
    monkeypatch.setattr(_kernels, "_KERNELS", [])
    with pytest.raises(RuntimeError, match="some other numba failure"):
        _kernels.kernel()(_fresh_function("f"))


_FIRST_OP = """
import numpy as np
from numba_ta import raw_ops

h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float32, element_shape=[2])
print(raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 1], flow_in=f, dtype=np.float32).tolist())
"""


_COLD_SESSION = """
import sys
import numpy as np
from numba_ta import raw_ops

h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, element_shape=[2], clear_after_read=False)
f = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1], value=np.ones((2, 2), np.float32), flow_in=f)
raw_ops.TensorArrayGatherV3(handle=h, indices=[1, 0], flow_in=f, dtype=np.float32)
raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.ones(2, np.float32), flow_in=gf)
raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.ones(2, np.float32), flow_in=gf)
l = raw_ops.EmptyTensorList(element_shape=[2], max_num_elements=-1, element_dtype=np.float32)
l = raw_ops.TensorListPushBack(input_handle=l, tensor=np.ones(2, np.float32))
raw_ops.TensorListStack(input_handle=l, element_shape=[2], element_dtype=np.float32)
from numba.core import entrypoints  # (numba_ta's kernels load without Numba's compilation-chain hook)
scanned = ["numba_extensions entry points"] if entrypoints._already_initialized else []
unneeded = ("numba.np.arraymath", "numba.np.linalg", "scipy.linalg", "numba.np.arrayobj", "numba.np.npyimpl")
print(sorted(m for m in unneeded if m in sys.modules) + scanned)
"""


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is loaded")
def test_loading_the_shipped_engine_imports_none_of_numbas_compiler_registries(tmp_path):
    """A fresh process whose ops load the shipped engine does not import what only compiling needs.

    Numba's loader refreshes its target context first, importing every implementation module
    (``numba.np.arraymath`` imports SciPy): half a second of a cold process, which numba_ta's
    loader skips; and the engine's code uses none of ``numba.np.arraymath``'s functions, whose
    environments would import it as they load; the environments of the Numba implementations
    the engine does use (``numba.np.arrayobj``, ``numba.np.npyimpl``) load without importing
    their modules (``numba_compat._rebuild_env_in_place``).  Nor does it scan the installed distributions
    for Numba's extension entry points (``numba.core.entrypoints.init_all``, ~90 ms), which
    Numba's ``_compile_for_args`` does before its first load or compile.
    """
    manifest = _cache.read_manifest(_cache.SHIPPED_DIR)
    if not manifest or manifest.get("source_stamp") != _cache.source_stamp():
        pytest.skip("no shipped folder built from these sources: the ops compile")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _COLD_SESSION], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_fresh_process_whose_first_op_is_a_bulk_op_loads_the_engine_from_the_cache():
    """The engine's bulk ops embed parallel kernels: loaded from the cache, they need Numba's threading layer.

    A gather as the very first op of a process (run twice: the second run loads everything
    from the cache) must work; it crashed with a segfault when the layer was not started.
    """
    import subprocess
    import sys

    for _ in range(2):
        out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _FIRST_OP], capture_output=True,
                             text=True, timeout=900)  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.strip() == "[[0.0, 0.0], [0.0, 0.0]]", out.stdout
