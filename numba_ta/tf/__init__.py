"""What faces TensorFlow: its messages, dtypes, op definitions and partial shapes.

:mod:`~numba_ta.tf.messages`
    Every error message, by code, and TensorFlow's text forms of shapes.
:mod:`~numba_ta.tf.dtypes`
    TensorFlow's dtypes and the conversion of values as ``tf.raw_ops`` and graph mode do.
:mod:`~numba_ta.tf.opdefs`
    The ops' input dtypes and output names (TensorFlow's ``op_def_registry``).
:mod:`~numba_ta.tf.tensor_shape`
    Partial shapes, as ``tf.TensorShape``.

The error classes are the public :mod:`numba_ta.errors`.
"""
