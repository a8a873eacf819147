"""The ``numba-ta`` command.

Subcommands
-----------
``numba-ta demo``
    Train a character-level RNN with backpropagation through time, every hidden
    state kept in a :class:`numba_ta.TensorArray`; print the falling loss, a
    float64 gradient check and a generated sample
    (:mod:`numba_ta_demo`, an application of numba_ta outside the library package).
``numba-ta info``
    Print the versions, threading layer (and whether ``fork()`` is safe with it)
    and thread count in use.
``numba-ta bench``
    Time the main workloads side by side for numba_ta, a numpy list, a
    preallocated numpy buffer and (when installed) TensorFlow eager and
    ``tf.function``; print medians, ratios and the performance goals, met or
    missed, optionally as ``--json`` and a ``--plot``.  The benchmarks are in
    the source repository's ``asv_bench/``, not in the installed package: the
    command runs them from a clone and otherwise says how to get one
    (:mod:`numba_ta._bench_cmd`).

``numba-ta --version`` prints ``numba-ta <version>`` (``numba_ta.__version__``).

Each subcommand is one :class:`Command` in ``COMMANDS``: a name, a help line, a
function that adds its options to an :mod:`argparse` parser, and a function that
runs it and returns the exit status.  Adding a subcommand means adding one entry.

Exit status: 0 on success, 1 if the demo's gradient check fails, a bench case
fails, no benchmark suite is found (or stdout closes early), 2 for bad input (one
``numba-ta <command>: error: ...`` line on stderr, after the command's usage line
for an argument it does not take; no traceback), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple, NoReturn, TextIO

import numpy as np

__all__ = ["main", "Command", "COMMANDS"]

PROG = "numba-ta"


class _UsageError(Exception):
    """Bad input found after parsing; the message is the one line to print."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line: ``<prog>: error: <message>``."""

    commands: dict[str, argparse.ArgumentParser]  # the top-level parser's: command name -> its parser

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


# --------------------------------------------------------------------------- option types


def _positive_int(text: str) -> int:
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


def _hidden_size(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_HIDDEN:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_HIDDEN}, got {text!r}")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


# --------------------------------------------------------------------------- demo


def _add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    import numba_ta_demo as demo  # the application, imported only for its command

    parser.add_argument(
        "--jit",
        action="store_true",
        help="run each training step's time loops as @numba.njit code over the TensorArrays (the gradient "
        "check uses that step too), and print its speed against the Python step",
    )
    parser.add_argument(
        "--steps",
        type=_positive_int,
        default=demo.DEFAULT_STEPS,
        metavar="N",
        help="training iterations, one chunk of --seq-len characters each (default: %(default)s)",
    )
    parser.add_argument(
        "--hidden",
        type=_hidden_size,
        default=demo.DEFAULT_HIDDEN,
        metavar="H",
        help=f"hidden-state size, at most {MAX_HIDDEN} (default: %(default)s)",
    )
    parser.add_argument(
        "--seq-len",
        type=_positive_int,
        default=demo.DEFAULT_SEQ_LEN,
        metavar="T",
        help="characters per chunk = time steps backpropagated through (default: %(default)s)",
    )
    parser.add_argument(
        "--lr",
        type=_positive_float,
        default=demo.DEFAULT_LR,
        metavar="LR",
        help=f"Adam learning rate, decaying as 1/sqrt(step) after step {demo.DEFAULT_LR_DECAY_START} "
        "(default: %(default)s)",
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
        default=demo.DEFAULT_SAMPLE_LEN,
        metavar="N",
        help="characters to generate after training (default: %(default)s)",
    )
    parser.add_argument(
        "--temperature",
        type=_positive_float,
        default=demo.DEFAULT_TEMPERATURE,
        metavar="TEMP",
        help="sampling temperature (default: %(default)s)",
    )
    parser.add_argument(
        "--grad-check",
        type=_positive_int,
        default=demo.DEFAULT_GRAD_CHECK_ENTRIES,
        metavar="N",
        help=(
            "parameter entries checked against fourth-order central finite differences, in float64 "
            "(default: %(default)s); an entry passes if |analytic - numeric| <= atol + rtol * |numeric|, "
            f"rtol {demo.GRAD_CHECK_RTOL:g}, atol from the loss and the finite-difference step "
            f"{demo.GRAD_CHECK_STEP:g} (about 7e-12)"
        ),
    )


def _progress(steps: int, out: TextIO) -> tuple[Callable[[int, float, float], None], Callable[[], object]]:
    """Return a ``callback(step, loss, smoothed)`` for :func:`numba_ta_demo.train`, and a close function.

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

        def callback(step: int, loss: float, smoothed: float) -> None:
            if step == 1 or step % every == 0 or step == steps:
                print(
                    f"step {step:>{width}}/{steps}  loss {loss:.3f}  smoothed {smoothed:.3f}",
                    file=out,
                    flush=True,
                )

        return callback, lambda: None

    bar = tqdm(total=steps, desc="training", unit="step", file=sys.stderr)

    def update_bar(step: int, loss: float, smoothed: float) -> None:
        bar.update(1)
        if step == 1 or step % 10 == 0 or step == steps:
            bar.set_postfix(loss=f"{smoothed:.3f}", refresh=False)

    return update_bar, bar.close


class _Ticker:
    """Context manager that shows the seconds spent in its block (for a wait of unknown length).

    On an interactive stderr a line ``<label> ... N s`` counts up every second until the
    block ends (then it is cleared); elsewhere nothing is printed meanwhile.  ``seconds``
    holds the block's duration afterwards.
    """

    def __init__(self, label: str, out: TextIO) -> None:
        self.label = label
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live = sys.stderr.isatty() and out is sys.stdout

    def _tick(self) -> None:
        t0 = time.perf_counter()
        while not self._stop.wait(1.0):
            print(f"\r{self.label} ... {time.perf_counter() - t0:.0f} s", end="", file=sys.stderr, flush=True)

    def __enter__(self) -> _Ticker:
        self._t0 = time.perf_counter()
        if self._live:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t0
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _printable(text: str, stream: object) -> str:
    """`text` with characters that `stream` cannot encode backslash-escaped."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text


def _run_demo(args: argparse.Namespace, out: TextIO) -> int:
    import numba_ta_demo as demo

    if args.text is None:
        text, source = demo.zen_of_python(), "the Zen of Python"
    else:
        try:
            text = demo.load_text(args.text)
        except demo.TextError as e:
            raise _UsageError(f"--text: {e}") from None
        source = args.text
    if args.seq_len > len(text) - 1:
        raise _UsageError(
            f"--seq-len: {args.seq_len} is too long for a text of {len(text)} characters (at most {len(text) - 1})"
        )

    vocab = demo.Vocab(text)
    decay = demo.DEFAULT_LR_DECAY_START
    # the rate decays as 1/sqrt(step) from step `decay` on: only a run that long says so
    lr_text = f"Adam lr {args.lr:g}" + (f" (1/sqrt decay after step {decay})" if args.steps > decay else "")
    print(
        "numba-ta demo: character-level RNN, full backpropagation through time with numba_ta.TensorArray",
        file=out,
    )
    print(
        f"text: {_printable(source, out)} ({len(text)} characters, {len(vocab)} distinct); "
        f"hidden {args.hidden}, seq-len {args.seq_len}, {args.steps} steps, "
        f"{lr_text}, seed {args.seed}",
        file=out,
        flush=True,
    )
    t0 = time.perf_counter()
    with _Ticker("preparing numba_ta's compiled code (compiled once, then loaded from the cache)", out) as ticker:
        demo.prepare_kernels(len(vocab), args.hidden, args.seq_len, jit=args.jit, seed=args.seed)
    print(f"{ticker.label}: {ticker.seconds:.1f} s", file=out, flush=True)
    print(
        f"loss: cross-entropy per character, in nats (natural-log units); a uniform guess scores ln {len(vocab)} "
        f"= {math.log(len(vocab)):.3f}\nsmoothed: the loss's moving average (0.95 of the last average, 0.05 of "
        "the step's loss)",
        file=out,
    )
    callback, close = _progress(args.steps, out)
    try:
        tr = demo.train(
            text,
            steps=args.steps,
            hidden=args.hidden,
            seq_len=args.seq_len,
            lr=args.lr,
            seed=args.seed,
            callback=callback,
            jit=args.jit,
        )
    finally:
        close()
    print(
        f"loss: initial {tr.initial_loss:.3f} -> final smoothed {tr.final_loss:.3f}; training took {tr.seconds:.1f} s",
        file=out,
    )

    inputs, targets, h0 = demo.grad_check_batch(text, tr.vocab, args.seq_len, args.hidden, args.seed)
    with_step = {"loss_and_grads": demo.loss_and_grads_compiled} if args.jit else {}
    check = demo.check_gradients(
        tr.params, inputs, targets, h0, n_entries=args.grad_check, seed=args.seed, **with_step
    )
    verdict = "PASS" if check.passed else "FAIL"
    print(
        f"gradient check ({check.n_checked} entries vs finite differences, see --help): "
        f"worst at {check.worst.ratio:.2g} of its tolerance: {verdict}",
        file=out,
    )

    if args.jit:
        h32 = np.asarray(h0, dtype=tr.params["Whh"].dtype)
        py_s, jit_s = demo.step_times(tr.params, inputs, targets, h32)
        print(
            f"training step ({len(inputs)} steps of BPTT, median of 30): Python loops {py_s * 1e6:.0f} us, "
            f"compiled {jit_s * 1e6:.0f} us: {py_s / jit_s:.1f}x",
            file=out,
        )

    generated = demo.sample(
        tr.params,
        tr.vocab,
        args.sample_len,
        prime=text[0],
        temperature=args.temperature,
        seed=args.seed,
    )
    print(
        f"sample (temperature {args.temperature:g}, seed {args.seed}; a model this small writes gibberish "
        "with words in it):",
        file=out,
    )
    print("-" * 60, file=out)
    print(_printable(generated, out), file=out)
    print("-" * 60, file=out)
    ops = {k: v * args.steps for k, v in demo.tensor_array_ops(args.seq_len).items()}
    print(
        f"numba_ta: {args.steps:,} dynamic TensorArrays of {args.seq_len} states ({ops['write']:,} writes, "
        f"{ops['read']:,} reads, {ops['stack']:,} stacks) and their",
        file=out,
    )
    print(
        f"{ops['grad']:,} gradient arrays ({ops['unstack']:,} unstacks, {ops['grad_read']:,} reads, "
        f"{ops['summed_write']:,} writes summed into slots the unstack filled)",
        file=out,
    )
    print(f"done in {time.perf_counter() - t0:.1f} s", file=out, flush=True)
    if not check.passed:
        print(
            f"{PROG} demo: error: gradient check failed: {check.worst.describe()}",
            file=sys.stderr,
        )
        return 1
    return 0


# --------------------------------------------------------------------------- info


def _add_info_arguments(parser: argparse.ArgumentParser) -> None:
    """``info`` takes no options."""


def _threading_layer() -> str:
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        pass
    try:  # start the thread pool without compiling anything
        from numba_ta.core import numba_compat

        numba_compat.launch_threads()
        return numba.threading_layer()
    except Exception as e:  # no usable layer (e.g. NUMBA_THREADING_LAYER names a missing one)
        return f"unavailable ({type(e).__name__}: {e})"


def _fork_safety(layer: str) -> str:
    """One line on ``os.fork()`` with the threading layer ``layer`` (its name, or why it is unknown)."""
    advice = (
        "use multiprocessing's 'forkserver' or 'spawn' start method, "
        "or NUMBA_THREADING_LAYER=tbb or workqueue (fork-safe)"
    )
    if layer in ("tbb", "workqueue"):
        return f"safe ({layer} layer)"
    if layer == "omp":
        from numba_ta.core import numba_compat

        vendor = numba_compat.openmp_vendor()  # None when unknown: the vendor is only a detail of the message
        if vendor not in (None, "GNU"):
            return f"{vendor} OpenMP, not GNU OpenMP: no known fork() problem"
        return (
            "a forked child that runs a parallel kernel after its parent did is terminated by GNU OpenMP "
            f'("fork() called from a process already using GNU OpenMP"): {advice}'
        )
    return f"depends on the layer: GNU OpenMP (the omp layer on Linux) terminates such children; {advice}"


def _numba_line(version: str) -> str:
    """``0.68.1 (supported: numba>=0.59,<0.69)``, or ``... (NOT supported: ...)`` outside the range."""
    from numba_ta.core import numba_compat

    verdict = "supported" if numba_compat.IN_RANGE else "NOT supported"
    return f"{version} ({verdict}: {numba_compat.REQUIREMENT})"


def _run_info(args: argparse.Namespace, out: TextIO) -> int:
    import numba
    import numpy

    import numba_ta

    layer = _threading_layer()
    rows = [
        ("numba_ta", getattr(numba_ta, "__version__", "unknown")),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        ("platform", platform.platform()),
        ("numpy", numpy.__version__),
        ("numba", _numba_line(numba.__version__)),
        ("threading layer", layer),
        ("fork()", _fork_safety(layer)),
        ("threads", f"{numba.get_num_threads()} (numba.get_num_threads())"),
        ("NUMBA_NUM_THREADS", os.environ.get("NUMBA_NUM_THREADS", "unset")),
        ("NUMBA_THREADING_LAYER", os.environ.get("NUMBA_THREADING_LAYER", "unset")),
        ("OMP_WAIT_POLICY", os.environ.get("OMP_WAIT_POLICY", "unset")),
        ("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", "unset")),
    ]
    try:
        from numba_ta.core import config as _config

        rows.append(("parallel threshold", f"{_config.PARALLEL_MIN_ELEMENTS} elements"))
    except (ImportError, AttributeError):
        pass
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}", file=out)
    return 0


# --------------------------------------------------------------------------- bench


def _add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Take every argument after ``bench`` as it is, ``--help`` included.

    The benchmarks, and the parser of their options, live in the source
    repository's ``asv_bench/`` (see :mod:`numba_ta._bench_cmd`): no argument is
    an option of this parser (no prefix character), so argparse hands them all over.
    """
    parser.prefix_chars = "\0"
    parser.add_argument(
        "options",
        nargs=argparse.REMAINDER,
        metavar="OPTION",
        help="options of the benchmark report (numba-ta bench --help lists them when the suite is found)",
    )


def _run_bench(args: argparse.Namespace, out: TextIO) -> int:
    from numba_ta import _bench_cmd

    return _bench_cmd.run(args.options, out, prog=f"{PROG} bench")


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
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, TextIO], int]


COMMANDS: tuple[Command, ...] = (
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


def _command_of(argv: Sequence[str]) -> str | None:
    """Return the command ``argv`` names (its first word that is not an option), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


def _build_parser(command: str | None = None) -> _Parser:
    """Return the parser, with the options of ``command`` only (the others' are not needed to parse it).

    So ``numba-ta info`` or ``numba-ta --help`` does not import the demo application
    (:mod:`numba_ta_demo`), whose options' defaults are its own.
    """
    from numba_ta import __version__

    parser = _Parser(
        prog=PROG,
        description="numba_ta: TensorFlow's TensorArray on CPU with numpy and Numba.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.commands = {}
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        if cmd.name == command:
            cmd.add_arguments(p)
        p.set_defaults(_command=cmd)
        parser.commands[cmd.name] = p
    return parser


def main(argv: Sequence[str] | None = None) -> int:
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
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _build_parser(_command_of(argv))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # what no option takes: the command's usage, then the error with its prefix
            sub = parser.commands.get(getattr(args, "command", None) or "", parser)
            sub.print_usage(sys.stderr)
            sub.exit(2, f"{sub.prog}: error: unrecognized arguments: {' '.join(extra)}\n")
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
