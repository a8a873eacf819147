"""numba_ta on a local Dask cluster: work spread over worker processes, arrays crossing them.

Skipped without ``distributed`` (the ``dask`` extra).  One cluster of two worker processes
(``spawn``, one thread each) serves the module; its workers get ``NUMBA_NUM_THREADS=1``
through ``LocalCluster(env=...)``, which takes effect because the workers import numba only
when they first unpickle a task of this module.  What is checked:

* :func:`test_map_over_seeds_matches_local`: the demo's training (``numba_ta_demo.run_demo``),
  mapped over several seeds, gives in the workers what it gives in this process: losses,
  gradient check, sample.
* :func:`test_partially_written_array_round_trip`: an array with written, cleared and
  unwritten elements goes to a worker, arrives with every state and value, refuses there the
  ops its states forbid, is written to and comes back; the array here is unchanged.
* :func:`test_returned_array_brings_its_gradient_arrays`: a forward array returned by a task
  brings its gradient array along.
* :func:`test_workers_are_other_processes`: the workers are separate processes, with one
  Numba thread each.
* :func:`test_example_script`: ``examples/dask_many_sequences.py`` runs and passes its checks.

The task functions are in this module; the workers import it by name (``tests.test_dask``),
from the import path they inherit (the repository root, which pytest puts there).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import numba_ta  # noqa: E402
import numba_ta_demo as demo  # noqa: E402
from numba_ta.errors import InvalidArgumentError  # noqa: E402
from tests.helpers.storage_view import nt_state, same_snapshot  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEXT = "hello world, hello numba; numba says hello to the world"
DEMO = {"steps": 40, "hidden": 8, "seq_len": 6, "sample_len": 12, "grad_check_entries": 6}
F32 = np.float32


@pytest.fixture(scope="module")
def client():
    """A client of a two-process LocalCluster; closing it must end both worker processes.

    Starting the workers sets a few variables in this process's environment too (Dask's
    ``distributed.nanny.pre-spawn-environ``: ``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED`` ...);
    they are put back afterwards, so the processes that later tests start do not inherit them.
    """
    saved_environ = dict(os.environ)
    try:
        with (
            distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address="127.0.0.1:0",  # no fixed port: 8787 may be taken (a warning, so an error here)
                silence_logs=logging.ERROR,
                env={"NUMBA_NUM_THREADS": "1"},
            ) as cluster,
            distributed.Client(cluster) as c,
        ):
            c.wait_for_workers(2)
            pids = set(c.run(os.getpid).values())
            yield c
        deadline = time.monotonic() + 30
        while (alive := {pid for pid in pids if _alive(pid)}) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for key in set(os.environ) - set(saved_environ):
            del os.environ[key]
        for key, value in saved_environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
    assert not alive, f"worker processes {sorted(alive)} still running after the cluster closed"


def _alive(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # pragma: no cover - no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


# --------------------------------------------------------------------------- tasks (run in the workers)


def demo_run(seed):
    """The demo's train + gradient check + sample, from `seed`; and the pid that ran it."""
    r = demo.run_demo(TEXT, seed=seed, **DEMO)
    return {
        "losses": r.train.losses,
        "params": r.train.params,
        "grad_check_passed": r.grad_check.passed,
        "max_rel_error": r.grad_check.max_rel_error,
        "sample": r.sample,
        "pid": os.getpid(),
    }


def _errors(ops, name):
    """Run each op; return the messages of the InvalidArgumentErrors, `name` replaced by ``<ta>``."""
    messages = []
    for op in ops:
        try:
            op()
        except InvalidArgumentError as e:
            messages.append(e.message.replace(name, "<ta>"))
        else:
            messages.append(None)
    return messages


def write_more(ta):
    """Look at `ta` as it arrived, try what its states forbid, write element 2; return it all."""
    arrived = nt_state(ta.handle)
    refused = _errors(
        [lambda: ta.read(0), lambda: ta.write(0, [9.0, 9.0]), lambda: ta.write(1, [9.0, 9.0])],
        ta.handle.name,
    )
    ta = ta.write(2, np.array([5.0, 6.0], F32))
    return ta, arrived, refused, os.getpid()


def forward_with_gradient():
    """A forward array and its gradient array (written); only the forward array is returned."""
    ta = numba_ta.TensorArray(F32, size=3, clear_after_read=False, element_shape=[2])
    ta = ta.unstack(np.arange(6, dtype=F32).reshape(3, 2))
    g = ta.grad("gradients")
    g.unstack(np.ones((3, 2), F32)).write(1, np.full(2, 0.5, F32))  # slot 1 sums to 1.5
    return ta


def numba_threads():
    import numba

    return numba.config.NUMBA_NUM_THREADS, numba.get_num_threads()


# --------------------------------------------------------------------------- tests


def test_map_over_seeds_matches_local(client):
    seeds = [0, 1, 2, 3]
    remote = client.gather(client.map(demo_run, seeds))
    for seed, got in zip(seeds, remote, strict=True):
        want = demo_run(seed)
        assert got["pid"] != os.getpid()
        # Same code, same seed, same float32 arithmetic: the same numbers, to the last bits
        # allowed for a BLAS that may split sums differently in another thread setting.
        np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-6, atol=0, err_msg=f"seed {seed}")
        for k in demo.PARAM_NAMES:
            np.testing.assert_allclose(got["params"][k], want["params"][k], rtol=1e-5, atol=1e-7, err_msg=k)
        assert got["grad_check_passed"] and want["grad_check_passed"]
        assert got["max_rel_error"] == pytest.approx(want["max_rel_error"], rel=1e-3, abs=1e-9)
        assert got["sample"] == want["sample"]
    # Different seeds are different runs.
    assert len({tuple(r["losses"]) for r in remote}) == len(seeds)


def test_partially_written_array_round_trip(client):
    ta = numba_ta.TensorArray(F32, size=4, element_shape=[2])  # clear_after_read=True
    ta = ta.write(0, np.array([1.0, 2.0], F32)).write(1, np.array([3.0, 4.0], F32))
    np.testing.assert_array_equal(ta.read(0), [1.0, 2.0])  # element 0 is now cleared
    before = nt_state(ta.handle)
    assert before["states"] == "CWUU"

    back, arrived, refused, pid = client.submit(write_more, ta, pure=False).result()
    assert pid != os.getpid()

    # It arrived as it was sent: a copy with every state, value and flag, under another name.
    assert arrived["name"] != before["name"]
    assert same_snapshot({**arrived, "name": None}, {**before, "name": None})
    assert refused == [
        "TensorArray <ta>: Could not read index 0 twice because it was cleared after a previous read "
        "(perhaps try setting clear_after_read = false?).",
        "TensorArray <ta>: Could not write to TensorArray index 0 because it has already been read.",
        "TensorArray <ta>: Could not write to TensorArray index 1 because it has already been written to.",
    ]

    # It came back with the worker's write, as another new array.
    after = nt_state(back.handle)
    assert after["states"] == "CWWU"
    assert len({before["name"], arrived["name"], after["name"]}) == 3
    assert re.fullmatch(r"TensorArray_\d+", after["name"])
    np.testing.assert_array_equal(after["values"][1], [3.0, 4.0])
    np.testing.assert_array_equal(after["values"][2], [5.0, 6.0])
    assert after["values"][2].dtype == F32
    assert (after["size"], after["clear_after_read"], after["element_shape"]) == (4, True, before["element_shape"])
    with pytest.raises(InvalidArgumentError, match="Could not read index 0 twice"):
        back.read(0)
    np.testing.assert_array_equal(back.read(3), [0.0, 0.0])  # unwritten, full element shape: zeros
    back_state = nt_state(back.handle)
    assert back_state["states"] == "CWWC"

    # The array here saw none of it, and what happens to it here does not reach the copy.
    assert same_snapshot(nt_state(ta.handle), before)
    ta.write(2, np.array([7.0, 8.0], F32))  # still writable here
    ta.write(3, np.array([7.0, 8.0], F32))
    assert nt_state(ta.handle)["states"] == "CWWW"
    assert same_snapshot(nt_state(back.handle), back_state)


def test_returned_array_brings_its_gradient_arrays(client):
    ta = client.submit(forward_with_gradient, pure=False).result()
    g = ta.grad("gradients")  # the copy of the worker's gradient array, not a new one
    assert g.handle.name == ta.handle.name + "@gradients"
    np.testing.assert_array_equal(g.stack(), [[1.0, 1.0], [1.5, 1.5], [1.0, 1.0]])
    np.testing.assert_array_equal(ta.stack(), np.arange(6, dtype=F32).reshape(3, 2))


def test_workers_are_other_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2
    assert len(set(pids.values())) == 2
    assert os.getpid() not in pids.values()
    ran_on = {r["pid"] for r in client.gather(client.map(demo_run, [10, 11, 12, 13]))}
    assert ran_on <= set(pids.values())
    assert set(client.run(numba_threads).values()) == {(1, 1)}


def test_example_script():
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "dask_many_sequences.py"),
            "--workers=2",
            "--seeds",
            "0",
            "1",
            "--steps=30",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all checks passed" in proc.stdout
    table = [line for line in proc.stdout.splitlines() if re.match(r"(zen|pangrams|counting) +\d+ ", line)]
    assert len(table) == 6
    assert all("  ok " in line for line in table)
