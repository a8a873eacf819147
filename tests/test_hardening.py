"""Regression tests of the hardening work: overflow, failed ops that leave traces, read-only views.

* Overflow: every sum, product and offset computed from user input (split lengths, sizes,
  indices, element shapes, ``shape_to_prepend``) is checked before it reaches an allocation
  or a kernel.  The first test reproduces a heap over-read (a segfault with ``10**8``) in a
  subprocess, so that a crash fails the test instead of killing the run.  Property tests
  (hypothesis) then draw huge values for every op that takes lengths, sizes or shapes.
* A failed op leaves nothing behind, interned shapes included: counted, not timed.
* ``stack(copy=False)`` returns a view that numpy refuses to make writeable.
* A ``KeyboardInterrupt`` that Python reports as ``SystemError`` ("returned a result with an
  exception set") reaches the user as the ``KeyboardInterrupt``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numba_ta
from numba_ta import raw_ops
from numba_ta.errors import InvalidArgumentError, OpError, ResourceExhaustedError
from tests.helpers.storage_view import nt_state, same_snapshot

F0 = np.float32(0.0)
INT64_MAX = 2**63 - 1
HUGE = st.one_of(
    st.integers(0, 16),
    st.integers(2**30, 2**33),
    st.integers(2**61, INT64_MAX),
    st.sampled_from([2**62, 2**63 - 1, 2**62 - 10**8 + 2, 10**8, 10**3]),
)
# sizes, indices and dimensions that are small, or so large that any allocation they imply fails
# at once (a real multi-gigabyte allocation would be TF's behaviour too, but no test's business)
SMALL_OR_VAST = st.one_of(st.integers(0, 16), st.integers(2**40, INT64_MAX))


def _errors_are_tfs(fn):
    """Run ``fn``; only numba_ta's TF errors and TF's conversion errors may escape."""
    try:
        return fn(), None
    except (OpError, ValueError, TypeError) as e:
        return None, e


# ---------------------------------------------------------------------------------------- overflow


def test_split_whose_lengths_wrap_int64_does_not_read_outside_the_buffer():
    """The original reproducer: int64-wrapping split lengths used to give a tiny buffer, then a
    gather read from far outside it (garbage with 10**3, a segfault with 10**8)."""
    code = textwrap.dedent(
        """
        import numpy as np, numba_ta
        from numba_ta.errors import ResourceExhaustedError
        for big in (10**3, 10**8):
            ta = numba_ta.TensorArray(np.float32, size=4, clear_after_read=False, infer_shape=False)
            try:
                ta = ta.split(np.ones(1, np.float32), [2**62, big, 2**63 - 1, 2**62 - big + 2])
            except ResourceExhaustedError as e:
                assert "OOM when allocating tensor with shape" in str(e), e
            else:
                raise SystemExit(f"split accepted lengths whose sum wraps: gather gives {ta.gather([1, 1])!r}")
        print("OK")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout.strip() == "OK"


def test_split_element_with_more_than_int64_items_is_refused():
    h, f = raw_ops.TensorArrayV3(size=4, dtype=np.float32, identical_element_shapes=False)
    before = nt_state(h)
    with pytest.raises(InvalidArgumentError, match=r"would have more than 2\*\*63 - 1 elements"):
        raw_ops.TensorArraySplitV3(
            handle=h, value=np.ones((0, 2**30), np.float32), lengths=[2**62] * 4, flow_in=f
        )  # TF aborts here (Check failed in tensor_shape.cc)
    assert same_snapshot(nt_state(h), before)


def test_grad_with_shape_whose_prepended_shapes_overflow_is_refused():
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(1000, np.float32), flow_in=f)
    with pytest.raises(InvalidArgumentError, match=r"shape_to_prepend \[2147483647,2147483647\]"):
        raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[2**31 - 1] * 2, source="s")
    assert h._storage.grads == {}
    # the failed op created no gradient array: a later one with a fitting shape works
    g, gf = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[2], source="s")
    assert raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32).shape == (2, 1000)


@given(lengths=st.lists(HUGE, min_size=1, max_size=5), rows=st.integers(0, 3), tail=st.integers(0, 3))
def test_split_with_huge_lengths_never_reaches_a_kernel_out_of_bounds(lengths, rows, tail):
    h, f = raw_ops.TensorArrayV3(
        size=len(lengths), dtype=np.float32, clear_after_read=False, identical_element_shapes=False
    )
    value = np.arange(rows * max(tail, 1), dtype=np.float32).reshape((rows, tail) if tail else (rows,))
    before = nt_state(h)
    _, err = _errors_are_tfs(lambda: raw_ops.TensorArraySplitV3(handle=h, value=value, lengths=lengths, flow_in=f))
    if err is not None:
        assert isinstance(err, (InvalidArgumentError, ResourceExhaustedError)), err
        assert same_snapshot(nt_state(h), before)
        return
    assert sum(lengths) == rows  # accepted only when the exact sum is the row count
    out, lens = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
    np.testing.assert_array_equal(out, value)
    np.testing.assert_array_equal(lens, lengths)


@given(
    size=st.one_of(st.integers(0, 16), st.integers(2**31, INT64_MAX)),
    dims=st.lists(st.one_of(SMALL_OR_VAST, st.none()), max_size=3),
    index=st.one_of(st.integers(0, 16), st.integers(2**31, INT64_MAX)),  # int32 max would grow to 2**31 slots
)
def test_create_write_read_gather_with_huge_sizes_and_element_shapes(size, dims, index):
    res, err = _errors_are_tfs(
        lambda: raw_ops.TensorArrayV3(size=size, dtype=np.float32, element_shape=dims, dynamic_size=True)
    )
    if err is not None:
        return
    h, f = res
    for op in (
        lambda: raw_ops.TensorArrayReadV3(handle=h, index=index, flow_in=f, dtype=np.float32),
        lambda: raw_ops.TensorArrayGatherV3(handle=h, indices=[0, index], flow_in=f, dtype=np.float32),
        lambda: raw_ops.TensorArrayWriteV3(handle=h, index=index, value=np.ones(2, np.float32), flow_in=f),
        lambda: raw_ops.TensorArrayScatterV3(
            handle=h, indices=[index, 0], value=np.ones((2, 2), np.float32), flow_in=f
        ),
        lambda: raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32),
    ):
        before = nt_state(h)
        _, err = _errors_are_tfs(op)
        if err is not None:
            assert same_snapshot(nt_state(h), before), err


@given(prepend=st.lists(SMALL_OR_VAST, max_size=3), written=st.lists(st.integers(0, 40), min_size=1, max_size=2))
def test_grad_with_huge_shape_to_prepend(prepend, written):
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, clear_after_read=False)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(written, np.float32), flow_in=f)
    res, err = _errors_are_tfs(
        lambda: raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=prepend, source="g")
    )
    if err is not None:
        assert h._storage.grads == {}
        return
    g, gf = res
    out, err = _errors_are_tfs(lambda: raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32))
    if err is None:
        assert out.shape == tuple(prepend) + tuple(written) and not out.any()
    else:
        assert isinstance(err, ResourceExhaustedError), err


# ------------------------------------------------------------------------- failed ops leave nothing


def _n_shapes(h):
    return len(h._storage.shapes)


def test_failing_scatters_with_new_shapes_intern_nothing():
    h, f = raw_ops.TensorArrayV3(size=4, dtype=np.float32, identical_element_shapes=False)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(3, np.float32), flow_in=f)
    base = _n_shapes(h)
    for k in range(1, 300):
        with pytest.raises(InvalidArgumentError, match="already been written"):
            raw_ops.TensorArrayScatterV3(handle=h, indices=[0], value=np.ones((1, k + 3), np.float32), flow_in=f)
    assert _n_shapes(h) == base


def test_failing_splits_writes_and_reads_intern_nothing():
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, identical_element_shapes=False)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=1, value=np.ones(2, np.float32), flow_in=f)
    base = _n_shapes(h)
    for k in range(1, 100):
        with pytest.raises(InvalidArgumentError):  # index 1 was written: T6 after interning lengths
            raw_ops.TensorArraySplitV3(handle=h, value=np.ones(2 * k, np.float32), lengths=[k, k], flow_in=f)
        with pytest.raises(InvalidArgumentError):  # out of range, with a new shape
            raw_ops.TensorArrayWriteV3(handle=h, index=5, value=np.ones(k + 7, np.float32), flow_in=f)
    assert _n_shapes(h) == base


def test_failing_gathers_with_new_element_shapes_intern_nothing():
    h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float32)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, np.float32), flow_in=f)
    raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.float32)  # now cleared
    base = _n_shapes(h)
    for k in range(1, 200):
        with pytest.raises(InvalidArgumentError, match="twice"):  # T11 at index 0, after the zeros' shape
            raw_ops.TensorArrayGatherV3(handle=h, indices=[1, 0], flow_in=f, dtype=np.float32, element_shape=[k])
    assert _n_shapes(h) == base
    assert h._storage.element_shape is None  # no narrowing either


# ------------------------------------------------------------------------------- read-only views


def test_stack_view_cannot_be_made_writeable():
    ta = numba_ta.TensorArray(np.float32, size=3, clear_after_read=False).unstack(np.ones((3, 2), np.float32))
    v = ta.stack(copy=False)
    assert not v.flags.writeable
    with pytest.raises(ValueError, match="WRITEABLE"):
        v.flags.writeable = True
    with pytest.raises(ValueError):
        v[:] = 99
    np.testing.assert_array_equal(ta.stack(), np.ones((3, 2), np.float32))
    # growth while the view lives: the view keeps its values, the array its own
    dyn = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True)
    for t in range(3):
        dyn = dyn.write(t, np.full(2, t, np.float32))
    w = dyn.stack(copy=False)
    with pytest.raises(ValueError, match="WRITEABLE"):
        w.flags.writeable = True
    with pytest.raises(InvalidArgumentError):
        dyn.write(1, np.zeros(2, np.float32))  # read elements cannot be written again
    dyn = dyn.write(50, np.full(2, 50, np.float32))  # grows: a copy, since the view holds the buffer
    np.testing.assert_array_equal(w, [[0, 0], [1, 1], [2, 2]])


# ------------------------------------------------------------- interrupts reported as SystemError


def test_a_keyboard_interrupt_hidden_in_a_system_error_reaches_the_user(monkeypatch):
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, element_shape=[2])
    st_ = h._storage

    def masked(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError("<function> returned a result with an exception set") from e

    monkeypatch.setattr(st_, "gather", masked)
    with pytest.raises(KeyboardInterrupt):
        raw_ops.TensorArrayGatherV3(handle=h, indices=[0], flow_in=f, dtype=np.float32)
    monkeypatch.setattr(st_, "read", masked)
    with pytest.raises(KeyboardInterrupt):
        numba_ta.TensorArray(np.float32, handle=h, flow=f).read(0)

    def other(*args, **kwargs):
        raise SystemError("something else")

    monkeypatch.setattr(st_, "read", other)
    with pytest.raises(SystemError, match="something else"):
        raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.float32)
