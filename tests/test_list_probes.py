"""numba_ta's TensorList ops against the specification's probes (``tests/helpers/tensorlist_probe.py``).

Every probe of tensorlist_probe.py (one test each, named by its id) runs its thunk on numba_ta through
the numpy shim of ``tests/helpers/list_shim.py`` and compares numba_ta's observation text with the
probe's expectation, the text TensorFlow 2.21 gives (docs/semantics.rst, section
``tl-semantics``). Two kinds of probes are compared otherwise:

* ``NUMBA_TA_EXPECT``: where numba_ta diverges from TensorFlow on purpose (TensorFlow
  crashes or corrupts a list, section ``tl-crashes``, and ScatterIntoExistingList's gap
  elements, step 7 of ``tl-scatter-existing``), or where a probe combines kernel messages
  with TensorFlow-only conversion texts: the expectation written here.
* ``CLASS_ONLY``: probes of TensorFlow's Python conversion path and op-definition checks
  (section ``tl-common``: "These are not kernel messages and have no code"), which numba_ta
  cannot reproduce word for word: only the error class is checked; or, for the int inputs of
  the wrong dtype, the result TensorFlow gives when the same values come as numpy arrays
  (``NUMPY_INPUT_RESULT``: tf.raw_ops converts numpy arrays where it refuses tensors).

``test_tf_still_agrees`` (marked ``oracle``) runs a sample of the probes through TensorFlow
in this process and checks TensorFlow still gives tensorlist_probe.py's expectations;
``test_tf_numpy_inputs`` checks ``NUMPY_INPUT_RESULT`` against TensorFlow. Probes on which
TensorFlow crashes never run in process.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers import list_shim

NP = list_shim.load_numpy()
Re = NP.Re
IA = "InvalidArgumentError: "

# ----------------------------------------------------------------------------------------
# numba_ta's own expectations (section tl-crashes, column "numba_ta (proposed)"; and
# tl-scatter-existing step 7)

_NT_INDEX = IA + "TensorListGetItem: index must hold exactly one value, but had shape: {} (TensorFlow aborts here). "
_NT_INDEX += "[Op:TensorListGetItem]"
_NT_SX_SHAPE = (
    IA + "Tried to scatter a tensor with incompatible shape into a list at index 0. Item element shape: [3] list "
    "shape: [2] (TensorFlow corrupts the list here). [Op:TensorListScatterIntoExistingList]"
)
_NT_SPLIT = (
    IA + "tensor shape [2,2] of piece 1 is not compatible with element_shape [1,2] (TensorFlow corrupts the list "
    "here). [Op:TensorListSplit]"
)
_NT_LEADING_NEG = (
    IA + "Invalid value in leading_dims: {} (TensorFlow aborts or returns a wrong result here). [Op:TensorListConcatV2]"
)
# an error of TensorFlow's Python layer or op definition, for which numba_ta has its own text
_CONV = r"(?:InvalidArgumentError|TypeError|ValueError): .*"

# a string tensor where numba_ta has no string dtype: refused, with the dtype named
_NO_STRING = r"(?:TypeError|InvalidArgumentError): .*\bstring\b.*"


def _either(result):
    """A pattern for one call of a conversion probe: such an error, or ``result``."""
    return rf"(?:{_CONV}|{re.escape(result)})"


NUMBA_TA_EXPECT = {
    # tl-crashes, row "TensorListGetItem with an index of 0 or of 2 or more elements": NT-tl-index
    "GI-X1": "get=" + _NT_INDEX.format("[2]"),
    "GI-X2": "get=" + _NT_INDEX.format("[0]"),
    # tl-crashes, row "TensorListSetItem with resize_if_index_out_of_bounds=True and a negative
    # index": L15, the text TensorFlow gives for the same index without resize
    "SI-X1": "set=" + IA + "Trying to modify element -1 in a list with 2 elements. [Op:TensorListSetItem]",
    "SI-X2": "set=" + IA + "Trying to modify element -5 in a list with 2 elements. [Op:TensorListSetItem]",
    # tl-crashes, row "TensorListScatterIntoExistingList with a negative index": NT-tl-scatter-negative
    "SX-X1": "scatter="
    + IA
    + "Indices in TensorListScatterIntoExistingList must all be non-negative (TensorFlow crashes here). "
    "[Op:TensorListScatterIntoExistingList]",
    # tl-crashes, row "TensorListScatterIntoExistingList with a row not compatible with a fully
    # defined element shape": NT-tl-scatter-shape; the fixture l_sx_x2 is that scatter, so the
    # later steps raise the same error
    "SX-X2": f"scatter={_NT_SX_SHAPE}; stack={_NT_SX_SHAPE}; getitem={_NT_SX_SHAPE}",
    # tl-crashes, row "TensorListScatterIntoExistingList past the end of a list whose dtype is not
    # float32, or whose element shape is fully defined": no error, the gap is unset elements.
    # SX-X3: int32 list, element shape unknown; the unset element 2 reads as zeros of the shape
    # [] inferred from the set elements (GetItem step 5), Stack likewise (Stack step 5)
    "SX-X3": "scatter=int32[] 4; getitem=int32[] 0; stack=int32[4] [1, 2, 0, 5]",
    # SX-X4: int32 list, element shape []: Stack gives zeros for the gap
    "SX-X4": "scatter=int32[] 4; stack=int32[4] [1, 2, 0, 5]",
    # SX-X5: float32 list, element shape [2]: zeros for the gap, no garbage
    "SX-X5": "stack=float32[4, 2] [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0], [5.0, 6.0]]; "
    "gather=float32[2, 2] [[0.0, 0.0], [0.0, 0.0]]",
    # tl-scatter-existing step 7 (and the same tl-crashes row: "a divergence from TensorFlow also
    # where TensorFlow's float32 [0] elements are harmless [SX3]"): the gap is unset
    "SX3": "List(float, <unknown>, 4: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | unset | float32[2] [9.0, 9.0]])",
    # ... so Stack has no [0] element to merge: the unset element stacks as zeros of [2]
    "SX12": "float32[4, 2] [[1.0, 2.0], [3.0, 4.0], [0.0, 0.0], [9.0, 9.0]]",
    # tl-crashes, row "TensorListConcatV2 reading a negative leading_dims entry":
    # NT-tl-leading-negative, the first negative entry read
    "CV-X1": "concat=" + _NT_LEADING_NEG.format(-1),
    "CV-X2": "concat=" + _NT_LEADING_NEG.format(-3),
    "CV-X3": "concat=" + _NT_LEADING_NEG.format(-1),
    # tl-crashes, row "TensorListConcatV2 reading an entry of a leading_dims of rank 2 or more":
    # NT-tl-leading-vector (unset element 1, below the 2 values of [[5, 3]])
    "CV-X4": "concat=" + IA + "Expected leading_dims to be a vector, received shape: [1,2] (TensorFlow aborts here). "
    "[Op:TensorListConcatV2]",
    # tl-crashes, row "TensorListSplit with a fully defined element_shape and a length other than
    # its first dimension": NT-tl-split-shape for piece 1 (shape [2,2]); the fixture l_sp_x1 is
    # that split, so the later steps raise the same error
    "SP-X1": f"split={_NT_SPLIT}; getitem={_NT_SPLIT}; stack={_NT_SPLIT}",
    # tl-crashes, row "TensorListConcat on a list whose element shape is fully defined, with an
    # attribute whose dimensions after the first contradict it": the merge error
    "CC-X1": IA + "PartialTensorShape: Incompatible shapes during merge: [4] vs. [3] [Op:TensorListConcat]",
    # tl-crashes, row "TensorListConcat on a list of element shape [] that has set elements": L44
    "CC-X2": "rows={0}; wider={0}".format(
        IA + "Concat saw a scalar shape at index 0 but requires at least vectors. [Op:TensorListConcat]"
    ),
    # tl-crashes, row "AddN of two lists whose merged element shape is fully defined and does not fit
    # an element that only one of them has set": NT-tl-add-shape
    "AN-X1": "sum={0}; stack={0}".format(
        IA + "Trying to add two lists of tensors whose element 0 of shape [1] is not compatible with their merged "
        "element shape [3] (TensorFlow corrupts the list here). [Op:AddN]"
    ),
    # tl-common: Stack, Gather and PopBack take int32 element_shape only; TensorFlow's texts
    # for an int64 one are op-definition / conversion texts (no code): any error per call, or
    # what TensorFlow returns for the same numpy inputs (see NUMPY_INPUT_RESULT)
    "SH14": Re(
        r"\("
        + _either("float32[2, 2] [[1.0, 2.0], [3.0, 4.0]]")
        + ", "
        + _either("float32[1, 2] [[1.0, 2.0]]")
        + ", "
        + _either("(List(float, <unknown>, 1: [float32[2] [1.0, 2.0]]), float32[2] [3.0, 4.0])")
        + r"\)"
    ),
    # tl-common: GI8b shows two TensorFlow Python-layer texts for an int64 index (no code)
    "GI8b": Re(r"\(" + _either("float32[2] [1.0, 2.0]") + ", " + _either("float32[2] [1.0, 2.0]") + r"\)"),
    # tl-gradients, AddN step 3d: bool gives L67 (kept); a string list is not reachable in
    # numba_ta (no string dtype, tl-gradients and tl-message-codes L61): FromTensor of strings
    # must refuse the dtype, naming it (TypeError, numba_ta's error for an unsupported dtype,
    # or InvalidArgumentError)
    "AN11": Re(r"\(InvalidArgumentError: Trying to add unsupported dtype 10 \[Op:AddN\], " + _NO_STRING + r"\)"),
    # the same for ZerosLike of a string list (L61, "not reachable in numba_ta")
    "ZL4": Re(_NO_STRING),
}

# ----------------------------------------------------------------------------------------
# Only the error class (tl-common: texts of TensorFlow's Python layer and op definition, "not
# kernel messages", with no code)

_ANY_CONV = ("InvalidArgumentError", "TypeError", "ValueError")

CLASS_ONLY = {
    # a list input that is not a variant tensor: op-definition check "cannot compute ... as input #0"
    "H3": _ANY_CONV,
    # a float element_shape: "Value for attr 'shape_type' of float is not in the list ..."
    "SH10": _ANY_CONV,
    # max_num_elements int64: "ValueError: Tensor conversion requested dtype int32 ..."
    "EM7": _ANY_CONV,
    # shape_type float32: "Value for attr 'shape_type' ..."
    "ESH5": _ANY_CONV,
    # an int64 index: op-definition check "cannot compute TensorListGetItem as input #1 ..."
    "GI8": _ANY_CONV,
    # int64 indices: "cannot compute TensorListGather as input #1 ..."
    "GA16": _ANY_CONV,
    # int32 leading_dims: "cannot compute TensorListConcatV2 as input #2 ..."
    "CV12": _ANY_CONV,
    # int32 lengths: "ValueError: Tensor conversion requested dtype int64 ..."
    "SP13": _ANY_CONV,
    # element_dtype None: TensorFlow's Python "TypeError: Expected DataType for argument ..."
    "DT4": ("TypeError",),
}

# The probes above refuse an integer input of the wrong dtype only because it is a tf.Tensor:
# given the same values as numpy arrays (as the shim passes them), tf.raw_ops converts them and
# the op succeeds. So numba_ta, which only sees numpy values, may also take them; then it must
# give what TensorFlow gives for the numpy inputs (TF 2.21, checked by running these thunks
# with numpy inputs through tf.raw_ops).
NUMPY_INPUT_RESULT = {
    "EM7": "List(float, [2], 0: [])",
    "GI8": "float32[2] [1.0, 2.0]",
    "GA16": "float32[1, 2] [[1.0, 2.0]]",
    "CV12": "(float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2])",
    "SP13": "List(float, <unknown>, 1: [float32[1] [1.0]])",
}


def _matches(expect, got):
    """tensorlist_probe.py's ``matches``, for a ``Re`` of any loaded copy of tensorlist_probe.py."""
    if hasattr(expect, "pattern"):
        return re.fullmatch(expect.pattern, got, re.S) is not None
    return expect == got


def _error_class(text):
    head, sep, _ = text.partition(": ")
    return head if sep and head.isidentifier() else None


@pytest.mark.parametrize("pid", list(NP.PROBES))
def test_probe(pid):
    text, _, expect, _ = NP.PROBES[pid]
    got = list_shim.run_probe(NP, pid)
    if pid in CLASS_ONLY:
        if got == NUMPY_INPUT_RESULT.get(pid):
            return
        cls = _error_class(got)
        assert cls in CLASS_ONLY[pid], f"{pid} ({text}): expected an error of class {CLASS_ONLY[pid]}, got: {got}"
        return
    expect = NUMBA_TA_EXPECT.get(pid, expect)
    assert _matches(expect, got), f"{pid} ({text})\n  expected: {expect}\n  got:      {got}"


def test_overrides_name_probes():
    """Every id of the two dicts is a probe, none in both, and every probe TensorFlow crashes
    on or corrupts (isolated) has a numba_ta expectation."""
    assert set(NUMBA_TA_EXPECT) <= set(NP.PROBES)
    assert set(CLASS_ONLY) <= set(NP.PROBES)
    assert not set(NUMBA_TA_EXPECT) & set(CLASS_ONLY)
    assert set(NUMPY_INPUT_RESULT) <= set(CLASS_ONLY)
    isolated = {p for p, (_, _, _, iso) in NP.PROBES.items() if iso or "-X" in p}
    assert isolated <= set(NUMBA_TA_EXPECT)


# ----------------------------------------------------------------------------------------
# TensorFlow still gives tensorlist_probe.py's expectations (a sample covering every op)

TF_SAMPLE = (
    "H6",  # the list checks of twelve ops
    "H7",
    "EM1",  # EmptyTensorList, Length, ElementShape
    "EM5",
    "RS4",  # TensorListReserve
    "FT11",  # TensorListFromTensor (a list of lists)
    "ESH1",  # TensorListElementShape
    "LEN1",  # TensorListLength
    "GI19",  # TensorListGetItem
    "GI28",
    "SI8",  # TensorListSetItem
    "SI14",
    "PB9",  # TensorListPushBack
    "PBB1",  # TensorListPushBackBatch
    "PBB9",
    "POP5",  # TensorListPopBack
    "ST14",  # TensorListStack
    "GA13",  # TensorListGather
    "SC1",  # TensorListScatter
    "SC16",  # TensorListScatterV2
    "SX3",  # TensorListScatterIntoExistingList (TensorFlow's gap elements: numba_ta diverges)
    "SX12",
    "SX8",
    "CC8",  # TensorListConcat
    "CV6",  # TensorListConcatV2
    "CV9",
    "CL8",  # TensorListConcatLists
    "SP14",  # TensorListSplit
    "RZ6",  # TensorListResize
    "ZL1",  # ZerosLike
    "AN9",  # AddN
    "AN17",
    "V4",  # lists of lists
    "DT1",
)


@pytest.mark.oracle
def test_tf_still_agrees():
    pytest.importorskip("tensorflow")
    tf_mod = list_shim.load_tf()
    bad = []
    for pid in TF_SAMPLE:
        _, _, expect, isolate = tf_mod.PROBES[pid]
        assert not isolate and "-X" not in pid, f"{pid} must not run in process under TensorFlow"
        got = list_shim.run_probe(tf_mod, pid)
        if not _matches(expect, got):
            bad.append(f"{pid}\n  expected: {expect}\n  got:      {got}")
    assert not bad, "TensorFlow no longer gives tensorlist_probe.py's expectation:\n" + "\n".join(bad)


@pytest.mark.oracle
def test_tf_numpy_inputs():
    """``NUMPY_INPUT_RESULT``, and the numpy-input alternatives of SH14 and GI8b, are what
    TensorFlow gives when ``i32``/``i64`` make numpy arrays instead of tensors."""
    pytest.importorskip("tensorflow")
    import numpy as np

    tf_mod = list_shim.load_tf()
    tf_mod.i32 = lambda x: np.asarray(x, np.int32)
    tf_mod.i64 = lambda x: np.asarray(x, np.int64)
    bad = []
    cases = [*NUMPY_INPUT_RESULT.items(), *((pid, NUMBA_TA_EXPECT[pid]) for pid in ("SH14", "GI8b"))]
    for pid, expect in cases:
        got = list_shim.run_probe(tf_mod, pid)
        if not _matches(expect, got):
            bad.append(f"{pid}\n  expected: {expect}\n  got:      {got}")
    assert not bad, "TensorFlow with numpy inputs:\n" + "\n".join(bad)
