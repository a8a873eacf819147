"""The BPTT demo (numba_ta.examples.char_rnn) and the ``numba-ta`` command."""

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import numba_ta
from numba_ta import cli
from numba_ta.examples import char_rnn

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- reference


def reference_loss_and_grads(params, inputs, targets, h0):
    """Textbook BPTT with Python lists, no TensorArray: the oracle for char_rnn.loss_and_grads."""
    Wxh, Whh, bh, Why, by = (params[k] for k in char_rnn.PARAM_NAMES)
    hs, h = [], h0
    for x in inputs:
        h = np.tanh(Wxh[:, x] + Whh @ h + bh)
        hs.append(h)
    hs = np.array(hs)
    logits = hs @ Why.T + by
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    T = len(inputs)
    loss = -np.mean(np.log(p[np.arange(T), targets]))
    dlogits = p.copy()
    dlogits[np.arange(T), targets] -= 1
    dlogits /= T
    grads = {k: np.zeros_like(v) for k, v in params.items()}
    grads["Why"] = dlogits.T @ hs
    grads["by"] = dlogits.sum(axis=0)
    dh_next = np.zeros_like(h0)
    for t in reversed(range(T)):
        dh = Why.T @ dlogits[t] + dh_next
        draw = (1 - hs[t] ** 2) * dh
        grads["Wxh"][:, inputs[t]] += draw
        grads["Whh"] += np.outer(draw, hs[t - 1] if t > 0 else h0)
        grads["bh"] += draw
        dh_next = Whh.T @ draw
    return loss, grads, hs[-1], dh_next


def random_problem(rng, V=6, H=5, T=7, dtype=np.float64, scale=0.6):
    params = {
        "Wxh": rng.normal(0, scale, (H, V)),
        "Whh": rng.normal(0, scale, (H, H)),
        "bh": rng.normal(0, 0.1, H),
        "Why": rng.normal(0, scale, (V, H)),
        "by": rng.normal(0, 0.1, V),
    }
    params = {k: v.astype(dtype) for k, v in params.items()}
    inputs = rng.integers(0, V, T)
    targets = rng.integers(0, V, T)
    h0 = rng.uniform(-0.5, 0.5, H).astype(dtype)
    return params, inputs, targets, h0


# --------------------------------------------------------------------------- BPTT through TensorArray


@pytest.mark.parametrize("T", [1, 2, 7])
def test_bptt_matches_reference(rng, parallel, T):
    params, inputs, targets, h0 = random_problem(rng, T=T)
    got = char_rnn.loss_and_grads(params, inputs, targets, h0)
    loss, grads, h_last, dh0 = reference_loss_and_grads(params, inputs, targets, h0)
    np.testing.assert_allclose(got.loss, loss, rtol=1e-12)
    for k in char_rnn.PARAM_NAMES:
        np.testing.assert_allclose(got.grads[k], grads[k], rtol=1e-10, atol=1e-14, err_msg=k)
        assert got.grads[k].dtype == np.float64
    np.testing.assert_allclose(got.h_last, h_last, rtol=1e-12)
    np.testing.assert_allclose(got.dh0, dh0, rtol=1e-10, atol=1e-14)


def test_float32_path_keeps_float32(rng):
    params, inputs, targets, h0 = random_problem(rng, dtype=np.float32)
    got = char_rnn.loss_and_grads(params, inputs, targets, h0)
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    loss, grads, _, _ = reference_loss_and_grads(p64, inputs, targets, h0.astype(np.float64))
    assert got.h_last.dtype == np.float32
    np.testing.assert_allclose(got.loss, loss, rtol=1e-5)
    for k in char_rnn.PARAM_NAMES:
        assert got.grads[k].dtype == np.float32, k
        np.testing.assert_allclose(got.grads[k], grads[k], rtol=1e-3, atol=1e-6, err_msg=k)


def test_tensor_array_call_sequence(rng, monkeypatch):
    """Hidden states go write -> read(t-1) -> stack; gradients grad -> unstack -> read(t)/write(t-1)."""
    calls = []
    TA = numba_ta.TensorArray

    def spy(method):
        orig = getattr(TA, method)

        @functools.wraps(orig)
        def wrapper(self, *args, **kwargs):
            kind = "grad" if "@" in self.handle.name else "fwd"
            arg = args[0] if args and isinstance(args[0], (int, str, np.integer)) else None
            calls.append((kind, method, arg))
            return orig(self, *args, **kwargs)

        return wrapper

    for m in ("read", "write", "stack", "unstack", "grad", "close"):
        monkeypatch.setattr(TA, m, spy(m))
    params, inputs, targets, h0 = random_problem(rng, T=3)
    char_rnn.loss_and_grads(params, inputs, targets, h0)
    assert calls == [
        ("fwd", "write", 0),
        ("fwd", "read", 0),
        ("fwd", "write", 1),
        ("fwd", "read", 1),
        ("fwd", "write", 2),
        ("fwd", "stack", None),
        ("fwd", "grad", "gradients"),
        ("grad", "unstack", None),
        ("grad", "read", 2),
        ("grad", "write", 1),
        ("grad", "read", 1),
        ("grad", "write", 0),
        ("grad", "read", 0),
        ("grad", "close", None),
        ("fwd", "close", None),
    ]


def test_forward_array_is_dynamic_and_locked_by_grad(rng, monkeypatch):
    seen = []
    orig = numba_ta.TensorArray.grad

    def grad(self, *args, **kwargs):
        g = orig(self, *args, **kwargs)
        seen.append((self.dynamic_size, self.element_shape.as_list(), int(self.size()), int(g.size())))
        # the forward array is locked now: writing past its end fails
        with pytest.raises(numba_ta.errors.InvalidArgumentError, match="not resizeable"):
            self.write(int(self.size()), np.zeros(5, np.float64))
        return g

    monkeypatch.setattr(numba_ta.TensorArray, "grad", grad)
    params, inputs, targets, h0 = random_problem(rng, T=4)
    char_rnn.loss_and_grads(params, inputs, targets, h0)
    assert seen == [(True, [5], 4, 4)]


# --------------------------------------------------------------------------- gradient check


def test_check_gradients_passes_in_float64(rng):
    params, inputs, targets, h0 = random_problem(rng, T=6)
    before = {k: v.copy() for k, v in params.items()}
    res = char_rnn.check_gradients(params, inputs, targets, h0, n_entries=30)
    assert res.passed
    assert res.n_checked == 30
    assert res.max_rel_error < 1e-5
    assert {e.name for e in res.entries} == set(char_rnn.PARAM_NAMES)
    for k in params:  # the caller's parameters are untouched
        np.testing.assert_array_equal(params[k], before[k])


def test_check_gradients_accepts_float32_params(rng):
    params, inputs, targets, h0 = random_problem(rng, dtype=np.float32)
    assert char_rnn.check_gradients(params, inputs, targets, h0, n_entries=10).passed


@pytest.mark.parametrize(
    "break_grads",
    [
        pytest.param(lambda g: g["Whh"].__imul__(1.001), id="Whh-off-by-0.1%"),
        pytest.param(lambda g: g["by"].__iadd__(1e-4), id="by-shifted"),
        pytest.param(lambda g: g["Wxh"].__imul__(-1.0), id="Wxh-sign"),
    ],
)
def test_check_gradients_detects_wrong_gradients(rng, break_grads):
    params, inputs, targets, h0 = random_problem(rng, T=6)

    def broken(*args):
        res = char_rnn.loss_and_grads(*args)
        break_grads(res.grads)
        return res

    res = char_rnn.check_gradients(params, inputs, targets, h0, n_entries=30, loss_and_grads=broken)
    assert not res.passed
    assert res.max_rel_error > 1e-4


def test_check_gradients_detects_missing_recurrent_gradient(rng, monkeypatch):
    """BPTT that forgets to send the recurrent gradient back (no g.write) must fail the check."""
    params, inputs, targets, h0 = random_problem(rng, T=6)
    real = numba_ta.TensorArray.write

    def write(self, index, value):
        if "@" in self.handle.name:  # drop every write into the gradient array
            return self
        return real(self, index, value)

    with monkeypatch.context() as m:
        m.setattr(numba_ta.TensorArray, "write", write)
        analytic = char_rnn.loss_and_grads(params, inputs, targets, h0)

    def truncated(*args):
        return analytic

    res = char_rnn.check_gradients(params, inputs, targets, h0, loss_and_grads=truncated)
    assert not res.passed


# --------------------------------------------------------------------------- training and sampling


def test_loss_falls_on_a_tiny_text():
    text = "the cat sat on the mat. " * 3
    res = char_rnn.run_demo(text, steps=300, hidden=24, seq_len=10, sample_len=30)
    tr = res.train
    assert tr.losses.shape == (300,)
    assert tr.initial_loss == pytest.approx(np.log(len(tr.vocab)), rel=0.1)
    assert tr.final_loss < 0.5 * tr.initial_loss
    assert res.grad_check.passed
    assert len(res.sample) == 31 and set(res.sample) <= set(text)


def test_training_is_reproducible():
    a = char_rnn.train("abracadabra " * 3, steps=20, hidden=8, seq_len=5, seed=3)
    b = char_rnn.train("abracadabra " * 3, steps=20, hidden=8, seq_len=5, seed=3)
    np.testing.assert_array_equal(a.losses, b.losses)


def test_sample_is_seeded():
    v = char_rnn.Vocab("abcdef")
    p = char_rnn.init_params(len(v), 8, seed=1)
    s1 = char_rnn.sample(p, v, 50, prime="ab", seed=7)
    assert s1 == char_rnn.sample(p, v, 50, prime="ab", seed=7)
    assert s1.startswith("ab") and len(s1) == 52 and set(s1) <= set("abcdef")
    with pytest.raises(ValueError, match="temperature"):
        char_rnn.sample(p, v, 5, temperature=0)
    with pytest.raises(ValueError, match="prime"):
        char_rnn.sample(p, v, 5, prime="xyz")


def test_zen_of_python_prints_nothing(capsys):
    sys.modules.pop("this", None)
    text = char_rnn.zen_of_python()
    assert capsys.readouterr().out == ""
    assert text.startswith("The Zen of Python") and "Beautiful is better than ugly." in text


def test_load_text_drops_utf8_bom(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes("\ufeffhéllo".encode())
    assert char_rnn.load_text(p) == "héllo"


@pytest.mark.parametrize(
    ("content", "match"),
    [(b"", "empty"), (b"zzzz", "one distinct"), (b"q", "one distinct"), (b"ab\xff\xfe", "UTF-8")],
)
def test_load_text_rejects(tmp_path, content, match):
    p = tmp_path / "t.txt"
    p.write_bytes(content)
    with pytest.raises(char_rnn.TextError, match=match):
        char_rnn.load_text(p)


@pytest.mark.parametrize(
    "kwargs",
    [{"steps": 0}, {"hidden": 0}, {"seq_len": 0}, {"seq_len": 12}, {"lr": -1.0}],
)
def test_train_rejects_bad_options(kwargs):
    with pytest.raises(ValueError):
        char_rnn.train("hello world!", **kwargs)


# --------------------------------------------------------------------------- the command


def _parse_run(out):
    m = re.search(r"initial ([0-9.]+) -> final smoothed ([0-9.]+)", out)
    assert m, out
    g = re.search(r"max relative error ([0-9.e+-]+) .*: (PASS|FAIL)", out)
    assert g, out
    return float(m.group(1)), float(m.group(2)), float(g.group(1)), g.group(2)


def test_demo_short_run(capsys):
    rc = cli.main(["demo", "--steps", "40", "--hidden", "16", "--seq-len", "12", "--sample-len", "40"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert captured.err == ""
    initial, final, err, verdict = _parse_run(captured.out)
    assert verdict == "PASS" and err < 1e-5
    assert initial > 0 and final > 0
    assert "the Zen of Python" in captured.out
    assert "sample (temperature 0.8, seed 0)" in captured.out


def test_demo_on_another_text_file(tmp_path, capsys):
    p = tmp_path / "poem.txt"
    text = "Grüße aus Köln! Naïve café, déjà vu — ça va? " * 4
    p.write_text(text, encoding="utf-8")
    rc = cli.main(["demo", "--text", str(p), "--steps", "150", "--hidden", "24", "--seq-len", "16", "--seed", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    initial, final, err, verdict = _parse_run(out)
    assert verdict == "PASS" and err < 1e-5
    assert final < initial
    assert str(p) in out
    sample = out.split("-" * 60 + "\n")[1]
    assert set(sample.strip()) <= set(text)


def test_demo_fails_with_status_1_when_the_gradient_check_fails(monkeypatch, capsys):
    def broken(*args):
        res = char_rnn.loss_and_grads(*args)
        res.grads["bh"] *= 1.01
        return res

    monkeypatch.setattr(char_rnn, "check_gradients", functools.partial(char_rnn.check_gradients, loss_and_grads=broken))
    rc = cli.main(["demo", "--steps", "5", "--hidden", "8", "--seq-len", "8", "--sample-len", "5"])
    captured = capsys.readouterr()
    assert rc == 1
    assert _parse_run(captured.out)[3] == "FAIL"
    assert captured.err.count("\n") == 1 and "gradient check failed" in captured.err


BAD_INPUTS = {  # case: (demo arguments, "{tmp}" = a directory with the files below, expected message part)
    "missing": (["--text", "{tmp}/missing.txt"], "--text: file not found"),
    "directory": (["--text", "{tmp}"], "--text: is a directory"),
    "empty": (["--text", "{tmp}/empty.txt"], "is empty"),
    "one-distinct": (["--text", "{tmp}/one.txt"], "only one distinct character"),
    "single-char": (["--text", "{tmp}/single.txt"], "only one distinct character"),
    "not-utf8": (["--text", "{tmp}/latin1.txt"], "not a UTF-8 text file"),
    "seq-len-too-long": (["--text", "{tmp}/ok.txt", "--seq-len", "11"], "--seq-len: 11 is too long"),
    "seq-len-too-long-zen": (["--seq-len", "100000"], "--seq-len: 100000 is too long"),
    "steps-zero": (["--steps", "0"], "argument --steps: must be a positive integer"),
    "steps-negative": (["--steps", "-5"], "argument --steps: must be a positive integer"),
    "steps-float": (["--steps", "2.5"], "argument --steps: expected a positive integer"),
    "hidden-zero": (["--hidden", "0"], "argument --hidden"),
    "hidden-huge": (["--hidden", "1000000"], "argument --hidden: must be at most"),
    "seq-len-zero": (["--seq-len", "0"], "argument --seq-len"),
    "seq-len-word": (["--seq-len", "ten"], "argument --seq-len"),
    "seed-negative": (["--seed", "-1"], "argument --seed"),
    "lr-nan": (["--lr", "nan"], "argument --lr"),
    "temperature-zero": (["--temperature", "0"], "argument --temperature"),
    "missing-value": (["--steps"], "argument --steps: expected one argument"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_demo_bad_input(tmp_path, capsys, case):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "one.txt").write_bytes(b"aaaaaaaa")
    (tmp_path / "single.txt").write_bytes(b"x")
    (tmp_path / "latin1.txt").write_bytes("café crème".encode("latin-1"))
    (tmp_path / "ok.txt").write_text("hello world", encoding="utf-8")
    argv, expected = BAD_INPUTS[case]
    rc = cli.main(["demo", *(a.replace("{tmp}", str(tmp_path)) for a in argv)])
    captured = capsys.readouterr()
    assert rc == 2
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("numba-ta demo: error: ")
    assert expected in lines[0]
    assert "Traceback" not in captured.err


def _run_module(*args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("NUMBA_NUM_THREADS", "2")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return subprocess.run(
        [sys.executable, "-m", "numba_ta", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_module_missing_text_file_subprocess(tmp_path):
    proc = _run_module("demo", "--text", "missing.txt", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "numba-ta demo: error: --text: file not found: missing.txt\n"


def test_module_demo_subprocess(tmp_path):
    proc = _run_module("demo", "--steps", "10", "--hidden", "8", "--sample-len", "10", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _parse_run(proc.stdout)[3] == "PASS"


def test_no_command_and_help(capsys):
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "choose a command: demo, info" in err
    assert cli.main(["demo", "--help"]) == 0
    assert "--seq-len" in capsys.readouterr().out
    assert cli.main(["nonsense"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^numba_ta\s+{re.escape(numba_ta.__version__)}$", out, re.M)
    assert np.__version__ in out and numba.__version__ in out
    assert re.search(r"^threads\s+\d+", out, re.M)
    assert re.search(r"^threading layer\s+\S+", out, re.M)


def test_demo_uses_tqdm_when_installed_and_interactive(monkeypatch, capsys):
    """tqdm is optional: with it (a stub here) on a terminal, progress goes to a bar, not to step lines."""
    import types

    updates = []

    class StubBar:
        def __init__(self, total, **kwargs):
            self.total = total

        def update(self, n):
            updates.append(n)

        def set_postfix(self, **kwargs):
            pass

        def close(self):
            updates.append("closed")

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=StubBar))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    rc = cli.main(["demo", "--steps", "7", "--hidden", "8", "--seq-len", "8", "--sample-len", "5"])
    out = capsys.readouterr().out
    assert rc == 0
    assert updates == [1] * 7 + ["closed"]
    assert not re.search(r"^step ", out, re.M)
