"""Numba's private parts are used in one module, numba_ta.core.numba_compat, and nowhere else.

The check reads the sources of numba_ta and of the demo with ``ast`` and reports, outside
the compat module:

* an import of a Numba (or llvmlite) module that ``numba_compat.PUBLIC_MODULES`` does not
  count as public, and an import of an underscore name from any of them;
* an attribute ``x._name`` (or ``getattr(x, "_name")``, ``hasattr``, ``setattr``) where ``x``
  is a name imported from Numba, or where ``_name`` is a name of Numba's sources that
  numba_ta does not define itself (its classes' methods, attributes and slots, its modules'
  globals): a dispatcher's ``_cache``, a library's ``_reload_init``, a proxy's ``_meminfo``;
* a class deriving from a Numba class that defines or sets one of Numba's underscore names
  (an override of Numba's private ``_load_overload``, say).

The names of ``numba_compat.PUBLIC_UNDERSCORE_NAMES`` (documented despite their underscore) pass.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import warnings
from functools import cache
from pathlib import Path

import numba
import pytest

import numba_ta
from numba_ta.core import numba_compat

ROOT = Path(numba_ta.__file__).parent.parent
PACKAGES = ("numba_ta", "numba_ta_demo")
COMPAT = "numba_ta.core.numba_compat"
THIRD = ("numba", "llvmlite")


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# Numba's private names that numba_ta has used, found whatever Numba is installed (0.60 has no _reload_init)
KNOWN = {
    "_cache", "_compile_for_args", "_reload_init", "_meminfo", "_numba_box_", "_numba_type_", "_fields", "_Utils",
    "_launch_threads", "_load_overload", "_save_overload", "_index_key", "_impl", "_cache_file", "_enabled",
}  # fmt: skip


@cache
def numba_names():
    """Every underscore identifier of Numba's sources (its tests and CUDA target aside), and :data:`KNOWN`."""
    names = set(KNOWN)
    for path in Path(numba.__file__).parent.rglob("*.py"):
        if "tests" in path.parts or "cuda" in path.parts:
            continue
        text = path.read_text(errors="replace")
        names.update(n for n in re.findall(r"\b(_[A-Za-z0-9]\w*)", text) if _is_private(n))
    return frozenset(names - numba_compat.PUBLIC_UNDERSCORE_NAMES)


@cache
def _is_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _modules(root):
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, ast.parse(path.read_text(), str(path))


def _bindings(tree):
    """``{bound name: (module it came from, its name there or None)}`` of every import of the module."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
    return out


def _from_third(binding):
    return binding is not None and binding[0].split(".")[0] in THIRD


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _numba_classes(modules):
    """``{(module, class name)}`` of the classes that derive from a class of Numba (directly or through numba_ta's)."""
    derived, changed = set(), True
    while changed:
        changed = False
        for name, tree in modules.items():
            binds = _bindings(tree)
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef) or (name, node.name) in derived:
                    continue
                for base in node.bases:
                    root = _root(base)
                    b = binds.get(root)
                    local = (name, root) in derived
                    imported = b is not None and (b[0], b[1]) in derived
                    via_compat = b is not None and (b[0] == COMPAT or (b[0], b[1]) == ("numba_ta.core", "numba_compat"))
                    if _from_third(b) or local or imported or via_compat:
                        derived.add((name, node.name))
                        changed = True
                        break
    return derived


def _own_names(modules, derived):
    """The underscore names numba_ta defines itself: module globals, and its own classes' members and slots."""
    own = set()
    for name, tree in modules.items():
        for node in tree.body:
            targets = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for t in targets:
                own.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef) or (name, cls.name) in derived:
                continue
            for node in ast.walk(cls):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    own.add(node.name)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    if _root(node) in ("self", "cls"):
                        own.add(node.attr)
                elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                          for t in node.targets):  # fmt: skip
                    own.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                               and isinstance(c.value, str))  # fmt: skip
                elif isinstance(node, ast.Assign):
                    own.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return own


def private_numba_uses(root=ROOT):
    """Return ``["module:line: what", ...]``: every use of a private Numba name outside the compat module."""
    modules = dict(_modules(Path(root)))
    derived = _numba_classes(modules)
    own = _own_names(modules, derived)
    numba_private = numba_names()
    bad = []
    for name, tree in modules.items():
        if name == COMPAT:
            continue
        binds = _bindings(tree)

        seen = set()

        def report(node, what, name=name, seen=seen):
            key = (node.lineno, node.col_offset)  # one report per place (a Numba subclass's self._x once)
            if key not in seen:
                seen.add(key)
                bad.append(f"{name}:{node.lineno}: {what}")

        def attribute(node, base, attr, binds=binds, report=report):
            if not _is_private(attr) or attr in numba_compat.PUBLIC_UNDERSCORE_NAMES:
                return
            b = binds.get(_root(base))
            if _from_third(b):
                report(node, f"{ast.unparse(base)}.{attr} (a private name of {b[0]})")
            elif b is None and attr in numba_private and attr not in own:
                report(node, f"{ast.unparse(base)}.{attr} (Numba's private {attr})")

        for node in ast.walk(tree):  # first the Numba subclasses' own uses, reported as such
            if isinstance(node, ast.ClassDef) and (name, node.name) in derived:
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in numba_private:
                        report(item, f"{node.name}.{item.name} overrides Numba's private {item.name}")
                for sub in ast.walk(node):
                    if (
                        isinstance(sub, ast.Attribute)
                        and _root(sub) == "self"
                        and _is_private(sub.attr)
                        and sub.attr in numba_private
                    ):
                        report(sub, f"{node.name}: self.{sub.attr} (Numba's private {sub.attr}, on a Numba subclass)")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in THIRD and a.name not in numba_compat.PUBLIC_MODULES:
                        report(node, f"import {a.name} (a private module)")
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in THIRD:
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    module = full if _is_module(full) else node.module
                    if module not in numba_compat.PUBLIC_MODULES:
                        report(node, f"from {node.module} import {a.name} ({module} is private)")
                    elif _is_private(a.name) and a.name not in numba_compat.PUBLIC_UNDERSCORE_NAMES:
                        report(node, f"from {node.module} import {a.name} (a private name)")
            elif isinstance(node, ast.Attribute):
                attribute(node, node.value, node.attr)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                attribute(node, node.args[0], node.args[1].value)
    return sorted(bad)


def test_no_module_but_numba_compat_uses_a_private_numba_name():
    bad = private_numba_uses()
    assert not bad, "private Numba names outside numba_ta/core/numba_compat.py:\n" + "\n".join(bad)


BAD_SOURCES = {
    "kernel._cache = cache\n": "kernel._cache",
    "x = getattr(kernel, '_compile_for_args', None)\n": "kernel._compile_for_args",
    "from numba.core.caching import FunctionCache\n": "numba.core.caching is private",
    "from numba.np.ufunc.parallel import _launch_threads\n": "numba.np.ufunc.parallel is private",
    "import numba.np.ufunc.parallel\n": "import numba.np.ufunc.parallel",
    "from numba.experimental import structref\nu = structref._Utils\n": "structref._Utils",
    "def f(context):\n    context.active_code_library._reload_init.add(1)\n": "_reload_init",
    "def f(s):\n    return s._meminfo\n": "s._meminfo",
    "from numba.core.caching import FunctionCache\n\nclass C(FunctionCache):\n    def _load_overload(self, sig, tc):\n"
    "        return self._impl\n": "overrides Numba's private _load_overload",
}


@pytest.mark.parametrize("source", sorted(BAD_SOURCES))
def test_the_check_finds_each_kind_of_private_use(tmp_path, source):
    """The check can fail: a module with one private use of each kind is reported."""
    (tmp_path / "numba_ta").mkdir()
    (tmp_path / "numba_ta_demo").mkdir()
    (tmp_path / "numba_ta" / "bad.py").write_text(source)
    (tmp_path / "numba_ta" / "good.py").write_text(
        "from numba_ta.core import numba_compat\n\n\ndef f(kernel, cache):\n    numba_compat.set_cache(kernel, cache)\n"
        "    return cache._getvalue()\n"
    )
    bad = private_numba_uses(tmp_path)
    assert bad and all(b.startswith("numba_ta.bad:") for b in bad), bad
    assert any(BAD_SOURCES[source] in b for b in bad), bad


def test_the_version_is_checked_against_the_supported_range(monkeypatch):
    assert numba_compat.IN_RANGE, f"numba {numba.__version__} is outside {numba_compat.REQUIREMENT}"
    low, high = numba_compat.SUPPORTED
    assert numba_compat.REQUIREMENT == f"numba>={low[0]}.{low[1]},<{high[0]}.{high[1]}"
    monkeypatch.setattr(numba_compat, "VERSION", (0, 58))
    monkeypatch.setattr(numba_compat, "NUMBA_VERSION", "0.58.1")
    with pytest.warns(numba_compat.UnsupportedNumbaWarning, match=r"not Numba 0\.58\.1.*numba>=0\.\d+,<0\.69"):
        assert numba_compat.check_version() is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setattr(numba_compat, "VERSION", low)
        assert numba_compat.check_version() is True


def test_the_declared_requirement_is_the_supported_range():
    path = ROOT / "pyproject.toml"
    if not path.exists():  # pragma: no cover - an installed package, away from its sources
        pytest.skip("no pyproject.toml")
    text = path.read_text()
    assert text.count(f'"{numba_compat.REQUIREMENT}"') == 2, "dependencies and build-system requires"


def test_a_missing_private_name_says_which_numba_and_which_range(monkeypatch):
    monkeypatch.setattr(numba_compat, "NUMBA_VERSION", "0.99.0")
    with pytest.raises(numba_compat.UnsupportedNumbaError) as info:
        numba_compat._resolve("numba.core.caching", "NoSuchCache")
    message = str(info.value)
    assert "numba.core.caching.NoSuchCache" in message and "Numba 0.99.0" in message
    assert numba_compat.REQUIREMENT in message


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: no dispatchers")
def test_a_dispatchers_loader_and_cache_are_reached_through_the_compat_module():
    from numba_ta.core import cache as _cache
    from numba_ta.core import kernels

    k = kernels.copy_run
    assert numba_compat.is_dispatcher(k)
    assert isinstance(numba_compat.get_cache(k), _cache.KernelCache)
    assert numba_compat.get_loader(k).__name__ == "guarded_load"  # kernels hold signals while they load


# --------------------------------------------------------------------------- shipped code of another Numba


def _kernels_now(monkeypatch, shipped, facts):
    """Point the shipped folder at ``shipped`` (with a manifest of ``facts``, if given) for new kernels."""
    from numba_ta.core import cache as _cache
    from numba_ta.core import kernels

    shipped.mkdir()
    if facts is not None:
        (shipped / _cache.MANIFEST).write_text(json.dumps(facts))
    monkeypatch.setattr(_cache, "SHIPPED_DIR", shipped)
    monkeypatch.setattr(_cache, "_mismatch_checked", False)
    monkeypatch.delenv("NUMBA_TA_PRECOMPILE_INTO", raising=False)
    monkeypatch.setattr(kernels, "_KERNELS", [])

    def fresh(name):
        ns = {}
        exec(f"def {name}(x):\n    return x + 2\n", ns)  # source '<string>': no Numba cache, nothing on disk
        return kernels.kernel()(ns[name])

    return fresh


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is compiled")
def test_shipped_code_built_for_another_numba_is_reported_once_at_the_first_compile(tmp_path, monkeypatch):
    from numba_ta.core import cache as _cache
    from numba_ta.core import kernels

    facts = dict(_cache.build_facts(), numba="0.1.0", llvmlite="0.1.0")
    fresh = _kernels_now(monkeypatch, tmp_path / "_compiled", facts)
    first, second = fresh("first"), fresh("second")  # decorating compiles nothing, says nothing
    with pytest.warns(kernels.ShippedCodeMismatchWarning) as record:
        assert first(1) == 3 and second(1) == 3 and first(2.0) == 4.0
    assert len(record) == 1, [str(r.message) for r in record]  # once per process, not once per kernel
    message = str(record[0].message)
    assert "built for Numba 0.1.0 (llvmlite 0.1.0" in message, message
    assert f"this process runs Numba {numba.__version__}" in message, message
    assert "compiled at their first use instead (about half a minute" in message, message
    assert "pip install --no-build-isolation --no-deps --force-reinstall ." in message, message
    assert str(tmp_path / "_compiled") in message
    assert issubclass(kernels.ShippedCodeMismatchWarning, RuntimeWarning)
    assert kernels.ShippedCodeMismatchWarning is _cache.ShippedCodeMismatchWarning


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is compiled")
def test_shipped_code_built_for_another_cpu_is_reported(tmp_path, monkeypatch):
    from numba_ta.core import cache as _cache
    from numba_ta.core import kernels

    facts = _cache.build_facts()
    facts["cpu"] = [facts["cpu"][0], "some-other-cpu", "+avx"]
    fresh = _kernels_now(monkeypatch, tmp_path / "_compiled", facts)
    with pytest.warns(kernels.ShippedCodeMismatchWarning, match="on CPU some-other-cpu"):
        assert fresh("k")(1) == 3


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is compiled")
@pytest.mark.parametrize("manifest", ["same build", "none"])
def test_a_kernel_missing_from_matching_shipped_code_compiles_silently(tmp_path, monkeypatch, manifest):
    """A signature the build did not reach, or a folder without a manifest (an older numba_ta's): no warning."""
    from numba_ta.core import cache as _cache

    facts = _cache.build_facts() if manifest == "same build" else None
    fresh = _kernels_now(monkeypatch, tmp_path / "_compiled", facts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fresh("k")(1) == 3


def test_the_manifest_round_trips_and_matches_this_process(tmp_path):
    from numba_ta.core import cache as _cache

    _cache.write_manifest(tmp_path)
    facts = _cache.read_manifest(tmp_path)
    assert facts["numba"] == numba.__version__ and facts["format"] == 1 and len(facts["cpu"]) == 3
    assert facts["source_stamp"] == _cache.source_stamp()
    assert _cache.shipped_mismatch(facts, _cache.build_facts()) is None
    assert _cache.shipped_mismatch(dict(facts, numba="0.0.0"), _cache.build_facts()) is not None
    assert _cache.read_manifest(tmp_path / "missing") is None
