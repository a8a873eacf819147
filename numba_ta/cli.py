"""The ``numba-ta`` command.

Subcommands
-----------
``numba-ta demo``
    Train a character-level RNN with backpropagation through time, every hidden
    state kept in a :class:`numba_ta.TensorArray`; print the falling loss, a
    float64 gradient check and a generated sample
    (:mod:`numba_ta.examples.char_rnn`).
``numba-ta info``
    Print the versions, threading layer and thread count in use.
``numba-ta bench``
    Time the main workloads side by side for numba_ta, a numpy list, a
    preallocated numpy buffer and (when installed) TensorFlow eager and
    ``tf.function``; print medians, ratios and the performance targets
    (:mod:`numba_ta.bench`), optionally as ``--json`` and a ``--plot``.

Each subcommand is one :class:`Command` in ``COMMANDS``: a name, a help line, a
function that adds its options to an :mod:`argparse` parser, and a function that
runs it and returns the exit status.  Adding a subcommand means adding one entry.

Exit status: 0 on success, 1 if the demo's gradient check fails, a bench case
fails (or stdout closes early), 2 for bad input (one ``numba-ta <command>: error: ...`` line on
stderr, no traceback), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

from .examples import char_rnn

__all__ = ["main", "Command", "COMMANDS"]

PROG = "numba-ta"


class _UsageError(Exception):
    """Bad input found after parsing; the message is the one line to print."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line: ``<prog>: error: <message>``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


# --------------------------------------------------------------------------- option types


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


#: Largest --hidden: the demo is a teaching example, and (H, H) weights beyond
#: this size would only exhaust memory or time.
MAX_HIDDEN = 4096


def _hidden_size(text):
    value = _positive_int(text)
    if value > MAX_HIDDEN:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_HIDDEN}, got {text!r}")
    return value


def _nonnegative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


# --------------------------------------------------------------------------- demo


def _add_demo_arguments(parser):
    parser.add_argument(
        "--steps",
        type=_positive_int,
        default=char_rnn.DEFAULT_STEPS,
        metavar="N",
        help="training iterations, one chunk of --seq-len characters each (default: %(default)s)",
    )
    parser.add_argument(
        "--hidden",
        type=_hidden_size,
        default=char_rnn.DEFAULT_HIDDEN,
        metavar="H",
        help=f"hidden-state size, at most {MAX_HIDDEN} (default: %(default)s)",
    )
    parser.add_argument(
        "--seq-len",
        type=_positive_int,
        default=char_rnn.DEFAULT_SEQ_LEN,
        metavar="T",
        help="characters per chunk = time steps backpropagated through (default: %(default)s)",
    )
    parser.add_argument(
        "--lr",
        type=_positive_float,
        default=char_rnn.DEFAULT_LR,
        metavar="LR",
        help="Adam learning rate (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=_nonnegative_int,
        default=0,
        metavar="S",
        help="seed of the weights, the gradient-check entries and the sample (default: %(default)s)",
    )
    parser.add_argument(
        "--text",
        metavar="FILE",
        default=None,
        help="UTF-8 text file to train on (default: the Zen of Python)",
    )
    parser.add_argument(
        "--sample-len",
        type=_nonnegative_int,
        default=char_rnn.DEFAULT_SAMPLE_LEN,
        metavar="N",
        help="characters to generate after training (default: %(default)s)",
    )
    parser.add_argument(
        "--temperature",
        type=_positive_float,
        default=char_rnn.DEFAULT_TEMPERATURE,
        metavar="TEMP",
        help="sampling temperature (default: %(default)s)",
    )
    parser.add_argument(
        "--grad-check",
        type=_positive_int,
        default=char_rnn.DEFAULT_GRAD_CHECK_ENTRIES,
        metavar="N",
        help="parameter entries checked against finite differences (default: %(default)s)",
    )


def _progress(steps, out):
    """Return a ``callback(step, loss, smoothed)`` for :func:`char_rnn.train`, and a close function.

    Uses a tqdm bar on an interactive stderr if tqdm is installed (it is not a
    dependency); otherwise prints about ten lines.
    """
    try:
        if not sys.stderr.isatty():
            raise ImportError
        from tqdm import tqdm
    except ImportError:
        every = max(1, steps // 10)
        width = len(str(steps))

        def callback(step, loss, smoothed):
            if step == 1 or step % every == 0 or step == steps:
                print(
                    f"step {step:>{width}}/{steps}  loss {loss:.3f}  smoothed {smoothed:.3f}",
                    file=out,
                    flush=True,
                )

        return callback, lambda: None

    bar = tqdm(total=steps, desc="training", unit="step", file=sys.stderr)

    def callback(step, loss, smoothed):
        bar.update(1)
        if step == 1 or step % 10 == 0 or step == steps:
            bar.set_postfix(loss=f"{smoothed:.3f}", refresh=False)

    return callback, bar.close


def _printable(text, stream):
    """`text` with characters that `stream` cannot encode backslash-escaped."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text


def _run_demo(args, out):
    if args.text is None:
        text, source = char_rnn.zen_of_python(), "the Zen of Python"
    else:
        try:
            text = char_rnn.load_text(args.text)
        except char_rnn.TextError as e:
            raise _UsageError(f"--text: {e}") from None
        source = args.text
    if args.seq_len > len(text) - 1:
        raise _UsageError(
            f"--seq-len: {args.seq_len} is too long for a text of {len(text)} characters (at most {len(text) - 1})"
        )

    vocab = char_rnn.Vocab(text)
    print(
        "numba-ta demo: character-level RNN, full backpropagation through time with numba_ta.TensorArray",
        file=out,
    )
    print(
        f"text: {_printable(source, out)} ({len(text)} characters, {len(vocab)} distinct); "
        f"hidden {args.hidden}, seq-len {args.seq_len}, {args.steps} steps, "
        f"Adam lr {args.lr:g}, seed {args.seed}",
        file=out,
        flush=True,
    )
    t0 = time.perf_counter()
    callback, close = _progress(args.steps, out)
    try:
        tr = char_rnn.train(
            text,
            steps=args.steps,
            hidden=args.hidden,
            seq_len=args.seq_len,
            lr=args.lr,
            seed=args.seed,
            callback=callback,
        )
    finally:
        close()
    print(
        f"loss (nats/char): initial {tr.initial_loss:.3f} -> final smoothed {tr.final_loss:.3f} "
        f"(uniform guess: ln {len(vocab)} = {math.log(len(vocab)):.3f}); "
        f"training took {tr.seconds:.1f} s",
        file=out,
    )

    inputs, targets, h0 = char_rnn.grad_check_batch(text, tr.vocab, args.seq_len, args.hidden, args.seed)
    check = char_rnn.check_gradients(tr.params, inputs, targets, h0, n_entries=args.grad_check, seed=args.seed)
    verdict = "PASS" if check.passed else "FAIL"
    print(
        f"gradient check (float64, {len(inputs)} steps, {check.n_checked} entries vs central "
        f"differences): max relative error {check.max_rel_error:.2e} "
        f"(tolerance {check.tol:.0e}): {verdict}",
        file=out,
    )

    generated = char_rnn.sample(
        tr.params,
        tr.vocab,
        args.sample_len,
        prime=text[0],
        temperature=args.temperature,
        seed=args.seed,
    )
    print(f"sample (temperature {args.temperature:g}, seed {args.seed}):", file=out)
    print("-" * 60, file=out)
    print(_printable(generated, out), file=out)
    print("-" * 60, file=out)
    print(f"done in {time.perf_counter() - t0:.1f} s", file=out, flush=True)
    if not check.passed:
        print(
            f"{PROG} demo: error: gradient check failed: max relative error "
            f"{check.max_rel_error:.2e} >= {check.tol:.0e}",
            file=sys.stderr,
        )
        return 1
    return 0


# --------------------------------------------------------------------------- info


def _add_info_arguments(parser):
    """``info`` takes no options."""


def _threading_layer():
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        pass
    try:  # start the thread pool without compiling anything
        from numba.np.ufunc.parallel import _launch_threads

        _launch_threads()
        return numba.threading_layer()
    except Exception as e:  # no usable layer (e.g. NUMBA_THREADING_LAYER names a missing one)
        return f"unavailable ({type(e).__name__}: {e})"


def _run_info(args, out):
    import numba
    import numpy

    import numba_ta

    rows = [
        ("numba_ta", getattr(numba_ta, "__version__", "unknown")),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        ("platform", platform.platform()),
        ("numpy", numpy.__version__),
        ("numba", numba.__version__),
        ("threading layer", _threading_layer()),
        ("threads", f"{numba.get_num_threads()} (numba.get_num_threads())"),
        ("NUMBA_NUM_THREADS", os.environ.get("NUMBA_NUM_THREADS", "unset")),
        ("NUMBA_THREADING_LAYER", os.environ.get("NUMBA_THREADING_LAYER", "unset")),
        ("OMP_WAIT_POLICY", os.environ.get("OMP_WAIT_POLICY", "unset")),
        ("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", "unset")),
    ]
    try:
        from . import _config

        rows.append(("parallel threshold", f"{_config.PARALLEL_MIN_ELEMENTS} elements"))
    except (ImportError, AttributeError):
        pass
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}", file=out)
    return 0


# --------------------------------------------------------------------------- bench

_BYTE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}

#: Largest --size: the bulk workloads hold several copies of it at once.
MAX_BENCH_BYTES = 2 << 30


def _byte_size(text):
    """``"64M"``, ``"64MiB"``, ``"4k"``, ``"4096"`` -> bytes (binary units)."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgKMG]?)(?:i?[bB])?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 4096, 4K, 64M or 1G, got {text!r}")
    value = int(float(m.group(1)) * _BYTE_UNITS[m.group(2).lower()])
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    if value > MAX_BENCH_BYTES:
        raise argparse.ArgumentTypeError(f"must be at most 2G, got {text!r}")
    return value


def _nonnegative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a non-negative finite number, got {text!r}")
    return value


def _name_list(choices):
    def parse(text):
        names = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in names if t not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError(
                f"unknown name {', '.join(map(repr, bad)) or repr(text)}; choose from {', '.join(choices)}"
            )
        return tuple(dict.fromkeys(names))

    return parse


def _add_bench_arguments(parser):
    from . import bench

    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, 3 repeats, 0.1 s warm-up (4M bulk, 1000-element loops, growth to 10^4)",
    )
    size.add_argument("--full", action="store_true", help="also time 10^6 writes into a dynamic array (growth)")
    parser.add_argument(
        "--repeat", type=_positive_int, default=None, metavar="N", help="timed runs per cell, median shown (default: 5)"
    )
    parser.add_argument(
        "--size",
        type=_byte_size,
        default=None,
        metavar="BYTES",
        help="bytes moved by the bulk workloads, e.g. 64M (default: 64M; 4M with --quick)",
    )
    parser.add_argument(
        "--element",
        type=_byte_size,
        default=4 << 10,
        metavar="BYTES",
        help="bytes per element in the bulk workloads (default: 4K)",
    )
    parser.add_argument(
        "--small",
        type=_positive_int,
        default=None,
        metavar="N",
        help="elements written and read one at a time in the write/read loops (default: 10000)",
    )
    parser.add_argument(
        "--warmup",
        type=_nonnegative_float,
        default=None,
        metavar="SECONDS",
        help="untimed warm-up per case, at least one call (default: 0.5; 0.1 with --quick)",
    )
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32", help="(default: %(default)s)")
    parser.add_argument(
        "--workloads",
        type=_name_list(bench.WORKLOADS),
        default=bench.WORKLOADS,
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(bench.WORKLOADS)} (default: all)",
    )
    parser.add_argument(
        "--impls",
        type=_name_list(bench.IMPLS),
        default=bench.IMPLS,
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(bench.IMPLS)} (default: all available)",
    )
    parser.add_argument("--no-tf", action="store_true", help="skip TensorFlow even if it is installed")
    parser.add_argument(
        "--threads", type=_positive_int, default=None, metavar="N", help="numba threads for the kernels (default: all)"
    )
    parser.add_argument(
        "--parallel-threshold",
        type=_nonnegative_int,
        default=None,
        metavar="ITEMS",
        help="array items from which bulk ops use the parallel kernels (default: numba_ta's setting)",
    )
    parser.add_argument("--json", metavar="FILE", default=None, help="also write all timings to FILE as JSON")
    parser.add_argument(
        "--plot", metavar="FILE.png", default=None, help="also draw a bar chart to FILE.png (needs matplotlib)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress display on stderr")


def _check_output_path(option, path):
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise _UsageError(f"{option}: is a directory: {path}")
    if not os.path.isdir(parent):
        raise _UsageError(f"{option}: directory does not exist: {parent}")


def _bench_config(args):
    from . import bench

    quick = args.quick
    cfg = bench.Config(
        repeat=args.repeat or (3 if quick else 5),
        small_n=args.small or (1_000 if quick else 10_000),
        bulk_bytes=args.size or ((4 << 20) if quick else (64 << 20)),
        element_bytes=args.element,
        growth_ns=(1_000, 10_000) if quick else ((10_000, 100_000, 1_000_000) if args.full else (10_000, 100_000)),
        dtype=args.dtype,
        workloads=args.workloads,
        impls=args.impls,
        use_tf=not args.no_tf,
        warmup_time=args.warmup if args.warmup is not None else (0.1 if quick else 0.5),
    )
    itemsize = 8 if args.dtype == "float64" else 4
    if cfg.element_bytes < itemsize:
        raise _UsageError(f"--element: {cfg.element_bytes} bytes is less than one {args.dtype} ({itemsize} bytes)")
    if cfg.bulk_bytes < cfg.element_bytes:
        raise _UsageError(f"--size: {cfg.bulk_bytes} bytes is less than one element (--element {cfg.element_bytes})")
    return cfg


class _BenchSettings:
    """Apply --threads and --parallel-threshold for the run, restoring the previous values."""

    def __init__(self, threads, threshold):
        self.threads, self.threshold = threads, threshold
        self._undo = []

    def __enter__(self):
        import numba

        import numba_ta

        if self.threads is not None:
            limit = numba.config.NUMBA_NUM_THREADS
            if self.threads > limit:
                raise _UsageError(f"--threads: at most {limit} (NUMBA_NUM_THREADS), got {self.threads}")
            if hasattr(numba_ta, "num_threads"):
                ctx = numba_ta.num_threads(self.threads)
                ctx.__enter__()
                self._undo.append(lambda: ctx.__exit__(None, None, None))
            else:
                old = numba.get_num_threads()
                numba.set_num_threads(self.threads)
                self._undo.append(lambda: numba.set_num_threads(old))
        if self.threshold is not None:
            if not hasattr(numba_ta, "set_parallel_threshold"):
                raise _UsageError("--parallel-threshold: this numba_ta has no set_parallel_threshold()")
            old_t = numba_ta.get_parallel_threshold()
            numba_ta.set_parallel_threshold(self.threshold)
            self._undo.append(lambda: numba_ta.set_parallel_threshold(old_t))
        return self

    def __exit__(self, *exc):
        while self._undo:
            self._undo.pop()()
        return False


def _run_bench(args, out):
    from . import bench

    cfg = _bench_config(args)
    if args.plot is not None:
        _check_output_path("--plot", args.plot)
        try:
            bench._require_matplotlib()
        except ImportError:
            raise _UsageError("--plot: matplotlib is not installed (pip install matplotlib)") from None
    if args.json is not None:
        _check_output_path("--json", args.json)
    with _BenchSettings(args.threads, args.parallel_threshold):
        report = bench.run(cfg, progress=not args.no_progress)
    print(bench.format_table(report), file=out, flush=True)
    if args.json is not None:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(bench.to_json(report) + "\n")
        print(f"timings written to {args.json}", file=out)
    if args.plot is not None:
        bench.plot(report, args.plot)
        print(f"chart written to {args.plot}", file=out)
    failed = [r for r in report.results if r.status == "error"]
    if failed:
        print(f"{PROG} bench: error: {len(failed)} case(s) failed (see ERROR lines above)", file=sys.stderr)
        return 1
    return 0


# --------------------------------------------------------------------------- dispatch


class Command(NamedTuple):
    """One ``numba-ta`` subcommand.

    Attributes
    ----------
    name : str
        The subcommand's name.
    help : str
        One line for ``numba-ta --help``.
    add_arguments : callable
        ``add_arguments(parser)`` adds the subcommand's options.
    run : callable
        ``run(args, out) -> int`` runs it, printing to `out`; returns the exit
        status.  It raises ``_UsageError`` for bad input found after parsing.
    """

    name: str
    help: str
    add_arguments: Callable
    run: Callable


COMMANDS = (
    Command(
        "demo",
        "train a character RNN with BPTT through numba_ta.TensorArray, check its gradients and sample from it",
        _add_demo_arguments,
        _run_demo,
    ),
    Command("info", "print versions, threading layer and thread count", _add_info_arguments, _run_info),
    Command(
        "bench",
        "time numba_ta against a numpy list, a preallocated numpy buffer and TensorFlow; table, JSON, chart",
        _add_bench_arguments,
        _run_bench,
    ),
)


def _build_parser():
    parser = _Parser(
        prog=PROG,
        description="numba_ta: TensorFlow's TensorArray on CPU with numpy and Numba.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(_command=cmd)
    return parser


def main(argv=None):
    """Run the ``numba-ta`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        Exit status: 0 success, 1 gradient check failed, 2 bad input (one line
        on stderr), 130 interrupted.

    Examples
    --------
    >>> from numba_ta.cli import main
    >>> main(["demo", "--steps", "0"])
    2
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, already printed)
        return e.code if isinstance(e.code, int) else 2
    if args.command is None:
        names = ", ".join(c.name for c in COMMANDS)
        print(f"{PROG}: error: choose a command: {names} (see {PROG} --help)", file=sys.stderr)
        return 2
    cmd = args._command
    out = sys.stdout
    try:
        return cmd.run(args, out)
    except _UsageError as e:
        print(f"{PROG} {cmd.name}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG} {cmd.name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `numba-ta demo | head`
        try:  # point stdout at devnull so the flush at exit does not raise again
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
