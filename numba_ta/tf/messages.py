"""Every error message numba_ta raises for a TensorArray or a TensorList, keyed by its code.

:data:`MESSAGES` maps each code to ``(error class, message template)``; the
templates take named fields (``str.format`` syntax, ``{index}``, ``{name}``
...).  :func:`error` builds the exception of an op error (an
:class:`~numba_ta.errors.OpError`), :func:`python_error` the exception of a
Python-level ``ValueError`` or ``TypeError``; both check that the fields given
are exactly the template's.  Callers pass shapes and dtypes formatted as
TensorFlow prints them (:func:`shape_str`, :func:`partial_str` and
:func:`py_str`, here: every text form of a shape lives in this module;
``tf_name`` of ``_dtypes``), or objects whose ``str`` is that text (a
``TensorShape``).  Compiled code, which cannot call these functions, takes the
templates from :data:`MESSAGES` and fills in the fields itself.

Codes
-----
The codes of the TensorFlow semantics reference (``docs/semantics.rst``,
section ``message-codes``), each with TensorFlow's class and text:

* ``T1`` to ``T13``: the checks of the array itself (``T3``, ``T12`` and
  ``T13`` are in the table for completeness; numba_ta cannot reach them);
* ``K6``, ``K7``, ``K8``: the index and dtype checks of the ops;
* ``G2`` to ``G5`` (gather), ``S2`` to ``S4`` (scatter), ``C1`` to ``C4``
  (concat), ``P1`` to ``P5`` (split), ``R2`` and ``R4`` (gradient ops).

The TensorList codes of the reference (section ``tl-message-codes``) are
``L1`` to ``L71`` and the ``NT-tl-*`` codes (numba_ta's own texts, below).
The ``L`` codes, each with TensorFlow's class and text:

* ``L1`` to ``L71``: the checks of the TensorList ops and of the list kernels
  of ``ZerosLike`` and ``AddN``, each an ``InvalidArgumentError`` but ``L68``
  (``InternalError``) and ``L70`` (``NotFoundError``); ``L70`` and ``L71``
  are the first lines of TensorFlow's texts for an op with no kernel for
  ``resource`` (lists of resources, ``tl-resource``).  The TensorList texts
  that are TensorArray texts keep their codes: ``G2``, ``P1``,
  ``NT-merge-shape`` and ``NT-merge-rank``.

numba_ta's codes for TensorFlow texts that the reference gives without a
code:

* ``NT-size-scalar``, ``NT-size-negative``: ``TensorArrayV3``'s size checks
  (``sem-create``).
* ``NT-dim0-too-large``: scatter's first check (``sem-scatter``).
* ``NT-merge-rank``, ``NT-merge-shape``: merging an element shape
  (``sem-merge-shape``).
* ``NT-prepend-vector``, ``NT-prepend-negative``: the ``shape_to_prepend``
  checks of ``TensorArrayGradWithShape`` (``sem-grad-op``).
* ``NT-below-minus-one``: a shape attribute with a dimension below -1
  (TensorFlow's ``PartialTensorShape`` error).
* ``NT-oom`` (``ResourceExhaustedError``): TensorFlow's allocator error, for a
  result or for an array's storage that cannot be allocated.
* ``NT-class-handle-and-name``, ``NT-class-handle-type`` (``TypeError``),
  ``NT-class-no-size``, ``NT-class-handle-and-size``,
  ``NT-class-handle-and-shape``, ``NT-class-handle-and-dynamic``,
  ``NT-class-handle-and-clear``, ``NT-class-no-flow``: the class's
  constructor, checks 1 to 8, each a ``ValueError`` but the second
  (``sem-class-constructor``).
* ``NT-class-shapes`` (``ValueError``): the class's Python-side element shape
  check (``sem-class-shape``).
* ``NT-grad-source`` (``ValueError``): a gradient name with no part starting
  with ``gradients`` (``sem-grad-source``).

numba_ta's own texts (where TensorFlow crashes, or for what TensorFlow has no
such check):

* ``NT-concat-unsplit``: concat of a gradient array whose forward array was
  never split (``sem-crashes``).
* ``NT-split-negative``: a split length below 0 (``sem-crashes``).
* ``NT-split-int64``: a split piece with more than ``2**63 - 1`` items
  (``sem-crashes``).
* ``NT-convert-dim-negative`` (``ValueError``): a negative dimension in a
  shape argument (TensorFlow's ``TensorShape`` conversion error).
* ``NT-convert-dim-int64`` (``ValueError``): a shape dimension of ``2**63`` or
  more (``sem-crashes``).
* ``NT-convert-shape-int64`` (``ValueError``): a shape argument with more than
  ``2**63 - 1`` items.
* ``NT-shape-int64``: an element shape with more than ``2**63 - 1`` items.
* ``NT-prepend-int64``: the same, for a shape made with ``shape_to_prepend``:
  the error ``{message}`` with the prepended shape in front.
* ``NT-corrupt`` (``InternalError``): an element outside the array's storage
  (a numba_ta bug).
* ``NT-flow-scalar``: a ``flow_in`` that is not a scalar.
* ``NT-handle`` (``InvalidArgumentError``) and ``NT-handle-type``
  (``TypeError``): a ``handle`` argument that is not a TensorArray handle.
* ``NT-jit-rank`` (``NotImplementedError``): inside compiled code, an
  element whose rank is not the one of the array's Numba type.
* ``NT-input-dtype``: TensorFlow's op-definition check of an input's dtype
  (a TensorList op given a tensor where a list belongs, ``tl-common``; a
  TensorFlow tensor of another dtype than the op definition's, ``sem-common``
  and ``tl-common``).
* ``NT-input-attr``: the same check for an input whose dtype is an attribute
  that allows only int32 and int64 (``shape_type``, ``Tshape``).
* ``NT-handle-shape`` and ``NT-not-found`` (``NotFoundError``): a string
  handle ``[container, name]`` (``sem-common``) that is not two strings, and
  one that names no live array.
* ``NT-grad-container``: a gradient op given a string handle whose container
  is not ``_tensor_arrays``.

numba_ta's own TensorList texts, where TensorFlow crashes or corrupts a list
(the reference's ``tl-crashes``, listed in ``tl-message-codes``):

* ``NT-tl-index``: a ``TensorListGetItem`` index that is not one value.
* ``NT-tl-scatter-negative``, ``NT-tl-scatter-shape``: a negative index, and
  a row not compatible with a fully defined element shape, in
  ``TensorListScatterIntoExistingList``.
* ``NT-tl-split-shape``: a ``TensorListSplit`` piece not compatible with a
  fully defined element shape.
* ``NT-tl-leading-negative``, ``NT-tl-leading-vector``: a negative
  ``leading_dims`` entry, and a ``leading_dims`` that is not a vector, in
  ``TensorListConcatV2``.
* ``NT-tl-add-shape``: an ``AddN`` of lists whose sum would hold an element
  not compatible with its fully defined element shape.

Engine status codes
-------------------
The storage engine's compiled functions return a status instead of raising:
0, or the position in :data:`ENGINE_CODES` of the message code of the error
(one of the codes above).  They leave the error's fields in the array's
``err`` buffer (a status record, see :func:`engine_error`), and
:func:`engine_error` turns that record into the exception.

Examples
--------
>>> e = error("T9", index=3, size=1)
>>> type(e).__name__, e.message
('InvalidArgumentError', 'Tried to read from index 3 but array size is: 1')
>>> print(error("NT-size-negative", op="TensorArrayV3"))
Size should be >= 0. [Op:TensorArrayV3]
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from numba_ta.errors import (
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    ResourceExhaustedError,
    UnimplementedError,
)

__all__ = [
    "MESSAGES", "FIELDS", "ENGINE_CODES", "error", "python_error", "message", "engine_error", "shape_str",
    "partial_str", "py_str",
]  # fmt: skip

_IA = InvalidArgumentError
_HANDLE = (
    "{op_name}: `handle` must be a TensorArray handle returned by TensorArrayV3 or a gradient op, "
    "but got {handle!r} of type {type_name}"
)

MESSAGES: Mapping[str, tuple[type[Exception], str]] = MappingProxyType(
    {
        # ---------------------------------------------------------------- the array (sem-write-element,
        # sem-read-element, sem-copy-shapes)
        "T1": (_IA, "TensorArray {name} has already been closed."),
        "T2": (
            _IA,
            "TensorArray {name}: Tried to write to index {index} but array is not resizeable and size is: {size}",
        ),
        "T3": (
            _IA,
            "TensorArray {name}: Could not write to TensorArray index {index} because the value dtype is {dtype} "
            "but TensorArray dtype is {array_dtype}.",
        ),
        "T4": (
            _IA,
            "TensorArray {name}: Could not write to TensorArray index {index} because the value shape is {shape} "
            "which is incompatible with the TensorArray's inferred element shape: {element_shape} (consider "
            "setting infer_shape=False).",
        ),
        "T5": (
            _IA,
            "TensorArray {name}: Could not write to TensorArray index {index} because it has already been read.",
        ),
        "T6": (
            _IA,
            "TensorArray {name}: Could not write to TensorArray index {index} because it has already been written to.",
        ),
        "T7": (
            _IA,
            "TensorArray {name}: Could not aggregate to TensorArray index {index} because the existing shape is "
            "{old_shape} but the new input shape is {shape}.",
        ),
        "T8": (_IA, "tensor_array::AddToTensor type not supported: {dtype}"),
        "T9": (_IA, "Tried to read from index {index} but array size is: {size}"),
        "T10": (
            _IA,
            "TensorArray {name}: Could not read from TensorArray index {index}.  Furthermore, the element shape is "
            "not fully defined: {element_shape}.  It is possible you are working with a resizeable TensorArray and "
            "stop_gradients is not allowing the gradients to be written.  If you set the full element_shape "
            "property on the forward TensorArray, the proper all-zeros tensor will be returned instead of "
            "incurring this error.",
        ),
        "T11": (
            _IA,
            "TensorArray {name}: Could not read index {index} twice because it was cleared after a previous read "
            "(perhaps try setting clear_after_read = false?).",
        ),
        "T12": (_IA, "tensor_array::TensorSetZero type not supported: {dtype}"),
        "T13": (
            _IA,
            "TensorArray sizes do not match during CopyShapesFrom: {name} has size {size} but rhs {rhs_name} has "
            "size {rhs_size}",
        ),
        # ---------------------------------------------------------------- the ops' own checks (sem-ops)
        "K6": (_IA, "TensorArray index must be scalar, but had shape: {shape}"),
        "K7": (_IA, "TensorArray dtype is {array_dtype} but Op is trying to write dtype {dtype}."),
        "K8": (_IA, "TensorArray dtype is {array_dtype} but Op requested dtype {dtype}."),
        "G2": (_IA, "Expected indices to be a vector, but received shape: {shape}"),
        "G3": (
            UnimplementedError,
            "TensorArray has size zero, but element shape {element_shape} is not fully defined. Currently only "
            "static shapes are supported when packing zero-size TensorArrays.",
        ),
        "G4": (
            _IA,
            "TensorArray was passed element_shape {element_shape} which does not match the Tensor at index 0: {shape}",
        ),
        "G5": (
            _IA,
            "TensorArray has inconsistent shapes.  Index 0 has shape: {shape0} but index {position} has shape: {shape}",
        ),
        "S2": (_IA, "Input value for unpack must be at least a vector but received shape: {shape}"),
        "S3": (_IA, "Expected len(indices) == values.shape[0], but saw: {n_indices} vs. {n_values}"),
        "S4": (_IA, "Max scatter index must be < array size ({max_index} vs. {size})"),
        "C1": (
            UnimplementedError,
            "TensorArray has size zero, but element_shape_except0 {element_shape} is not fully defined. Currently "
            "only static shapes are supported when concatenating zero-size TensorArrays.",
        ),
        "C2": (
            _IA,
            "Concat saw a scalar shape at index {index} but requires at least vectors.  Did you mean to call pack?",
        ),
        "C3": (
            _IA,
            "TensorArray was passed element_shape_except0 {element_shape} but index 0 has (excepting dimension 0) "
            "shape: {shape} which does not match.",
        ),
        "C4": (
            _IA,
            "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: {shape0} but index "
            "{index} has (excepting dimension 0) shape: {shape}",
        ),
        "P1": (_IA, "Expected lengths to be a vector, received shape: {shape}"),
        "P2": (_IA, "Expected lengths to have < max int32 entries"),
        "P3": (_IA, "Expected value to be at least a vector, but received shape: {shape}"),
        "P4": (
            _IA,
            "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is {total} and value's "
            "shape is: {shape}",
        ),
        "P5": (
            _IA,
            "TensorArray's size is not equal to the size of lengths ({size} vs. {n_lengths}), and the TensorArray "
            "is not marked as dynamically resizeable",
        ),
        "R2": (_IA, "Wrong input container. {container}{name}"),
        "R4": (
            _IA,
            "Unable to create a gradients TensorArray for {name}.  Perhaps you used the multiple_writes_aggregate "
            "flag on a previous write?  Gradient calculation is impossible when multiple writes are performed to "
            "the same index.",
        ),
        # ---------------------------------------------------------------- the TensorList ops (tl-message-codes;
        # G2, P1, NT-merge-shape and NT-merge-rank are the TensorArray codes above)
        "L1": (_IA, "Input list must be a scalar saw: {shape}"),
        "L2": (_IA, "Input handle is not a list. Saw: '{value}'"),
        "L3": (_IA, "Invalid data types; op elements {op_dtype} but list elements {list_dtype}"),
        "L4": (_IA, "The only valid scalar shape tensor is the fully unknown shape specified as -1."),
        "L5": (_IA, "Shape must be at most rank 1 but is rank {rank}"),
        "L6": (_IA, "Dimension {dim} must be >= -1"),
        "L7": (_IA, "max_num_elements expected to be a scalar but got shape: {shape}"),
        "L8": (_IA, "The num_elements to reserve must be a tensor size 1, but got {shape}"),
        "L9": (_IA, "The num_elements to reserve must be a non negative number, but got {num_elements}"),
        "L10": (_IA, "Tensor must be at least a vector, but saw shape: {shape}"),
        "L11": (_IA, "Specified a list with shape {element_shape} from a tensor with shape {shape}"),
        "L12": (_IA, "{op}: element_shape must be at most rank 1 but has the shape of {shape}"),
        "L13": (_IA, "Trying to access element {index} in a list with {size} elements."),
        "L14": (
            _IA,
            "Trying to read an uninitialized tensor but element_shape is not fully defined: {element_shape} and no "
            "list element is set.",
        ),
        "L15": (_IA, "Trying to modify element {index} in a list with {size} elements."),
        "L16": (
            _IA,
            "Tried to set a tensor with incompatible shape at a list index. Item element shape: {shape} list shape: "
            "{element_shape}",
        ),
        "L17": (_IA, "Expected argument 1 to be a scalar. ReceivedTensor<type: int32 shape: {shape} values: {values}>"),
        "L18": (
            _IA,
            "Tried to append a tensor with incompatible shape to a list. Op element shape: {shape} list shape: "
            "{element_shape}",
        ),
        "L19": (_IA, "Tried to push item into a full list list size: {size} max_num_elements: {max_num_elements}"),
        "L20": (_IA, "Trying to pop from an empty list."),
        "L21": (_IA, "Trying to read an uninitialized tensor but element_shape is not fully defined.{element_shape}"),
        "L22": (_IA, "Expected tensor to be at least a vector, but saw shape: {shape}"),
        "L23": (_IA, "Expected input_handles to be a vector, but saw shape: {shape}"),
        "L24": (_IA, "Expected tensor.shape[0] == input_handles.size, but saw {rows} vs. {size}"),
        "L25": (_IA, "Input handle at index {index} is not a list. Saw: '{value}'"),
        "L26": (
            _IA,
            "Tried to append a tensor with incompatible shape to a list at index {index}. Op element shape: {shape} "
            "list shape: {element_shape}",
        ),
        "L27": (_IA, "Invalid data type at index {index}; op elements {op_dtype} but list elements {list_dtype}"),
        "L28": (_IA, "Operation expected a list with {num_elements} elements but got a list with {size} elements."),
        "L29": (
            _IA,
            "Tried to stack elements of an empty list with non-fully-defined element_shape: {element_shape}",
        ),
        "L30": (
            _IA,
            "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
            "element_shape: {element_shape}",
        ),
        "L31": (_IA, "Tried to gather 0-elements from a list with non-fully-defined shape: {element_shape}"),
        "L32": (_IA, "Trying to gather element {index} in a list with {size} elements."),
        "L33": (_IA, "Index {index} out o range; list only has {size} elements."),
        "L34": (
            _IA,
            "Tried to gather uninitialized tensors from a list with non-fully-defined element_shape: {element_shape}",
        ),
        "L35": (_IA, "Invalid number of rows in input tensor. Expected: {indices} Actual: {rows}"),
        "L36": (_IA, "Indices in TensorListScatter must all be non-negative."),
        "L37": (_IA, "TensorListScatter: Trying to scatter at index {index} in list with size {size}"),
        "L38": (_IA, "TensorListScatter expects num_elements >= -1, found: {num_elements}"),
        "L39": (_IA, "num_elements must be a scalar"),
        "L40": (_IA, "Invalid data types; input tensor type: {tensor_dtype} list element_type: {list_dtype}"),
        "L41": (_IA, "Expected len(indices) == tensor.shape[0], but saw: {indices} vs. {rows}"),
        "L42": (_IA, "Concat requires elements to be at least vectors, found scalars instead."),
        "L43": (
            _IA,
            "All except the first dimension must be fully defined when concating an empty tensor list. "
            "element_shape: {element_shape}",
        ),
        "L44": (_IA, "Concat saw a scalar shape at index {index} but requires at least vectors."),
        "L45": (
            _IA,
            "First entry of element_shape input does not match the first dim of list element at index: {index} "
            "Expected: {expected} Actual: {actual}",
        ),
        "L46": (
            _IA,
            "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim is not fully "
            "defined: {element_shape}",
        ),
        "L47": (
            _IA,
            "Concating lists with uninitialized tensors is not supported in this version of TensorListConcat. "
            "Consider updating your GraphDef to run the newer version.",
        ),
        "L48": (
            _IA,
            "List contains uninitialized tensor at index {index} but leading_dims has only {leading} elements.",
        ),
        "L49": (_IA, "Incompatible input TensorList tensor shapes: {shape} vs. {other_shape}"),
        "L50": (_IA, "input_{input} is not a TensorList at index {index}.  Saw: '{value}'"),
        "L51": (_IA, "input_{input}[{index}].dtype != element_dtype.  Saw: {list_dtype} vs. {element_dtype}"),
        "L52": (
            _IA,
            "input_a and input_b TensorList element shapes are not identical at index {index}.  Saw {element_shape} "
            "vs. {other_shape}",
        ),
        "L53": (_IA, "TensorListSplit requires element_shape to be at least of rank 1, but saw: {element_shape}"),
        "L54": (_IA, "tensor shape {shape} is not compatible with element_shape {element_shape}"),
        "L55": (_IA, "Invalid value in lengths: {length}"),
        "L56": (_IA, "Attempting to slice [{start}, {end}] from tensor with length {rows}"),
        "L57": (_IA, "Unused values in tensor. Length of tensor: {rows} Values used: {used}"),
        "L58": (_IA, "size must be a scalar"),
        "L59": (_IA, "TensorListSlice expects size to be non-negative. Got: {size}"),
        "L60": (_IA, "ZerosLike non-scalar Tensor with dtype=DT_VARIANT is not supported."),
        "L61": (_IA, "Trying to compute zeros_like for unsupported dtype {dtype}"),
        "L62": (
            _IA,
            "AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[{index} has shape: {shape}.",
        ),
        "L63": (
            _IA,
            "Trying to add two lists of tensors of different dtypes. One is {dtype} and the other is {other_dtype}",
        ),
        "L64": (
            _IA,
            "Trying to add two lists of tensors with incompatible element shapes. One is {element_shape} and the "
            "other is {other_shape}",
        ),
        "L65": (
            _IA,
            "Trying to add two lists of tensors with different lengths. One is {size} and the other is {other_size}",
        ),
        "L66": (
            _IA,
            "Trying to add two tensors with incompatible element shapes. One is {shape} and the other is {other_shape}",
        ),
        "L67": (_IA, "Trying to add unsupported dtype {enum}"),
        "L68": (
            InternalError,
            "BinaryOpVariants: Variants a and b have different type ids.  Type names: '{type_name}' vs. "
            "'{other_type_name}'",
        ),
        "L69": (_IA, "element_shape must not be empty"),
        # the first line of TF's texts (the list of registered kernels that follows is left out)
        "L70": (NotFoundError, "Could not find device for node: {{{{node {op}}}}} = {op}[{attrs}]"),
        "L71": (
            _IA,
            "No OpKernel was registered to support Op '{op}' used by {{{{node {op}}}}} with these attrs: [{attrs}]",
        ),
        # ---------------------------------------------------------------- TensorFlow's texts without a spec code
        "NT-size-scalar": (_IA, "TensorArray size must be scalar, but had shape: {shape}"),
        "NT-size-negative": (_IA, "Size should be >= 0."),
        "NT-dim0-too-large": (_IA, "tensor dim0 too large to unpack"),
        "NT-merge-rank": (_IA, "PartialTensorShape: Incompatible ranks during merge: {rank} vs. {other_rank}"),
        "NT-merge-shape": (_IA, "PartialTensorShape: Incompatible shapes during merge: {shape} vs. {other_shape}"),
        "NT-prepend-vector": (_IA, "shape must be a vector of {{int32,int64}}, got shape {shape}"),
        "NT-prepend-negative": (_IA, "Dimension {dim} must be >= 0"),
        "NT-below-minus-one": (_IA, "Shape [{dims}] has dimensions with values below -1 (where -1 means unknown)"),
        "NT-oom": (
            ResourceExhaustedError,
            "OOM when allocating tensor with shape{shape} and type {dtype} on "
            "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
        ),
        "NT-class-handle-and-name": (
            ValueError,
            "Cannot provide both `handle` and `tensor_array_name` arguments at the same time.",
        ),
        "NT-class-handle-type": (
            TypeError,
            "Expected `handle` to be a Tensor, but got `{handle}` of type `{handle_type}` instead.",
        ),
        "NT-class-no-size": (ValueError, "Argument `size` must be provided if handle is not provided."),
        "NT-class-handle-and-size": (
            ValueError,
            "Cannot provide both a `handle` and `size` arguments at the same time.",
        ),
        "NT-class-handle-and-shape": (
            ValueError,
            "Cannot provide both `handle` and `element_shape` arguments at the same time.",
        ),
        "NT-class-handle-and-dynamic": (
            ValueError,
            "Cannot provide both `handle` and `dynamic_size` arguments at the same time.",
        ),
        "NT-class-handle-and-clear": (
            ValueError,
            "Cannot provide both `handle` and `clear_after_read` arguments at the same time.",
        ),
        "NT-class-no-flow": (ValueError, "flow must not be None if handle is not None."),
        "NT-class-shapes": (ValueError, "Inconsistent shapes: saw {shape} but expected {element_shape} "),
        "NT-grad-source": (
            ValueError,
            "Expected op/tensor name to start with gradients (excluding scope), got: {name}. This means that a "
            "tf.gradients op with this op in its dependency path has a custom name that does not start with "
            "'gradients'. Please make sure all calls to tf.gradients that have non-empty `name` arguments use "
            "names that start with 'gradients'.",
        ),
        # ---------------------------------------------------------------- numba_ta's own texts
        "NT-concat-unsplit": (
            _IA,
            "TensorArray {name}: cannot concat a gradient TensorArray whose forward TensorArray was never split "
            "(its marked size is unknown; TensorFlow crashes here).",
        ),
        "NT-split-negative": (
            _IA,
            "TensorArray {name}: split lengths must be >= 0, but lengths[{position}] is {length} (TensorFlow "
            "aborts here).",
        ),
        "NT-split-int64": (
            _IA,
            "TensorArray {name}: split lengths[{position}] is {length}: an element of shape {shape} would have "
            "more than 2**63 - 1 elements (TensorFlow aborts here).",
        ),
        "NT-convert-dim-negative": (
            ValueError,
            "Error converting {argname} to a TensorShape: Dimension {dim} must be >= 0.",
        ),
        "NT-convert-dim-int64": (
            ValueError,
            "Error converting {argname} to a TensorShape: Dimension {dim} does not fit an int64.",
        ),
        "NT-convert-shape-int64": (
            ValueError,
            "Error converting {argname} to a TensorShape: Shape {shape} would have more than 2**63 - 1 elements",
        ),
        "NT-shape-int64": (_IA, "Shape {shape} would have more than 2**63 - 1 elements"),
        "NT-prepend-int64": (_IA, "shape_to_prepend {prepend}: {message}"),
        "NT-corrupt": (
            InternalError,
            "TensorArray {name}: element {index} points outside the array's storage (a numba_ta bug).",
        ),
        "NT-flow-scalar": (_IA, "flow_in must be a float32 scalar, got {flow_in!r}"),
        "NT-handle": (_IA, _HANDLE),
        "NT-handle-type": (TypeError, _HANDLE),
        "NT-jit-rank": (
            NotImplementedError,
            "inside compiled code, the elements of TensorArray {name} have rank {ndim} (its Numba type), but "
            "element {index} has rank {rank}",
        ),
        "NT-input-dtype": (
            _IA,
            "cannot compute {op} as input #{index}(zero-based) was expected to be a {expected} tensor but is a "
            "{dtype} tensor",
        ),
        "NT-input-attr": (_IA, "Value for attr '{attr}' of {dtype} is not in the list of allowed values: {allowed}"),
        "NT-handle-shape": (_IA, "Tensor array handle must be 2-element vector, but had shape: {shape}"),
        "NT-not-found": (NotFoundError, "Resource __per_step_0/{key}/N10tensorflow11TensorArrayE does not exist."),
        "NT-grad-container": (_IA, "Input container should be '_tensor_arrays',  but received '{container}'"),
        # ---------------------------------------------------------------- numba_ta's own TensorList texts (tl-crashes)
        "NT-tl-index": (
            _IA,
            "TensorListGetItem: index must hold exactly one value, but had shape: {shape} (TensorFlow aborts here).",
        ),
        "NT-tl-scatter-negative": (
            _IA,
            "Indices in TensorListScatterIntoExistingList must all be non-negative (TensorFlow crashes here).",
        ),
        "NT-tl-scatter-shape": (
            _IA,
            "Tried to scatter a tensor with incompatible shape into a list at index {index}. Item element shape: "
            "{shape} list shape: {element_shape} (TensorFlow corrupts the list here).",
        ),
        "NT-tl-split-shape": (
            _IA,
            "tensor shape {shape} of piece {index} is not compatible with element_shape {element_shape} (TensorFlow "
            "corrupts the list here).",
        ),
        "NT-tl-leading-negative": (
            _IA,
            "Invalid value in leading_dims: {value} (TensorFlow aborts or returns a wrong result here).",
        ),
        "NT-tl-add-shape": (
            _IA,
            "Trying to add two lists of tensors whose element {index} of shape {shape} is not compatible with "
            "their merged element shape {element_shape} (TensorFlow corrupts the list here).",
        ),
        "NT-tl-leading-vector": (
            _IA,
            "Expected leading_dims to be a vector, received shape: {shape} (TensorFlow aborts here).",
        ),
    }
)

FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        code: frozenset(f for _, f, _, _ in string.Formatter().parse(template) if f is not None)
        for code, (_, template) in MESSAGES.items()
    }
)
"""The named fields of each template."""


def message(code: str, /, **fields: object) -> str:
    """Return the text of message ``code`` with its fields filled in.

    Parameters
    ----------
    code : str
        A key of :data:`MESSAGES`, such as ``"T2"`` or ``"NT-oom"``.
    **fields
        Exactly the template's fields (:data:`FIELDS`), formatted as ``str.format``
        formats them (so ``{index}`` is ``format(index, "")``, as in an f-string).

    Returns
    -------
    str
        The message text.

    Raises
    ------
    KeyError
        If ``code`` is not a message code.
    TypeError
        If ``fields`` are not exactly the template's fields.

    Examples
    --------
    >>> message("S4", max_index=3, size=3)
    'Max scatter index must be < array size (3 vs. 3)'
    """
    template = MESSAGES[code][1]
    expected = FIELDS[code]
    if fields.keys() != expected:
        raise TypeError(f"message {code} takes the fields {sorted(expected)}, got {sorted(fields)}")
    return template.format(**fields)


def error(code: str, /, *, op: str | None = None, **fields: object) -> OpError:
    """Build the op error of message ``code`` (the caller raises it).

    Parameters
    ----------
    code : str
        The code of a message whose class is an :class:`~numba_ta.errors.OpError`.
    op : str, optional
        The op's name, stored as the error's ``op`` (TF's ``[Op:<op>]`` suffix);
        usually set later, as the error leaves the op.  For a template with an
        ``op`` field (``L12``), ``op`` is that field instead, and the error's op is
        left to be set later.
    **fields
        The template's fields, as for :func:`message`.

    Returns
    -------
    OpError
        A new exception of the code's class, its ``message`` the filled-in text.

    Raises
    ------
    KeyError
        If ``code`` is not a message code.
    TypeError
        If the code's class is not an op error, or the fields are not the template's.

    Examples
    --------
    >>> e = error("T1", name="TensorArrayV3_0")
    >>> type(e).__name__, e.message
    ('InvalidArgumentError', 'TensorArray TensorArrayV3_0 has already been closed.')
    """
    cls = MESSAGES[code][0]
    if not issubclass(cls, OpError):
        raise TypeError(f"message {code} is a {cls.__name__}: use python_error")
    if "op" in FIELDS[code]:  # L12 names an op in its text (not always the raising op's name)
        return cls(message(code, **fields, **({} if op is None else {"op": op})), None)
    return cls(message(code, **fields), op)


def python_error(code: str, /, **fields: object) -> Exception:
    """Build the Python-level error (``ValueError``, ``TypeError``) of message ``code``.

    Parameters
    ----------
    code : str
        The code of a message whose class is not an :class:`~numba_ta.errors.OpError`.
    **fields
        The template's fields, as for :func:`message`.

    Returns
    -------
    Exception
        A new exception of the code's class with the filled-in text.

    Raises
    ------
    KeyError
        If ``code`` is not a message code.
    TypeError
        If the code's class is an op error, or the fields are not the template's.

    Examples
    --------
    >>> python_error("NT-class-no-flow")
    ValueError('flow must not be None if handle is not None.')
    """
    cls = MESSAGES[code][0]
    if issubclass(cls, OpError):
        raise TypeError(f"message {code} is an op error: use error")
    return cls(message(code, **fields))


ENGINE_CODES: tuple[str, ...] = (
    "",  # 0: no error
    "T1", "T2", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11",
    "G3", "G4", "G5", "S3", "S4", "C1", "C2", "C3", "C4", "P5", "K7",
    "NT-split-negative", "NT-split-int64", "NT-concat-unsplit", "NT-corrupt", "NT-merge-rank", "NT-merge-shape",
    "NT-shape-int64", "NT-prepend-int64", "NT-oom", "NT-jit-rank",
)  # fmt: skip
"""The message codes of the engine's statuses: status ``k`` is error ``ENGINE_CODES[k]`` (0: none)."""


def _record_fields(code: str, i: Sequence[int], a: str, b: str) -> dict[str, Any]:
    """Return the template fields of engine error ``code`` but ``name`` and ``dtype`` (see :func:`engine_error`)."""
    if code in ("T2", "T9"):
        return {"index": i[0], "size": i[1]}
    if code in ("T5", "T6", "T11", "C2", "NT-corrupt"):
        return {"index": i[0]}
    if code == "T4":
        return {"index": i[0], "shape": a, "element_shape": b}
    if code == "T7":
        return {"index": i[0], "old_shape": a, "shape": b}
    if code == "T10":
        return {"index": i[0], "element_shape": a}
    if code in ("G3", "C1"):
        return {"element_shape": a}
    if code in ("G4", "C3"):
        return {"element_shape": a, "shape": b}
    if code == "G5":
        return {"shape0": a, "position": i[0], "shape": b}
    if code == "C4":
        return {"shape0": a, "index": i[0], "shape": b}
    if code == "S3":
        return {"n_indices": i[0], "n_values": i[1]}
    if code == "S4":
        return {"max_index": i[0], "size": i[1]}
    if code == "P5":
        return {"size": i[0], "n_lengths": i[1]}
    if code == "NT-split-negative":
        return {"position": i[0], "length": i[1]}
    if code == "NT-split-int64":
        return {"position": i[0], "length": i[1], "shape": a}
    if code == "NT-merge-rank":
        return {"rank": i[0], "other_rank": i[1]}
    if code == "NT-merge-shape":
        return {"shape": a, "other_shape": b}
    if code in ("NT-shape-int64", "NT-oom"):
        return {"shape": a}
    if code == "NT-prepend-int64":
        return {"prepend": a, "message": message("NT-shape-int64", shape=b)}
    if code == "NT-jit-rank":
        return {"ndim": i[0], "index": i[1], "rank": i[2]}
    return {}  # T1, T8, NT-concat-unsplit: the name or the dtype only


def engine_error(err: Sequence[int], name: str, dtype_names: Sequence[str]) -> Exception:
    """Build the exception of an engine status record (the caller raises it).

    Parameters
    ----------
    err : sequence of int
        The record, as the engine's ``_fail`` leaves it in an array's ``err`` buffer:
        ``[status, i0, i1, i2, na, nb, *a, *b]``: the status (a position in
        :data:`ENGINE_CODES`), three integer fields, and two shapes of ``na`` and ``nb``
        dimensions (-1 for a dimension that is unknown; ``na`` or ``nb`` -1 for an
        unknown rank).  For ``T8`` and ``NT-oom``, ``i0`` is the dtype's position in
        ``dtype_names``.
    name : str
        The array's name.
    dtype_names : sequence of str
        TensorFlow's names of the engine's dtypes (``T8`` and ``NT-oom`` name one).

    Returns
    -------
    Exception
        The code's exception with TensorFlow's text: an
        :class:`~numba_ta.errors.OpError`, or a ``NotImplementedError`` for
        ``NT-jit-rank``.

    Raises
    ------
    IndexError
        If the record's status is 0 or not a status.

    Examples
    --------
    >>> status = ENGINE_CODES.index("T2")
    >>> e = engine_error([status, 5, 3, 0, 0, 0], "ta", ["float32"])
    >>> type(e).__name__, e.message
    ('InvalidArgumentError', 'TensorArray ta: Tried to write to index 5 but array is not resizeable and size is: 3')
    """
    status = int(err[0])
    if status <= 0:
        raise IndexError(f"no engine error in status {status}")
    code = ENGINE_CODES[status]
    na, nb = int(err[4]), int(err[5])
    a_dims = [int(d) for d in err[6 : 6 + max(na, 0)]]
    b_dims = [int(d) for d in err[6 + max(na, 0) : 6 + max(na, 0) + max(nb, 0)]]
    partial = code in ("T4", "T10", "G3", "G4", "C1", "C3", "NT-merge-shape")
    a = partial_str(None if na < 0 else [None if d < 0 else d for d in a_dims]) if partial else shape_str(a_dims)
    if code in ("T4", "NT-merge-shape"):
        b = partial_str(None if nb < 0 else [None if d < 0 else d for d in b_dims])
    else:
        b = shape_str(b_dims)
    fields = _record_fields(code, [int(x) for x in err[1:4]], a, b)
    if "{name}" in MESSAGES[code][1]:
        fields["name"] = name
    if code in ("T8", "NT-oom"):
        fields["dtype"] = dtype_names[int(err[1])]
    if code == "NT-jit-rank":
        return python_error(code, **fields)
    return error(code, **fields)


# --------------------------------------------------------------------------- shapes as TensorFlow prints them
def shape_str(shape: Iterable[object]) -> str:
    """``TensorShape::DebugString``: ``[2,3]``, ``[]``."""
    return "[" + ",".join(str(d) for d in shape) + "]"


def partial_str(p: Iterable[int | None] | None) -> str:
    """``PartialTensorShape::DebugString``: ``<unknown>``, ``[?,3]``."""
    if p is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in p) + "]"


def py_str(p: Iterable[int | None] | None) -> str:
    """Python ``str(tf.TensorShape)``: ``<unknown>``, ``(2,)``, ``(None, 3)``, ``()``."""
    if p is None:
        return "<unknown>"
    return str(tuple(p))


def op_error(e: BaseException, op: str) -> BaseException:
    """Return the exception an op raises for ``e``, an exception leaving the op (its one error handler).

    Every op ends in ``except (OpError, SystemError) as e: raise op_error(e, "<op>") from None``.

    Parameters
    ----------
    e : OpError or SystemError
        What the op's body raised.
    op : str
        The op's name, as TensorFlow names it (``"TensorArrayWriteV3"``).

    Returns
    -------
    BaseException
        An :class:`~numba_ta.errors.OpError` as it is, named after ``op`` unless an
        inner op named it already (TF's ``[Op:<op>]`` suffix).  A ``SystemError`` that
        masks a signal handler's exception (Python reports an exception a handler raised
        inside a C call that then returned as ``SystemError: ... returned a result with
        an exception set``, the handler's exception as its cause; a compiled call whose
        result boxing was interrupted nests two) gives that exception, the chain followed
        to its end; any other ``SystemError`` is returned as it is.

    Examples
    --------
    >>> from numba_ta.errors import InvalidArgumentError
    >>> str(op_error(InvalidArgumentError("bad index"), "TensorArrayReadV3"))
    'bad index [Op:TensorArrayReadV3]'
    >>> masked = SystemError("<built-in method x> returned a result with an exception set")
    >>> masked.__cause__ = KeyboardInterrupt()
    >>> type(op_error(masked, "TensorArrayReadV3")).__name__
    'KeyboardInterrupt'
    """
    if isinstance(e, OpError):
        if e.op is None:
            e.op = op
        return e
    while e.__cause__ is not None and isinstance(e, SystemError) and _MASKED in str(e):
        e = e.__cause__
    return e


_MASKED = "returned a result with an exception set"
