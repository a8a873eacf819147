"""Regression check of numba_ta's ops between two commits, with asv: a Markdown table, non-zero on a slowdown.

Run before finishing a change that touches the engine or the kernels, from anywhere in a clone
(the changes committed: asv builds commits, not the working tree)::

    python asv_bench/regressions.py BASE [HEAD]

It runs ``asv continuous`` over the op benchmarks of ``bench_ops.py`` (the one-element loops
write, read, accumulate_write and grad; the bulk ops gather, scatter, stack, unstack, concat,
split and accumulate) for ``numba_ta`` and ``raw_ops``, plus the preallocated numpy buffer
(``numpy_prealloc``) as a control: asv builds both commits into one virtualenv (numpy and
numba pinned in ``asv.conf.json``, no TensorFlow) and times them in interleaved rounds.  Then
it compares the two commits as ``asv compare --factor`` does (a row changes when its ratio is
beyond the factor and asv's statistics call the difference significant) and prints a Markdown
table for the closing note of the work.  The control runs the same numpy code at both commits: a
flagged control row means the machine was too noisy for the comparison to be trusted.

Exit status: 0 when no numba_ta or raw_ops row is slower (or fails only at HEAD); 1 when one
is; 3 when none is but a control row changed (too noisy: run again); 2 for bad arguments or
when asv gave no results to compare.  The whole selection takes about 12 minutes on two quiet
cores, 17 under load (``--ops`` and ``--impls`` cut it down: 4 minutes for three bulk ops);
``--compare-only`` re-prints the table of a previous run without timing anything.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parent
ROOT = SUITE.parent
CONFIG = SUITE / "asv.conf.json"

#: op name (as in workloads.OPS and numba-ta bench) -> the bench_ops class that times it.
OPS = {
    "write": "Write",
    "read": "Read",
    "accumulate_write": "AccumulateWrite",
    "grad": "GradCreate",
    "gather": "Gather",
    "scatter": "Scatter",
    "stack": "Stack",
    "unstack": "Unstack",
    "concat": "Concat",
    "split": "Split",
    "accumulate": "Accumulate",
}
IMPLS = ("numba_ta", "raw_ops", "numpy_prealloc", "numpy_list", "tf_eager", "tf_function")
DEFAULT_IMPLS = ("numba_ta", "raw_ops", "numpy_prealloc")
#: Baselines: the same code at both commits, so a changed row is noise.
CONTROLS = frozenset({"numpy_prealloc", "numpy_list", "tf_eager", "tf_function"})
DEFAULT_FACTOR = 1.3

#: Change marks of ``asv compare``, and what the table calls them.
SLOWER, FASTER, FAILS, FIXED, SAME, NOISY = "slower", "faster", "fails at head", "fixed at head", "", "~"


def selection_regex(ops, impls):
    """The asv ``--bench`` regex of `ops` x `impls` (asv matches ``name(param, ...)`` for parameterized benchmarks).

    >>> regex = selection_regex(["stack", "gather"], ["numba_ta"])
    >>> bool(re.search(regex, "bench_ops.Stack.time_stack('numba_ta', '4KiB', 16384, 'float32')"))
    True
    >>> bool(re.search(regex, "bench_ops.Stack.time_stack('numpy_prealloc', '4KiB', 16384, 'float32')"))
    False
    """
    classes = "|".join(OPS[o] for o in ops)
    return rf"^bench_ops\.({classes})\.time_\w+\('({'|'.join(impls)})', "


def _name_list(choices):
    def parse(text):
        names = [s.strip() for s in text.split(",") if s.strip()]
        bad = [n for n in names if n not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {', '.join(choices)}, got {text!r}")
        return tuple(dict.fromkeys(names))

    return parse


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python asv_bench/regressions.py",
        description=(
            "Time numba_ta's ops at two commits with asv continuous (each commit built into asv's virtualenv) and "
            "print the comparison as a Markdown table; exit 1 on a slowdown beyond the factor."
        ),
        epilog=(
            "exit status: 0 no slowdown; 1 a numba_ta or raw_ops row slower or failing at HEAD; 2 bad arguments or "
            "no results; 3 no slowdown, but a control (numpy) row changed: too noisy, run again"
        ),
    )
    parser.add_argument("base", help="the commit the work started from (any git revision)")
    parser.add_argument("head", nargs="?", default="HEAD", help="the commit to check (default: HEAD)")
    parser.add_argument(
        "--factor",
        type=float,
        default=DEFAULT_FACTOR,
        help="ratio beyond which a significant change counts (default: %(default)s)",
    )
    parser.add_argument(
        "--ops",
        type=_name_list(tuple(OPS)),
        default=tuple(OPS),
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(OPS)} (default: all)",
    )
    parser.add_argument(
        "--impls",
        type=_name_list(IMPLS),
        default=DEFAULT_IMPLS,
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(IMPLS)} (default: {','.join(DEFAULT_IMPLS)}; "
        "numpy_* and tf_* are controls: TensorFlow is not installed in asv's environment)",
    )
    parser.add_argument(
        "--bench",
        action="append",
        default=None,
        metavar="REGEX",
        help="asv benchmark regex instead of --ops/--impls (repeatable); rows whose impl is numpy_* or tf_* "
        "are still controls",
    )
    parser.add_argument(
        "--compare-only",
        action="store_true",
        help="time nothing: compare the results asv recorded before for the two commits",
    )
    parser.add_argument("--all", action="store_true", help="list every compared row, not only the changed ones")
    parser.add_argument("--machine", default=None, help="asv machine name (default: the one that has both commits)")
    parser.add_argument("--markdown", metavar="FILE", default=None, help="also write the note to FILE")
    parser.add_argument(
        "-a",
        "--attribute",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="benchmark attribute override passed to asv (e.g. rounds=4)",
    )
    return parser


# --------------------------------------------------------------------------- git and asv


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def resolve(rev):
    """Full hash of a git revision (ValueError if unknown)."""
    try:
        return git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        raise ValueError(f"unknown commit: {rev}") from None


def run_asv(base, head, regexes, factor, attributes):
    """``asv continuous`` of `base` and `head` over `regexes`; its output goes to stderr. Returns its exit code."""
    env = dict(os.environ)
    env.setdefault("NUMBA_NUM_THREADS", "2")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    asv = [sys.executable, "-m", "asv"]
    if not os.path.isfile(os.path.expanduser("~/.asv-machine.json")):
        subprocess.run(
            [*asv, "machine", "--yes", "--config", str(CONFIG)], cwd=SUITE, env=env, check=True, stdout=sys.stderr
        )
    cmd = [*asv, "continuous", "--config", str(CONFIG), "--factor", str(factor), "--record-samples", "--show-stderr"]
    for r in regexes:
        cmd += ["--bench", r]
    for a in attributes:
        cmd += ["--attribute", a]
    cmd += [base, head]
    print("$ " + " ".join(_quote(c) for c in cmd[2:]), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=SUITE, env=env, stdout=sys.stderr).returncode


def _quote(arg):
    """`arg` as a shell word: bare, in single quotes, or in double quotes (a regex with single quotes)."""
    if re.fullmatch(r"[\w@%+=:,./-]+", arg):
        return arg
    if "'" not in arg:
        return f"'{arg}'"
    if not re.search(r'[$`"!]|\\[\\\n]|\\$', arg):  # a backslash stays in double quotes but before these
        return f'"{arg}"'
    return shlex.quote(arg)


# --------------------------------------------------------------------------- comparison


def _results_dir():
    from asv import util

    conf = util.load_json(str(CONFIG), js_comments=True)
    return (SUITE / conf.get("results_dir", "results")).resolve()


def _machines_with(results_dir, commits):
    from asv import results as asv_results

    found = {}
    for root, filename, machine in asv_results.iter_results_paths(str(results_dir)):
        for c in commits:
            if filename.startswith(c[:8]):
                path = os.path.join(root, filename)
                found.setdefault(machine, {}).setdefault(c, 0)
                found[machine][c] = max(found[machine][c], os.path.getmtime(path))
    both = {m: max(t.values()) for m, t in found.items() if len(t) == len(set(commits))}
    return sorted(both, key=both.get, reverse=True)


def _load(results_dir, machine, commit, regexes):
    """``{(row name, env name): (value, stats, samples)}`` of `commit`, the rows `regexes` select."""
    from asv import results as asv_results
    from asv.commands.compare import unroll_result

    out = {}
    for result in asv_results.iter_results_for_machine_and_hash(str(results_dir), machine, commit):
        for key in result.get_all_result_keys():
            params = result.get_result_params(key)
            value = result.get_result_value(key, params)
            stats = result.get_result_stats(key, params)
            samples = result.get_result_samples(key, params)
            for name, v, st, sa in unroll_result(key, params, value, stats, samples):
                if regexes and not any(re.search(r, name) for r in regexes):
                    continue
                out[(name, result.env_name)] = (v, st, sa)
    return out


def _isna(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def impl_of(name):
    """The ``impl`` parameter of a row name, e.g. ``bench_ops.Stack.time_stack('numba_ta', '4KiB', 16, 'float32')``."""
    m = re.search(r"\('([^']*)'", name)
    return m.group(1) if m else ""


def compare(before, after, factor):
    """Rows of the comparison: dicts with name, env, before/after value and error, ratio, change, control.

    The change is asv compare's: ``slower``/``faster`` when the ratio is beyond `factor` and
    asv's statistics call the difference significant, ``~`` beyond the factor but not
    significant, ``fails at head``/``fixed at head``; ``""`` otherwise.  Rows skipped at
    either commit (a size over the budget, TensorFlow missing) are left out.
    """
    from asv.commands.compare import _is_result_better
    from asv_runner.statistics import get_err

    rows = []
    for key in sorted(set(before) & set(after)):
        (v1, st1, sa1), (v2, st2, sa2) = before[key], after[key]
        nan1 = v1 is not None and math.isnan(v1)
        nan2 = v2 is not None and math.isnan(v2)
        if nan1 or nan2:
            continue  # skipped
        if v1 is None and v2 is None:
            continue  # failed at both
        ratio = v2 / v1 if not (_isna(v1) or _isna(v2)) and v1 > 0 else None
        if v1 is not None and v2 is None:
            change = FAILS
        elif v1 is None:
            change = FIXED
        elif _is_result_better(v2, v1, (st2, sa2), (st1, sa1), factor):
            change = FASTER
        elif _is_result_better(v1, v2, (st1, sa1), (st2, sa2), factor):
            change = SLOWER
        elif ratio is not None and (ratio > factor or ratio < 1 / factor):
            change = NOISY
        else:
            change = SAME
        name, env = key
        rows.append(
            {
                "name": name,
                "env": env,
                "before": v1,
                "after": v2,
                "err_before": get_err(v1, st1) if st1 and v1 is not None else None,
                "err_after": get_err(v2, st2) if st2 and v2 is not None else None,
                "ratio": ratio,
                "change": change,
                "control": impl_of(name) in CONTROLS,
            }
        )
    return rows


def _fmt(value, err):
    from asv.util import human_value

    return human_value(value, "seconds", err=err) if value is not None else "failed"


_ORDER = {SLOWER: 0, FAILS: 1, FASTER: 2, FIXED: 3, NOISY: 4, SAME: 5}


def markdown(rows, base, head, factor, machine, show_all=False, command=None, minutes=None):
    """The closing note: a summary and the table of the changed rows (every row with `show_all`)."""
    from asv import __version__ as asv_version

    ops = [r for r in rows if not r["control"]]
    controls = [r for r in rows if r["control"]]
    envs = sorted({r["env"] for r in rows})

    def count(rs, change):
        return sum(r["change"] == change for r in rs)

    def span(rs):
        ratios = [r["ratio"] for r in rs if r["ratio"] is not None]
        return f"ratios {min(ratios):.2f}-{max(ratios):.2f}" if ratios else "no ratio"

    lines = [f"**asv regression check** `{base[:8]}` (base) -> `{head[:8]}` (head), factor {factor:g}", ""]
    meta = f"machine `{machine}`, environment `{', '.join(envs)}`, asv {asv_version}"
    if minutes is not None:
        meta += f", {minutes:.0f} min"
    lines.append(meta + ("; `" + command + "`" if command else "") + ".")
    lines.append("")
    lines.append(
        f"- numba_ta/raw_ops: {len(ops)} rows, **{count(ops, SLOWER)} slower**, {count(ops, FASTER)} faster, "
        f"{count(ops, FAILS)} failing at head, {count(ops, NOISY)} beyond the factor but not significant "
        f"({span(ops)})."
    )
    flagged = [r for r in controls if r["change"] in (SLOWER, FASTER)]
    lines.append(
        f"- controls (numpy baselines, the same code at both commits): {len(controls)} rows, "
        + (f"**{len(flagged)} changed: too noisy, run again**" if flagged else "none changed")
        + f" ({span(controls)})."
    )
    shown = rows if show_all else [r for r in rows if r["change"] != SAME]
    shown = sorted(shown, key=lambda r: (_ORDER[r["change"]], -(r["ratio"] or 0), r["name"]))
    lines.append("")
    if not shown:
        lines.append(f"No row beyond the factor {factor:g} either way.")
        return "\n".join(lines)
    multi_env = len(envs) > 1
    lines.append(f"| Change | Before `{base[:8]}` | After `{head[:8]}` | Ratio | Benchmark (impl, element, n, dtype) |")
    lines.append("|---|--:|--:|--:|---|")
    for r in shown:
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        change = r["change"] or " "
        if r["control"] and r["change"]:
            change += " (control)"
        if r["change"] in (SLOWER, FAILS) and not r["control"]:
            change = f"**{change}**"
        name = r["name"] + (f" [{r['env']}]" if multi_env else "")
        before, after = _fmt(r["before"], r["err_before"]), _fmt(r["after"], r["err_after"])
        lines.append(f"| {change} | {before} | {after} | {ratio} | `{name}` |")
    return "\n".join(lines)


def status(rows):
    """Exit status of the comparison (see the module docstring)."""
    if any(r["change"] in (SLOWER, FAILS) and not r["control"] for r in rows):
        return 1
    if any(r["change"] in (SLOWER, FASTER) and r["control"] for r in rows):
        return 3
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    prog = "regressions.py"
    if not (args.factor > 1):
        print(f"{prog}: error: --factor must be above 1, got {args.factor}", file=sys.stderr)
        return 2
    try:
        base, head = resolve(args.base), resolve(args.head)
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    if base == head:
        print(f"{prog}: error: base and head are the same commit ({base[:8]})", file=sys.stderr)
        return 2
    regexes = args.bench or [selection_regex(args.ops, args.impls)]
    dirty = git("status", "--porcelain", "--", "numba_ta", "pyproject.toml")
    if dirty and not args.compare_only:
        print(
            f"{prog}: note: uncommitted changes under numba_ta/ are not measured (asv builds commits):\n{dirty}",
            file=sys.stderr,
        )
    minutes = None
    if not args.compare_only:
        t0 = time.monotonic()
        code = run_asv(base, head, regexes, args.factor, args.attribute)
        minutes = (time.monotonic() - t0) / 60
        print(f"{prog}: asv continuous exited with {code} after {minutes:.1f} min", file=sys.stderr)
        if code not in (0, 1):  # 1: slower rows (or an asv error, which leaves no results)
            print(
                f"{prog}: warning: asv reported failures (exit {code}, see above): rows that failed are "
                "marked in the table",
                file=sys.stderr,
            )
    results_dir = _results_dir()
    machines = [args.machine] if args.machine else _machines_with(results_dir, [base, head])
    if not machines:
        print(f"{prog}: error: no asv results of both {base[:8]} and {head[:8]} in {results_dir}", file=sys.stderr)
        return 2
    machine = machines[0]
    before = _load(results_dir, machine, base, regexes)
    after = _load(results_dir, machine, head, regexes)
    rows = compare(before, after, args.factor)
    if not rows:
        print(f"{prog}: error: no benchmark measured at both commits on machine {machine!r}", file=sys.stderr)
        return 2
    given = argv if argv is not None else sys.argv[1:]
    command = "python asv_bench/regressions.py " + " ".join(_quote(a) for a in given)
    note = markdown(rows, base, head, args.factor, machine, show_all=args.all, command=command, minutes=minutes)
    print(note)
    if args.markdown:
        Path(args.markdown).write_text(note + "\n", encoding="utf-8")
        print(f"{prog}: note written to {args.markdown}", file=sys.stderr)
    return status(rows)


if __name__ == "__main__":
    sys.exit(main())
