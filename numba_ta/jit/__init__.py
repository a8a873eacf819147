"""The Numba extension: a TensorArray inside users' ``@numba.njit`` functions.

:mod:`~numba_ta.jit.extension`
    The array's Numba type, data model, unboxing and boxing, methods and constructor,
    registered by :func:`~numba_ta.jit.extension.init` (Numba's ``numba_extensions`` entry
    point).
:mod:`~numba_ta.jit.entries`
    The compiled entries the methods call (the class's checks, the engine op, TF's exception).
:mod:`~numba_ta.jit.abi`
    How users' compiled code finds the entries: by symbol name, per interface version.
"""
