"""Smoke tests of ``numba-ta bench`` and the benchmark suite in ``asv_bench/`` (tiny sizes; no timing assertions).

The workloads and the report live in the repository's ``asv_bench/benchmarks/`` (not in the
package); they are imported here as asv and ``numba-ta bench`` import them, as the package
``benchmarks`` from the folder ``asv_bench/`` (by ``numba-ta bench``'s own loader,
``_bench_cmd.load_report``).
"""

import doctest
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from numba_ta import _bench_cmd
from numba_ta.cli import main

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "asv_bench"
report = _bench_cmd.load_report(SUITE)  # the package ``benchmarks``, as numba-ta bench imports it

from benchmarks import jit_workloads, workloads  # noqa: E402

TINY = ["--repeat", "2", "--size", "64K", "--element", "1K", "--small", "20", "--warmup", "0", "--no-progress"]
HAS_TF = importlib.util.find_spec("tensorflow") is not None
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def run_cli(args, capsys):
    code = main(["bench", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_json_without_tf(tmp_path, capsys):
    path = tmp_path / "bench.json"
    code, out, err = run_cli([*TINY, "--quick", "--no-tf", "--json", str(path)], capsys)
    assert code == 0, err
    assert "workload" in out and "np prealloc" in out and "goals, met or MISSED in this run" in out
    assert "issue" not in out.lower()
    assert f"timings written to {path}" in out
    doc = json.loads(path.read_text())
    assert doc["schema"] == 2
    assert doc["meta"]["suite"] == str(SUITE)
    assert doc["meta"]["tensorflow"] is None
    impls = {r["impl"] for r in doc["results"]}
    assert impls == {"numba_ta", "raw_ops", "numpy_list", "numpy_prealloc"}
    workloads = {r["workload"] for r in doc["results"]}
    assert {"write", "read", *report.BULK, "bptt", "bptt_jit"} <= workloads
    assert set(report.BULK) == {"stack", "gather", "scatter", "unstack", "concat", "split", "accumulate"}
    assert {"growth 1000", "growth 10000", "import"} <= workloads
    for r in doc["results"]:
        assert r["status"] == "ok", r
        assert len(r["times"]) == 2 and all(t >= 0 for t in r["times"])
    bulk = [r for r in doc["results"] if r["workload"] == "stack"]
    assert all(r["nbytes"] == 64 << 10 and r["items"] == 256 and r["n"] == 64 for r in bulk)
    assert {g["goal"].split(":")[0] for g in doc["goals"]} >= {"write 64 float32", "growth"}
    assert {g["status"] for g in doc["goals"]} <= {"met", "MISSED", "not measured"}


def test_tensorlist_plan_keeps_tf2_tensor_array_without_tensorflow():
    # TF2TensorArray is numba_ta's (its variant name starts with "tf"): it runs under --no-tf too
    cfg = report.Config(workloads=("tensorlist",), impls=("numba_ta", "numpy_list"), use_tf=False)
    variants = {v for _, _, v in report._list_plan(cfg)}
    assert "tf2_array" in variants and "tf_eager" not in variants
    cfg = report.Config(workloads=("tensorlist",), impls=("numba_ta", "tf_eager"), use_tf=True)
    assert {"tf2_array", "tf_eager"} <= {v for _, _, v in report._list_plan(cfg)}


def test_bench_subset_float64(capsys):
    code, out, _ = run_cli(
        [*TINY, "--no-tf", "--workloads", "stack,concat", "--impls", "numba_ta,numpy_prealloc", "--dtype", "float64"],
        capsys,
    )
    assert code == 0
    assert "stack" in out and "concat" in out and "raw_ops" not in out and "write " not in out
    assert "f64" in out


def test_bench_progress_lines_on_stderr(capsys):
    args = [a for a in TINY if a != "--no-progress"]
    code, out, err = run_cli([*args, "--no-tf", "--workloads", "stack", "--impls", "numba_ta,numpy_list"], capsys)
    assert code == 0
    assert "[1/2] stack/numba_ta" in err and "[2/2] stack/np list" in err
    assert "[1/2]" not in out


@pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")
def test_bench_with_tf(capsys, tmp_path):
    path = tmp_path / "tf.json"
    code, out, err = run_cli([*TINY, "--workloads", "write,stack,accumulate,bptt", "--json", str(path)], capsys)
    assert code == 0, err
    assert "tf eager" in out and "tf.function" in out
    doc = json.loads(path.read_text())
    assert doc["meta"]["tensorflow"]
    statuses = {(r["workload"], r["impl"]): r["status"] for r in doc["results"]}
    assert statuses[("bptt", "tf_function")] == "ok" and statuses[("write", "tf_eager")] == "ok"
    assert all(s == "ok" for s in statuses.values()), statuses


@pytest.mark.skipif(not HAS_MPL, reason="matplotlib is not installed")
def test_bench_plot(tmp_path, capsys):
    png = tmp_path / "chart.png"
    code, out, _ = run_cli([*TINY, "--no-tf", "--workloads", "write,stack,bptt", "--plot", str(png)], capsys)
    assert code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"chart written to {png}" in out


def test_bench_plot_without_matplotlib(tmp_path, capsys, monkeypatch):
    def missing():
        raise ImportError("matplotlib is not installed")

    monkeypatch.setattr(report, "_require_matplotlib", missing)
    code, _, err = run_cli([*TINY, "--no-tf", "--plot", str(tmp_path / "x.png")], capsys)
    assert code == 2
    assert err.strip() == "numba-ta bench: error: --plot: matplotlib is not installed (pip install matplotlib)"


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--repeat", "0"], "--repeat"),
        (["--size", "lots"], "--size"),
        (["--size", "3G"], "at most 2G"),
        (["--workloads", "stack,nope"], "unknown name 'nope'"),
        (["--impls", "jax"], "unknown name 'jax'"),
        (["--dtype", "int8"], "--dtype"),
        (["--warmup", "-1"], "--warmup"),
        (["--quick", "--full"], "not allowed with argument"),
        (["--element", "2", "--dtype", "float64"], "less than one float64"),
        (["--size", "1K", "--element", "4K"], "less than one element"),
        (["--json", "/nonexistent-dir/x.json"], "directory does not exist"),
    ],
)
def test_bench_bad_options(args, fragment, capsys):
    code, out, err = run_cli([*args, "--no-progress"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numba-ta bench: error:") and fragment in lines[0], err
    assert out == ""


def test_numpy_bptt_matches_demo():
    import numba_ta_demo as demo

    params, inputs, targets, h0 = workloads.bptt_batch("float32")
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    ref = demo.loss_and_grads(p64, inputs, targets, h0.astype(np.float64))
    for use_list in (False, True):
        loss, grads = workloads.numpy_bptt(p64, inputs, targets, h0.astype(np.float64), use_list=use_list)
        assert loss == pytest.approx(ref.loss, rel=1e-12)
        for k in demo.PARAM_NAMES:
            np.testing.assert_allclose(grads[k], ref.grads[k], rtol=1e-10, atol=1e-14)


@pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")
def test_tf_bptt_matches_demo():
    import numba_ta_demo as demo

    tf = workloads._tf()
    params, inputs, targets, h0 = workloads.bptt_batch("float32")
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    ref = demo.loss_and_grads(p64, inputs, targets, h0.astype(np.float64))
    args = [tf.constant(p64[k]) for k in demo.PARAM_NAMES]
    args += [tf.constant(inputs.astype(np.int32)), tf.constant(targets.astype(np.int32)), tf.constant(h0, tf.float64)]
    for use_function in (True, False):
        loss, grads = workloads.tf_bptt_step(tf, use_function)(*args)
        assert float(loss) == pytest.approx(ref.loss, rel=1e-10)
        for k, g in zip(demo.PARAM_NAMES, grads, strict=True):
            np.testing.assert_allclose(g.numpy(), ref.grads[k], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("op", workloads.OPS)
@pytest.mark.parametrize("impl", ["numba_ta", "raw_ops", "numpy_list", "numpy_prealloc"])
def test_every_case_runs_repeatedly(op, impl):
    try:
        case = workloads.make_case(op, impl, n=5, items=3, dtype="float64")
    except workloads.Unavailable:
        assert (op, impl) == ("bptt", "raw_ops") or (op == "bptt_jit" and impl != "numba_ta")
        return
    times = workloads.measure(case, repeat=3, warmup=1)
    assert len(times) == 3
    assert case.per_call == (case.n if op in workloads.LOOP_OPS else 1)


@pytest.mark.parametrize("op", ["stack", "gather", "concat"])
def test_cases_compute_the_same_result(op):
    want = None
    for impl in ("numba_ta", "raw_ops", "numpy_list", "numpy_prealloc"):
        case = workloads.make_case(op, impl, n=6, items=4, dtype="float32")
        got = case.run(case.prepare())
        got = np.asarray(got[0] if isinstance(got, tuple) else got).reshape(6, 4)
        if want is None:
            want = got
        np.testing.assert_array_equal(got, want)


def test_make_case_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown workload"):
        workloads.make_case("nope", "numba_ta", 1, 1)
    with pytest.raises(ValueError, match="unknown implementation"):
        workloads.make_case("stack", "nope", 1, 1)
    with pytest.raises(ValueError, match="float32 or float64"):
        workloads.make_case("stack", "numba_ta", 1, 1, "int8")
    with pytest.raises(ValueError, match=">= 1"):
        workloads.make_case("stack", "numba_ta", 0, 1)


def test_suite_doctests():
    for module in (workloads, report, jit_workloads):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, (module.__name__, result)


def test_bench_help_lists_the_suite_options(capsys):
    code, out, err = run_cli(["--help"], capsys)
    assert code == 0, err
    assert out.startswith("usage: numba-ta bench")
    for option in ("--quick", "--workloads", "--impls", "--json", "--plot", "--bench-dir"):
        assert option in out
    assert f"benchmark suite in use: {SUITE}" in " ".join(out.split())


def _outside_a_clone(tmp_path, monkeypatch):
    """As after ``pip install numba_ta-*.whl``: the package outside a checkout, run outside one."""
    monkeypatch.setattr(_bench_cmd, "_checkout_root", lambda: tmp_path / "site-packages")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(_bench_cmd.ENV_VAR, raising=False)


@pytest.mark.parametrize("args", [["--quick", "--no-progress"], ["--help"], []])
def test_bench_without_the_suite_says_how_to_get_it(args, tmp_path, monkeypatch, capsys):
    _outside_a_clone(tmp_path, monkeypatch)
    code, out, err = run_cli(args, capsys)
    assert code == 1
    assert out == ""
    first = err.splitlines()[0]
    assert first.startswith("numba-ta bench: error: no benchmark suite found (looked for asv_bench/ in: ")
    assert str(tmp_path) in first
    assert "git clone" in err and 'pip install -e ".[bench]"' in err and "--bench-dir" in err
    assert _bench_cmd.ENV_VAR in err


@pytest.mark.parametrize("how", ["option", "option=", "env", "env-checkout"])
def test_bench_dir_option_and_env(how, tmp_path, monkeypatch, capsys):
    _outside_a_clone(tmp_path, monkeypatch)
    args = [*TINY, "--no-tf", "--workloads", "stack", "--impls", "numba_ta"]
    if how == "option":
        args += ["--bench-dir", str(SUITE)]
    elif how == "option=":
        args += [f"--bench-dir={ROOT}"]
    else:
        monkeypatch.setenv(_bench_cmd.ENV_VAR, str(SUITE if how == "env" else ROOT))
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "stack" in out and "goals, met or MISSED" in out


@pytest.mark.parametrize("how", ["option", "env"])
def test_bench_dir_without_a_suite_is_bad_input(how, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(_bench_cmd.ENV_VAR, raising=False)
    if how == "option":
        args = ["--bench-dir", str(tmp_path)]
    else:
        monkeypatch.setenv(_bench_cmd.ENV_VAR, str(tmp_path))
        args = []
    code, out, err = run_cli([*args, "--quick"], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numba-ta bench: error: ") and "no benchmark suite in" in lines[0]


def test_bench_dir_needs_a_value(capsys):
    code, _, err = run_cli(["--bench-dir"], capsys)
    assert code == 2 and err.strip() == "numba-ta bench: error: --bench-dir: expected a directory"


def test_goals_are_documented():
    """The table points at the Performance page's "Performance goals": that section exists, with every bound."""
    page = (ROOT / "docs" / "performance.rst").read_text(encoding="utf-8")
    m = re.search(r"^Performance goals\n-+\n(.*?)(?=^\S[^\n]*\n[-=~]+\n)", page, re.M | re.S)
    assert m, "docs/performance.rst has no 'Performance goals' section"
    section = m.group(1)
    for bound in ("2x", "10x", "0.8x", "1.5x", "1 s"):
        assert bound in section, bound


def test_no_tracker_references_where_users_look():
    """Docs, README, the package and the benchmark suite state goals, not items of a private tracker."""
    pattern = re.compile(r"\bissues?\s*#?\d|\bthe issue's\b|\(issue\b", re.I)
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.rst"), *(ROOT / "numba_ta").rglob("*.py")]
    files += [*(ROOT / "numba_ta_demo").rglob("*.py")]
    files += [*(SUITE / "benchmarks").glob("*.py"), SUITE / "README.md"]
    hits = [
        f"{f.relative_to(ROOT)}:{n}: {line.strip()}"
        for f in files
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []


# --------------------------------------------------------------------------- the compiled-code section

JIT_VARIANTS = {(w, v) for w in jit_workloads.WORKLOADS for v in jit_workloads.VARIANTS[w]}


def test_jit_self_test_checks_every_variant():
    results = jit_workloads.self_test(n=7, items=3)
    assert set(results) == JIT_VARIANTS
    assert all(status == "ok" for status in results.values()), results


def test_jit_case_check_rejects_a_wrong_result():
    case = jit_workloads.make_jit_case("write", "numpy", n=4, items=3)
    with pytest.raises(AssertionError, match="differ"):
        case.check(np.zeros((4, 3), np.float32))  # what a loop that wrote nothing leaves
    case = jit_workloads.make_jit_case("read", "numba_ta", n=4, items=3)
    acc, count = case.run(case.prepare())
    case.check((acc, count))
    with pytest.raises(AssertionError, match="first column"):
        case.check((acc + 1.0, count))
    with pytest.raises(AssertionError, match="read 11 numbers"):
        case.check((acc, 11))


def test_jit_functions_taking_a_tensorarray_are_keyed_on_numba_ta_sources():
    """Numba's cache key holds the closure: a change to numba_ta's sources must not reuse cached code."""
    stamp = jit_workloads.source_stamp()
    fns = jit_workloads.compiled_functions()
    for name in ("ta_write", "ta_read", "ta_stack", "ta_size"):
        py = getattr(fns[name], "py_func", fns[name])  # a plain function under NUMBA_DISABLE_JIT=1
        assert stamp in [c.cell_contents for c in py.__closure__ or ()], name


def test_make_jit_case_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown workload"):
        jit_workloads.make_jit_case("nope", "numpy")
    with pytest.raises(ValueError, match="unknown variant"):
        jit_workloads.make_jit_case("stack", "typed_list")
    with pytest.raises(ValueError, match="float32 or float64"):
        jit_workloads.make_jit_case("stack", "numpy", dtype="int8")
    with pytest.raises(ValueError, match=">= 1"):
        jit_workloads.make_jit_case("stack", "numpy", n=0)


def test_bench_compiled_section(tmp_path, capsys):
    path = tmp_path / "compiled.json"
    code, out, err = run_cli([*TINY, "--no-tf", "--workloads", "compiled", "--json", str(path)], capsys)
    assert code == 0, err
    section = out[out.index("compiled code:") :]
    for text in ("typed.List", "nt dynamic", "stack bandwidth", "targets met or MISSED", "f(ta) - g(arr)"):
        assert text in section, text
    doc = json.loads(path.read_text())
    assert doc["results"] == []
    compiled = doc["compiled"]
    got = {(r["op"], r["impl"]) for r in compiled["results"]}
    assert got == JIT_VARIANTS
    for r in compiled["results"]:
        assert r["status"] == "ok", r
        assert r["n"] == r["per_call"] == 20 and r["items"] == 64
        assert len(r["times"]) == 2 and all(t >= 0 for t in r["times"])
        assert r["unit"] == ("call" if r["op"] == "call" else "element")
    stack = [r for r in compiled["results"] if r["op"] == "stack"]
    assert all(r["nbytes"] == 20 * 64 * 4 and r["gbytes_per_second"] > 0 for r in stack)
    targets = {t["ratio"]: t for t in compiled["targets"]}
    bounded = {k: t for k, t in targets.items() if t["bound"]}
    assert set(bounded) == {
        "write: TensorArray / numpy row assignment",
        "write: typed.List append / TensorArray",
        "write: typed.List append / dynamic TensorArray",
        "read: TensorArray / numpy row copy",
        "stack: speed / numpy arr.copy()",
        "call: f(ta) - g(arr), us per call",
    }
    assert all(t["status"] in ("met", "MISSED") and t["measured"] is not None for t in bounded.values())
    assert {"first_call_seconds", "seconds", "cache_hits", "cache_misses"} <= set(compiled)


def test_bench_compiled_variant_with_a_wrong_result_is_an_error_not_a_time(monkeypatch, capsys, tmp_path):
    make = jit_workloads.make_jit_case
    path = tmp_path / "broken.json"

    def broken(workload, variant, *args, **kw):
        case = make(workload, variant, *args, **kw)
        if (workload, variant) == ("stack", "numpy"):
            case.run = lambda arr: np.zeros_like(arr)  # fast and wrong
        return case

    monkeypatch.setattr(report.jw, "make_jit_case", broken)
    code, out, err = run_cli([*TINY, "--no-tf", "--workloads", "compiled", "--json", str(path)], capsys)
    assert code == 1
    assert "ERROR compiled stack/numpy: AssertionError: numpy: the values differ from the rows written" in out
    assert "1 case(s) failed" in err
    row = next(line for line in out.splitlines() if line.startswith("stack "))
    assert row.split()[-1] == "ERROR"
    compiled = json.loads(path.read_text())["compiled"]
    broken_result = next(r for r in compiled["results"] if (r["op"], r["impl"]) == ("stack", "numpy"))
    assert broken_result["status"] == "error" and broken_result["times"] == [] and broken_result["per_op"] is None
    target = next(t for t in compiled["targets"] if t["ratio"].startswith("stack"))
    assert target["status"] == "not measured" and target["measured"] is None
    assert all(r["status"] == "ok" for r in compiled["results"] if r is not broken_result)
