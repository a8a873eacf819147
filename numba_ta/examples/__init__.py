"""Worked examples that use numba_ta.

:mod:`numba_ta.examples.char_rnn`
    An alias of :mod:`numba_ta_demo`: a character-level Elman RNN trained with
    full backpropagation through time, every hidden state kept in a dynamic
    :class:`numba_ta.TensorArray`.  ``numba-ta demo`` runs it.  The demo lives in
    the top-level package ``numba_ta_demo`` (same distribution); this import
    path is kept for existing code.
"""
