"""TensorList values: copy-on-write versions, their cost, pickling and the handle's Python API.

The ops' semantics are checked against the specification's probes (test_list_probes.py), a
reference model (test_list_state_machine.py) and TensorFlow (test_list_fuzz_tf.py); this file
checks what is numba_ta's own: how versions share one storage and when they stop sharing.
"""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

import numba_ta
from numba_ta import raw_ops as R
from numba_ta.errors import InvalidArgumentError
from numba_ta.tensor_list import store as _store

F32 = np.float32


def _stack(h, dtype=F32):
    return R.TensorListStack(input_handle=h, element_shape=-1, element_dtype=dtype)


def _push_all(h, values):
    for v in values:
        h = R.TensorListPushBack(input_handle=h, tensor=v)
    return h


def _empty(shape=-1, dtype=F32):
    return R.EmptyTensorList(element_shape=shape, max_num_elements=-1, element_dtype=dtype)


def test_a_loop_that_drops_its_handles_shares_one_storage_and_keeps_no_undo_log():
    h = _empty([2])
    first = h._store
    for k in range(200):
        h = R.TensorListPushBack(input_handle=h, tensor=np.full(2, k, F32))
    assert h._store is first  # no copy was made
    # the pushes drop the entries the freed handles needed once more than _KEPT of them are kept:
    # what is left is at most that many entries, and released ones awaiting a rebuild
    assert len(first.log) <= 2 * _store._COMPACT + _store._KEPT + 1
    held = sum(e is not None for e in first.log)
    assert 1 <= held <= _store._KEPT + 1 and len(first.alive) == held + 1
    for k in range(200, 200 + _store._KEPT + 1):
        h = R.TensorListPushBack(input_handle=h, tensor=np.full(2, k, F32))
        held_now = sum(e is not None for e in first.log)
        assert held_now <= _store._KEPT + 1
        assert held_now <= held or held_now == held + 1
        held = held_now
    np.testing.assert_array_equal(_stack(h)[:, 0], np.arange(200 + _store._KEPT + 1, dtype=F32))


def test_freeing_kept_versions_oldest_first_releases_their_entries_and_bounds_the_log():
    versions = [_empty([2])]
    for k in range(600):
        versions.append(R.TensorListPushBack(input_handle=versions[-1], tensor=np.full(2, k, F32)))
    store = versions[-1]._store
    for k in range(599):
        versions[k] = None  # versions k + 1 ... 600 stay alive
        assert store.first == k  # nothing runs when a handle is freed
        store.prune()  # (what the next op that makes a version does)
        assert store.first == k + 1
        released = store.first - store.base  # the entries no live handle needs, kept as None until a rebuild
        assert all(e is None for e in list(store.log)[:released])
        assert all(e is not None for e in list(store.log)[released:])
        assert len(store.log) <= 2 * (600 - k) + 32  # rebuilt once half of it is released
    np.testing.assert_array_equal(_stack(versions[599])[:, 0], np.arange(599, dtype=F32))
    versions[599] = None
    store.prune()
    assert len(store.log) == 0  # only the newest version is alive: nothing to undo


def test_every_kept_version_still_holds_its_list():
    versions = [_empty([2])]
    for k in range(30):
        h = versions[-1]
        if k % 7 == 6:
            h, _ = R.TensorListPopBack(input_handle=h, element_shape=-1, element_dtype=F32)
        elif k % 5 == 4:
            h = R.TensorListSetItem(input_handle=h, index=0, item=np.full(2, -k, F32))
        else:
            h = R.TensorListPushBack(input_handle=h, tensor=np.full(2, k, F32))
        versions.append(h)
    expected = []
    model: list[np.ndarray] = []
    for k in range(30):
        if k % 7 == 6:
            model = model[:-1]
        elif k % 5 == 4:
            model = [np.full(2, -k, F32)] + model[1:]
        else:
            model = model + [np.full(2, k, F32)]
        expected.append(list(model))
    # oldest first and newest first: materializing one version must not disturb the others
    for order in (range(1, 31), range(30, 0, -1)):
        for j in order:
            got = _stack(versions[j]) if expected[j - 1] else np.zeros((0, 2), F32)
            want = np.array(expected[j - 1], F32).reshape(-1, 2)
            np.testing.assert_array_equal(got, want)


def test_a_stale_handle_gets_a_storage_of_its_own_once():
    a = R.TensorListFromTensor(tensor=np.arange(6, dtype=F32).reshape(3, 2), element_shape=-1)
    b = R.TensorListSetItem(input_handle=a, index=1, item=np.zeros(2, F32))
    assert a._store is b._store and a._v < b._v
    np.testing.assert_array_equal(_stack(a), np.arange(6, dtype=F32).reshape(3, 2))
    assert a._store is not b._store  # materialized
    store = a._store
    R.TensorListLength(input_handle=a)
    assert a._store is store  # and only once
    np.testing.assert_array_equal(_stack(b)[1], [0, 0])


def test_the_same_input_twice_in_one_op():
    a = R.TensorListFromTensor(tensor=np.array([1, 2], np.int32), element_shape=-1)
    c = R.TensorListConcatLists(input_a=a, input_b=a, element_dtype=np.int32)
    np.testing.assert_array_equal(_stack(c, np.int32), [1, 2, 1, 2])
    np.testing.assert_array_equal(_stack(a, np.int32), [1, 2])
    e = _empty(-1, np.int32)
    out = R.TensorListPushBackBatch(input_handles=[e, e], tensor=np.array([[1], [2]], np.int32))
    assert [int(R.TensorListGetItem(input_handle=h, index=0, element_shape=-1, element_dtype=np.int32)[0]) for h in out] == [1, 2]  # noqa: E501
    assert R.TensorListLength(input_handle=e) == 0


def test_a_pop_then_a_push_keeps_the_popped_version():
    a = _push_all(_empty([2]), [np.ones(2, F32), np.full(2, 2, F32)])
    b, last = R.TensorListPopBack(input_handle=a, element_shape=-1, element_dtype=F32)
    c = R.TensorListPushBack(input_handle=b, tensor=np.full(2, 7, F32))  # writes the row a's element 1 used
    np.testing.assert_array_equal(last, [2, 2])
    np.testing.assert_array_equal(_stack(c), [[1, 1], [7, 7]])
    np.testing.assert_array_equal(_stack(a), [[1, 1], [2, 2]])
    np.testing.assert_array_equal(_stack(b), [[1, 1]])


def test_ragged_overwrites_and_resizes_keep_older_versions():
    a = R.TensorListSplit(tensor=np.arange(6, dtype=F32), element_shape=-1, lengths=[1, 2, 3])
    b = R.TensorListSetItem(input_handle=a, index=1, item=np.array([9, 9], F32))  # same size: overwritten in place
    c = R.TensorListResize(input_handle=b, size=1)
    d = R.TensorListResize(input_handle=c, size=4)
    assert R.TensorListConcatV2(input_handle=a, element_shape=-1, leading_dims=[], element_dtype=F32).tensor.tolist() == list(range(6))  # noqa: E501
    got = R.TensorListConcatV2(input_handle=b, element_shape=-1, leading_dims=[], element_dtype=F32).tensor
    np.testing.assert_array_equal(got, [0, 9, 9, 3, 4, 5])
    assert R.TensorListLength(input_handle=d) == 4
    # the unset element takes the shape of the one set element ([1]: GetItem infers it)
    np.testing.assert_array_equal(R.TensorListGetItem(input_handle=d, index=3, element_shape=-1, element_dtype=F32), [0])  # noqa: E501
    np.testing.assert_array_equal(R.TensorListGetItem(input_handle=d, index=0, element_shape=-1, element_dtype=F32), [0])  # noqa: E501


def test_failed_ops_change_nothing():
    a = _push_all(_empty([2]), [np.ones(2, F32)])
    for bad in (
        lambda: R.TensorListPushBack(input_handle=a, tensor=np.ones(3, F32)),
        lambda: R.TensorListSetItem(input_handle=a, index=5, item=np.ones(2, F32)),
        lambda: R.TensorListScatterIntoExistingList(input_handle=a, tensor=np.ones((2, 2), F32), indices=[0, -1]),
    ):
        with pytest.raises(InvalidArgumentError):
            bad()
        assert a._v == a._store.ver  # still the newest version: nothing was logged
        np.testing.assert_array_equal(_stack(a), [[1, 1]])


def test_lists_of_lists_are_values_too():
    inner = R.TensorListFromTensor(tensor=np.array([1.0, 2.0], F32), element_shape=-1)
    outer = R.TensorListPushBack(input_handle=_empty(-1, object), tensor=inner)
    outer2 = R.TensorListSetItem(input_handle=outer, index=0, item=R.TensorListResize(input_handle=inner, size=0))
    got = R.TensorListGetItem(input_handle=outer, index=0, element_shape=-1, element_dtype=object)
    assert got is inner and R.TensorListLength(input_handle=got) == 2
    got2 = R.TensorListGetItem(input_handle=outer2, index=0, element_shape=-1, element_dtype="variant")
    assert R.TensorListLength(input_handle=got2) == 0
    stacked = R.TensorListStack(input_handle=R.TensorListResize(input_handle=outer, size=2), element_shape=[], element_dtype=21)  # noqa: E501
    assert stacked.dtype == object and stacked[0] is inner and stacked[1] is numba_ta.VARIANT_ZERO


@pytest.mark.parametrize("dtype", [F32, np.int64, np.bool_, np.complex64, object])
def test_handles_pickle(dtype):
    if dtype is object:
        inner = R.TensorListFromTensor(tensor=np.array([1.0], F32), element_shape=-1)
        h = R.TensorListResize(input_handle=R.TensorListPushBack(input_handle=_empty(-1, object), tensor=inner), size=2)
    else:
        h = R.TensorListSetItem(
            input_handle=R.TensorListReserve(element_shape=[-1, 2], num_elements=3, element_dtype=dtype),
            index=1,
            item=np.ones((4, 2), dtype),
        )
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.element_shape == h.element_shape and h2.max_num_elements == h.max_num_elements
    assert len(h2) == len(h) and h2.element_dtype == h.element_dtype
    for i in range(len(h)):
        a = (
            R.TensorListGetItem(input_handle=h, index=i, element_shape=[], element_dtype=dtype)
            if dtype is object
            else None
        )
        if dtype is object:
            b = R.TensorListGetItem(input_handle=h2, index=i, element_shape=[], element_dtype=dtype)
            assert type(a) is type(b)
        elif i == 1:
            np.testing.assert_array_equal(
                R.TensorListGetItem(input_handle=h2, index=i, element_shape=-1, element_dtype=dtype),
                np.ones((4, 2), dtype),
            )
    assert pickle.loads(pickle.dumps(numba_ta.VARIANT_ZERO)) is numba_ta.VARIANT_ZERO


def test_repr_and_len():
    h = R.TensorListReserve(element_shape=[-1, 3], num_elements=1, element_dtype=np.float64)
    assert repr(h) == "TensorListHandle(double, [?,3], 1 element)"
    assert len(h) == 1 and h.element_shape == (None, 3) and h.max_num_elements == -1
    assert str(numba_ta.VARIANT_ZERO) == "Variant<type: int value: 0>"


def test_freed_old_versions_let_the_log_go():
    h = _empty([1])
    keep = []
    for k in range(10):
        keep.append(h)
        h = R.TensorListPushBack(input_handle=h, tensor=np.full(1, k, F32))
    assert len(h._store.log) == 10
    del keep
    gc.collect()
    assert len(h._store.log) == 10  # nothing runs when a handle is freed
    h = R.TensorListPushBack(input_handle=h, tensor=np.full(1, 10, F32))  # the next op prunes (> _KEPT kept)
    assert sum(e is not None for e in h._store.log) == 1  # the entry h's input needs, until a later prune


def test_an_op_of_several_changes_that_fails_half_way_changes_nothing(monkeypatch):
    from numba_ta.tensor_list.store import NumericStore

    a = R.TensorListFromTensor(tensor=np.arange(6, dtype=F32).reshape(3, 2), element_shape=-1)
    b = R.TensorListSplit(tensor=np.arange(3, dtype=F32), element_shape=-1, lengths=[1, 2])
    real_set = NumericStore.set
    calls = []

    def failing_set(self, i, value, into=None):
        calls.append(i)
        if len(calls) == 2:
            raise MemoryError("the second change cannot be allocated")
        return real_set(self, i, value, into)

    monkeypatch.setattr(NumericStore, "set", failing_set)
    with pytest.raises(MemoryError):
        R.TensorListScatterIntoExistingList(input_handle=a, tensor=np.full((2, 2), 9, F32), indices=[0, 4])
    with pytest.raises(MemoryError):
        calls.clear()
        R.TensorListConcatLists(input_a=b, input_b=b, element_dtype=F32)
    monkeypatch.undo()
    assert a._v == a._store.ver and b._v == b._store.ver  # nothing was logged
    np.testing.assert_array_equal(_stack(a), np.arange(6, dtype=F32).reshape(3, 2))
    assert R.TensorListLength(input_handle=b) == 2
    got = R.TensorListConcatV2(input_handle=b, element_shape=-1, leading_dims=[], element_dtype=F32).tensor
    np.testing.assert_array_equal(got, [0, 1, 2])
