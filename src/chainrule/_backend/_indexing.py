"""Indexing where the standard leaves a gap that each library fills its own way, or where a
library departs from NumPy's answer: reads (PyTorch's slices with negative steps and its order of
advanced axes, Dask's one-element index arrays), writes (JAX's immutable arrays), scatter-add
and take_along_axis (Dask lacks it), bounds (JAX clamps, Dask reads another element). Library
names appear here, not in the rules."""

from __future__ import annotations

import math
from importlib import import_module

import numpy as np

from ._dtypes import dtype_kind
from ._namespaces import library, namespace


def is_basic(key) -> bool:
    """Whether an index key is basic (ints, slices, None, Ellipsis): it selects a view."""
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, slice)) for k in keys)


def is_mask(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    arrays = [k for k in keys if not (k is None or k is Ellipsis or isinstance(k, (int, slice)))]
    return len(arrays) == 1 and dtype_kind(arrays[0].dtype) == "b"


def unstack(xp, a, axis: int) -> tuple:
    """The slices of `a` along `axis`: views of its memory, 0-d ones too (NumPy's unstack of a
    vector gives scalar copies, which writes into `a` would not reach)."""
    if a.ndim == 1 and library(xp) == "numpy":
        return tuple([a[i, ...] for i in range(a.shape[0])])
    return xp.unstack(a, axis=axis)


def getitem(xp, a, key):
    """a[key]; PyTorch's slices take no negative step: those axes are flipped first. Dask
    gives a selection by an integer array of one element the indexed array's shape (its
    values are right): such an array is doubled, and the result cut back to one."""
    lib = library(xp)
    if lib == "vmap":  # `a` or the key's arrays may be batched
        return xp.vmap_getitem(a, key)
    if lib == "torch":
        axes, key = _positive_steps(key, a.shape)
        if axes:
            a = xp.flip(a, axis=axes)
        moved = _torch_order(key, a.ndim)
        if moved is not None:
            at, n = moved
            return xp.moveaxis(a[key], tuple(range(at, at + n)), tuple(range(n)))
    elif lib == "numpy" or lib == "array_api_strict":
        if key.__class__ is int or key.__class__ is tuple and _all_ints(key):
            # One element by integers: a 0-d view, as PyTorch's (NumPy's is a scalar copy).
            return a[(key if key.__class__ is tuple else (key,)) + (Ellipsis,)]
    elif lib == "jax":
        key = _bounded_key(a.shape, key)
    if lib == "dask":
        key = _bounded_key(a.shape, key, lazy=True)
        keys = key if isinstance(key, tuple) else (key,)
        if any(k.__class__ is bool for k in keys):
            raise NotImplementedError(
                "a Python bool in an index key (NumPy's new axis of one element or none) is "
                "not supported on Dask arrays: Dask reads it as the integer 0 or 1"
            )
        for i, k in enumerate(keys):
            if _one_index(k):
                doubled = keys[:i] + (xp.concat([k, k]),) + keys[i + 1 :]
                at = _result_axis(keys[:i], a.ndim - sum(_consumed(e) for e in keys))
                return a[doubled][(slice(None),) * at + (slice(0, 1),)]
    return a[key]


def _torch_order(key, ndim: int) -> tuple[int, int] | None:
    """Where PyTorch's indexing orders the result's axes otherwise than NumPy's: (at, n), the
    n axes of the key's index arrays left at `at` that NumPy puts first; None where the two
    agree. NumPy counts integers beside index arrays as advanced indices, whose axes go first
    when a slice, None or Ellipsis separates any two; PyTorch selects by integers first, so
    only a separation between the arrays themselves moves their axes."""
    keys = key if isinstance(key, tuple) else (key,)
    arrays, advanced = [], []
    for i, k in enumerate(keys):
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        advanced.append(i)
        # A 0-d integer array selects, as an integer; a Python bool is a 0-d mask (an axis of
        # one or no element), which PyTorch leaves where it stands.
        if k.__class__ is bool or not isinstance(k, int) and (k.ndim or _is_mask(k)):
            arrays.append(i)
    if not arrays or advanced[-1] - advanced[0] + 1 == len(advanced):
        return None  # no array, or NumPy's advanced indices side by side
    between = keys[arrays[0] : arrays[-1] + 1]
    if any(k is None or k is Ellipsis or isinstance(k, slice) for k in between):
        return None  # the arrays apart: both put their axes first
    spanned = ndim - sum(0 if k is None or k is Ellipsis else _consumed(k) for k in keys)
    at = 0
    for k in keys[: arrays[0]]:
        if k is Ellipsis:
            at += spanned
        elif k is None or isinstance(k, slice):
            at += 1
    kinds = [keys[i] for i in arrays]
    n = max(1 if k.__class__ is bool or _is_mask(k) else k.ndim for k in kinds)
    return at, n


def _all_ints(keys: tuple) -> bool:
    for k in keys:
        if k.__class__ is not int:
            return False
    return True


def take(xp, x, indices, axis: int):
    """xp.take (for Dask, a one-element `indices` as in getitem; for PyTorch and JAX, bounds
    checked as NumPy checks them)."""
    lib = library(xp)
    if lib == "dask":
        indices = _checked_when_computed(indices, 0, x.shape[axis], axis)
    if lib == "dask" and _one_index(indices):
        cut = (slice(None),) * axis + (slice(0, 1),)
        return xp.take(x, xp.concat([indices, indices]), axis=axis)[cut]
    if lib == "torch" or lib == "jax":
        _check_bounds(indices, x.shape[axis], axis)
    return xp.take(x, indices, axis=axis)


def _check_bounds(indices, size: int, axis: int, low: int = 0) -> None:
    """NumPy's IndexError for the first of `indices` out of [low, size) (non-negative ones
    where `low` is 0): torch.take_along_dim reads past the axis without a word, index_select
    raises another error, and JAX's take and take_along_axis fill with NaN."""
    bad = (indices < low) | (indices >= size)
    if bool(namespace(bad).any(bad)):
        first = int(indices[bad][0]) if indices.ndim else int(indices)
        raise IndexError(f"index {first} is out of bounds for axis {axis} with size {size}")


def check_gather_index(indices, size: int, axis: int) -> None:
    """PyTorch's gather takes indices in [0, size), no negative ones (take_along_axis counts
    those from the end): NumPy's IndexError for the first outside, where its values can be
    read: not Dask's before they are computed (take_along_axis checks those then, from 0).
    Under vmap the caller passes every sample's indices (a plain array)."""
    if library(namespace(indices)) != "dask":
        _check_bounds(indices, size, axis)


def _bounded_key(shape, key, lazy: bool = False):
    """`key`, with NumPy's IndexError for an integer (or integer array) out of its axis's
    [-size, size): JAX clamps such an index without a word, PyTorch's writes stop part way
    through, and Dask's reads take another element. With `lazy` (Dask), integer arrays are
    checked when computed: the key returned holds checked arrays."""
    keys = key if isinstance(key, tuple) else (key,)
    out = list(keys)
    axis = 0
    for i, k in enumerate(keys):
        if k is Ellipsis:  # the axes after it are counted from the end
            axis = len(shape) - sum(_consumed(e) for e in keys[i + 1 :])
        elif k is None or k.__class__ is bool:
            continue
        elif not isinstance(k, (int, slice)) and dtype_kind(k.dtype) == "b":
            axis += k.ndim  # a mask spans its own axes (none, 0-d): no index to bound
            continue
        elif not isinstance(shape[axis], int):
            pass  # Dask's axis of unknown length (after a mask): checked by Dask when computed
        elif isinstance(k, int):
            if not -shape[axis] <= k < shape[axis]:
                raise IndexError(
                    f"index {k} is out of bounds for axis {axis} with size {shape[axis]}"
                )
        elif not isinstance(k, slice) and dtype_kind(k.dtype) in "iu":
            if lazy and hasattr(k, "map_blocks"):
                out[i] = _checked_when_computed(k, -shape[axis], shape[axis], axis)
            else:
                _check_bounds(k, shape[axis], axis, low=-shape[axis])
            axis += 1  # an integer array, of any shape, indexes one axis
            continue
        axis += _consumed(k)
    return tuple(out) if isinstance(key, tuple) else out[0]


def _checked_when_computed(indices, low: int, size: int, axis: int):
    """Dask's `indices`, checked by _check_bounds as each block is computed (the values are
    unknown before): Dask itself reads another element for some indices out of bounds."""
    if not isinstance(size, int):  # an axis of unknown length
        return indices
    return indices.map_blocks(_in_bounds_block, low, size, axis, dtype=indices.dtype)


def _in_bounds_block(k, low: int, size: int, axis: int):
    """A block of Dask's index array, checked as _check_bounds checks when computed."""
    _check_bounds(k, size, axis, low=low)
    return k


def _one_index(k) -> bool:
    """Whether key entry k is an integer array of one element, in one dimension."""
    return (
        getattr(k, "ndim", 0) == 1
        and k.shape[0] == 1
        and dtype_kind(k.dtype) in "iu"
        and not isinstance(k, np.ndarray)
    )


def _is_mask(k) -> bool:
    """Whether key entry k, an array, is a boolean mask."""
    return dtype_kind(k.dtype) == "b"


def _consumed(k) -> int:
    """The axes of the indexed array that key entry k uses (Ellipsis counted apart): an
    integer array of any rank uses one, a mask its rank, a Python bool (a 0-d mask) none."""
    if k is None or k is Ellipsis or k.__class__ is bool:
        return 0
    if isinstance(k, (int, slice)):
        return 1
    return k.ndim if _is_mask(k) else 1


def _result_axis(before, spanned: int) -> int:
    """Where the axis of an integer array key lands, after the key entries `before` it (an
    Ellipsis spans `spanned` axes)."""
    at = 0
    for k in before:
        if k is Ellipsis:
            at += spanned
        elif k is None or isinstance(k, slice):
            at += 1
    return at


def assign(xp, a, key, v):
    """`a` with a[key] = v: `a` itself, written in place, or a new array where arrays are
    immutable (JAX) or the write can't be made in place (PyTorch's negative steps)."""
    lib = library(xp)
    if lib == "vmap":
        return xp.vmap_assign(a, key, v)
    if lib == "jax":
        key = _bounded_key(a.shape, key)
        if getattr(v, "dtype", a.dtype) != a.dtype:
            v = xp.astype(v, a.dtype)  # cast as NumPy's assignment does (JAX warns)
        nd = getattr(v, "ndim", 0)
        if nd and nd > a[key].ndim:
            # NumPy's and PyTorch's rule, which JAX lacks: a value's extra leading axes of
            # length 1 are dropped.
            v = xp.reshape(v, v.shape[nd - a[key].ndim :])
        return a.at[key].set(v)
    if lib == "torch":
        key = _bounded_key(a.shape, key)
        if getattr(v, "dtype", a.dtype) != a.dtype:
            v = xp.astype(v, a.dtype)  # cast as NumPy's assignment does (PyTorch refuses)
        axes, key = _positive_steps(key, a.shape)
        moved = _torch_order(key, a.ndim)
        if moved is not None and getattr(v, "ndim", 0):
            v = _torch_value(xp, a, key, v, *moved)
        if axes:
            flipped = xp.flip(a, axis=axes)
            flipped[key] = v
            return xp.flip(flipped, axis=axes)
    if lib == "dask":
        key, v = _dask_mask_write(xp, a, _bounded_key(a.shape, key, lazy=True), v)
    a[key] = v
    return a


def _dask_mask_write(xp, a, key, v):
    """(key, v) for Dask's a[key] = v. Dask writes through a mask of a's whole shape only
    when the mask is the key itself (not a 1-tuple of it), with a value that broadcasts against
    a (a value of one element: made 0-d, as NumPy takes it)."""
    keys = key if isinstance(key, tuple) else (key,)
    if (
        len(keys) == 1
        and getattr(keys[0], "ndim", 0) == a.ndim
        and a.ndim
        and dtype_kind(keys[0].dtype) == "b"
    ):
        if getattr(v, "ndim", 0) and math.prod(v.shape) == 1:
            v = xp.reshape(v, ())
        return keys[0], v
    return key, v


def _torch_value(xp, a, key, v, at: int, n: int):
    """Value v for a[key] in NumPy's order of axes (see _torch_order) in PyTorch's."""
    shape = tuple(a[key].shape)  # PyTorch's order
    shape = shape[at : at + n] + shape[:at] + shape[at + n :]
    if v.ndim > len(shape):  # leading axes of 1, which NumPy drops
        v = xp.reshape(v, tuple(v.shape[v.ndim - len(shape) :]))
    v = xp.broadcast_to(v, shape)
    return xp.moveaxis(v, tuple(range(n)), tuple(range(at, at + n)))


def write_into(xp, a, key, v) -> None:
    """a[key] = v in a's own memory, which its views see (a library whose assignment made a
    new array, as PyTorch's with a negative step: copied back)."""
    out = assign(xp, a, key, v)
    if out is not a:
        a[...] = out


def _positive_steps(key, shape):
    """(axes, key'): a[key] == flip(a, axes)[key'] with no negative step in key'."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in keys):
        return (), key
    used = sum(0 if k is None or k is Ellipsis else getattr(k, "ndim", 1) or 1 for k in keys)
    axes, out, d = [], [], 0
    for k in keys:
        if k is Ellipsis:
            d += len(shape) - used
        elif isinstance(k, slice) and k.step is not None and k.step < 0:
            n = shape[d]
            picked = range(*k.indices(n))
            if len(picked):
                k = slice(n - 1 - picked[0], n - picked[-1], -k.step)
            else:
                k = slice(0, 0)
            axes.append(d)
        if k is not None and k is not Ellipsis:
            d += getattr(k, "ndim", 1) or 1
        out.append(k)
    return tuple(axes), tuple(out)


def scatter_add(xp, positions, values, size: int, dtype):
    """A 1-D array of `size` zeros of `dtype` with `values` added at `positions` (1-D integer
    arrays; repeated positions add up), by the library's own scatter-add."""
    lib = library(xp)
    if lib == "vmap":
        return xp.vmap_scatter_add(positions, values, size, dtype)
    if lib == "numpy":
        out = np.zeros(size, dtype=dtype)
        np.add.at(out, positions, values)
        return out
    if lib == "torch":
        return xp.zeros(size, dtype=dtype, device=positions.device).index_add_(
            0, positions, xp.astype(values, dtype)
        )
    if lib == "jax":
        return xp.zeros(size, dtype=dtype).at[positions].add(values)
    if lib == "cupy":
        out = xp.zeros(size, dtype=dtype)
        import_module("cupyx").scatter_add(out, positions, values)
        return out
    if lib == "dask":
        if size == 0:  # bincount's length would be unknown (NaN) to Dask
            return xp.zeros(0, dtype=dtype)
        bincount = import_module("dask.array").bincount
        values = values.rechunk(positions.chunks)  # its weights must be chunked as positions
        if dtype_kind(values.dtype) == "c":  # bincount weighs by real numbers only
            sums = bincount(positions, weights=xp.real(values), minlength=size) + 1j * bincount(
                positions, weights=xp.imag(values), minlength=size
            )
        else:
            sums = bincount(positions, weights=values, minlength=size)
        return xp.astype(sums, dtype)
    # Generic: a one-hot matrix (memory grows as size x number of values).
    onehot = xp.astype(xp.arange(size)[:, None] == positions[None, :], dtype)
    return xp.matmul(onehot, values)


def take_along_axis(xp, x, indices, axis: int):
    """xp.take_along_axis (for PyTorch and JAX, bounds checked as NumPy checks them), or for Dask
    (which lacks it) a gather of flat positions."""
    lib = library(xp)
    if lib == "torch" or lib == "jax":
        _check_bounds(indices, x.shape[axis], axis)
    if lib != "dask":
        return xp.take_along_axis(x, indices, axis=axis)
    indices = _checked_when_computed(indices, 0, x.shape[axis], axis)
    shape = tuple(max(a, b) for a, b in zip(x.shape, indices.shape))
    shape = shape[:axis] + (indices.shape[axis],) + shape[axis + 1 :]
    if math.prod(shape) == 0:  # nothing picked (an empty batch): Dask can't flatten an empty x
        return xp.zeros(shape, dtype=x.dtype)
    flat = xp.reshape(x, (-1,))
    return xp.reshape(
        xp.take(flat, xp.reshape(flat_positions(xp, x.shape, indices, axis, shape), (-1,))), shape
    )


def flat_positions(xp, shape, indices, axis, out_shape):
    """The flat position in an array of `shape` of each element that take_along_axis picks."""
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    pos = xp.broadcast_to(indices * strides[axis], out_shape)
    for d, n in enumerate(out_shape):
        if d != axis:
            step = xp.reshape(
                xp.arange(n) * (strides[d] if shape[d] != 1 else 0),
                (1,) * d + (n,) + (1,) * (len(out_shape) - d - 1),
            )
            pos = pos + step
    return pos
