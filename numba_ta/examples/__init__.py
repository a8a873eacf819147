"""Worked examples that use numba_ta.

:mod:`numba_ta.examples.char_rnn`
    A character-level Elman RNN trained with full backpropagation through
    time, every hidden state kept in a dynamic :class:`numba_ta.TensorArray`.
    ``numba-ta demo`` runs it.
"""
