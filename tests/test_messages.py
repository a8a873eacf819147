"""The message table (``numba_ta/_messages.py``): its codes, its templates, and that it is the only source of texts.

The big suites compare every message with TensorFlow's (the oracle tests) and with the
reference model; here: each code is documented (the spec's codes in the TensorFlow semantics
reference, numba_ta's own in the module docstring), each template formats with its fields and
matches the reference's text where the reference quotes it, no error text is built anywhere
else in the package, and a few errors raised through the ops have exactly the expected texts.
"""

from __future__ import annotations

import ast
import pathlib
import re
import string

import numpy as np
import pytest

import numba_ta
from numba_ta import TensorArray, _messages, errors, gradients, raw_ops
from numba_ta._messages import FIELDS, MESSAGES, error, message, python_error

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = pathlib.Path(numba_ta.__file__).resolve().parent
SEMANTICS = (ROOT / "docs" / "semantics.rst").read_text(encoding="utf-8")

SPEC_CODE = re.compile(r"[TKGSCPR][0-9]{1,2}")
NT_CODE = re.compile(r"NT-[a-z0-9]+(?:-[a-z0-9]+)*")
# the spec codes numba_ta cannot reach (semantics reference: T3 is preceded by K7, numba_ta has no
# dtype for T12, T13 cannot happen): in the table for completeness, raised nowhere
UNREACHABLE = {"T3", "T12", "T13"}
# numba_ta codes whose text the semantics reference does not quote
NOT_QUOTED = {
    "NT-below-minus-one",
    "NT-oom",
    "NT-convert-shape-int64",
    "NT-shape-int64",
    "NT-prepend-int64",
    "NT-corrupt",
    "NT-flow-scalar",
    "NT-handle",
    "NT-handle-type",
}
OP_ERRORS = {
    name
    for name, obj in vars(errors).items()
    if isinstance(obj, type) and issubclass(obj, errors.OpError)
}


def _spec_codes():
    """The codes the semantics reference defines (each in bold where its message is quoted)."""
    return set(re.findall(r"\*\*([TKGSCPR][0-9]{1,2})\*\*", SEMANTICS))


def _dummy(code):
    return {f: f"<{f}>" for f in FIELDS[code]}


# ---------------------------------------------------------------------------- (a) codes documented


def test_every_code_is_the_specs_or_a_documented_numba_ta_code():
    spec = _spec_codes()
    doc = _messages.__doc__
    for code in MESSAGES:
        if SPEC_CODE.fullmatch(code):
            assert code in spec, f"{code} is not defined in docs/semantics.rst"
        else:
            assert NT_CODE.fullmatch(code), f"{code}: neither a spec code nor an NT- code"
            assert f"``{code}``" in doc, f"{code} is not listed in the _messages module docstring"


def test_every_spec_code_is_in_the_table():
    assert _spec_codes() - set(MESSAGES) == set()


def test_classes_are_the_specs():
    # "All are InvalidArgumentError except G3 and C1" (semantics reference, message-codes)
    for code in _spec_codes():
        want = errors.UnimplementedError if code in ("G3", "C1") else errors.InvalidArgumentError
        assert MESSAGES[code][0] is want, code


# ---------------------------------------------------------------------------- (b) templates


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_template_formats_with_its_declared_fields(code):
    cls, template = MESSAGES[code]
    parsed = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    assert FIELDS[code] == parsed
    assert all(f.isidentifier() for f in parsed), "fields are plain names (no indexing or attributes)"
    text = message(code, **_dummy(code))
    for f in parsed:
        assert (f"<{f}>" in text) or (f"'<{f}>'" in text)  # {x!r} shows the repr
    if code != "NT-prepend-vector":  # "{int32,int64}" is TF's own text
        assert "{" not in text and "}" not in text
    exc = error(code, **_dummy(code)) if issubclass(cls, errors.OpError) else python_error(code, **_dummy(code))
    assert type(exc) is cls
    if isinstance(exc, errors.OpError):
        assert exc.message == text and exc.op is None
    else:
        assert str(exc) == text


def test_fields_must_be_exactly_the_templates():
    with pytest.raises(TypeError, match="takes the fields"):
        error("T2", name="a", index=1)
    with pytest.raises(TypeError, match="takes the fields"):
        error("T1", name="a", index=1)
    with pytest.raises(KeyError):
        error("T99")
    with pytest.raises(TypeError, match="python_error"):
        error("NT-class-no-flow")
    with pytest.raises(TypeError, match="op error"):
        python_error("T1", name="a")


def test_error_sets_the_op():
    e = error("NT-size-negative", op="TensorArrayV3")
    assert e.op == "TensorArrayV3" and str(e) == "Size should be >= 0. [Op:TensorArrayV3]"


def _quoted_pattern(template):
    """A regex for ``template`` as the semantics reference quotes it: any placeholder, any line wrap."""
    out = []
    for literal, field, _, _ in string.Formatter().parse(template.rstrip(" ")):
        out.append(r"\s+".join(re.escape(w) for w in re.split(r"\s+", literal)))
        if field is not None:
            out.append(".+?")
    return "``" + "".join(out) + "``"


@pytest.mark.parametrize("code", sorted(set(MESSAGES) - NOT_QUOTED))
def test_template_is_the_text_the_semantics_reference_quotes(code):
    template = MESSAGES[code][1]
    assert re.search(_quoted_pattern(template), SEMANTICS, re.S), f"{code}: {template!r} is not quoted"


def test_trailing_space_of_the_class_shape_error():
    # "followed by one space" (semantics reference, sem-class-shape)
    assert MESSAGES["NT-class-shapes"][1].endswith("} ")


# ---------------------------------------------------------------------------- (c) one source of texts


def _package_sources():
    return sorted(p for p in PKG.rglob("*.py") if p.name not in ("_messages.py", "errors.py"))


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            yield node, (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None)


_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


def _has_text(node):
    """Whether an expression holds message text: an f-string, or a string of words.

    A text taken from the table and filled in, as compiled code does it
    (``_S2.replace("{shape}", "[]")``: a ``{field}`` name and a value), holds none.
    """
    for sub in ast.walk(node):
        if isinstance(sub, ast.JoinedStr):
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and not _PLACEHOLDER.fullmatch(sub.value):
            if re.search(r"\s", sub.value):
                return True
    return False


def test_no_op_error_is_constructed_with_text_outside_messages():
    assert OP_ERRORS >= {"OpError", "InvalidArgumentError", "UnimplementedError", "ResourceExhaustedError"}
    found = []
    for path in _package_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, name in _calls(tree):
            if name in OP_ERRORS and any(_has_text(a) for a in [*node.args, *(k.value for k in node.keywords)]):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}(...)")
    assert not found, "error texts built outside numba_ta/_messages.py:\n" + "\n".join(found)


def test_the_text_scan_finds_texts():
    calls = [
        'InvalidArgumentError(f"TensorArray {name} has already been closed.")',
        'errors.InternalError("a numba_ta bug")',
        'InvalidArgumentError("TensorArray " + s.name + ": an element points outside the storage")',
        'UnimplementedError("TensorArray has size zero, " + shape)',
        'ResourceExhaustedError(message="OOM when allocating tensor")',
    ]
    for src in calls:
        (node, name), = [(n, m) for n, m in _calls(ast.parse(src)) if m in OP_ERRORS]
        assert any(_has_text(a) for a in [*node.args, *(k.value for k in node.keywords)]), src
    filled = [
        'InvalidArgumentError(_T1.replace("{name}", s.name))',
        'InvalidArgumentError(_S2.replace("{shape}", "[]"))',
    ]
    for src in filled:
        (node, _), = [(n, m) for n, m in _calls(ast.parse(src)) if m in OP_ERRORS]
        assert not any(_has_text(a) for a in node.args), src


def test_codes_used_in_the_package_are_the_tables():
    used = set()  # by error() and python_error()
    looked_up = set()  # by MESSAGES[...] (compiled code takes the templates themselves)
    for path in _package_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "MESSAGES":
                if isinstance(node.slice, ast.Constant):
                    looked_up.add(node.slice.value)
            if isinstance(node, ast.GeneratorExp | ast.ListComp):  # MESSAGES[c] for c in ("T1", "T2", ...)
                for gen in node.generators:
                    if not (isinstance(gen.target, ast.Name) and isinstance(gen.iter, ast.Tuple)):
                        continue
                    if any(
                        isinstance(sub, ast.Subscript)
                        and isinstance(sub.value, ast.Name)
                        and sub.value.id == "MESSAGES"
                        and isinstance(sub.slice, ast.Name)
                        and sub.slice.id == gen.target.id
                        for sub in ast.walk(node.elt)
                    ):
                        looked_up.update(c.value for c in gen.iter.elts if isinstance(c, ast.Constant))
        for node, name in _calls(tree):
            if name in ("error", "python_error") and isinstance(node.func, ast.Attribute):
                assert isinstance(node.func.value, ast.Name) and node.func.value.id == "_messages"
                arg = node.args[0]
                assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), f"{path}:{node.lineno}"
                used.add(arg.value)
    engine = set(_messages.ENGINE_CODES) - {""}  # the engine's statuses: engine_error builds their errors
    assert used | looked_up | engine <= set(MESSAGES), (used | looked_up | engine) - set(MESSAGES)
    assert set(MESSAGES) - used - looked_up - engine == UNREACHABLE


@pytest.mark.parametrize("code", [c for c in _messages.ENGINE_CODES if c not in ("", "K7")])
def test_every_engine_status_builds_its_error(code):
    """A status record gives the code's class and its template filled in (K7: the caller has the op's own error)."""
    st = _messages.ENGINE_CODES.index(code)
    record = [st, 3, 7, 2, 2, 2, 5, -1, 4, 6]  # i0..i2; a = [5, -1] (a partial [5,?] where partial), b = [4, 6]
    e = _messages.engine_error(record, "ta_7", ["bool", "float32", "half", "int64"])
    cls, template = MESSAGES[code]
    assert type(e) is cls
    text = e.message if isinstance(e, errors.OpError) else str(e)
    assert "{" not in text and ("ta_7" in text) == ("{name}" in template)
    if "{shape}" in template and code not in ("NT-merge-shape", "NT-prepend-int64", "T7", "G4", "G5", "C3", "C4"):
        assert "[5,-1]" in text or "[5,?]" in text
    if code in ("T8", "NT-oom"):
        assert "int64" in text  # the record's i0 (3) names the dtype
    with pytest.raises(IndexError):
        _messages.engine_error([0, 0, 0, 0, 0, 0], "ta", ["float32"])


# ---------------------------------------------------------------------------- (d) spot checks


def _raises(cls, text, fn, **kw):
    with pytest.raises(cls) as info:
        fn(**kw)
    e = info.value
    assert type(e) is cls
    got = e.message if isinstance(e, errors.OpError) else str(e)
    assert got == text
    return e


def test_spot_checks_through_raw_ops():
    f32 = np.float32
    h, f = raw_ops.TensorArrayV3(size=2, dtype=f32, tensor_array_name="msgs")
    name = h.name
    IA = errors.InvalidArgumentError

    e = _raises(
        IA,
        f"TensorArray {name}: Tried to write to index 2 but array is not resizeable and size is: 2",
        raw_ops.TensorArrayWriteV3, handle=h, index=2, value=[1.0], flow_in=f,
    )
    assert e.op == "TensorArrayWriteV3" and str(e).endswith(" [Op:TensorArrayWriteV3]")
    _raises(IA, "Tried to read from index -1 but array size is: 2",
            raw_ops.TensorArrayReadV3, handle=h, index=-1, flow_in=f, dtype=f32)
    _raises(IA, "TensorArray dtype is float but Op is trying to write dtype int64.",
            raw_ops.TensorArrayWriteV3, handle=h, index=0, value=np.int64(1), flow_in=f)
    _raises(IA, "TensorArray index must be scalar, but had shape: [2]",
            raw_ops.TensorArrayWriteV3, handle=h, index=[0, 1], value=[1.0], flow_in=f)
    _raises(errors.UnimplementedError,
            "TensorArray has size zero, but element shape <unknown> is not fully defined. Currently only static "
            "shapes are supported when packing zero-size TensorArrays.",
            raw_ops.TensorArrayGatherV3, handle=h, indices=[], flow_in=f, dtype=f32)
    _raises(IA, "Max scatter index must be < array size (2 vs. 2)",
            raw_ops.TensorArrayScatterV3, handle=h, indices=[0, 2], value=[[1.0], [2.0]], flow_in=f)
    _raises(IA,
            "TensorArray's size is not equal to the size of lengths (2 vs. 3), and the TensorArray is not marked "
            "as dynamically resizeable",
            raw_ops.TensorArraySplitV3, handle=h, value=[1.0, 2.0, 3.0], lengths=[1, 1, 1], flow_in=f)
    _raises(IA, f"TensorArray {name}: split lengths must be >= 0, but lengths[1] is -1 (TensorFlow aborts here).",
            raw_ops.TensorArraySplitV3, handle=h, value=[1.0, 2.0], lengths=[3, -1], flow_in=f)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.float32(1.0), flow_in=f)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=1, value=[1.0], flow_in=f)
    _raises(IA, "Concat saw a scalar shape at index 0 but requires at least vectors.  Did you mean to call pack?",
            raw_ops.TensorArrayConcatV3, handle=h, flow_in=f, dtype=f32)
    _raises(IA, "TensorArray has inconsistent shapes.  Index 0 has shape: [] but index 1 has shape: [1]",
            raw_ops.TensorArrayGatherV3, handle=h, indices=[0, 1], flow_in=f, dtype=f32)

    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    _raises(IA, f"Wrong input container. _tensor_array_grads{name}@gradients",
            raw_ops.TensorArrayGradV3, handle=g, flow_in=gf, source="gradients")
    _raises(IA,
            f"TensorArray {name}@gradients: cannot concat a gradient TensorArray whose forward TensorArray was never "
            "split (its marked size is unknown; TensorFlow crashes here).",
            raw_ops.TensorArrayConcatV3, handle=g, flow_in=gf, dtype=f32)
    raw_ops.TensorArrayCloseV3(handle=h)
    _raises(IA, f"TensorArray {name} has already been closed.", raw_ops.TensorArraySizeV3, handle=h, flow_in=f)

    _raises(IA, "Size should be >= 0.", raw_ops.TensorArrayV3, size=-1, dtype=f32)
    h2, f2 = raw_ops.TensorArrayV3(size=1, dtype=f32, element_shape=[2])
    _raises(IA, "PartialTensorShape: Incompatible ranks during merge: 1 vs. 2",
            raw_ops.TensorArrayGatherV3, handle=h2, indices=[0], flow_in=f2, dtype=f32, element_shape=[1, 1])

    # zeros of 2**62 float32 items: more bytes than an intp holds, refused before any allocation
    big, bf = raw_ops.TensorArrayV3(size=1, dtype=f32, element_shape=[2**61, 2])
    _raises(errors.ResourceExhaustedError,
            "OOM when allocating tensor with shape[2305843009213693952,2] and type float on "
            "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
            raw_ops.TensorArrayReadV3, handle=big, index=0, flow_in=bf, dtype=f32)

    msg = (
        "TensorArraySizeV3: `handle` must be a TensorArray handle returned by TensorArrayV3 or a gradient op, "
        "but got {} of type {}"
    )
    e = _raises(IA, msg.format("None", "NoneType"), raw_ops.TensorArraySizeV3, handle=None, flow_in=0.0)
    assert e.op == "TensorArraySizeV3"
    _raises(TypeError, msg.format("5", "int"), raw_ops.TensorArraySizeV3, handle=5, flow_in=0.0)


def test_spot_checks_of_the_python_level_errors():
    _raises(ValueError, "Argument `size` must be provided if handle is not provided.", TensorArray, dtype=np.float32)
    ta = TensorArray(np.float32, size=1)
    _raises(ValueError, "flow must not be None if handle is not None.", TensorArray, dtype=np.float32, handle=ta.handle)
    _raises(ValueError, "Inconsistent shapes: saw (3,) but expected (2,) ",
            TensorArray(np.float32, size=2, element_shape=[2]).write, index=0, value=[1.0, 2.0, 3.0])
    _raises(
        ValueError,
        "Expected op/tensor name to start with gradients (excluding scope), got: foo/x:0. This means that a "
        "tf.gradients op with this op in its dependency path has a custom name that does not start with "
        "'gradients'. Please make sure all calls to tf.gradients that have non-empty `name` arguments use names "
        "that start with 'gradients'.",
        gradients.grad_source, name="foo/x:0",
    )
