"""No crash, ever.

* The inputs on which TensorFlow itself segfaults or aborts (TensorFlow semantics reference,
  docs/semantics.rst, ``sem-crashes``; a few more found while building the bad-input matrix)
  are tests that numba_ta raises a clear error instead, and leaves the array as it was:

  - ``TensorArrayConcatV3`` on a gradient array whose forward array was never split
    (TF segfaults; also when the forward is split only after the gradient was created);
  - ``TensorArraySplitV3`` with a negative length (TF aborts), also when the lengths still
    sum to the value's size and when a huge length makes another one negative;
  - ``element_shape`` with a dimension of 2**63 (TF aborts in its tensor conversion).

* A batch of random programs (``tests/helpers/fuzz_programs.py``) runs in a subprocess under
  ``python -X faulthandler`` with ``NUMBA_BOUNDSCHECK=1`` and a fresh ``NUMBA_CACHE_DIR``
  (so every kernel is recompiled with bounds checks), alternating serial and parallel
  kernels; each step is compared with the reference model, and the process must exit 0:
  a kernel indexing out of bounds raises ``IndexError`` there, a segfault shows as a
  faulthandler dump and a negative exit code.  ``NUMBA_TA_NOCRASH_PROGRAMS`` sets the
  number of programs (default :data:`N_PROGRAMS`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from numba_ta import errors, raw_ops
from tests.helpers.storage_view import nt_state, same_snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N_PROGRAMS = int(os.environ.get("NUMBA_TA_NOCRASH_PROGRAMS", "120"))
F0 = np.float32(0.0)
IAE = errors.InvalidArgumentError


def _fwd(**kw):
    args = dict(size=3, dtype=np.float32, element_shape=[2])
    args.update(kw)
    h, f = raw_ops.TensorArrayV3(**args)
    raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, np.float32), flow_in=f)
    return h, f


def _raises_unchanged(handle, fn, cls=IAE, match=None):
    before = nt_state(handle)
    with pytest.raises(cls) as e:
        fn()
    assert same_snapshot(before, nt_state(handle)), "the failed op changed the array"
    if match is not None:
        assert match in e.value.message, e.value.message
    return e.value


# --------------------------------------------------------------------------------------
# where TF crashes


@pytest.mark.parametrize("grad_op", ["Grad", "GradWithShape"])
def test_concat_on_grad_of_never_split_forward(grad_op):
    h, f = _fwd()
    if grad_op == "Grad":
        g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    else:
        g, gf = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[1], source="gradients")
    raw_ops.TensorArrayWriteV3(
        handle=g, index=0, value=np.ones((2,) if grad_op == "Grad" else (1, 2), np.float32), flow_in=gf
    )
    err = _raises_unchanged(
        g, lambda: raw_ops.TensorArrayConcatV3(handle=g, flow_in=gf, dtype=np.float32), match=g.name
    )
    assert "split" in err.message
    # still usable: a gather of the same slots works
    raw_ops.TensorArrayGatherV3(handle=g, indices=[0, 1], flow_in=gf, dtype=np.float32)


def test_concat_on_grad_created_before_the_forward_split():
    """The gradient array copies the forward's split count when it is created; a later split does not count."""
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    raw_ops.TensorArraySplitV3(handle=h, value=np.arange(3, dtype=np.float32), lengths=[1, 2], flow_in=f)
    _raises_unchanged(g, lambda: raw_ops.TensorArrayConcatV3(handle=g, flow_in=gf, dtype=np.float32))
    # a gradient array created after the split concatenates fine
    g2, gf2 = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients_1")
    raw_ops.TensorArraySplitV3(handle=g2, value=np.arange(3, dtype=np.float32), lengths=[1, 2], flow_in=gf2)
    v, lengths = raw_ops.TensorArrayConcatV3(handle=g2, flow_in=gf2, dtype=np.float32)
    np.testing.assert_array_equal(v, [0, 1, 2])
    assert lengths.tolist() == [1, 2]


@pytest.mark.parametrize(
    "kw,lengths,value_rows",
    [
        (dict(size=2), [4, -1], 3),
        (dict(size=2), [-1, 1], 0),
        (dict(size=3, dynamic_size=True), [2, -2, 3], 3),
        (dict(size=0, dynamic_size=True), [1, -1], 0),
        (dict(size=2), [2**40, 3 - 2**40], 3),  # TF: "Check failed: size >= 0"
    ],
    ids=["sum-matches", "first", "dynamic", "dynamic-grows", "huge"],
)
def test_split_negative_length(kw, lengths, value_rows):
    h, f = raw_ops.TensorArrayV3(dtype=np.float32, **kw)
    value = np.ones((value_rows, 2), np.float32)
    _raises_unchanged(
        h,
        lambda: raw_ops.TensorArraySplitV3(handle=h, value=value, lengths=np.array(lengths, np.int64), flow_in=f),
        match="split lengths must be >= 0",
    )


def test_split_negative_length_on_grad_array():
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    raw_ops.TensorArraySplitV3(handle=h, value=np.ones(3, np.float32), lengths=[1, 2], flow_in=f)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    _raises_unchanged(
        g, lambda: raw_ops.TensorArraySplitV3(handle=g, value=np.ones(3, np.float32), lengths=[4, -1], flow_in=gf)
    )


def test_element_shape_dimension_beyond_int64():
    """``element_shape=[2**63]`` aborts TF; numba_ta refuses it clearly, at creation or at the first read."""
    try:
        h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, element_shape=[2**63])
    except (ValueError, TypeError) as e:
        assert "element_shape" in str(e) and str(2**63) in str(e), str(e)
        return
    _raises_unchanged(
        h, lambda: raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.float32), cls=errors.OpError
    )


# --------------------------------------------------------------------------------------
# the fuzz batch in a subprocess: faulthandler, bounds checks, fresh kernel cache


@pytest.mark.slow  # every kernel compiled again, with bounds checks: about a minute on 2 cores
def test_fuzz_batch_subprocess_boundscheck_faulthandler(record_property):
    with tempfile.TemporaryDirectory(prefix="numba_ta_nocrash_") as cache:
        env = dict(os.environ)
        env.update(
            NUMBA_BOUNDSCHECK="1",
            NUMBA_CACHE_DIR=cache,
            PYTHONFAULTHANDLER="1",
            PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""),
        )
        env.setdefault("NUMBA_NUM_THREADS", "2")
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        cmd = [
            sys.executable,
            "-X",
            "faulthandler",
            "-m",
            "tests.helpers.fuzz_programs",
            "--programs",
            str(N_PROGRAMS),
            "--kernels",
            "mixed",
        ]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    out = (r.stdout + r.stderr)[-6000:]
    assert r.returncode == 0, f"exit code {r.returncode}:\n{out}"
    assert "Fatal Python error" not in out and "Traceback" not in out, out
    assert "0 with problems" in r.stdout, out
    record_property("nocrash_programs", N_PROGRAMS)
    record_property("nocrash_summary", r.stdout.strip().splitlines()[-1])
    print("\n" + r.stdout.strip().splitlines()[-1])
