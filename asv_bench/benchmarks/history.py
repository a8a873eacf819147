"""The headline ratios across the commits asv recorded, drawn to a PNG that needs no network.

``asv publish`` writes an HTML dashboard whose page loads jQuery, flot and
bootstrap from CDNs (code.jquery.com, cdnjs.cloudflare.com, cdn.jsdelivr.net):
without network it shows nothing.  This module reads the same results, asv's
JSON files in ``.asv/results/<machine>/``, and draws with matplotlib (Agg
backend) one point per recorded commit, ordered by commit date, of each
headline ratio: numba_ta's time over the preallocated numpy buffer's
(``numpy_prealloc``) time for the same work, measured in the same run.  A
ratio is immune to how loaded the machine was, which the raw times are not.

- bulk ops at 64 MiB (16384 elements of 4 KiB, float32): stack, gather,
  unstack, concat and the gradient accumulation (``accumulate``);
- the one-element loops at 16384 x 256 B float32: write and read, through
  ``TensorArray`` and through ``raw_ops``.

Run it from ``asv_bench/`` as ``python -m benchmarks.history history.png``,
or as ``numba-ta bench --history history.png`` from anywhere in a clone.
A commit recorded in several environments is drawn from its most recent run
in an environment asv built it into (``virtualenv``), else from its most
recent ``existing`` run (``asv run -E existing --set-commit-hash``, which
times the working tree under the commit's name).

No public name here starts with ``time_``, ``track_``, ``mem_`` or
``peakmem_``: asv would take it for a benchmark.

Examples
--------
>>> [h.label for h in HEADLINES][:2]
['stack', 'gather']
>>> _unquote("'4KiB'"), _unquote("16384")
('4KiB', '16384')
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HEADLINES", "Headline", "Point", "load_history", "format_history", "draw_history", "main"]

#: The asv_bench folder this module belongs to.
SUITE_DIR = Path(__file__).resolve().parent.parent

BULK_SIZE = ("4KiB", "16384", "float32")
LOOP_SIZE = ("256B", "16384", "float32")
BASELINE = "numpy_prealloc"


@dataclass(frozen=True)
class Headline:
    """One ratio: ``impl``'s time over ``numpy_prealloc``'s in asv benchmark ``key`` at ``size``.

    ``panel`` is ``"bulk"`` or ``"loop"``; ``size`` is ``(element, n, dtype)``.
    """

    label: str
    key: str
    panel: str
    size: tuple
    impl: str = "numba_ta"


HEADLINES = (
    Headline("stack", "bench_ops.Stack.time_stack", "bulk", BULK_SIZE),
    Headline("gather", "bench_ops.Gather.time_gather", "bulk", BULK_SIZE),
    Headline("unstack", "bench_ops.Unstack.time_unstack", "bulk", BULK_SIZE),
    Headline("concat", "bench_ops.Concat.time_concat", "bulk", BULK_SIZE),
    Headline("accumulate", "bench_ops.Accumulate.time_accumulate", "bulk", BULK_SIZE),
    Headline("write", "bench_ops.Write.time_write", "loop", LOOP_SIZE),
    Headline("read", "bench_ops.Read.time_read", "loop", LOOP_SIZE),
    Headline("write (raw_ops)", "bench_ops.Write.time_write", "loop", LOOP_SIZE, impl="raw_ops"),
    Headline("read (raw_ops)", "bench_ops.Read.time_read", "loop", LOOP_SIZE, impl="raw_ops"),
)


@dataclass
class Point:
    """The headline ratios of one recorded commit (``ratios[label]``: None when not measured)."""

    commit: str
    date: datetime.datetime
    env_name: str
    ratios: dict = field(default_factory=dict)


def _unquote(text):
    """asv stores parameter values as their repr: ``"'4KiB'"`` -> ``"4KiB"``."""
    text = str(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _values(result, key):
    """``{(impl, element, n, dtype): seconds}`` of one benchmark in one asv Results (measured ones only)."""
    params = result.get_result_params(key)
    values = result.get_result_value(key, params)
    out = {}
    for combo, value in zip(itertools.product(*params), values, strict=False):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        out[tuple(_unquote(p) for p in combo)] = float(value)
    return out


def _started(result):
    started = [v for v in (result.started_at or {}).values() if v]
    return max(started) if started else 0


def _rank(result):
    """Which run of a commit to draw: one asv built from the commit (not ``existing``), then the latest."""
    return (not result.env_name.startswith("existing"), _started(result))


def results_dir(suite=SUITE_DIR):
    """The results folder of the suite's ``asv.conf.json`` (``.asv/results`` relative to the suite)."""
    from asv import util

    conf = util.load_json(os.path.join(suite, "asv.conf.json"), js_comments=True)
    return (Path(suite) / conf.get("results_dir", "results")).resolve()


def machines(path):
    """The machine names that have results in `path`."""
    path = Path(path)
    if not path.is_dir():
        return []
    return sorted(p.name for p in path.iterdir() if (p / "machine.json").is_file())


def load_history(path, machine, headlines=HEADLINES):
    """The headline ratios of every commit recorded for `machine` in the results folder `path`.

    Returns
    -------
    list of Point
        Ordered by commit date (then hash); one per commit, from its most
        recent run in a built environment, else its most recent ``existing`` run.
    """
    from asv import results as asv_results

    latest = {}
    for result in asv_results.iter_results_for_machine(str(path), machine):
        old = latest.get(result.commit_hash)
        if old is None or _rank(result) >= _rank(old):
            latest[result.commit_hash] = result
    points = []
    for commit, result in latest.items():
        keys = set(result.get_all_result_keys())
        cache = {}
        ratios = {}
        for h in headlines:
            if h.key not in keys:
                ratios[h.label] = None
                continue
            if h.key not in cache:
                cache[h.key] = _values(result, h.key)
            vals = cache[h.key]
            num, den = vals.get((h.impl, *h.size)), vals.get((BASELINE, *h.size))
            ratios[h.label] = num / den if num is not None and den else None
        date = datetime.datetime.fromtimestamp((result.date or 0) / 1000, tz=datetime.timezone.utc)
        points.append(Point(commit, date, result.env_name, ratios))
    points.sort(key=lambda p: (p.date, p.commit))
    return points


def format_history(points, headlines=HEADLINES):
    """A plain-text table of the ratios, one line per commit (``-``: not measured)."""
    labels = [h.label for h in headlines]
    head = ["commit", "date (UTC)"] + labels
    rows = []
    for p in points:
        cells = [p.commit[:8], p.date.strftime("%Y-%m-%d %H:%M")]
        cells += ["-" if p.ratios.get(lb) is None else f"{p.ratios[lb]:.2f}" for lb in labels]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(c.rjust(w) if i >= 2 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in [head, *rows]
    ]
    return "\n".join(lines)


_PANELS = {
    "bulk": "bulk ops, 64 MiB (16384 x 4 KiB float32)",
    "loop": "one-element loops, 16384 x 256 B float32 (per call)",
}
_STYLE = {
    "stack": ("tab:blue", "o"),
    "gather": ("tab:orange", "s"),
    "unstack": ("tab:green", "^"),
    "concat": ("tab:red", "D"),
    "accumulate": ("tab:purple", "v"),
    "write": ("tab:blue", "o"),
    "read": ("tab:orange", "s"),
    "write (raw_ops)": ("tab:blue", "o"),
    "read (raw_ops)": ("tab:orange", "s"),
}


def draw_history(points, path, headlines=HEADLINES, title=None):
    """Draw `points` (from :func:`load_history`) to the image `path` (format from its suffix).

    Two panels, log scale: the bulk ops and the one-element loops, each ratio
    a line over the commits in date order; the dashed line is parity with
    the numpy buffer, and the loops' dotted line the 2x of the write/read
    performance goals.  Needs matplotlib.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    xs = list(range(len(points)))
    width = max(8.0, min(24.0, 3.0 + 0.45 * len(points)))
    fig, axes = plt.subplots(2, 1, figsize=(width, 9.0), sharex=True, layout="constrained")
    for ax, panel in zip(axes, ("bulk", "loop"), strict=True):
        drawn = []
        for h in (h for h in headlines if h.panel == panel):
            # commits where the ratio was not measured are skipped: the line joins its neighbours
            pairs = [(x, p.ratios.get(h.label)) for x, p in zip(xs, points, strict=True)]
            pairs = [(x, y) for x, y in pairs if y is not None and y > 0]
            if not pairs:
                continue
            color, marker = _STYLE.get(h.label, (None, "o"))
            ax.plot(
                [x for x, _ in pairs],
                [y for _, y in pairs],
                marker=marker,
                color=color,
                linestyle="--" if h.impl == "raw_ops" else "-",
                markerfacecolor="none" if h.impl == "raw_ops" else None,
                label=h.label,
            )
            drawn += [y for _, y in pairs]
        ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
        if panel == "loop":
            ax.axhline(2.0, color="grey", linestyle=":", linewidth=1)
            ax.annotate(
                "goal: <= 2x",
                (0, 2.0),
                xytext=(2, 2),
                textcoords="offset points",
                fontsize=8,
                color="grey",
                xycoords=("axes fraction", "data"),
            )
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.tick_params(axis="y", which="minor", labelsize=7)
        if drawn:
            ax.set_ylim(min(drawn + [1.0]) / 1.5, max(drawn + [1.0]) * 1.5)
        ax.set_title(_PANELS[panel], fontsize=10)
        ax.set_ylabel("time / np prealloc time\n(log scale; lower is faster)", fontsize=9)
        ax.grid(axis="y", which="both", alpha=0.3)
        if drawn:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
        else:
            ax.text(0.5, 0.5, "no results", transform=ax.transAxes, ha="center", va="center")
    step = max(1, math.ceil(len(points) / 40))
    ticks = xs[::step]
    axes[-1].set_xticks(
        ticks,
        [f"{points[i].commit[:8]}\n{points[i].date:%Y-%m-%d}" for i in ticks],
        fontsize=8,
        rotation=90 if len(ticks) > 12 else 0,
    )
    axes[-1].set_xlabel("recorded commits, by commit date")
    if points:
        axes[-1].set_xlim(-0.5, len(points) - 0.5)
    fig.suptitle(title or f"numba_ta's headline ratios over {len(points)} recorded commit(s)", fontsize=11)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def history(path, suite=SUITE_DIR, machine=None, out=None):
    """Load the suite's results, print the table to `out` and draw `path`; return the exit status.

    Raises ValueError (a usage error) when there is no result or the machine is ambiguous.
    """
    out = out or sys.stdout
    where = results_dir(suite)
    found = machines(where)
    if machine is None:
        if not found:
            raise ValueError(f"no asv results in {where} (record some first: see asv_bench/README.md)")
        if len(found) > 1:
            raise ValueError(f"results of several machines in {where}: pick one with --machine ({', '.join(found)})")
        machine = found[0]
    elif machine not in found:
        raise ValueError(f"no results of machine {machine!r} in {where} (found: {', '.join(found) or 'none'})")
    points = load_history(where, machine)
    if not points:
        raise ValueError(f"no recorded commit for machine {machine!r} in {where}")
    print(f"headline ratios (numba_ta time / np prealloc time) of machine {machine!r}, from {where}:", file=out)
    print(format_history(points), file=out)
    draw_history(points, path, title=f"numba_ta's headline ratios on {machine!r} over {len(points)} recorded commit(s)")
    print(f"history chart written to {path}", file=out)
    return 0


def main(argv=None, prog="python -m benchmarks.history"):
    """Command line: ``python -m benchmarks.history FILE.png [--machine NAME]``."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Draw the headline ratios of every commit asv recorded (no network needed, unlike asv publish).",
    )
    parser.add_argument("png", metavar="FILE.png", help="image to write (format from the suffix)")
    parser.add_argument("--machine", default=None, help="asv machine name (default: the only one with results)")
    parser.add_argument("--suite", default=str(SUITE_DIR), help="the asv_bench folder (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        return history(args.png, suite=args.suite, machine=args.machine)
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
