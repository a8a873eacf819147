"""Helper modules shared by the test modules (no tests here).

Import them as ``from tests.helpers import reference`` with the repository root on the import
path (pytest adds it: ``pythonpath = ["."]``; a subprocess runs with the root as its current
directory or on ``PYTHONPATH``).

Reference models (the oracles, plain Python and NumPy):

* ``reference``: naive model of TensorFlow's TensorArray V3 kernels, rule by rule from
  ``docs/semantics.rst``.
* ``list_reference``: naive model of TensorFlow 2's TensorList values and ops (section
  ``tl-semantics``).

Drivers and programs:

* ``fuzz_programs``: seeded random TensorArray op programs, steered by ``reference``; also a
  command line that runs programs through numba_ta and the model
  (``python -m tests.helpers.fuzz_programs --programs N`` from the repository root).
* ``oracle_util``: the differential driver that runs op programs through ``tf.raw_ops`` and
  ``numba_ta.raw_ops`` and compares them step by step (needs TensorFlow: it skips the
  importing test module without it).
* ``tensorlist_probe``: the TensorList specification's evidence, 328 probes of TensorFlow's
  TensorList ops with the expected observation beside each; a script run on its own
  (``python -m tests.helpers.tensorlist_probe --quiet`` checks them against the installed
  TensorFlow).
* ``list_shim``: loads private copies of ``tensorlist_probe`` whose probes run on numba_ta
  (through a numpy stand-in for ``tf``) or on TensorFlow in process.

Views and compiled wrappers:

* ``storage_view``: read-only snapshots of an array's storage (element states, shapes,
  values) and their exact comparison, to check that a failed op changed nothing.
* ``jit_ops``: one small ``@numba.njit`` function per TensorArray method, compiled once per
  test process.

Process-pool workers (importable by name in spawn and forkserver workers):

* ``fork_worker``: the worker function of ``tests/test_fork.py``.
* ``pickle_worker``: the worker functions of ``tests/test_pickle.py``.
"""
