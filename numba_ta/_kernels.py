"""Numba kernels of numba_ta: copies and in-place sums over flat storage.

Every kernel takes only ndarrays and integers.  Storage is a 1-D contiguous
buffer; an element is a run of items starting at an offset.  Fixed-width
("row") kernels serve the dense path, "segment" kernels serve concat and
split where elements differ in dimension 0.

Copy kernels are called on bit views (``uint8``/``uint16``/``uint32``/
``uint64``) of the data so that they compile once per item size, not once per
dtype; accumulate kernels see the real numeric dtype.  ``*_par`` variants run
their outer loop with ``prange`` and may only be used where each iteration
writes its own output items (unique destination offsets); the API layer
chooses them above ``_config.PARALLEL_MIN_ELEMENTS`` items.
"""

from __future__ import annotations

from numba import njit, prange

_JIT = dict(cache=True, nogil=True)
_PJIT = dict(_JIT, parallel=True)


# Element-sized runs.  The row and segment kernels hand each element to these as contiguous
# slices: LLVM then vectorises the copy, which it does not do for an index loop in a prange body
# (measured on numba 0.68: a parallel index-loop copy of 64 MiB took 23 ms, these 4 ms).


@njit(**_JIT)
def _copy_run(dst, src):
    """Copy ``src`` into ``dst`` (1-D, same size).

    Parameters
    ----------
    dst, src : (n,) ndarray
        Contiguous runs of one dtype.

    Returns
    -------
    None
    """
    for j in range(dst.size):
        dst[j] = src[j]


@njit(**_JIT)
def _add_run(dst, src):
    """Add ``src`` into ``dst`` in place (1-D, same size, numeric dtype).

    Parameters
    ----------
    dst, src : (n,) ndarray
        Contiguous runs of one dtype.

    Returns
    -------
    None
    """
    for j in range(dst.size):
        dst[j] += src[j]


@njit(**_JIT)
def _zero_run(dst):
    """Set ``dst`` to zeros.

    Parameters
    ----------
    dst : (n,) ndarray
        Contiguous run.

    Returns
    -------
    None
    """
    for j in range(dst.size):
        dst[j] = 0


@njit(**_JIT)
def _gather_rows(data, src_offsets, width, out):
    """Copy ``width`` items from ``data[src_offsets[k]:]`` to row ``k`` of flat ``out``.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage.
    src_offsets : (n,) int64 ndarray
        Start of each source element in ``data``; a negative offset means
        "zeros" (an unwritten or soft-zero element).
    width : int
        Items per element.
    out : (n * width,) ndarray
        Destination, same dtype as ``data``.

    Returns
    -------
    out : (n * width,) ndarray
    """
    for k in range(src_offsets.shape[0]):
        s = src_offsets[k]
        o = k * width
        if s < 0:
            _zero_run(out[o : o + width])
        else:
            _copy_run(out[o : o + width], data[s : s + width])
    return out


@njit(**_PJIT)
def _gather_rows_par(data, src_offsets, width, out):
    """Parallel :func:`_gather_rows` (each iteration writes its own output row).

    Parameters
    ----------
    data, src_offsets, width, out
        As for :func:`_gather_rows`.

    Returns
    -------
    out : (n * width,) ndarray
    """
    for k in prange(src_offsets.shape[0]):
        s = src_offsets[k]
        o = k * width
        if s < 0:
            _zero_run(out[o : o + width])
        else:
            _copy_run(out[o : o + width], data[s : s + width])
    return out


@njit(**_JIT)
def _write_rows(data, dst_offsets, src, width):
    """Copy row ``k`` of flat ``src`` to ``data[dst_offsets[k]:][:width]``.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage, written in place.
    dst_offsets : (n,) int64 ndarray
        Destination start of each row.
    src : (n * width,) ndarray
        Rows to store, same dtype as ``data``.
    width : int
        Items per row.

    Returns
    -------
    None
    """
    for k in range(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = k * width
        _copy_run(data[d : d + width], src[s : s + width])


@njit(**_PJIT)
def _write_rows_par(data, dst_offsets, src, width):
    """Parallel :func:`_write_rows`; ``dst_offsets`` must be unique.

    Parameters
    ----------
    data, dst_offsets, src, width
        As for :func:`_write_rows`.

    Returns
    -------
    None
    """
    for k in prange(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = k * width
        _copy_run(data[d : d + width], src[s : s + width])


@njit(**_JIT)
def _accumulate_rows(data, dst_offsets, src, width, add):
    """Store or add row ``k`` of ``src`` into ``data``, in order.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage of a numeric dtype, updated in place.
    dst_offsets : (n,) int64 ndarray
        Destination start of each row; duplicates are allowed and are summed
        in order.
    src : (n * width,) ndarray
        Rows, same dtype as ``data``.
    width : int
        Items per row.
    add : (n,) uint8 ndarray
        1 where the row is added to what the destination holds, 0 where it
        replaces it (the destination was a soft zero).

    Returns
    -------
    None
    """
    for k in range(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = k * width
        if add[k]:
            _add_run(data[d : d + width], src[s : s + width])
        else:
            _copy_run(data[d : d + width], src[s : s + width])


@njit(**_PJIT)
def _accumulate_rows_par(data, dst_offsets, src, width, add):
    """Parallel :func:`_accumulate_rows`; ``dst_offsets`` must be unique.

    Parameters
    ----------
    data, dst_offsets, src, width, add
        As for :func:`_accumulate_rows`.

    Returns
    -------
    None
    """
    for k in prange(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = k * width
        if add[k]:
            _add_run(data[d : d + width], src[s : s + width])
        else:
            _copy_run(data[d : d + width], src[s : s + width])


@njit(**_JIT)
def _gather_segments(data, src_offsets, sizes, out_offsets, out):
    """Copy element ``k`` (``sizes[k]`` items) to ``out[out_offsets[k]:]``; concat's kernel.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage.
    src_offsets : (n,) int64 ndarray
        Start of each element in ``data``; negative means zeros.
    sizes : (n,) int64 ndarray
        Items of each element.
    out_offsets : (n,) int64 ndarray
        Start of each element in ``out`` (the exclusive cumulative sum of ``sizes``).
    out : (sum(sizes),) ndarray
        Destination.

    Returns
    -------
    out : (sum(sizes),) ndarray
    """
    for k in range(src_offsets.shape[0]):
        s = src_offsets[k]
        o = out_offsets[k]
        z = sizes[k]
        if s < 0:
            _zero_run(out[o : o + z])
        else:
            _copy_run(out[o : o + z], data[s : s + z])
    return out


@njit(**_PJIT)
def _gather_segments_par(data, src_offsets, sizes, out_offsets, out):
    """Parallel :func:`_gather_segments`.

    Parameters
    ----------
    data, src_offsets, sizes, out_offsets, out
        As for :func:`_gather_segments`.

    Returns
    -------
    out : (sum(sizes),) ndarray
    """
    for k in prange(src_offsets.shape[0]):
        s = src_offsets[k]
        o = out_offsets[k]
        z = sizes[k]
        if s < 0:
            _zero_run(out[o : o + z])
        else:
            _copy_run(out[o : o + z], data[s : s + z])
    return out


@njit(**_JIT)
def _write_segments(data, dst_offsets, src, src_offsets, sizes):
    """Copy ``src[src_offsets[k]:][:sizes[k]]`` to ``data[dst_offsets[k]:]``; split's kernel.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage, written in place.
    dst_offsets : (n,) int64 ndarray
        Destination start of each element (unique).
    src : (m,) ndarray
        Flat source.
    src_offsets : (n,) int64 ndarray
        Start of each element in ``src``.
    sizes : (n,) int64 ndarray
        Items of each element.

    Returns
    -------
    None
    """
    for k in range(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = src_offsets[k]
        z = sizes[k]
        _copy_run(data[d : d + z], src[s : s + z])


@njit(**_PJIT)
def _write_segments_par(data, dst_offsets, src, src_offsets, sizes):
    """Parallel :func:`_write_segments`.

    Parameters
    ----------
    data, dst_offsets, src, src_offsets, sizes
        As for :func:`_write_segments`.

    Returns
    -------
    None
    """
    for k in prange(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = src_offsets[k]
        z = sizes[k]
        _copy_run(data[d : d + z], src[s : s + z])


@njit(**_JIT)
def _accumulate_segments(data, dst_offsets, src, src_offsets, sizes, add):
    """Store or add each segment of ``src`` into ``data``; split into a gradient array.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage of a numeric dtype, updated in place.
    dst_offsets, src, src_offsets, sizes
        As for :func:`_write_segments`.
    add : (n,) uint8 ndarray
        1 to add, 0 to replace (the destination was a soft zero).

    Returns
    -------
    None
    """
    for k in range(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = src_offsets[k]
        z = sizes[k]
        if add[k]:
            _add_run(data[d : d + z], src[s : s + z])
        else:
            _copy_run(data[d : d + z], src[s : s + z])
