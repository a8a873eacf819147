"""Handles, unique names and the registry of live TensorArrays.

A handle holds its array's storage; the registry only keeps weak references,
so an array whose handles are all dropped is freed without ``close``.
Gradient arrays are owned by their forward array (``Storage.grads``, keyed by
``source``), so ``TensorArrayGradV3`` finds the same one again for as long as
the forward array lives, which is TF's ``<forward name>@<source>`` lookup.

``os.fork()`` copies the locks as they are, and only the forking thread goes on
in the child: a lock that another thread held at that moment would stay held
forever there.  An at-fork handler gives the child a new registry lock and a new
lock for every live array (gradient arrays are registered too).
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from numba_ta.tf import messages as _messages
from numba_ta.tf import opdefs as _opdefs
from numba_ta.tf.dtypes import tensor_dtype_name
from numba_ta.tf.messages import shape_str

if TYPE_CHECKING:
    from numba_ta.tensor_array.storage import Storage

FORWARD_CONTAINER = "_tensor_arrays"
GRAD_CONTAINER = "_tensor_array_grads"

_lock = threading.Lock()
_counter = itertools.count()


class WeakValues:
    """A table of weak references to values, with no callback when a value dies.

    ``weakref.WeakValueDictionary`` removes an entry from a callback that runs where the
    value dies, in the middle of whatever code drops it: an exception a signal handler raises
    there (Ctrl-C) is lost, Python only prints it as "ignored".  Here a dying value runs no
    Python code; dead entries are dropped when the table has doubled since the last sweep.
    Not locked: callers hold their own lock around it.

    Examples
    --------
    >>> class Thing:
    ...     pass
    >>> t = WeakValues()
    >>> x = Thing()
    >>> t["x"] = x
    >>> t.get("x") is x, len(t)
    (True, 1)
    >>> del x
    >>> t.get("x"), len(t), t.keys()
    (None, 0, [])
    """

    def __init__(self) -> None:
        self._refs: dict = {}
        self._sweep_at = 64

    def __setitem__(self, key: object, value: object) -> None:
        """Store a weak reference to ``value`` under ``key``, sweeping dead entries once the table has doubled."""
        self._refs[key] = weakref.ref(value)
        if len(self._refs) >= self._sweep_at:
            live = {k: r for k, r in self._refs.items() if r() is not None}
            self._refs, self._sweep_at = live, max(64, 2 * len(live))

    def __delitem__(self, key: object) -> None:
        """Remove the entry of ``key``, dead or alive (``KeyError`` if there is none)."""
        del self._refs[key]

    def get(self, key: object, default: object = None) -> object:
        """Return the live value of ``key``, else ``default``."""
        ref = self._refs.get(key)
        value = None if ref is None else ref()
        return default if value is None else value

    def keys(self) -> list:
        """Return the keys whose values are alive."""
        return [k for k, r in list(self._refs.items()) if r() is not None]

    def values(self) -> list:
        """Return the values that are alive."""
        return [v for v in (r() for r in list(self._refs.values())) if v is not None]

    def __len__(self) -> int:
        """Return the number of live values (O(n): every reference is checked)."""
        return len(self.values())

    def clear(self) -> None:
        """Forget every entry."""
        self._refs.clear()


_live = WeakValues()  # name -> Storage


class TensorArrayHandle:
    """The handle of a TensorArray, as returned by ``TensorArrayV3`` and the Grad ops.

    It stands for TF's ``resource`` tensor: pass it to the other raw ops.  It
    keeps the array alive; the array is freed when no handle refers to it.

    Attributes
    ----------
    name : str
        The array's unique name: ``"<tensor_array_name or TensorArrayV3>_<counter>"``
        for a forward array, ``"<forward name>@<source>"`` for a gradient array.
    container : str
        ``"_tensor_arrays"`` or ``"_tensor_array_grads"``, as in TF.

    Notes
    -----
    A handle pickles by value, as :class:`numba_ta.TensorArray` does: unpickled
    (or ``copy.deepcopy``-ed) it is the handle of a new, independent array with
    the same contents and a new unique name; ``copy.copy`` gives an equal handle
    to the same array.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, flow = raw_ops.TensorArrayV3(size=2, dtype=np.float32, tensor_array_name="hdoc")
    >>> h.name.startswith("hdoc_"), h.container
    (True, '_tensor_arrays')
    """

    __slots__ = ("_storage", "__weakref__")

    _storage: Storage

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    @property
    def name(self) -> str:
        """str: the unique name of the array."""
        return self._storage.name

    @property
    def container(self) -> str:
        """str: ``_tensor_arrays`` for forward arrays, ``_tensor_array_grads`` for gradient arrays."""
        return GRAD_CONTAINER if self._storage.is_grad else FORWARD_CONTAINER

    def __eq__(self, other: object) -> bool:
        """Return whether ``other`` is a handle of the same array (the same storage object)."""
        return isinstance(other, TensorArrayHandle) and other._storage is self._storage

    def __hash__(self) -> int:
        """Return the ``id`` of the array's storage, so equal handles hash equal."""
        return id(self._storage)

    def __repr__(self) -> str:
        """Return ``<TensorArrayHandle name="<container><name>">`` (the two joined with no separator)."""
        return f'<TensorArrayHandle name="{self.container}{self.name}">'

    def __reduce__(self) -> tuple[type[TensorArrayHandle], tuple[Storage]]:
        """Pickle by value: the array's state goes with the handle (see :class:`numba_ta.TensorArray`).

        ``copy.copy`` gives an equal handle to the same array; ``copy.deepcopy`` and
        pickling give a handle to a new, independent array with a new unique name.
        """
        return TensorArrayHandle, (self._storage,)


def new_name(base: str) -> str:
    """Return ``"<base>_<counter>"`` with the process-global counter (TF's ``tensor_array_counter``)."""
    with _lock:
        return f"{base}_{next(_counter)}"


def register(storage: Storage) -> TensorArrayHandle:
    """Record a live array and return a new handle for it."""
    with _lock:
        _live[storage.name] = storage
    return TensorArrayHandle(storage)


def storage_of(handle: object, op: str) -> Storage:
    """Return the storage behind ``handle``.

    ``handle`` is a :class:`TensorArrayHandle`, a ``numba_ta.TensorArray``, or
    TF1's string handle ``[container, name]`` (see :func:`string_handle`).  A
    TensorFlow tensor of another dtype, or a TensorList, raises TF's op
    definition error (``NT-input-dtype``); anything else raises as TF's
    conversion to a resource tensor does: ``InvalidArgumentError`` (a
    ``ValueError``) for None and arrays, ``TypeError`` otherwise.
    """
    if isinstance(handle, TensorArrayHandle):
        return handle._storage
    inner = getattr(handle, "handle", None)  # a numba_ta.TensorArray passed where its handle belongs
    if isinstance(inner, TensorArrayHandle):
        return inner._storage
    parts = string_handle(handle)
    if parts is not None:
        container, name = parts
        if op in _GRAD_OPS and container != FORWARD_CONTAINER:
            raise _messages.error("NT-grad-container", container=container)
        return lookup(container + name)
    if op in _opdefs.INPUTS:
        _opdefs.check_input(handle, op, "handle")
        if type(handle).__name__ == "TensorListHandle":  # a list where an array belongs: TF's variant tensor
            raise _messages.error("NT-input-dtype", op=op, index=0, expected="resource", dtype="variant")
    fields = {"op_name": op, "handle": handle, "type_name": type(handle).__name__}
    if handle is None or isinstance(handle, np.ndarray):
        # a ValueError, as TF's conversion of these to a resource
        raise _messages.error("NT-handle", op=op, **fields)
    raise _messages.python_error("NT-handle-type", **fields)


_GRAD_OPS = ("TensorArrayGradV3", "TensorArrayGradWithShape")


def _text(x: object) -> str:
    return x.decode(errors="backslashreplace") if isinstance(x, bytes) else str(x)


def string_handle(handle: object) -> tuple[str, str] | None:
    """Return ``(container, name)`` of TF1's string handle; None when ``handle`` is not strings.

    TF1 graphs (the V2 ops, whose kernels the V3 ops share) address an array by a
    string vector ``[container, name]``: ``_tensor_arrays`` and the array's unique
    name, or ``_tensor_array_grads`` and a gradient array's.  Taken as a numpy
    array of ``str`` or ``bytes`` (or an object array of them), a list or tuple of
    them, or a TensorFlow string tensor (a bare ``str`` is not one: TensorFlow's
    conversion of it to a resource handle raises ``TypeError``, and so does numba_ta).

    Raises
    ------
    InvalidArgumentError
        ``NT-handle-shape``: strings, but not two of them.

    Examples
    --------
    >>> string_handle([b"_tensor_arrays", b"TensorArrayV3_0"])
    ('_tensor_arrays', 'TensorArrayV3_0')
    >>> string_handle(3.0) is None
    True
    """
    a: Any
    if tensor_dtype_name(handle) == "string":
        a = np.asarray(cast(Any, handle).numpy(), dtype=object)
    elif isinstance(handle, np.ndarray):
        a = handle
    elif isinstance(handle, (list, tuple)):
        try:
            a = np.array(handle, dtype=object)
        except ValueError:  # ragged: not a tensor at all
            return None
    else:
        return None
    if a.dtype.kind == "O":
        if not a.size or not all(isinstance(x, (str, bytes)) for x in a.reshape(-1).tolist()):
            return None
    elif a.dtype.kind not in "US":
        return None
    if a.size != 2:
        raise _messages.error("NT-handle-shape", shape=shape_str(a.shape))
    container, name = a.reshape(-1).tolist()
    return _text(container), _text(name)


def lookup(key: str) -> Storage:
    """Return the live array TF's resource manager finds under ``key`` (container and name, joined).

    Raises
    ------
    NotFoundError
        ``NT-not-found``: no live array has that key (numba_ta frees an array when
        its last handle goes, where TF keeps it to the end of the step).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name="lk")
    >>> lookup("_tensor_arrays" + h.name) is h._storage
    True
    """
    with _lock:
        for container, grad in ((FORWARD_CONTAINER, False), (GRAD_CONTAINER, True)):
            if key.startswith(container):
                storage = cast("Storage | None", _live.get(key[len(container) :]))
                if storage is not None and storage.is_grad == grad:
                    return storage
    raise _messages.error("NT-not-found", key=key)


def _rename(storage: Storage, name: str) -> None:
    """Give the live array ``storage`` the unique name ``name``.

    Used for an unpickled gradient array joining its unpickled forward array; does nothing
    when it has that name already.
    """
    with _lock:
        if storage.name == name:
            return
        if _live.get(storage.name) is storage:
            del _live[storage.name]
        storage.name = name
        _live[name] = storage


def live_arrays() -> list[str]:
    """List the names of arrays that are still alive (not yet garbage collected)."""
    with _lock:
        return sorted(_live.keys())


def _after_fork_in_child() -> None:
    """Give the forked child fresh, unheld locks: the registry's and every live array's.

    Runs in the child only, where the forking thread is the only thread, so no
    lock is taken here.  Never raises: an error is swallowed per array.
    """
    global _lock
    _lock = threading.Lock()
    try:
        storages = list(_live.values())
    except Exception:  # pragma: no cover - never fail a fork over this
        return
    for storage in storages:
        try:
            storage.lock = threading.Lock()
            storage.held = None  # no compiled call runs in the child
        except Exception:  # pragma: no cover
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _reset() -> None:
    """Forget the live-array table (tests); the name counter keeps counting."""
    with _lock:
        _live.clear()
