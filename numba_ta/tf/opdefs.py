"""What numba_ta takes from TensorFlow's op definitions: the ops' inputs and outputs.

For each of the thirty-one ops of :mod:`numba_ta.raw_ops`, :data:`INPUTS` lists
its inputs in order with the dtype the op definition gives them, and
:data:`OUTPUTS` its output names.  ``tests/test_op_defs.py`` checks both
against TensorFlow's ``op_def_registry``.

Inputs
------
``tf.raw_ops`` refuses a tensor of another dtype before the kernel runs: the
``InvalidArgumentError`` ``cannot compute <Op> as input #<k>(zero-based) was
expected to be a <DT> tensor but is a <DT> tensor`` (``NT-input-dtype``), or,
for an input whose dtype is an attribute restricted to a list of dtypes
(``shape_type`` and ``Tshape``: int32 or int64), ``Value for attr '<attr>' of
<DT> is not in the list of allowed values: int32, int64``
(``NT-input-attr``).  :func:`check_input` raises both, for TensorFlow tensors
given to numba_ta (numpy values are converted as ``tf.raw_ops`` converts
them, see :mod:`numba_ta.tf.dtypes`).  An input typed by the element dtype
(``value``, ``tensor``, ``item``) has no fixed dtype: the kernels compare it
with the array's or list's.

Outputs
-------
``tf.raw_ops`` returns the outputs of an op with several of them as a named
tuple whose type name is the op's name and whose fields are the output names
(``tf.raw_ops.TensorArrayGradV3(...).grad_handle``).  The types below are
the same, so code written for TF reads the same fields (and the ``repr`` is
TF's); :data:`RESULTS` maps each op name to its type.

Examples
--------
>>> import numpy as np
>>> from numba_ta import raw_ops
>>> r = raw_ops.TensorArrayV3(size=1, dtype=np.float32)
>>> type(r).__name__, r._fields
('TensorArrayV3', ('handle', 'flow'))
>>> INPUTS["TensorListStack"]
(('input_handle', 'variant'), ('element_shape', 'int32'))
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import tensor_dtype_name

__all__ = [
    "INPUTS",
    "OUTPUTS",
    "RESULTS",
    "check_input",
    "TensorArrayV3Result",
    "TensorArrayConcatV3Result",
    "TensorArrayGradV3Result",
    "TensorArrayGradWithShapeResult",
    "TensorListPopBackResult",
    "TensorListConcatResult",
    "TensorListConcatV2Result",
]

# the dtype of an input: a TF dtype name (DataTypeString), an attribute restricted to int32 and
# int64 (the name of the attribute, the allowed dtypes), or None (the element dtype)
_SHAPE_TYPE = ("shape_type", ("int32", "int64"))
_TSHAPE = ("Tshape", ("int32", "int64"))
_R, _V, _F, _I32, _I64 = "resource", "variant", "float", "int32", "int64"

#: op name -> its inputs, in order: ``(name, dtype)``
INPUTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "TensorArrayV3": (("size", _I32),),
    "TensorArrayWriteV3": (("handle", _R), ("index", _I32), ("value", None), ("flow_in", _F)),
    "TensorArrayReadV3": (("handle", _R), ("index", _I32), ("flow_in", _F)),
    "TensorArrayGatherV3": (("handle", _R), ("indices", _I32), ("flow_in", _F)),
    "TensorArrayScatterV3": (("handle", _R), ("indices", _I32), ("value", None), ("flow_in", _F)),
    "TensorArrayConcatV3": (("handle", _R), ("flow_in", _F)),
    "TensorArraySplitV3": (("handle", _R), ("value", None), ("lengths", _I64), ("flow_in", _F)),
    "TensorArraySizeV3": (("handle", _R), ("flow_in", _F)),
    "TensorArrayCloseV3": (("handle", _R),),
    "TensorArrayGradV3": (("handle", _R), ("flow_in", _F)),
    "TensorArrayGradWithShape": (("handle", _R), ("flow_in", _F), ("shape_to_prepend", _I32)),
    "EmptyTensorList": (("element_shape", _SHAPE_TYPE), ("max_num_elements", _I32)),
    "TensorListReserve": (("element_shape", _SHAPE_TYPE), ("num_elements", _I32)),
    "TensorListFromTensor": (("tensor", None), ("element_shape", _SHAPE_TYPE)),
    "TensorListSetItem": (("input_handle", _V), ("index", _I32), ("item", None)),
    "TensorListGetItem": (("input_handle", _V), ("index", _I32), ("element_shape", _TSHAPE)),
    "TensorListPushBack": (("input_handle", _V), ("tensor", None)),
    "TensorListPushBackBatch": (("input_handles", _V), ("tensor", None)),
    "TensorListPopBack": (("input_handle", _V), ("element_shape", _I32)),
    "TensorListStack": (("input_handle", _V), ("element_shape", _I32)),
    "TensorListGather": (("input_handle", _V), ("indices", _I32), ("element_shape", _I32)),
    "TensorListScatter": (("tensor", None), ("indices", _I32), ("element_shape", _SHAPE_TYPE)),
    "TensorListScatterV2": (
        ("tensor", None),
        ("indices", _I32),
        ("element_shape", _SHAPE_TYPE),
        ("num_elements", _I32),
    ),
    "TensorListScatterIntoExistingList": (("input_handle", _V), ("tensor", None), ("indices", _I32)),
    "TensorListConcat": (("input_handle", _V),),
    "TensorListConcatV2": (("input_handle", _V), ("element_shape", _SHAPE_TYPE), ("leading_dims", _I64)),
    "TensorListConcatLists": (("input_a", _V), ("input_b", _V)),
    "TensorListSplit": (("tensor", None), ("element_shape", _SHAPE_TYPE), ("lengths", _I64)),
    "TensorListLength": (("input_handle", _V),),
    "TensorListElementShape": (("input_handle", _V),),
    "TensorListResize": (("input_handle", _V), ("size", _I32)),
}

#: op name -> its output names, in order
OUTPUTS: dict[str, tuple[str, ...]] = {
    "TensorArrayV3": ("handle", "flow"),
    "TensorArrayWriteV3": ("flow_out",),
    "TensorArrayReadV3": ("value",),
    "TensorArrayGatherV3": ("value",),
    "TensorArrayScatterV3": ("flow_out",),
    "TensorArrayConcatV3": ("value", "lengths"),
    "TensorArraySplitV3": ("flow_out",),
    "TensorArraySizeV3": ("size",),
    "TensorArrayCloseV3": (),
    "TensorArrayGradV3": ("grad_handle", "flow_out"),
    "TensorArrayGradWithShape": ("grad_handle", "flow_out"),
    "EmptyTensorList": ("handle",),
    "TensorListReserve": ("handle",),
    "TensorListFromTensor": ("output_handle",),
    "TensorListSetItem": ("output_handle",),
    "TensorListGetItem": ("item",),
    "TensorListPushBack": ("output_handle",),
    "TensorListPushBackBatch": ("output_handles",),
    "TensorListPopBack": ("output_handle", "tensor"),
    "TensorListStack": ("tensor",),
    "TensorListGather": ("values",),
    "TensorListScatter": ("output_handle",),
    "TensorListScatterV2": ("output_handle",),
    "TensorListScatterIntoExistingList": ("output_handle",),
    "TensorListConcat": ("tensor", "lengths"),
    "TensorListConcatV2": ("tensor", "lengths"),
    "TensorListConcatLists": ("output",),
    "TensorListSplit": ("output_handle",),
    "TensorListLength": ("length",),
    "TensorListElementShape": ("element_shape",),
    "TensorListResize": ("output_handle",),
}

# one line per op with several outputs: the type is named as the op, its fields are OUTPUTS[op]
TensorArrayV3Result = namedtuple("TensorArrayV3", ["handle", "flow"])  # type: ignore[name-match]
TensorArrayConcatV3Result = namedtuple("TensorArrayConcatV3", ["value", "lengths"])  # type: ignore[name-match]
TensorArrayGradV3Result = namedtuple("TensorArrayGradV3", ["grad_handle", "flow_out"])  # type: ignore[name-match]
TensorArrayGradWithShapeResult = namedtuple(  # type: ignore[name-match]
    "TensorArrayGradWithShape", ["grad_handle", "flow_out"]
)
TensorListPopBackResult = namedtuple("TensorListPopBack", ["output_handle", "tensor"])  # type: ignore[name-match]
TensorListConcatResult = namedtuple("TensorListConcat", ["tensor", "lengths"])  # type: ignore[name-match]
TensorListConcatV2Result = namedtuple("TensorListConcatV2", ["tensor", "lengths"])  # type: ignore[name-match]

#: op name -> its result type, for every op with several outputs
RESULTS: dict[str, Any] = {
    t.__name__: t
    for t in (
        TensorArrayV3Result,
        TensorArrayConcatV3Result,
        TensorArrayGradV3Result,
        TensorArrayGradWithShapeResult,
        TensorListPopBackResult,
        TensorListConcatResult,
        TensorListConcatV2Result,
    )
}
# pickle finds a type by its module and name: each result type is also this module's ``<op name>``
globals().update(RESULTS)


def check_input(value: Any, op: str, argname: str) -> None:
    """Refuse a TensorFlow tensor of a dtype the op's definition does not take for input ``argname``.

    Parameters
    ----------
    value : object
        The argument as given; only a TensorFlow tensor (an object with a
        ``dtype`` that has ``as_datatype_enum``) is checked.
    op : str
        The op's name, a key of :data:`INPUTS`.
    argname : str
        The input's name.

    Raises
    ------
    InvalidArgumentError
        ``NT-input-dtype`` for an input of one dtype, ``NT-input-attr`` for
        an input whose dtype attribute allows only some dtypes.

    Examples
    --------
    >>> import numpy as np
    >>> check_input(np.int64(3), "TensorListStack", "element_shape")  # numpy values are converted
    """
    name = tensor_dtype_name(value)
    if name is None:
        return
    names = [arg for arg, _ in INPUTS[op]]
    k = names.index(argname)  # (a ValueError: a numba_ta bug)
    want = INPUTS[op][k][1]
    if want is None:
        return
    if isinstance(want, str):
        if name != want:
            raise _messages.error("NT-input-dtype", op=op, index=k, expected=want, dtype=name)
        return
    attr, allowed = want
    if name not in allowed:
        raise _messages.error("NT-input-attr", attr=attr, dtype=name, allowed=", ".join(allowed))
