"""Naive, obviously-correct reference model of TensorFlow's TensorArray V3 kernels.

This is the test oracle for :mod:`numba_ta.raw_ops`.  It follows the documentation's
TensorFlow semantics reference (``docs/semantics.rst``, sections ``sem-array`` to
``sem-grad-arrays``) literally: an array is
a Python list of per-element records (value as an ndarray or None, shape tuple,
flags written/read/cleared/local_copy) and every op performs TF's checks in TF's
order with TF's exact message texts.  Speed is irrelevant.

numba_ta's deliberate divergences from TF are built in:

* every op is atomic: the whole model state is deep-copied before an op and put
  back if the op raises, so a failed op changes nothing (TF keeps partial
  effects: growth by a failed dynamic write, partial scatters/gathers, the
  Gather ``element_shape`` narrowing, first-write shape inference, the
  dynamic-size lock of a failing Grad op);
* Concat on a gradient array whose forward array was never split, and a
  negative split length, raise :class:`InvalidArgumentError` (TF crashes); these
  errors carry ``divergence = True`` because numba_ta may word them freely.

Element states (semantics reference, ``sem-states``), as reported by :meth:`Reference.state`:
``U`` unwritten, ``W`` written, ``Z`` soft zero (written, no value), ``A``
aggregated (private sum buffer), ``R`` read and kept, ``C`` read and cleared.

Unique names come from the model's own counter; compare names with numba_ta's
after normalising the trailing ``_<digits>`` counter.
"""

from __future__ import annotations

import copy
import functools

import numpy as np

from numba_ta.errors import InvalidArgumentError, NotFoundError, UnimplementedError

__all__ = [
    "Reference",
    "RefHandle",
    "dtype_name",
    "shape_str",
    "partial_str",
    "convert_value",
]

_FWD_CONTAINER = "_tensor_arrays"
_GRAD_CONTAINER = "_tensor_array_grads"
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


# --------------------------------------------------------------------------- text forms


def dtype_name(dt):
    """TF's ``DataTypeString``: ``float``, ``double``, ``half``, else numpy's name."""
    dt = np.dtype(dt)
    return {"float16": "half", "float32": "float", "float64": "double"}.get(dt.name, dt.name)


def shape_str(shape):
    """``TensorShape::DebugString``: ``[2,3]``, ``[]``."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def partial_str(p):
    """``PartialTensorShape::DebugString``: ``<unknown>``, ``[?,3]``, ``[]``."""
    if p is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(int(d)) for d in p) + "]"


# --------------------------------------------------------------------------- partial shapes
# A partial shape is None (unknown rank) or a tuple of int / None entries.


def _as_partial(shape):
    if shape is None:
        return None
    if hasattr(shape, "as_list") and not isinstance(shape, (list, tuple)):
        # numba_ta.TensorShape / tf.TensorShape
        rank = getattr(shape, "rank", getattr(shape, "ndims", 0))
        if rank is None:
            return None
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    return tuple(None if d is None else int(d) for d in shape)


def _divergence(message):
    """An InvalidArgumentError for a case where TF crashes; numba_ta may word it freely."""
    err = InvalidArgumentError(message)
    err.divergence = True
    return err


def fully_defined(p):
    return p is not None and all(d is not None for d in p)


def compatible(p, shape):
    """``PartialTensorShape::IsCompatibleWith``."""
    if p is None or shape is None:
        return True
    if len(p) != len(shape):
        return False
    return all(a is None or b is None or a == b for a, b in zip(p, shape, strict=True))


def merge_es(current, candidate):
    """``PartialTensorShape::MergeWith`` with TF's error texts."""
    if current is None:
        return candidate
    if candidate is None:
        return current
    if len(current) != len(candidate):
        raise InvalidArgumentError(
            f"PartialTensorShape: Incompatible ranks during merge: {len(current)} vs. {len(candidate)}"
        )
    out = []
    for a, b in zip(current, candidate, strict=True):
        if a is not None and b is not None and a != b:
            raise InvalidArgumentError(
                "PartialTensorShape: Incompatible shapes during merge: "
                f"{partial_str(current)} vs. {partial_str(candidate)}"
            )
        out.append(a if a is not None else b)
    return tuple(out)


# --------------------------------------------------------------------------- conversions


def convert_value(value):
    """Convert a written value like ``tf.convert_to_tensor`` with no dtype hint.

    numpy arrays and numpy scalars keep their dtype; Python floats become
    float32, Python ints int32 (int64 when out of int32 range), bools bool,
    complex numbers complex128.
    """
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value)  # private copy, same dtype
    arr = np.array(value)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    elif arr.dtype.kind == "i":
        if arr.size == 0 or (arr.min() >= _INT32_MIN and arr.max() <= _INT32_MAX):
            arr = arr.astype(np.int32)
        else:
            arr = arr.astype(np.int64)
    return arr


def _as_dtype(dtype):
    if hasattr(dtype, "as_numpy_dtype"):
        dtype = dtype.as_numpy_dtype
    return np.dtype(dtype)


def _as_int_tensor(x, dtype):
    """An integer input (index, indices, lengths, shape_to_prepend) as an ndarray."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            arr = arr.astype(dtype)
        else:
            raise TypeError(f"expected integers, got {arr.dtype}")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- model state


class RefHandle:
    """Handle to a reference array: ``name`` is the unique name, ``container`` the resource container."""

    __slots__ = ("name", "container")

    def __init__(self, name, container):
        self.name = name
        self.container = container

    @property
    def resource_name(self):
        return self.container + self.name

    def __repr__(self):
        return f"RefHandle({self.resource_name!r})"


class _Elem:
    """``TensorAndState``: one slot (semantics reference, ``sem-states``)."""

    __slots__ = ("tensor", "shape", "written", "read", "cleared", "local_copy")

    def __init__(self):
        self.tensor = None
        self.shape = ()
        self.written = False
        self.read = False
        self.cleared = False
        self.local_copy = False

    def clone(self):
        e = _Elem()
        e.tensor = None if self.tensor is None else self.tensor.copy()
        e.shape = self.shape
        e.written, e.read, e.cleared, e.local_copy = self.written, self.read, self.cleared, self.local_copy
        return e

    def letter(self):
        if not self.written:
            return "U"
        if self.cleared:
            return "C"
        if self.read:
            return "R"
        if self.tensor is None:
            return "Z"
        if self.local_copy:
            return "A"
        return "W"


class _TA:
    """One TensorArray resource (semantics reference, ``sem-fields``)."""

    def __init__(
        self,
        name,
        key,
        dtype,
        size,
        element_shape,
        dynamic_size,
        multiple_writes_aggregate,
        clear_after_read,
        is_grad,
        marked_size,
        identical_element_shapes,
    ):
        self.name = name
        self.key = key
        self.dtype = dtype
        self.closed = False
        self.dynamic_size = dynamic_size
        self.multiple_writes_aggregate = multiple_writes_aggregate
        self.gradients_disallowed = False
        self.clear_after_read = clear_after_read
        self.is_grad = is_grad
        self.marked_size = marked_size
        self.element_shape = element_shape
        self.identical_element_shapes = identical_element_shapes
        self.tensors = [_Elem() for _ in range(size)]

    def clone(self):
        """A deep copy (element values copied) for the atomic-op snapshots."""
        other = copy.copy(self)
        other.tensors = [e.clone() for e in self.tensors]
        return other

    # -- derived sizes (sem-fields)
    def _check_open(self):
        if self.closed:
            raise InvalidArgumentError(f"TensorArray {self.name} has already been closed.")

    def size(self):
        self._check_open()
        return len(self.tensors)

    def get_marked_size(self):
        self._check_open()
        return self.marked_size

    def pack_or_concat_size(self):
        self._check_open()
        return self.marked_size if self.is_grad else len(self.tensors)

    def set_marked_size(self, n):
        if not self.is_grad:
            self.marked_size = n

    def set_elem_shape(self, candidate):
        """``SetElemShape`` (sem-merge-shape): no closed check."""
        self.element_shape = merge_es(self.element_shape, candidate)

    def clear_and_mark_closed(self):
        self.tensors = []
        self.closed = True

    # -- LockedWriteOrAggregate (sem-write-element)
    def write_or_aggregate(self, index, value):
        self._check_open()  # T1
        n = len(self.tensors)
        if index < 0 or (not self.dynamic_size and index >= n):  # T2
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Tried to write to index {index} but array is not resizeable and size is: {n}"
            )
        if self.dynamic_size and index >= n:
            self.tensors.extend(_Elem() for _ in range(index + 1 - n))
        if value.dtype != self.dtype:  # T3 (unreachable through the V3 ops)
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because the value "
                f"dtype is {dtype_name(value.dtype)} but TensorArray dtype is {dtype_name(self.dtype)}."
            )
        if not compatible(self.element_shape, value.shape):  # T4
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because the value "
                f"shape is {shape_str(value.shape)} which is incompatible with the TensorArray's inferred "
                f"element shape: {partial_str(self.element_shape)} (consider setting infer_shape=False)."
            )
        if self.identical_element_shapes and not fully_defined(self.element_shape):
            self.element_shape = tuple(value.shape)
        t = self.tensors[index]
        if t.read:  # T5
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because it has "
                "already been read."
            )
        if not self.multiple_writes_aggregate and t.written:  # T6
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because it has "
                "already been written to."
            )
        if t.written:  # aggregating array
            if tuple(value.shape) != tuple(t.shape):  # T7
                raise InvalidArgumentError(
                    f"TensorArray {self.name}: Could not aggregate to TensorArray index {index} because the "
                    f"existing shape is {shape_str(t.shape)} but the new input shape is "
                    f"{shape_str(value.shape)}."
                )
            if t.tensor is None or t.tensor.size == 0:
                t.tensor = value.copy()
                return
            if value.dtype == np.bool_ or value.dtype.kind not in "iufc":  # T8
                raise InvalidArgumentError(f"tensor_array::AddToTensor type not supported: {dtype_name(value.dtype)}")
            if t.local_copy:
                t.tensor += value  # in place
            else:
                t.tensor = np.asarray(t.tensor + value)  # fresh buffer
                t.local_copy = True
            self.gradients_disallowed = True
            return
        t.tensor = value.copy()
        t.shape = tuple(value.shape)
        t.written = True

    # -- LockedRead (sem-read-element)
    def read(self, index):
        self._check_open()  # T1
        n = len(self.tensors)
        if index < 0 or (not self.is_grad and index >= n):  # T9
            raise InvalidArgumentError(f"Tried to read from index {index} but array size is: {n}")
        if self.is_grad and index >= n:
            unwritten = True
        else:
            unwritten = not self.tensors[index].written
        if unwritten:
            if self.is_grad and index < n and len(self.tensors[index].shape) > 0:
                shape = self.tensors[index].shape
            elif not fully_defined(self.element_shape):  # T10
                raise InvalidArgumentError(
                    f"TensorArray {self.name}: Could not read from TensorArray index {index}.  Furthermore, "
                    f"the element shape is not fully defined: {partial_str(self.element_shape)}.  It is "
                    "possible you are working with a resizeable TensorArray and stop_gradients is not "
                    "allowing the gradients to be written.  If you set the full element_shape property on "
                    "the forward TensorArray, the proper all-zeros tensor will be returned instead of "
                    "incurring this error."
                )
            else:
                shape = tuple(self.element_shape)
            if index >= n:  # grad arrays only: grow with soft zeros
                for _ in range(index + 1 - n):
                    e = _Elem()
                    e.shape = shape
                    e.written = True
                    self.tensors.append(e)
            else:
                e = self.tensors[index]
                e.shape = shape
                e.written = True
        t = self.tensors[index]
        if t.cleared:  # T11
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not read index {index} twice because it was cleared after "
                "a previous read (perhaps try setting clear_after_read = false?)."
            )
        if t.tensor is None or t.tensor.size == 0:
            t.tensor = np.zeros(t.shape, dtype=self.dtype)
        out = t.tensor.copy()
        if self.clear_after_read:
            t.tensor = None
            t.cleared = True
        t.read = True
        return out

    def read_many(self, indices):
        return [self.read(int(i)) for i in indices]

    def write_or_aggregate_many(self, indices, values):
        for i, v in zip(indices, values, strict=True):
            self.write_or_aggregate(int(i), v)

    def copy_shapes_from(self, rhs, prepend):
        """``CopyShapesFrom`` (sem-copy-shapes)."""
        self._check_open()
        rhs._check_open()
        if len(self.tensors) != len(rhs.tensors):  # T13 (unreachable)
            raise InvalidArgumentError(
                f"TensorArray sizes do not match during CopyShapesFrom: {self.name} has size "
                f"{len(self.tensors)} but rhs {rhs.name} has size {len(rhs.tensors)}"
            )
        for mine, theirs in zip(self.tensors, rhs.tensors, strict=True):
            if theirs.written:
                mine.shape = tuple(prepend) + tuple(theirs.shape)
                mine.written = True


# --------------------------------------------------------------------------- ops


def _atomic(fn):
    """Make an op atomic: if it raises, put the model back exactly as it was.

    An op mutates only the array named by its ``handle`` argument (a Grad op: that
    forward array, plus possibly a new registry entry), so a deep copy of that array
    and a shallow copy of the registry are a complete snapshot.
    """

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if not self.atomic:
            return fn(self, *args, **kwargs)
        handle = kwargs.get("handle", args[0] if args else None)
        key = handle.resource_name if isinstance(handle, RefHandle) else None
        saved_arrays = dict(self._arrays)
        saved_ta = self._arrays[key].clone() if key in self._arrays else None
        saved_counter = self._counter
        try:
            return fn(self, *args, **kwargs)
        except BaseException:
            self._arrays = saved_arrays
            if saved_ta is not None:
                self._arrays[key] = saved_ta
            self._counter = saved_counter
            raise

    return wrapper


class Reference:
    """A resource manager plus the eleven V3 ops, keyword-compatible with ``numba_ta.raw_ops``.

    Each instance has its own arrays and its own unique-name counter.

    Parameters
    ----------
    atomic : bool, default True
        numba_ta's semantics: a failing op changes nothing.  ``atomic=False`` keeps
        TF's partial effects of failing ops instead (growth by a failed dynamic write,
        partial scatters/gathers/concats, Gather's element-shape narrowing, first-write
        shape inference, the dynamic-size lock of a failing Grad op); it exists to check
        this model against TensorFlow itself.
    """

    def __init__(self, atomic=True):
        self.atomic = atomic
        self._arrays = {}  # resource name -> _TA
        self._counter = 0

    # -- helpers
    def _lookup(self, handle):
        ta = self._arrays.get(handle.resource_name)
        if ta is None:
            raise NotFoundError(f"Resource {handle.resource_name} does not exist.")
        return ta

    @staticmethod
    def _check_index(index):
        idx = _as_int_tensor(index, np.int32)
        if idx.ndim != 0:  # K6
            raise InvalidArgumentError(f"TensorArray index must be scalar, but had shape: {shape_str(idx.shape)}")
        return int(idx)

    @staticmethod
    def _check_read_dtype(ta, dtype):
        dtype = _as_dtype(dtype)
        if dtype != ta.dtype:  # K8
            raise InvalidArgumentError(
                f"TensorArray dtype is {dtype_name(ta.dtype)} but Op requested dtype {dtype_name(dtype)}."
            )

    @staticmethod
    def _check_write_dtype(ta, value):
        if value.dtype != ta.dtype:  # K7
            raise InvalidArgumentError(
                f"TensorArray dtype is {dtype_name(ta.dtype)} but Op is trying to write dtype "
                f"{dtype_name(value.dtype)}."
            )

    # -- introspection
    def state(self, handle):
        """The full state of an array as plain Python data."""
        ta = self._arrays[handle.resource_name]
        return {
            "name": ta.name,
            "dtype": ta.dtype,
            "size": len(ta.tensors),
            "states": "".join(e.letter() for e in ta.tensors),
            "shapes": [tuple(e.shape) for e in ta.tensors],
            "element_shape": ta.element_shape,
            "closed": ta.closed,
            "dynamic_size": ta.dynamic_size,
            "marked_size": ta.marked_size,
            "is_grad": ta.is_grad,
            "identical_element_shapes": ta.identical_element_shapes,
            "clear_after_read": ta.clear_after_read,
            "gradients_disallowed": ta.gradients_disallowed,
        }

    def values(self, handle):
        """Stored values (copies, None where there is none), without changing any state."""
        ta = self._arrays[handle.resource_name]
        return [None if e.tensor is None else e.tensor.copy() for e in ta.tensors]

    # -- TensorArrayV3 (sem-create)
    @_atomic
    def TensorArrayV3(
        self,
        size,
        dtype,
        element_shape=None,
        dynamic_size=False,
        clear_after_read=True,
        identical_element_shapes=False,
        tensor_array_name="",
        name=None,
    ):
        dtype = _as_dtype(dtype)
        size_arr = _as_int_tensor(size, np.int32)
        if size_arr.ndim != 0:
            raise InvalidArgumentError(f"TensorArray size must be scalar, but had shape: {shape_str(size_arr.shape)}")
        n = int(size_arr)
        if n < 0:
            raise InvalidArgumentError("Size should be >= 0.")
        uname = f"{tensor_array_name or 'TensorArrayV3'}_{self._counter}"
        self._counter += 1
        handle = RefHandle(uname, _FWD_CONTAINER)
        self._arrays[handle.resource_name] = _TA(
            uname,
            handle.resource_name,
            dtype,
            n,
            _as_partial(element_shape),
            bool(dynamic_size),
            multiple_writes_aggregate=False,
            clear_after_read=bool(clear_after_read),
            is_grad=False,
            marked_size=-1,
            identical_element_shapes=bool(identical_element_shapes),
        )
        return handle, np.float32(0.0)

    # -- TensorArrayWriteV3 (sem-write)
    @_atomic
    def TensorArrayWriteV3(self, handle, index, value, flow_in, name=None):
        flow = np.float32(flow_in)
        index = self._check_index(index)
        ta = self._lookup(handle)
        value = convert_value(value)
        self._check_write_dtype(ta, value)
        ta.write_or_aggregate(index, value)
        return flow

    # -- TensorArrayReadV3 (sem-read)
    @_atomic
    def TensorArrayReadV3(self, handle, index, flow_in, dtype, name=None):
        index = self._check_index(index)
        ta = self._lookup(handle)
        self._check_read_dtype(ta, dtype)
        return ta.read(index)

    # -- TensorArrayGatherV3 (sem-gather)
    @_atomic
    def TensorArrayGatherV3(self, handle, indices, flow_in, dtype, element_shape=None, name=None):
        ta = self._lookup(handle)
        self._check_read_dtype(ta, dtype)
        attr = _as_partial(element_shape)
        ta.set_elem_shape(attr)
        idx = _as_int_tensor(indices, np.int32)
        if idx.ndim != 1:  # G2
            raise InvalidArgumentError(f"Expected indices to be a vector, but received shape: {shape_str(idx.shape)}")
        if idx.size == 0:
            if not fully_defined(attr):  # G3
                raise UnimplementedError(
                    f"TensorArray has size zero, but element shape {partial_str(attr)} is not fully "
                    "defined. Currently only static shapes are supported when packing zero-size "
                    "TensorArrays."
                )
            return np.zeros((0,) + tuple(attr), dtype=ta.dtype)
        values = ta.read_many(idx)
        shape0 = tuple(values[0].shape)
        if not compatible(attr, shape0):  # G4
            raise InvalidArgumentError(
                f"TensorArray was passed element_shape {partial_str(attr)} which does not match the Tensor "
                f"at index 0: {shape_str(shape0)}"
            )
        if values[0].size == 0:
            # TF returns the (empty) output before comparing shapes, so no G5 here
            # (tensor_array_ops.cc, TensorArrayPackOrGatherOp: "If output_tensor is empty,
            # there is nothing to concatenate so return it."; sem-gather, step 7).
            return np.zeros((len(values),) + shape0, dtype=ta.dtype)
        for k in range(1, len(values)):
            if tuple(values[k].shape) != shape0:  # G5
                raise InvalidArgumentError(
                    f"TensorArray has inconsistent shapes.  Index 0 has shape: {shape_str(shape0)} but index "
                    f"{k} has shape: {shape_str(values[k].shape)}"
                )
        return np.stack(values).astype(ta.dtype, copy=False)

    # -- TensorArrayScatterV3 (sem-scatter)
    @_atomic
    def TensorArrayScatterV3(self, handle, indices, value, flow_in, name=None):
        flow = np.float32(flow_in)
        ta = self._lookup(handle)
        value = convert_value(value)
        self._check_write_dtype(ta, value)  # K7
        if value.ndim == 0:  # S2
            raise InvalidArgumentError(
                f"Input value for unpack must be at least a vector but received shape: {shape_str(value.shape)}"
            )
        size = ta.size()  # T1
        idx = _as_int_tensor(indices, np.int32)
        if idx.ndim != 1:  # G2
            raise InvalidArgumentError(f"Expected indices to be a vector, but received shape: {shape_str(idx.shape)}")
        if idx.shape[0] != value.shape[0]:  # S3
            raise InvalidArgumentError(
                f"Expected len(indices) == values.shape[0], but saw: {idx.shape[0]} vs. {value.shape[0]}"
            )
        max_index = int(idx.max()) if idx.size else -1
        if ta.dynamic_size and size < max_index + 1:
            size = max_index + 1
        if max_index >= size:  # S4
            raise InvalidArgumentError(f"Max scatter index must be < array size ({max_index} vs. {size})")
        ta.write_or_aggregate_many(idx, [np.array(value[k]) for k in range(value.shape[0])])
        return flow

    # -- TensorArrayConcatV3 (sem-concat)
    @_atomic
    def TensorArrayConcatV3(self, handle, flow_in, dtype, element_shape_except0=None, name=None):
        ta = self._lookup(handle)
        self._check_read_dtype(ta, dtype)
        n = ta.pack_or_concat_size()  # T1
        if n < 0:  # TF crashes here (grad array whose forward was never split)
            raise _divergence(
                f"TensorArray {ta.name}: cannot concat a gradient TensorArray whose forward TensorArray was never split"
            )
        attr = _as_partial(element_shape_except0)
        if n == 0:
            if not fully_defined(attr):  # C1
                raise UnimplementedError(
                    f"TensorArray has size zero, but element_shape_except0 {partial_str(attr)} is not fully "
                    "defined. Currently only static shapes are supported when concatenating zero-size "
                    "TensorArrays."
                )
            return np.zeros((0,) + tuple(attr), dtype=ta.dtype), np.zeros((0,), dtype=np.int64)
        values = ta.read_many(range(n))
        lengths = []
        shape0_except0 = None
        for i, v in enumerate(values):
            if v.ndim == 0:  # C2
                raise InvalidArgumentError(
                    f"Concat saw a scalar shape at index {i} but requires at least vectors.  Did you mean to call pack?"
                )
            lengths.append(v.shape[0])
            except0 = tuple(v.shape[1:])
            if i == 0:
                shape0_except0 = except0
                if not compatible(attr, except0):  # C3
                    raise InvalidArgumentError(
                        f"TensorArray was passed element_shape_except0 {partial_str(attr)} but index 0 has "
                        f"(excepting dimension 0) shape: {shape_str(except0)} which does not match."
                    )
            elif except0 != shape0_except0:  # C4
                raise InvalidArgumentError(
                    "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: "
                    f"{shape_str(shape0_except0)} but index {i} has (excepting dimension 0) shape: "
                    f"{shape_str(except0)}"
                )
        value = np.concatenate(values, axis=0).astype(ta.dtype, copy=False)
        return value, np.asarray(lengths, dtype=np.int64)

    # -- TensorArraySplitV3 (sem-split)
    @_atomic
    def TensorArraySplitV3(self, handle, value, lengths, flow_in, name=None):
        flow = np.float32(flow_in)
        ta = self._lookup(handle)
        lens = _as_int_tensor(lengths, np.int64)
        if lens.ndim != 1:  # P1
            raise InvalidArgumentError(f"Expected lengths to be a vector, received shape: {shape_str(lens.shape)}")
        value = convert_value(value)
        if value.ndim == 0:  # P3
            raise InvalidArgumentError(
                f"Expected value to be at least a vector, but received shape: {shape_str(value.shape)}"
            )
        total = int(lens.sum())
        if total != value.shape[0]:  # P4
            raise InvalidArgumentError(
                "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{total} and value's shape is: {shape_str(value.shape)}"
            )
        size = ta.size()  # T1
        if (lens < 0).any():  # TF aborts here
            raise _divergence(f"TensorArray {ta.name}: split lengths must be non-negative, got {lens.tolist()}")
        n = lens.shape[0]
        if ta.dynamic_size and size < n:
            size = n
        if size != n:  # P5
            raise InvalidArgumentError(
                f"TensorArray's size is not equal to the size of lengths ({size} vs. {n}), and the "
                "TensorArray is not marked as dynamically resizeable"
            )
        self._check_write_dtype(ta, value)  # K7
        starts = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        pieces = [value[starts[i] : starts[i + 1]].copy() for i in range(n)]
        ta.set_marked_size(size)
        ta.write_or_aggregate_many(range(size), pieces)
        return flow

    # -- TensorArraySizeV3 (sem-size)
    @_atomic
    def TensorArraySizeV3(self, handle, flow_in, name=None):
        ta = self._lookup(handle)
        return np.int32(ta.size())

    # -- TensorArrayCloseV3 (sem-close)
    @_atomic
    def TensorArrayCloseV3(self, handle, name=None):
        ta = self._lookup(handle)
        ta.clear_and_mark_closed()
        return None

    # -- TensorArrayGradV3 / TensorArrayGradWithShape (sem-grad-op)
    def _grad(self, handle, source, prepend_arg, with_shape):
        # step 1: resolve the forward name from the resource name
        rname = handle.resource_name
        if not rname.startswith(_FWD_CONTAINER):  # R2
            raise InvalidArgumentError(f"Wrong input container. {rname}")
        fwd_name = rname[len(_FWD_CONTAINER) :]
        grad_name = f"{fwd_name}@{source}"
        grad_handle = RefHandle(grad_name, _GRAD_CONTAINER)
        fwd = self._lookup(RefHandle(fwd_name, _FWD_CONTAINER))  # step 3
        fwd.dynamic_size = False  # step 4 (kept only if the op succeeds: atomic)
        size = fwd.size()  # step 5: T1
        marked = fwd.get_marked_size()
        if size < 0:  # step 6 (unreachable)
            raise InvalidArgumentError("ArraySize should be >= 0.")
        if fwd.gradients_disallowed:  # R4 (unreachable with V3)
            raise InvalidArgumentError(
                f"Unable to create a gradients TensorArray for {fwd_name}.  Perhaps you used the "
                "multiple_writes_aggregate flag on a previous write?  Gradient calculation is impossible "
                "when multiple writes are performed to the same index."
            )
        # step 8: element shape
        prepend = ()
        if with_shape:
            p = _as_int_tensor(prepend_arg, np.int32)
            if p.ndim != 1:
                raise InvalidArgumentError(f"shape must be a vector of {{int32,int64}}, got shape {shape_str(p.shape)}")
            for d in p.tolist():
                if d < 0:
                    raise InvalidArgumentError(f"Dimension {d} must be >= 0")
            prepend = tuple(int(d) for d in p.tolist())
            if fwd.element_shape is None:
                elem = None
            else:
                elem = prepend + tuple(fwd.element_shape)
        else:
            elem = fwd.element_shape
        # step 9: LookupOrCreate
        if grad_handle.resource_name not in self._arrays:
            g = _TA(
                grad_name,
                grad_handle.resource_name,
                fwd.dtype,
                size,
                elem,
                dynamic_size=False,
                multiple_writes_aggregate=True,
                clear_after_read=True,
                is_grad=True,
                marked_size=marked,
                identical_element_shapes=fwd.identical_element_shapes,
            )
            g.copy_shapes_from(fwd, prepend)
            self._arrays[grad_handle.resource_name] = g
        return grad_handle, np.float32(0.0)

    @_atomic
    def TensorArrayGradV3(self, handle, flow_in, source, name=None):
        return self._grad(handle, source, None, with_shape=False)

    @_atomic
    def TensorArrayGradWithShape(self, handle, flow_in, shape_to_prepend, source, name=None):
        return self._grad(handle, source, shape_to_prepend, with_shape=True)


OPS = (
    "TensorArrayV3",
    "TensorArrayWriteV3",
    "TensorArrayReadV3",
    "TensorArrayGatherV3",
    "TensorArrayScatterV3",
    "TensorArrayConcatV3",
    "TensorArraySplitV3",
    "TensorArraySizeV3",
    "TensorArrayCloseV3",
    "TensorArrayGradV3",
    "TensorArrayGradWithShape",
)

# Module-level functions over one default model, for quick interactive use.
_default = Reference()
for _op in OPS:
    globals()[_op] = getattr(_default, _op)
state = _default.state
del _op
