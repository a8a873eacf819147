"""The asv comparison tools of ``asv_bench/``: ``regressions.py`` and ``benchmarks/history.py`` (no timing).

Both read asv's result files; these tests write such files with asv's own ``Results`` class
(fake timings of a fake machine in a temporary folder), so nothing is benchmarked and the
suite's own ``.asv/`` is not touched.
"""

import datetime
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("asv")

from asv.results import Results
from asv.runner import BenchmarkResult
from asv_runner.statistics import compute_stats

from numba_ta import _bench_cmd
from numba_ta.cli import main

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "asv_bench"
report = _bench_cmd.load_report(SUITE)  # the package ``benchmarks``, as numba-ta bench imports it

from benchmarks import bench_ops, history  # noqa: E402


def _load_script(path):
    """Import the script at ``path`` as the module ``<stem>``, as ``import`` does with its folder on the import path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


regressions = _load_script(SUITE / "regressions.py")

HAS_MPL = importlib.util.find_spec("matplotlib") is not None
IMPLS = ["'numba_ta'", "'raw_ops'", "'numpy_prealloc'"]
SIZES = (["'256B'", "'4KiB'"], ["16384"], ["'float32'"])
MACHINE = "testbox"
ENV = "virtualenv-py3.11-numba0.68.1-numpy2.4.6"


def _bench(name):
    return {"name": name, "params": [IMPLS, *SIZES], "version": "1"}


def _record(results_dir, commit, date, times, started=None):
    """Save one asv result file: `times[name]` maps (impl, element) to seconds (a tight spread of samples)."""
    r = Results({"machine": MACHINE, "python": "3.11"}, {}, commit, date, "3.11", ENV, {})
    for name, per in times.items():
        values, samples, numbers = [], [], []
        for impl in IMPLS:
            for element in SIZES[0]:
                t = per.get((impl.strip("'"), element.strip("'")))
                values.append(t if t is not None else float("nan"))
                samples.append(None if t is None else [t * (1 + 0.001 * k) for k in range(10)])
                numbers.append(None if t is None else 1)
        r.add_result(
            _bench(name),
            BenchmarkResult(result=values, samples=samples, number=numbers, errcode=0, stderr="", profile=None),
            started_at=started,
            record_samples=True,
        )
    r.save(str(results_dir))


def _suite(tmp_path):
    """A folder with an asv.conf.json whose results_dir is tmp_path/results, and the machine's folder."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "asv.conf.json").write_text(json.dumps({"version": 1, "results_dir": "results"}))
    machine = suite / "results" / MACHINE
    machine.mkdir(parents=True)
    (machine / "machine.json").write_text(json.dumps({"machine": MACHINE, "version": 1}))
    return suite


def _times(stack, write, prealloc_stack=0.010, prealloc_write=0.002):
    return {
        "bench_ops.Stack.time_stack": {
            ("numba_ta", "4KiB"): stack,
            ("numpy_prealloc", "4KiB"): prealloc_stack,
            ("numba_ta", "256B"): 1e-4,
            ("numpy_prealloc", "256B"): 1e-4,
        },
        "bench_ops.Write.time_write": {
            ("numba_ta", "256B"): write,
            ("raw_ops", "256B"): write / 2,
            ("numpy_prealloc", "256B"): prealloc_write,
        },
    }


def _ms(day):
    return int(datetime.datetime(2026, 11, day, tzinfo=datetime.timezone.utc).timestamp() * 1000)


def test_history_orders_commits_by_date_and_divides_by_the_buffer(tmp_path):
    suite = _suite(tmp_path)
    results = suite / "results"
    _record(results, "b" * 40, _ms(25), _times(stack=0.030, write=0.004))
    _record(results, "a" * 40, _ms(20), _times(stack=0.012, write=0.006))
    _record(results, "c" * 40, _ms(27), {"bench_ops.Stack.time_stack": {("numba_ta", "4KiB"): 0.011}})
    assert history.machines(history.results_dir(suite)) == [MACHINE]
    points = history.load_history(history.results_dir(suite), MACHINE)
    assert [p.commit[0] for p in points] == ["a", "b", "c"]
    assert points[0].ratios["stack"] == pytest.approx(1.2, rel=0.01)
    assert points[1].ratios["stack"] == pytest.approx(3.0, rel=0.01)
    assert points[1].ratios["write"] == pytest.approx(2.0, rel=0.01)
    assert points[1].ratios["write (raw_ops)"] == pytest.approx(1.0, rel=0.01)
    assert points[2].ratios["stack"] is None  # no baseline recorded at that commit
    assert points[0].ratios["gather"] is None
    text = history.format_history(points)
    assert text.splitlines()[0].split()[:3] == ["commit", "date", "(UTC)"]
    assert "aaaaaaaa  2026-11-20 00:00" in text and "3.00" in text


def _record_stack(results, env, started, numba_ta_4k):
    r = Results({"machine": MACHINE, "python": "3.11"}, {}, "a" * 40, _ms(20), "3.11", env, {})
    r.add_result(
        _bench("bench_ops.Stack.time_stack"),
        BenchmarkResult(
            result=[1e-4, numba_ta_4k, 1e-4, 1e-4, 1e-4, 0.010],  # (impl, element) in product order
            samples=[None] * 6,
            number=[None] * 6,
            errcode=0,
            stderr="",
            profile=None,
        ),
        started_at=started,
    )
    r.save(str(results))


def test_history_prefers_the_latest_built_run_of_a_commit(tmp_path):
    suite = _suite(tmp_path)
    results = suite / "results"
    day = datetime.datetime(2026, 11, 26, tzinfo=datetime.timezone.utc)
    hour = datetime.timedelta(hours=1)
    _record_stack(results, "existing-py", day, 0.040)
    (point,) = history.load_history(history.results_dir(suite), MACHINE)
    assert point.env_name == "existing-py" and point.ratios["stack"] == pytest.approx(4.0)
    _record_stack(results, ENV, day + hour, 0.050)
    _record_stack(results, "existing-py", day + 2 * hour, 0.020)  # the working tree, later: not drawn
    (point,) = history.load_history(history.results_dir(suite), MACHINE)
    assert point.env_name == ENV and point.ratios["stack"] == pytest.approx(5.0)
    _record_stack(results, "virtualenv-py3.11-other", day + 3 * hour, 0.030)
    (point,) = history.load_history(history.results_dir(suite), MACHINE)
    assert point.env_name == "virtualenv-py3.11-other" and point.ratios["stack"] == pytest.approx(3.0)


@pytest.mark.skipif(not HAS_MPL, reason="matplotlib is not installed")
def test_bench_history_draws_a_png(tmp_path, capsys, monkeypatch):
    suite = _suite(tmp_path)
    for day, stack in ((20, 0.012), (22, 0.030), (24, 0.011)):
        _record(suite / "results", f"{day:02d}" * 20, _ms(day), _times(stack=stack, write=0.004))
    monkeypatch.setattr(report, "SUITE_DIR", suite)
    png = tmp_path / "history.png"
    assert main(["bench", "--history", str(png)]) == 0
    out, _ = capsys.readouterr()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"history chart written to {png}" in out
    assert "20202020" in out and "3.00" in out


def test_bench_history_errors(tmp_path, capsys, monkeypatch):
    suite = _suite(tmp_path)
    monkeypatch.setattr(report, "SUITE_DIR", suite)
    assert main(["bench", "--history", str(tmp_path / "h.png")]) == 2
    _, err = capsys.readouterr()
    assert err.startswith("numba-ta bench: error: --history: no recorded commit for machine 'testbox'")
    assert main(["bench", "--history", str(tmp_path / "h.png"), "--machine", "other"]) == 2
    _, err = capsys.readouterr()
    assert "no results of machine 'other'" in err
    assert main(["bench", "--machine", "other"]) == 2
    _, err = capsys.readouterr()
    assert err.strip() == "numba-ta bench: error: --machine: only with --history"


def _row(t, spread=0.001):
    samples = [t * (1 + spread * k) for k in range(10)]
    value, stats = compute_stats(samples, [1] * 10)
    return value, stats, samples


def test_regressions_compare_flags_slowdowns_and_noisy_controls():
    name = "bench_ops.Stack.time_stack('{}', '4KiB', 16384, 'float32')"
    before = {
        (name.format("numba_ta"), ENV): _row(0.010),
        (name.format("raw_ops"), ENV): _row(0.010),
        (name.format("numpy_prealloc"), ENV): _row(0.010),
        (name.format("numba_ta").replace("4KiB", "256B"), ENV): _row(0.001),
        ("bench_ops.Stack.time_stack('numba_ta', '4MiB', 16384, 'float32')", ENV): (float("nan"), None, None),
    }
    after = dict(before)
    after[(name.format("numba_ta"), ENV)] = _row(0.030)  # 3x slower: flagged
    after[(name.format("raw_ops"), ENV)] = _row(0.005)  # 2x faster
    after[(name.format("numba_ta").replace("4KiB", "256B"), ENV)] = _row(0.0012)  # 1.2x: within the factor
    rows = regressions.compare(before, after, 1.3)
    assert len(rows) == 4  # the skipped row is left out
    by = {(regressions.impl_of(r["name"]), "256B" in r["name"]): r for r in rows}
    assert by[("numba_ta", False)]["change"] == "slower" and by[("numba_ta", False)]["ratio"] == pytest.approx(3.0)
    assert by[("raw_ops", False)]["change"] == "faster"
    assert by[("numba_ta", True)]["change"] == ""
    assert by[("numpy_prealloc", False)]["change"] == "" and by[("numpy_prealloc", False)]["control"]
    assert regressions.status(rows) == 1
    note = regressions.markdown(rows, "a" * 40, "b" * 40, 1.3, MACHINE)
    lines = note.splitlines()
    assert lines[0] == "**asv regression check** `aaaaaaaa` (base) -> `bbbbbbbb` (head), factor 1.3"
    assert "**1 slower**, 1 faster" in note and "none changed" in note
    table = [line for line in lines if line.startswith("| ")]
    assert table[0].startswith("| Change | Before `aaaaaaaa` | After `bbbbbbbb` | Ratio |")
    assert table[1].startswith("| **slower** | 10") and "| 3.00 |" in table[1]
    assert table[2].startswith("| faster |")
    assert len(table) == 3  # unchanged rows only with show_all
    assert (
        len(
            [
                x
                for x in regressions.markdown(rows, "a" * 40, "b" * 40, 1.3, MACHINE, show_all=True).splitlines()
                if x.startswith("| ")
            ]
        )
        == 5
    )

    # only a control moved: too noisy, exit status 3
    after = dict(before)
    after[(name.format("numpy_prealloc"), ENV)] = _row(0.025)
    rows = regressions.compare(before, after, 1.3)
    assert regressions.status(rows) == 3
    assert "**1 changed: too noisy, run again**" in regressions.markdown(rows, "a" * 40, "b" * 40, 1.3, MACHINE)

    # a failure at head counts as a slowdown; nothing beyond the factor: 0
    after = dict(before)
    after[(name.format("numba_ta"), ENV)] = (None, None, None)
    rows = regressions.compare(before, after, 1.3)
    assert [r["change"] for r in rows if r["after"] is None] == ["fails at head"]
    assert regressions.status(rows) == 1
    assert regressions.status(regressions.compare(before, dict(before), 1.3)) == 0


def test_regressions_selection():
    regex = regressions.selection_regex(tuple(regressions.OPS), regressions.DEFAULT_IMPLS)

    for name, selected in [
        ("bench_ops.Stack.time_stack('numba_ta', '4KiB', 16384, 'float32')", True),
        ("bench_ops.Write.time_write('raw_ops', '256B', 16, 'float64')", True),
        ("bench_ops.AccumulateWrite.time_accumulate_write('numpy_prealloc', '256B', 16, 'float64')", True),
        ("bench_ops.GradCreate.time_grad_v3('numba_ta', '256B', 16, 'float64')", True),
        ("bench_ops.Stack.time_stack('numpy_list', '4KiB', 16384, 'float32')", False),
        ("bench_ops.Stack.time_stack('tf_eager', '4KiB', 16384, 'float32')", False),
        ("bench_ops.StackMem.peakmem_stack('numba_ta', '4KiB', 16384, 'float32')", False),
        ("bench_growth.Growth.time_growth('numba_ta', 1000)", False),
    ]:
        assert bool(re.search(regex, name)) is selected, name
    for op, cls in regressions.OPS.items():
        assert getattr(bench_ops, cls).op == op
    with pytest.raises(SystemExit):
        regressions.build_parser().parse_args(["HEAD~1", "--ops", "stack,nope"])
    args = regressions.build_parser().parse_args(["abc", "--ops", "stack,gather", "--impls", "numba_ta"])
    assert (args.base, args.head, args.ops, args.impls, args.factor) == (
        "abc",
        "HEAD",
        ("stack", "gather"),
        ("numba_ta",),
        1.3,
    )


def test_regressions_rejects_unknown_commits(capsys):
    assert regressions.main(["no-such-commit-xyz"]) == 2
    _, err = capsys.readouterr()
    assert err.strip() == "regressions.py: error: unknown commit: no-such-commit-xyz"
    assert regressions.main(["HEAD", "HEAD"]) == 2
    assert "base and head are the same commit" in capsys.readouterr()[1]
