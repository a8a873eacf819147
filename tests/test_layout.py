"""The package's layout: each folder imports only the layers below it, no import cycles, no private
name used outside its folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

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


def test_the_classes_are_reachable_from_their_folders():
    import numba_ta.tensor_array
    from numba_ta.tensor_array import TensorArray
    from numba_ta.tensor_list.tf2 import TF2TensorArray

    assert TensorArray is numba_ta.TensorArray is numba_ta.tensor_array.TensorArray
    assert TF2TensorArray is numba_ta.TF2TensorArray
