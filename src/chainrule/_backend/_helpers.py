"""Array helpers that rules share, written against a namespace `xp` so that they run on raw
arrays and on chainrule tensors alike: undoing broadcasting, axes of reductions, and the
scatters that carry an indexing's gradient back to the indexed array's shape."""

from __future__ import annotations

import math

import numpy as np

from ._dask import is_lazy
from ._dtypes import dtype_kind
from ._indexing import (
    _positive_steps,
    assign,
    flat_positions,
    getitem,
    is_basic,
    is_mask,
    scatter_add,
    take,
)
from ._namespaces import library, namespace


def sum_to(xp, g, shape):
    """Sum `g` down to `shape`, undoing broadcasting."""
    gshape = g.shape
    if gshape == shape:
        return g
    # `shape` may have more axes than g, all ones (item assignment broadcasts a value of
    # shape (1, n) into a row): those only reshape.
    core = shape[max(len(shape) - len(gshape), 0) :]
    lead = len(gshape) - len(core)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(core) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if g.shape != shape:
        g = xp.reshape(g, shape)
    return g


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """`axis` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    out = []
    for a in axis:
        if not -ndim <= a < max(ndim, 1):
            raise IndexError(f"axis {a} is out of bounds for a tensor of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return tuple(sorted(out))


def expand_reduced(xp, g, axes: tuple[int, ...], ndim: int):
    """Re-insert the reduced `axes` of a reduction result `g` as size-1 axes."""
    if not axes or g.ndim == ndim:
        return g
    shape = list(g.shape)
    for a in axes:
        shape.insert(a, 1)
    return xp.reshape(g, tuple(shape))


def count(shape, axes) -> int:
    return math.prod(shape[a] for a in axes)


def index_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at key `p[0]` (repeated indices
    add up); `p` is getitem's (key, input shape, input dtype)."""
    key, shape, dtype = p
    if xp is np:
        out = np.zeros(shape, dtype=dtype)
        if is_basic(key):
            out[key] = g
        else:
            np.add.at(out, key, g)
        return out
    out = xp.zeros(shape, dtype=dtype)
    if is_basic(key) or is_mask(key):
        # Not every library assigns through newaxis: drop those size-1 axes from key and g.
        keys = key if isinstance(key, tuple) else (key,)
        if any(k is None for k in keys):
            key = tuple(k for k in keys if k is not None)
            g = xp.reshape(g, getitem(xp, out, key).shape)
        if library(xp) == "dask":
            return _dask_index_add(xp, out, key, g)
        return assign(xp, out, key, g)
    # Integer arrays may repeat positions: gather each element's flat source position, then
    # add the gradients up at those positions.
    size = math.prod(shape)
    positions = xp.reshape(getitem(xp, xp.reshape(xp.arange(size), shape), key), (-1,))
    return xp.reshape(scatter_add(xp, positions, xp.reshape(g, (-1,)), size, dtype), shape)


def _selects_by_array(k) -> bool:
    """Whether k, one part of an index key, is an array or a Python bool (a 0-d mask)."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return False
    return not isinstance(k, int) or k.__class__ is bool


def covers_all(shape, key) -> bool:
    """Whether indexing an array of `shape` with `key` selects every element: decided from
    the key's structure, and for a boolean mask from its values, except on lazy arrays
    (Dask), where that would compute, and under vmap, where each sample has its own values
    (reading them raised vmap's control flow error: jacfwd of array_api_extra's apply_where):
    then False. Integer arrays count as not covering."""
    keys = key if isinstance(key, tuple) else (key,)
    # Several arrays (masks too, and Python bools, which index as 0-d masks) select
    # elements pairwise (their positions broadcast together), not each its whole axes.
    if sum(map(_selects_by_array, keys)) > 1:
        return False

    def width(k) -> int:  # the axes of the array that k indexes
        if k is None or k is Ellipsis or k.__class__ is bool:
            return 0
        if isinstance(k, (int, slice)):
            return 1
        return k.ndim if dtype_kind(k.dtype) == "b" else 1

    axis = 0
    for i, k in enumerate(keys):
        if k is None or k is True:  # True: a new axis of one element, as None
            continue
        if k is False:  # selects nothing
            return False
        if k is Ellipsis:  # (keys.index would compare arrays with ==)
            axis = len(shape) - sum(width(j) for j in keys[i + 1 :])
        elif isinstance(k, int):
            if shape[axis] != 1:
                return False
            axis += 1
        elif isinstance(k, slice):
            if len(range(*k.indices(shape[axis]))) != shape[axis]:
                return False
            axis += 1
        elif dtype_kind(k.dtype) != "b" or is_lazy(k) or library(namespace(k)) == "vmap":
            return False
        else:
            if tuple(k.shape) != tuple(shape[axis : axis + k.ndim]):
                return False
            if not bool(namespace(k).all(k)):
                return False
            axis += k.ndim
    return True


def outside(xp, shape, key):
    """A bool array of `shape`: False at `key`, True elsewhere."""
    return assign(xp, xp.ones(shape, dtype=xp.bool), key, False)


def written_last(xp, shape, key, taken):
    """A bool array of shape `taken` (that of a[key], for `a` of `shape`): whether each element
    of a value written by a[key] = v stays in `a`. Index arrays may name a position several
    times; the assignment leaves one element there (NumPy's: the last), found by writing the
    elements' own numbers in the library's way and reading them back."""
    order = xp.reshape(xp.arange(math.prod(taken), dtype=xp.int64), taken)
    kept = assign(xp, xp.zeros(shape, dtype=xp.int64), key, order)
    return getitem(xp, kept, key) == order


def take_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at `indices` along `axis`;
    `p` is take's (indices, axis, input shape, input dtype)."""
    indices, axis, shape, dtype = p
    if xp is np:
        out = np.zeros(shape, dtype=dtype)
        np.add.at(out, (slice(None),) * axis + (indices,), g)
        return out
    size = math.prod(shape)
    positions = take(xp, xp.reshape(xp.arange(size), shape), indices, axis)
    flat = scatter_add(xp, xp.reshape(positions, (-1,)), xp.reshape(g, (-1,)), size, dtype)
    return xp.reshape(flat, shape)


def take_along_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at `indices` along `axis` (repeated
    indices add up, axes along which the input was broadcast are summed); `p` is
    take_along_axis's (indices, axis, input shape, input dtype)."""
    indices, axis, shape, dtype = p
    n = shape[axis]
    full = g.shape[:axis] + (n,) + g.shape[axis + 1 :]
    if xp is np:
        key = tuple(
            indices if d == axis else np.arange(k).reshape((k,) + (1,) * (g.ndim - 1 - d))
            for d, k in enumerate(g.shape)
        )
        out = index_add(xp, g, (key, full, dtype))
    elif math.prod(g.shape) == 0:  # nothing to add (an empty batch): Dask can't flatten g
        out = xp.zeros(full, dtype=dtype)
    else:
        positions = xp.reshape(flat_positions(xp, full, indices, axis, g.shape), (-1,))
        size = math.prod(full)
        out = xp.reshape(scatter_add(xp, positions, xp.reshape(g, (-1,)), size, dtype), full)
    return sum_to(xp, out, shape)


def _dask_index_add(xp, out, key, g):
    """Dask's item assignment refuses an empty selection and boolean masks (whose selections
    have unknown sizes until computed)."""
    if is_mask(key):
        raise NotImplementedError(
            "the gradient of boolean-mask indexing of a Dask array is not supported: the "
            "selection's size is unknown until computed (NaN chunk sizes); use "
            "where(mask, x, 0), or compute the chunk sizes first"
        )
    if math.prod(g.shape) == 0:
        return out
    axes, key = _positive_steps(key, out.shape)
    if axes:  # Dask's item assignment fails on some negative steps: write into the flip
        out = xp.flip(out, axis=axes)
        out[key] = g
        return xp.flip(out, axis=axes)
    out[key] = g
    return out
