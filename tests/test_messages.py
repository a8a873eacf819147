"""The message table (``numba_ta/_messages.py``): its codes, its templates, and that it is the only source of texts.

The big suites compare every message with TensorFlow's (the oracle tests) and with the
reference model; here: each code is documented (the spec's codes in the TensorFlow semantics
reference, numba_ta's own in the module docstring), each template formats with its fields and
matches the reference's text where the reference quotes it, no error text is built anywhere
else in the package, and a few errors raised through the ops have exactly the expected texts.
The TensorList codes (``L1`` to ``L71``, ``NT-tl-*``) are checked against the reference's
TensorList tables (``tl-message-codes``, ``tl-crashes``), placeholder by placeholder, and a few
against the texts TensorFlow gave in ``tests/helpers/tensorlist_probe.py``.
"""

from __future__ import annotations

import ast
import pathlib
import re
import string

import numpy as np
import pytest

import numba_ta
from numba_ta import TensorArray, errors, gradients, raw_ops
from numba_ta.tf import messages as _messages
from numba_ta.tf.messages import FIELDS, MESSAGES, error, message, python_error

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = pathlib.Path(numba_ta.__file__).resolve().parent
SEMANTICS = (ROOT / "docs" / "semantics.rst").read_text(encoding="utf-8")

SPEC_CODE = re.compile(r"[TKGSCPR][0-9]{1,2}")
TL_CODE = re.compile(r"L[0-9]{1,2}")
NT_CODE = re.compile(r"NT-[a-z0-9]+(?:-[a-z0-9]+)*")
NT_TL_CODE = re.compile(r"NT-tl-[a-z0-9]+(?:-[a-z0-9]+)*")
# the spec codes numba_ta cannot reach (semantics reference: T3 is preceded by K7, numba_ta has no
# dtype for T12, T13 cannot happen): in the tables for completeness, raised nowhere
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


def _section(label):
    """The text of the semantics reference from ``.. _<label>:`` to the next label."""
    start = SEMANTICS.index(f".. _{label}:\n")
    end = SEMANTICS.find("\n.. _", start + 1)
    return SEMANTICS[start : end if end >= 0 else len(SEMANTICS)]


def _unwrap(text):
    """A quoted text as one line: a line break and its indentation are one space."""
    return re.sub(r"[ \t]*\n[ \t]*", " ", text)


def _tl_table():
    """The rows of the TensorList message table (tl-message-codes): code -> the quoted text.

    A row's first cell is a code or codes (``NT-merge-shape, NT-merge-rank``), its second cell
    quotes their texts in that order (anything after them, such as L12's ``(<Op>: ...)``, is
    commentary).
    """
    rows = {}
    table = _section("tl-message-codes")
    body = table[table.index("\n   * - Code\n") :].split("\n\n")[0]  # the list-table's rows, to its blank line
    for row in body.split("\n   * - ")[2:]:  # (before the header row, and the header row)
        cell0, cell1 = row.split("\n     - ")[:2]
        codes = [c.strip() for c in cell0.split(",")]
        quoted = re.findall(r"``(.+?)``", cell1, re.S)
        assert len(quoted) >= len(codes), cell0
        for code, text in zip(codes, quoted, strict=False):
            assert code not in rows, f"{code} twice in tl-message-codes"
            rows[code] = _unwrap(text)
    return rows


def _tl_nt_texts():
    """numba_ta's own TensorList texts, as the divergence table (tl-crashes) quotes them: code -> text."""
    found = re.findall(r"``([^`]+)``\s+\(``(NT-tl-[a-z0-9-]+)``\)", _section("tl-crashes"))
    texts = {code: _unwrap(text) for text, code in found}
    assert len(texts) == len(found), "an NT-tl code quoted twice in tl-crashes"
    return texts


def _tl_nt_codes():
    """The NT-tl codes that the TensorList message table lists as numba_ta's own texts."""
    return set(re.findall(r"``(NT-tl-[a-z0-9-]+)``", _section("tl-message-codes")))


def _dummy(code):
    return {f: f"<{f}>" for f in FIELDS[code]}


# ---------------------------------------------------------------------------- (a) codes documented


def test_every_code_is_the_specs_or_a_documented_numba_ta_code():
    spec = _spec_codes()
    tl = _tl_table()
    tl_nt = _tl_nt_codes()
    doc = _messages.__doc__
    for code in MESSAGES:
        if SPEC_CODE.fullmatch(code):
            assert code in spec, f"{code} is not defined in docs/semantics.rst"
        elif TL_CODE.fullmatch(code):
            assert code in tl, f"{code} is not in the TensorList message table (tl-message-codes)"
        else:
            assert NT_CODE.fullmatch(code), f"{code}: neither a spec code nor an NT- code"
            assert f"``{code}``" in doc, f"{code} is not listed in the _messages module docstring"
            if NT_TL_CODE.fullmatch(code):
                assert code in tl_nt, f"{code} is not listed in tl-message-codes as numba_ta's own text"
    assert "``L1`` to ``L71``" in doc


def test_every_spec_code_is_in_the_table():
    assert _spec_codes() - set(MESSAGES) == set()
    # the TensorList table: L1 to L71, the TensorArray codes it reuses, and numba_ta's NT-tl codes
    tl = _tl_table()
    assert {c for c in tl if TL_CODE.fullmatch(c)} == {f"L{k}" for k in range(1, 72)}
    assert set(tl) - set(MESSAGES) == set()
    assert _tl_nt_codes() == set(_tl_nt_texts()) != set()
    assert _tl_nt_codes() - set(MESSAGES) == set()
    # every L code the TensorList sections define (in bold) is in the table, and the other way round
    defined = set(re.findall(r"\*\*(L[0-9]{1,2})\*\*", SEMANTICS))
    assert defined == {c for c in tl if TL_CODE.fullmatch(c)}


def test_classes_are_the_specs():
    # "All are InvalidArgumentError except G3 and C1" (semantics reference, message-codes)
    for code in _spec_codes():
        want = errors.UnimplementedError if code in ("G3", "C1") else errors.InvalidArgumentError
        assert MESSAGES[code][0] is want, code
    # "All are InvalidArgumentError except L68 (InternalError) and L70 (NotFoundError)" (tl-message-codes);
    # numba_ta raises InvalidArgumentError where TensorFlow crashes (tl-crashes)
    assert (
        "All are ``InvalidArgumentError`` except L68 (``InternalError``) and L70 (``NotFoundError``)."
        in _section("tl-message-codes")
    )
    special = {"L68": errors.InternalError, "L70": errors.NotFoundError}
    for code in MESSAGES:
        if TL_CODE.fullmatch(code):
            want = special.get(code, errors.InvalidArgumentError)
            assert MESSAGES[code][0] is want, code
        elif NT_TL_CODE.fullmatch(code):
            assert MESSAGES[code][0] is errors.InvalidArgumentError, code


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
    if code not in ("NT-prepend-vector", "L70", "L71"):  # "{int32,int64}", "{{node <op>}}": TF's own texts
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


# the placeholders of the TensorList tables (sem-conventions, tl-conventions) each field may stand for
_NUMBER = {"<i>", "<k>", "<n>", "<m>", "<b>", "<d>"}
_TL_PLACEHOLDERS = {
    "shape": {"<S>"},
    "other_shape": {"<S>", "<P>"},
    "element_shape": {"<P>"},
    "op_dtype": {"<DT>"},
    "list_dtype": {"<DT>"},
    "tensor_dtype": {"<DT>"},
    "element_dtype": {"<DT>"},
    "dtype": {"<DT>"},
    "other_dtype": {"<DT>"},
    "value": {"<V>", "<n>"},
    "type_name": {"<T>"},
    "other_type_name": {"<T>"},
    "enum": {"<enum>"},
    "op": {"<Op>"},
    "attrs": {"<attrs>"},
    "input": {"<x>"},
    "values": {"<values>"},
    "start": {"<start>"},
    "end": {"<end>"},
}
_TL_PLACEHOLDER = re.compile(r"<[A-Za-z]+>")  # not "<type: int32 ...", L17's literal text


def _tl_codes():
    return sorted(c for c in MESSAGES if TL_CODE.fullmatch(c) or NT_TL_CODE.fullmatch(c))


@pytest.mark.parametrize("code", sorted(_tl_table()) + sorted(_tl_nt_texts()))
def test_template_is_the_text_of_the_tensorlist_tables(code):
    """Word for word: the table's text with each placeholder where the template has a field."""
    quoted = {**_tl_table(), **_tl_nt_texts()}[code]
    template = MESSAGES[code][1]
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    marker = "\x00"
    assert _TL_PLACEHOLDER.sub(marker, quoted) == template.format(**dict.fromkeys(fields, marker)), code
    placeholders = _TL_PLACEHOLDER.findall(quoted)
    assert len(placeholders) == len(fields)
    if TL_CODE.fullmatch(code) or NT_TL_CODE.fullmatch(code):  # (the reused codes have their own names)
        for f, p in zip(fields, placeholders, strict=True):
            assert p in _TL_PLACEHOLDERS.get(f, _NUMBER), f"{code}: field {f} is quoted as {p}"


def test_every_tensorlist_code_is_in_a_tensorlist_table():
    quoted = {*_tl_table(), *_tl_nt_texts()}
    assert set(_tl_codes()) == {c for c in quoted if TL_CODE.fullmatch(c) or NT_TL_CODE.fullmatch(c)}


@pytest.mark.parametrize("code", _tl_codes())
def test_tensorlist_template_formats_with_its_fields(code):
    cls, template = MESSAGES[code]
    fields = {f: f"<{f}>" for f in FIELDS[code]}
    text = message(code, **fields)
    bare = re.sub(r"\{\{node [^{}]*\}\}", "", text)  # (L70, L71 quote TF's "{{node <op>}}")
    assert all(v in text for v in fields.values()) and "{" not in bare and "}" not in bare
    e = error(code, **fields)
    assert type(e) is cls and e.message == text and e.op is None
    if fields:
        with pytest.raises(TypeError, match="takes the fields"):
            message(code)
    with pytest.raises(TypeError, match="takes the fields"):
        message(code, **fields, extra=1)


def test_the_op_field_of_l12():
    # L12 names an op in its text (TensorListScatterV2 raises it as "TensorListScatter"): error()'s op
    # is then the field, and the error's op is set later, as for every error
    e = error("L12", op="TensorListScatter", shape="[1,1]")
    assert e.op is None
    assert e.message == "TensorListScatter: element_shape must be at most rank 1 but has the shape of [1,1]"
    with pytest.raises(TypeError, match="takes the fields"):
        error("L12", shape="[1,1]")


# The texts TensorFlow 2.21 gave (tests/helpers/tensorlist_probe.py, the probe in brackets)
_VZERO = "Variant<type: int value: 0>"
_PROBE_TEXTS = [
    ("L1", {"shape": "[2]"}, "Input list must be a scalar saw: [2]"),  # [H1]
    ("L2", {"value": _VZERO}, f"Input handle is not a list. Saw: '{_VZERO}'"),  # [H2]
    ("L11", {"element_shape": "[2,1]", "shape": "[2]"},
     "Specified a list with shape [2,1] from a tensor with shape [2]"),  # [FT5]
    ("L12", {"op": "TensorListFromTensor", "shape": "[1,1]"},
     "TensorListFromTensor: element_shape must be at most rank 1 but has the shape of [1,1]"),  # [FT8]
    ("L14", {"element_shape": "[2,?]"},
     "Trying to read an uninitialized tensor but element_shape is not fully defined: [2,?] and no list element is "
     "set."),  # [GI15]
    ("L17", {"shape": "[12]", "values": "0 1 2..."},
     "Expected argument 1 to be a scalar. ReceivedTensor<type: int32 shape: [12] values: 0 1 2...>"),  # [SI8]
    ("L19", {"size": 4, "max_num_elements": 2},
     "Tried to push item into a full list list size: 4 max_num_elements: 2"),  # [SI19]
    ("L21", {"element_shape": "[?]"},
     "Trying to read an uninitialized tensor but element_shape is not fully defined.[?]"),  # [POP5]
    ("L26", {"index": 1, "shape": "[3]", "element_shape": "[2]"},
     "Tried to append a tensor with incompatible shape to a list at index 1. Op element shape: [3] list shape: "
     "[2]"),  # [PBB8]
    ("L33", {"index": -1, "size": 2}, "Index -1 out o range; list only has 2 elements."),  # [GA13]
    ("L45", {"index": 1, "expected": 1, "actual": 2},
     "First entry of element_shape input does not match the first dim of list element at index: 1 Expected: 1 "
     "Actual: 2"),  # [CV3]
    ("L50", {"input": "b", "index": 0, "value": _VZERO},
     f"input_b is not a TensorList at index 0.  Saw: '{_VZERO}'"),  # [CL9]
    ("L51", {"input": "a", "index": 0, "list_dtype": "float", "element_dtype": "int32"},
     "input_a[0].dtype != element_dtype.  Saw: float vs. int32"),  # [CL2]
    ("L52", {"index": 0, "element_shape": "[?]", "other_shape": "<unknown>"},
     "input_a and input_b TensorList element shapes are not identical at index 0.  Saw [?] vs. <unknown>"),  # [CL3]
    ("L56", {"start": 2, "end": 4, "rows": 3}, "Attempting to slice [2, 4] from tensor with length 3"),  # [SP10]
    ("L62", {"index": 1, "shape": "[2]"},
     "AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[1 has shape: [2]."),  # [AN14]
    ("L68", {"type_name": "int", "other_type_name": "tensorflow::TensorList"},
     "BinaryOpVariants: Variants a and b have different type ids.  Type names: 'int' vs. "
     "'tensorflow::TensorList'"),  # [AN17]
]  # fmt: skip


def _probe_messages():
    """The messages of the probes' expectations: ``<Class>: <message> [Op:<op>]``, as (class, message, op)."""
    tree = ast.parse((ROOT / "tests" / "helpers" / "tensorlist_probe.py").read_text(encoding="utf-8"))
    names = {"IA": "InvalidArgumentError: "}  # the one name the expectations use

    def text(node):  # a string built of literals, IA and +, else None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = text(node.left), text(node.right)
            return None if left is None or right is None else left + right
        return None

    found = set()
    for node in ast.walk(tree):
        t = text(node) if isinstance(node, ast.BinOp | ast.Constant) else None
        if t:
            found.update(re.findall(r"([A-Za-z]+Error): (.*?) \[Op:([A-Za-z0-9]+)\]", t))
    return found


@pytest.mark.parametrize(("code", "fields", "text"), _PROBE_TEXTS, ids=[c for c, _, _ in _PROBE_TEXTS])
def test_tensorlist_templates_render_the_probe_texts(code, fields, text):
    cls = MESSAGES[code][0]
    assert (cls.__name__, text) in {(c, m) for c, m, _ in _probe_messages()}, f"{code}: not a probe's text"
    assert message(code, **fields) == text
    if code == "L12":  # (op is L12's field)
        e = error(code, **fields)
        e.op = "TensorListFromTensor"
    else:
        e = error(code, op="TensorListX", **fields)
    assert type(e) is cls and e.message == text
    assert str(e) == f"{text} [Op:{e.op}]"


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
        ((node, name),) = [(n, m) for n, m in _calls(ast.parse(src)) if m in OP_ERRORS]
        assert any(_has_text(a) for a in [*node.args, *(k.value for k in node.keywords)]), src
    filled = [
        'InvalidArgumentError(T1.replace("{name}", s.name))',
        'InvalidArgumentError(_S2.replace("{shape}", "[]"))',
    ]
    for src in filled:
        ((node, _),) = [(n, m) for n, m in _calls(ast.parse(src)) if m in OP_ERRORS]
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
    # every other code of the table is used, or unreachable
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
