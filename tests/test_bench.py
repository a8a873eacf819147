"""Smoke tests of ``numba-ta bench`` and :mod:`numba_ta.bench` (tiny sizes; no timing assertions)."""

import importlib.util
import json

import numpy as np
import pytest

from numba_ta import bench
from numba_ta.cli import main

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
    assert "workload" in out and "np prealloc" in out and "targets (issue 3)" in out
    assert f"timings written to {path}" in out
    doc = json.loads(path.read_text())
    assert doc["schema"] == 1
    assert doc["meta"]["tensorflow"] is None
    impls = {r["impl"] for r in doc["results"]}
    assert impls == {"numba_ta", "raw_ops", "numpy_list", "numpy_prealloc"}
    workloads = {r["workload"] for r in doc["results"]}
    assert {
        "write",
        "read",
        "stack",
        "gather",
        "scatter",
        "unstack",
        "concat",
        "split",
        "accumulate",
        "bptt",
    } <= workloads
    assert {"growth 1000", "growth 10000", "import"} <= workloads
    for r in doc["results"]:
        assert r["status"] == "ok", r
        assert len(r["times"]) == 2 and all(t >= 0 for t in r["times"])
    bulk = [r for r in doc["results"] if r["workload"] == "stack"]
    assert all(r["nbytes"] == 64 << 10 and r["items"] == 256 and r["n"] == 64 for r in bulk)
    assert {t["target"].split(":")[0] for t in doc["targets"]} >= {"write 64 float32", "growth"}


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

    monkeypatch.setattr(bench, "_require_matplotlib", missing)
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
    from numba_ta.examples import char_rnn

    params, inputs, targets, h0 = bench._bptt_batch("float32")
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    ref = char_rnn.loss_and_grads(p64, inputs, targets, h0.astype(np.float64))
    for use_list in (False, True):
        loss, grads = bench.numpy_bptt(p64, inputs, targets, h0.astype(np.float64), use_list=use_list)
        assert loss == pytest.approx(ref.loss, rel=1e-12)
        for k in char_rnn.PARAM_NAMES:
            np.testing.assert_allclose(grads[k], ref.grads[k], rtol=1e-10, atol=1e-14)


@pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")
def test_tf_bptt_matches_demo():
    from numba_ta.examples import char_rnn

    tf = bench._tf()
    params, inputs, targets, h0 = bench._bptt_batch("float32")
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    ref = char_rnn.loss_and_grads(p64, inputs, targets, h0.astype(np.float64))
    args = [tf.constant(p64[k]) for k in char_rnn.PARAM_NAMES]
    args += [tf.constant(inputs.astype(np.int32)), tf.constant(targets.astype(np.int32)), tf.constant(h0, tf.float64)]
    for use_function in (True, False):
        loss, grads = bench.tf_bptt_step(tf, use_function)(*args)
        assert float(loss) == pytest.approx(ref.loss, rel=1e-10)
        for k, g in zip(char_rnn.PARAM_NAMES, grads, strict=True):
            np.testing.assert_allclose(g.numpy(), ref.grads[k], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("op", bench.OPS)
@pytest.mark.parametrize("impl", ["numba_ta", "raw_ops", "numpy_list", "numpy_prealloc"])
def test_every_case_runs_repeatedly(op, impl):
    try:
        case = bench.make_case(op, impl, n=5, items=3, dtype="float64")
    except bench.Unavailable:
        assert (op, impl) == ("bptt", "raw_ops")
        return
    times = bench.time_case(case, repeat=3, warmup=1)
    assert len(times) == 3
    assert case.per_call == (case.n if op in bench.LOOP_OPS else 1)


@pytest.mark.parametrize("op", ["stack", "gather", "concat"])
def test_cases_compute_the_same_result(op):
    want = None
    for impl in ("numba_ta", "raw_ops", "numpy_list", "numpy_prealloc"):
        case = bench.make_case(op, impl, n=6, items=4, dtype="float32")
        got = case.run(case.prepare())
        got = np.asarray(got[0] if isinstance(got, tuple) else got).reshape(6, 4)
        if want is None:
            want = got
        np.testing.assert_array_equal(got, want)


def test_make_case_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown workload"):
        bench.make_case("nope", "numba_ta", 1, 1)
    with pytest.raises(ValueError, match="unknown implementation"):
        bench.make_case("stack", "nope", 1, 1)
    with pytest.raises(ValueError, match="float32 or float64"):
        bench.make_case("stack", "numba_ta", 1, 1, "int8")
    with pytest.raises(ValueError, match=">= 1"):
        bench.make_case("stack", "numba_ta", 0, 1)
