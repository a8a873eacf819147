"""Train the demo's character RNN on many texts and seeds at once, on a local Dask cluster.

Each task trains one model (:func:`numba_ta_demo.train`, the model of
``numba-ta demo``) and checks its gradients against finite differences; every TensorArray of
that work is made, used and closed inside one worker process.  The tasks are independent, so
they spread over the workers with ``client.map``.

Then two TensorArrays cross process boundaries, pickled by value:

* a task runs the trained model over the first characters of its text and *returns* the
  TensorArray of the hidden states; the client ``stack()``-s it and compares with the same
  forward pass run here;
* the client writes the first few of those states into a new TensorArray and *sends* it to a
  task, which writes the remaining states into its copy and returns it; the client's array
  stays as it was.

Run it from a clone of the repository, with the ``dask`` extra installed
(``pip install ".[dask]"``)::

    python examples/dask_many_sequences.py                 # 2 workers, 3 texts x 3 seeds
    python examples/dask_many_sequences.py --workers 4 --seeds 0 1 2 3 --steps 800
    python examples/dask_many_sequences.py --texts a.txt b.txt --seeds 7

Exit status: 0 if every gradient check passes and the arrays that came back from the workers
hold what the same computation gives here, 1 otherwise; 2 for bad options, or without Dask.
"""

from __future__ import annotations

import os

# One Numba thread per worker process: each worker runs one task at a time (one Dask thread),
# on its own core.  Numba reads NUMBA_NUM_THREADS once, when it is imported, and the worker
# processes (started with "spawn") run this file's imports again before their first task: so
# the variable is set here (unless it is set already), before numba_ta imports numba, and the
# workers inherit it; the client, which only stacks and compares, gets one thread too.
# LocalCluster(env=...) would set it in the workers only after that re-import: too late here.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import logging
import sys
import time

import numpy as np

import numba_ta
import numba_ta_demo as demo

#: The texts trained on when ``--texts`` is not given: name -> text.
TEXTS = {
    "zen": demo.zen_of_python(),
    "pangrams": (
        "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs. "
        "How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow. "
    )
    * 2,
    "counting": "one two three four five six seven eight nine ten eleven twelve " * 4,
}


# --------------------------------------------------------------------------- tasks (run in the workers)


def train_one(name, text, seed, *, steps, hidden, seq_len, grad_check_entries):
    """Train on `text` from `seed`, check the gradients; return a summary and the trained model.

    All the TensorArrays of the training (a forward array and its gradient array per step)
    live and die in the worker process that runs this task.
    """
    result = demo.train(text, steps=steps, hidden=hidden, seq_len=seq_len, seed=seed)
    inputs, targets, h0 = demo.grad_check_batch(text, result.vocab, seq_len, hidden, seed)
    check = demo.check_gradients(result.params, inputs, targets, h0, n_entries=grad_check_entries, seed=seed)
    return {
        "text": name,
        "seed": seed,
        "losses": result.losses,
        "initial_loss": result.initial_loss,
        "final_loss": result.final_loss,
        "grad_check_ok": check.passed,
        "max_rel_error": check.max_rel_error,
        "pid": os.getpid(),
        "params": result.params,
        "vocab": result.vocab,
    }


def extend_states(ta, params, inputs, h0):
    """Write the RNN's hidden states for ``inputs[ta.size():]`` into `ta`, and return it.

    Goes on from the last state in `ta` (or from `h0` if `ta` is empty), with the arithmetic of
    :func:`numba_ta_demo.forward`.  `ta` must not clear its elements on a read.
    """
    Wxh, Whh, bh = params["Wxh"], params["Whh"], params["bh"]
    start = int(ta.size())
    h = ta.read(start - 1) if start else h0
    for t in range(start, len(inputs)):
        h = np.tanh((Wxh[:, inputs[t]] + bh) + Whh @ h)
        ta = ta.write(t, h)
    return ta


def hidden_states(params, inputs, h0):
    """Run the RNN over `inputs` and return the TensorArray of its hidden states, still open."""
    hidden = params["Whh"].shape[0]
    ta = numba_ta.TensorArray(
        params["Whh"].dtype, size=0, dynamic_size=True, clear_after_read=False, element_shape=[hidden]
    )
    return extend_states(ta, params, inputs, h0), ta.handle.name, os.getpid()


def extend_remote(ta, params, inputs, h0):
    """:func:`extend_states` as a task; also return the name and size `ta` arrived with, and the pid."""
    arrived = ta.handle.name, int(ta.size())
    return extend_states(ta, params, inputs, h0), arrived, os.getpid()


# --------------------------------------------------------------------------- the client


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Train numba_ta's character RNN over several texts x seeds on a local Dask cluster.",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default: %(default)s)")
    parser.add_argument(
        "--texts",
        nargs="+",
        metavar="FILE",
        help="UTF-8 text files to train on (default: three built-in texts: " + ", ".join(TEXTS) + ")",
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], metavar="S", help="seeds (default: 0 1 2)")
    parser.add_argument("--steps", type=int, default=300, help="training steps per run (default: %(default)s)")
    parser.add_argument("--hidden", type=int, default=32, help="hidden-state size (default: %(default)s)")
    parser.add_argument("--seq-len", type=int, default=16, help="characters per step (default: %(default)s)")
    parser.add_argument(
        "--grad-check", type=int, default=10, metavar="N", help="entries checked per run (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    for option in ("workers", "steps", "hidden", "seq_len", "grad_check"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1")
    if args.texts:
        try:
            args.named_texts = {path: demo.load_text(path) for path in args.texts}
        except demo.TextError as e:
            parser.error(f"--texts: {e}")
    else:
        args.named_texts = dict(TEXTS)
    for name, text in args.named_texts.items():
        if len(text) <= args.seq_len:
            parser.error(f"{name}: {len(text)} characters, too short for --seq-len {args.seq_len}")
    return args


def main(argv=None):
    """Run the example; return the exit status."""
    args = _parse_args(argv)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print('this example needs Dask: pip install "numba_ta[dask]" (or ".[dask]" in a clone)', file=sys.stderr)
        return 2

    ok = True
    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",  # any free port (the scheduler serves HTTP even without a dashboard)
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        pids = sorted(client.run(os.getpid).values())
        print(f"{len(pids)} worker processes (pids {', '.join(map(str, pids))}), client pid {os.getpid()}")

        # 1. Many independent workloads: every (text, seed) pair is one task.
        names = [name for name in args.named_texts for _ in args.seeds]
        seeds = [seed for _ in args.named_texts for seed in args.seeds]
        futures = client.map(
            train_one,
            names,
            [args.named_texts[name] for name in names],
            seeds,
            steps=args.steps,
            hidden=args.hidden,
            seq_len=args.seq_len,
            grad_check_entries=args.grad_check,
        )
        runs = client.gather(futures)
        width = max(len("text"), *(len(name) for name in names))
        print(f"\n{len(runs)} runs of {args.steps} steps (hidden {args.hidden}, seq-len {args.seq_len}):")
        print(f"{'text':<{width}}  seed  initial loss  final loss  {'grad check':<14}  worker")
        for run in runs:
            verdict = "ok" if run["grad_check_ok"] else "FAIL"
            print(
                f"{run['text']:<{width}}  {run['seed']:>4}  {run['initial_loss']:>12.3f}  {run['final_loss']:>10.3f}"
                f"  {verdict:<4} ({run['max_rel_error']:.1e})  {run['pid']:>6}"
            )
            ok &= run["grad_check_ok"]

        # 2. A TensorArray returned by a task: the hidden states of the first run's model.
        run = runs[0]
        params = run["params"]
        text = args.named_texts[run["text"]]
        inputs = run["vocab"].encode(text[: 2 * args.seq_len])
        h0 = np.zeros(args.hidden, dtype=params["Whh"].dtype)
        ta, remote_name, pid = client.submit(hidden_states, params, inputs, h0, pure=False).result()
        hs = ta.stack()
        expected, _ = demo.forward(params, inputs, h0)
        same = np.allclose(hs, expected, rtol=1e-6, atol=1e-7)
        ok &= same
        print(
            f"\nworker {pid} wrote {int(ta.size())} hidden states of {run['text']!r} (seed {run['seed']}) "
            f"into {remote_name}; it came back here as {ta.handle.name}.\n"
            f"  stack() here: shape {hs.shape}, max |difference| from the same forward pass run here "
            f"{np.max(np.abs(hs - expected)):.1e} ({'ok' if same else 'FAIL'})"
        )

        # 3. A TensorArray sent to a task: the first states go out, all of them come back.
        k = args.seq_len // 2
        part = numba_ta.TensorArray(
            params["Whh"].dtype, size=0, dynamic_size=True, clear_after_read=False, element_shape=[args.hidden]
        )
        part = part.unstack(hs[:k])
        full, (arrived_name, arrived_size), pid = client.submit(
            extend_remote, part, params, inputs, h0, pure=False
        ).result()
        same = np.allclose(full.stack(), hs, rtol=1e-6, atol=1e-7)
        unchanged = int(part.size()) == k
        ok &= same and unchanged
        print(
            f"sent {part.handle.name} with {k} states to worker {pid}: it arrived there as {arrived_name} "
            f"with {arrived_size},\n  came back as {full.handle.name} with {int(full.size())} "
            f"({'equal to' if same else 'DIFFERENT from'} the states above); "
            f"{part.handle.name} here still has {int(part.size())} ({'ok' if same and unchanged else 'FAIL'})"
        )
    print(f"\ndone in {time.perf_counter() - t0:.1f} s: {'all checks passed' if ok else 'SOME CHECKS FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
