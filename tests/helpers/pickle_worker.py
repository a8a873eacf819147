"""Worker of ``tests/test_pickle.py``'s process pools: importable by name in spawn and forkserver workers.

A worker function must be importable in the worker process, which does not run the test
module; it lives here, in a module of its own that imports only numpy and numba_ta.  The
arrays reach the worker pickled (by value) and come back pickled the same way.
"""

from __future__ import annotations

import os
import re

import numpy as np

import numba_ta
from numba_ta.tensor_array import registry as _registry


def _normalise(msg, arrays):
    """``msg`` with every array's unique name replaced by ``<key>`` (longest names first)."""
    names = {}
    for key, ta in arrays.items():
        names.setdefault(ta.handle.name, f"<{key}>")
    for name in sorted(names, key=len, reverse=True):
        msg = re.sub(re.escape(name) + r"(?!\d)", names[name], msg)
    return msg


def run_script(arrays, script):
    """Apply ``script`` to ``arrays`` (a dict key -> :class:`numba_ta.TensorArray`), in place.

    ``script`` is a list of ``(key, method, args)`` or ``(key, method, args, out_key)``: the
    method of ``arrays[key]`` is called with ``args``; a TensorArray it returns is bound to
    ``out_key`` (default ``key``).  Returns one outcome per step: ``("ta", flow)``,
    ``("value", result)`` or ``("error", class name, message with names as <key>)``.
    """
    outcomes = []
    for step in script:
        key, method, args = step[:3]
        out_key = step[3] if len(step) > 3 else key
        try:
            res = getattr(arrays[key], method)(*args)
        except Exception as e:  # the outcome is compared with the parent's
            msg = getattr(e, "message", None) or str(e)
            outcomes.append(("error", type(e).__name__, _normalise(msg, arrays)))
            continue
        if isinstance(res, numba_ta.TensorArray):
            arrays[out_key] = res
            outcomes.append(("ta", float(res.flow)))
        else:
            outcomes.append(("value", None if res is None else np.asarray(res)))
    return outcomes


def handle_groups(arrays):
    """The keys of ``arrays`` grouped by the array they are over (sorted lists)."""
    groups = {}
    for key, ta in arrays.items():
        groups.setdefault(ta.handle._storage, []).append(key)
    return sorted(sorted(g) for g in groups.values())


def worker(arrays, script):
    """Run ``script`` on the arrays received; report what a parent checks.

    Returns ``(pid, received, outcomes, groups, arrays)``: ``received`` maps each key to
    ``(name, name registered here, dynamic_size of the storage)`` as the arrays arrived,
    ``outcomes`` is :func:`run_script`'s, ``groups`` :func:`handle_groups` after the script,
    and ``arrays`` the arrays after it (pickled back to the parent by value).
    """
    live = set(_registry.live_arrays())
    received = {
        k: (ta.handle.name, ta.handle.name in live, ta.handle._storage.dynamic_size) for k, ta in arrays.items()
    }
    outcomes = run_script(arrays, script)
    return os.getpid(), received, outcomes, handle_groups(arrays), arrays
