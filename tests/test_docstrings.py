"""Every public name has a numpydoc docstring: its parameters in a Parameters section, a Returns section.

The public names are those of ``numba_ta.__all__`` and of the ``__all__`` of its public modules
(``raw_ops``, ``gradients``, ``errors``), and the public methods and properties of its classes.
The check is numpydoc's PR01/PR02 (every parameter documented, no other), RT01 (a Returns
section where something is returned) and GL08 (a docstring), done here without numpydoc; with
numpydoc installed (the ``docs`` extra) its own validation runs too.
"""

from __future__ import annotations

import inspect
import re

import pytest

import numba_ta


def _public():
    out = []
    for n in numba_ta.__all__:
        if n.startswith("__"):
            continue
        obj = getattr(numba_ta, n)
        if inspect.ismodule(obj):
            out += [(f"numba_ta.{n}.{m}", getattr(obj, m)) for m in obj.__all__]
            continue
        out.append((f"numba_ta.{n}", obj))
        if inspect.isclass(obj):
            for m, v in vars(obj).items():
                if not m.startswith("_") and (inspect.isfunction(v) or isinstance(v, property)):
                    out.append((f"numba_ta.{n}.{m}", v))
    return out


PUBLIC = _public()


def _section(doc, title):
    """The lines of a numpydoc section (None when there is none)."""
    lines = inspect.cleandoc(doc).splitlines()
    heads = [i for i in range(len(lines) - 1) if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())]
    for k, i in enumerate(heads):
        if lines[i].strip() == title:
            return lines[i + 2 : heads[k + 1] if k + 1 < len(heads) else len(lines)]
    return None


def _documented(doc):
    body = _section(doc, "Parameters") or []
    names = set()
    for line in body:
        if line and not line.startswith(" "):
            names.update(n.strip() for n in line.split(" : ")[0].split(","))
    return names


def _signature_names(func, skip_first):
    params = list(inspect.signature(func).parameters.values())
    if skip_first:
        params = params[1:]
    names = set()
    for p in params:
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        names.add(prefix + p.name)
    return names


@pytest.mark.parametrize(("name", "obj"), PUBLIC, ids=[n for n, _ in PUBLIC])
def test_numpydoc_sections(name, obj):
    doc = obj.__doc__ if not isinstance(obj, property) else obj.fget.__doc__
    assert doc and doc.strip(), f"{name} has no docstring"
    if isinstance(obj, property) or not callable(obj):
        return
    if inspect.isclass(obj):
        init = obj.__init__
        if init is object.__init__:
            return
        assert _documented(doc) == _signature_names(init, True), f"{name}: Parameters section"
        return
    method = "." in name.removeprefix("numba_ta.") and inspect.isclass(
        getattr(numba_ta, name.removeprefix("numba_ta.").split(".")[0], None)
    )
    assert _documented(doc) == _signature_names(obj, method), f"{name}: Parameters section"
    returns = inspect.signature(obj).return_annotation
    if returns not in ("None", None, "NoReturn"):
        assert _section(doc, "Returns") is not None or _section(doc, "Yields") is not None, f"{name}: no Returns"


def test_the_two_of_the_issue():
    assert _documented(numba_ta.TensorListHandle.__doc__) == {"store", "version"}
    assert _section(numba_ta.get_parallel_threshold.__doc__, "Returns")
    for prop in ("element_dtype", "element_shape", "max_num_elements"):
        assert getattr(numba_ta.TensorListHandle, prop).__doc__


def test_numpydoc_validation_when_installed():
    validate = pytest.importorskip("numpydoc.validate")
    bad = {}
    for name, _ in PUBLIC:
        errs = [e for e in validate.validate(name)["errors"] if e[0] in ("PR01", "PR02", "RT01", "GL08")]
        if errs:
            bad[name] = errs
    assert not bad
