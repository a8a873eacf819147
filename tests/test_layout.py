"""The package's layout: each folder imports only the layers below it, no import cycles, no private
name used outside its folder, and the module names of the flat layout still import (pickles name them).
"""

from __future__ import annotations

import ast
import importlib
import pickle
from pathlib import Path

import numpy as np
import pytest

import numba_ta

ROOT = Path(numba_ta.__file__).parent

# what each folder may import at module level (besides itself): folders, or modules; the top-level
# modules are the public faces and may import anything
LAYERS = {
    "tf": {"numba_ta.errors"},
    "core": {"tf", "numba_ta.errors"},
    "tensor_array": {"core", "tf", "numba_ta.errors"},
    # a TensorList op tells an array's handle (TF's resource tensor) where a list belongs
    "tensor_list": {"core", "tf", "numba_ta.errors", "numba_ta.tensor_array.registry"},
    # the Numba extension is the glue of both containers: it refuses TensorLists (their handles,
    # TF2TensorArray) with a one-line error where a TensorArray belongs
    "jit": {"core", "tensor_array", "tensor_list", "tf", "numba_ta.errors"},
}
# the classes and the list ops' gradient rules are faces too: they are written with the ops
FACES = {"numba_ta.tensor_array.array", "numba_ta.tensor_list.tf2", "numba_ta.tensor_list.grads"}


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text())


def _imports(tree, top_level_only):
    """Yield ``(module, [names])`` of the ``from numba_ta... import`` and ``import numba_ta...`` statements."""
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "numba_ta":
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "numba_ta":
                    yield a.name, []


def _folder(module):
    """Return the folder of ``numba_ta``'s module ``module`` ("" for the package's top)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (ROOT / parts[1]).is_dir() else ""


def test_each_folder_imports_only_the_layers_below_it():
    bad = []
    for name, _path, tree in _modules():
        folder = _folder(name)
        if folder not in LAYERS or name in FACES:
            continue
        for module, names in _imports(tree, top_level_only=True):
            targets = [module] if module != "numba_ta" else [f"numba_ta.{n}" for n in names]
            for target in targets:
                other = _folder(target)
                if other != folder and other not in LAYERS[folder] and target not in LAYERS[folder]:
                    bad.append(f"{name} imports {target}")
    assert not bad, "\n".join(bad)


def test_no_import_cycles_between_modules():
    modules = {name: tree for name, _path, tree in _modules()}
    graph = {}
    for name, tree in modules.items():
        deps = set()
        for module, names in _imports(tree, top_level_only=True):
            deps.update([f"{module}.{n}" for n in names if f"{module}.{n}" in modules] or [module])
        graph[name] = {d for d in deps if d != name and d in modules}
    done, stack = set(), []

    def visit(m):
        if m in stack:
            raise AssertionError("import cycle: " + " -> ".join([*stack[stack.index(m) :], m]))
        if m in done:
            return
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            visit(d)
        stack.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m)


def test_no_private_name_is_imported_from_another_folder():
    bad = []
    for name, _path, tree in _modules():
        folder = _folder(name)
        for module, names in _imports(tree, top_level_only=False):
            if _folder(module) == folder:
                continue
            bad += [f"{name} imports {module}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("old", sorted(numba_ta._MOVED))
def test_the_flat_layouts_module_names_import_the_modules_that_hold_their_names(old):
    module = importlib.import_module(f"numba_ta.{old}")
    assert module is importlib.import_module(numba_ta._MOVED[old])


def _as_before_the_layout(obj):
    """Pickle ``obj`` as the flat layout named its modules (protocol 0 spells module names as text lines)."""
    data = pickle.dumps(obj, protocol=0)
    for new, old in (
        (b"numba_ta.tensor_array.registry\n", b"numba_ta._registry\n"),
        (b"numba_ta.tensor_array.storage\n", b"numba_ta._storage\n"),
        (b"numba_ta.tensor_list.store\n", b"numba_ta._tensor_list\n"),
    ):
        data = data.replace(new, old)
    assert b"numba_ta.tensor_" not in data
    return data


def test_pickles_naming_the_flat_layouts_modules_load():
    """Arrays and lists pickled by the release before the layout name ``numba_ta._registry``, ``_tensor_list``..."""
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    ta = numba_ta.TensorArray(np.float32, size=3, clear_after_read=False).unstack(value)
    handle = pickle.loads(_as_before_the_layout(ta.handle))
    got = numba_ta.raw_ops.TensorArrayGatherV3(handle=handle, indices=[0, 1, 2], flow_in=ta.flow, dtype=np.float32)
    np.testing.assert_array_equal(got, value)

    es = np.array([2], np.int32)
    lst = numba_ta.raw_ops.TensorListFromTensor(tensor=value, element_shape=es)
    lst = numba_ta.raw_ops.TensorListResize(input_handle=lst, size=4)  # an unset element: _UNSET by name
    back = pickle.loads(_as_before_the_layout(lst))
    assert numba_ta.raw_ops.TensorListLength(input_handle=back) == 4
    got = numba_ta.raw_ops.TensorListGetItem(input_handle=back, index=2, element_shape=es, element_dtype=np.float32)
    np.testing.assert_array_equal(got, value[2])


def test_the_class_is_reachable_as_before():
    from numba_ta.tf2_tensor_array import TF2TensorArray

    import numba_ta.tensor_array
    from numba_ta.tensor_array import TensorArray

    assert TensorArray is numba_ta.TensorArray is numba_ta.tensor_array.TensorArray
    assert TF2TensorArray is numba_ta.TF2TensorArray
