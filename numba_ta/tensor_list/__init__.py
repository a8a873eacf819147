"""TensorFlow 2's TensorList: versions and the undo log, the stores, the twenty ops, their gradients.

:mod:`~numba_ta.tensor_list.store`
    A list's versions, the undo log and the numeric and object stores.
:mod:`~numba_ta.tensor_list.listengine`
    The compiled element updates of a numeric list.
:mod:`~numba_ta.tensor_list.ops`, :mod:`~numba_ta.tensor_list.bulk_ops`
    The twenty TensorList ops (exported by :mod:`numba_ta.raw_ops`): those that make a list
    or change one element, and those over many elements.
:mod:`~numba_ta.tensor_list.convert`
    The conversions of their arguments.
:mod:`~numba_ta.tensor_list.grads`
    Their gradient rules (exported by :mod:`numba_ta.gradients`).
:mod:`~numba_ta.tensor_list.tf2`
    :class:`numba_ta.TF2TensorArray`, ``tf.TensorArray`` on the TensorList ops.
"""
