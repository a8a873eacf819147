"""Sphinx configuration of the numba_ta documentation.

Build (from the repository root; warnings are errors)::

    sphinx-build -W --keep-going -b html docs docs/_build/html
    sphinx-build -W --keep-going -b doctest docs docs/_build/doctest

The build needs no network: no intersphinx, and the element-state diagram is a
committed SVG (``_static/element-states.svg``, made from the ``.dot`` file
beside it), so graphviz is not needed either.
"""

from __future__ import annotations

import doctest
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Document the source tree this conf.py belongs to (the literalinclude'd demo
# and the autodoc'd API then come from the same files).
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # quiet TensorFlow in the migration doctests

import numba_ta  # noqa: E402

# -- project -----------------------------------------------------------------
project = "numba_ta"
author = "the numba_ta authors"
copyright = "the numba_ta authors"  # Sphinx's name
release = numba_ta.__version__
version = ".".join(release.split(".")[:2])

# -- general -----------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "numpydoc",
]
exclude_patterns = ["_build"]
templates_path = []
nitpicky = True
nitpick_ignore = [
    # standard-library and numpy objects named in docstrings; no intersphinx (the build is offline)
    ("py:mod", "this"),
    ("py:mod", "argparse"),
    ("py:func", "numpy.random.default_rng"),
    ("py:class", "numpy.dtype"),
    ("py:class", "numpy.ndarray"),
    ("py:class", "np.ndarray"),  # annotations of the demo's NamedTuples and dataclasses
    ("py:class", "collections.abc.Callable"),
    ("py:class", "typing.Any"),
    # the type annotations shown in the signatures (written as in the source, e.g. npt.ArrayLike)
    ("py:class", "Storage"),  # TensorArrayHandle's internal array state, not public
    # the result tuples of the ops with several outputs in the return annotations: namedtuples named
    # after the op (as tf.raw_ops' are, numba_ta/tf/opdefs.py), not documented as classes
    ("py:class", "TensorArrayV3Result"),
    ("py:class", "TensorArrayConcatV3Result"),
    ("py:class", "TensorArrayGradV3Result"),
    ("py:class", "TensorArrayGradWithShapeResult"),
    ("py:class", "numba_ta.tf.opdefs.TensorListPopBack"),
    ("py:class", "numba_ta.tf.opdefs.TensorListConcat"),
    ("py:class", "numba_ta.tf.opdefs.TensorListConcatV2"),
]
nitpick_ignore_regex = [
    # numpy, numpy.typing and standard-library types of the annotations; no intersphinx to link them to
    ("py:class", r"(np|numpy|npt|numpy\.typing)\.\w+"),
    ("py:class", r"(collections\.abc|typing|argparse)\.\w+"),
]
default_role = "literal"  # `x` in docstrings reads as code, never as a broken reference

# -- autodoc / autosummary / numpydoc -----------------------------------------
autosummary_generate = False  # the API pages are written by hand; autosummary only makes the tables
autodoc_member_order = "bysource"
toc_object_entries_show_parents = "hide"  # "read()" in the page TOC, not "TensorArray.read()"
numpydoc_show_class_members = False  # members are listed by autoclass :members: instead
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# -- doctest -----------------------------------------------------------------
# ELLIPSIS for the process-global unique names (TensorArray_7); no IGNORE_EXCEPTION_DETAIL, so the
# error messages shown in the pages are checked word for word.
doctest_default_flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1
doctest_global_setup = """
import importlib.util
import numpy as np
import numba_ta
from numba_ta import raw_ops, gradients, errors
HAVE_TF = importlib.util.find_spec("tensorflow") is not None
"""
# Only the pages' own ``.. doctest::``/``testcode`` blocks are run here; the ``>>>`` examples of the
# docstrings shown in the API pages are run by pytest (``--doctest-modules``) in their modules.
doctest_test_doctest_blocks = ""

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"numba_ta {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    # the API overview is itself a table of contents: no second one beside it
    "secondary_sidebar_items": {"**": ["page-toc"], "api": []},
}
# The left sidebar only helps where a page has sub-pages (the API reference); elsewhere it would
# be an empty column.  Page names without wildcards: two wildcard patterns matching one page warn.
_API_PAGES = [
    "api",
    "api/tensor-array",
    "api/tensor-list",
    "api/raw-ops",
    "api/gradients",
    "api/errors",
    "api/settings",
    "api/cli-and-bench",
    "api/demo",
]
html_sidebars = {"**": [], **{page: ["sidebar-nav-bs"] for page in _API_PAGES}}

# -- docstring fixes -----------------------------------------------------------
# The docstrings write shapes numpy's way, ``value : (n, *element_shape) array_like``; in
# reStructuredText the ``*`` would open an emphasis.  Escape it in numpydoc type lines (a parameter
# line "name : (...)" or a bare "(...)" return type), before numpydoc parses the docstring.
_TYPE_LINE = re.compile(r"^\s*(?:\w+(?:\s*,\s*\w+)*\s+:\s+)?\(")


def _fix_docstring(app, what, name, obj, options, lines):
    if what == "module":
        _module_sections_to_rubrics(lines)
    for i, line in enumerate(lines):
        if "*" in line and _TYPE_LINE.match(line):
            lines[i] = re.sub(r"(?<!\\)\*", r"\\*", line)


def _module_sections_to_rubrics(lines):
    """Numpydoc leaves a module docstring's sections (``Examples`` over dashes) as real section
    titles, which would put an "Examples" heading into the page's table of contents between the
    module's text and its functions; make them rubrics, as numpydoc does for functions."""
    for i in range(len(lines) - 1):
        title, rule = lines[i].strip(), lines[i + 1].strip()
        if title and len(rule) >= 3 and set(rule) == {"-"} and len(rule) == len(title):
            lines[i], lines[i + 1] = f".. rubric:: {title}", ""


def setup(app):
    app.connect("autodoc-process-docstring", _fix_docstring, priority=400)  # numpydoc uses 500
