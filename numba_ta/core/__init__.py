"""What both containers stand on: the state struct, shapes, memory, statuses, kernels, the compiled-code cache.

Not public: the modules here change with the package.

:mod:`~numba_ta.core.state`
    The struct of an array's or a list's state, its header slots and element-state bits,
    the dtype table, borrowed pointers and allocation.
:mod:`~numba_ta.core.status`
    Status codes of the compiled ops and the error records they leave.
:mod:`~numba_ta.core.shapes`
    Element shapes in compiled code: interning, compatibility, merging.
:mod:`~numba_ta.core.memory`
    The memory policy: dense rows or a ragged buffer, growth.
:mod:`~numba_ta.core.sums`
    Gradient sums (float16 included).
:mod:`~numba_ta.core.kernels`
    Bulk copies and sums, serial and parallel.
:mod:`~numba_ta.core.cache`, :mod:`~numba_ta.core.precompile`
    The compiled code shipped with the package.
:mod:`~numba_ta.core.config`, :mod:`~numba_ta.core.threads`
    The memory policy's and the parallel kernels' settings.
:mod:`~numba_ta.core.numba_compat`
    Every private part of Numba that numba_ta uses, and the supported Numba versions.
"""
