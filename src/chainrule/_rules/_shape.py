"""Rules that move values without arithmetic on them: shape and order (reshape, permute_dims,
broadcast_to, concat, stack, flip, where, ...), indexing (getitem and index_add, take and
take_add), writes (setitem), repeat, roll, tile, unstack, take_along_axis, and vmap's
boundary (batch, unbatch). All are linear: each is its own JVP."""

from __future__ import annotations

import math

from .. import _backend, _batching
from .._backend import sum_to
from .._node import ZERO
from ._declare import _is_complex, _zero_like, crossing, linear_pair, nary, unary

# ----------------------------------------------------------------------------- shape and order
# p carries the input shape where the VJP needs it, so that no input is kept alive for it.


# Dask refuses to reshape an array with no element (its reshape merges or splits chunks: an
# empty batch): such an array goes to _backend.reshape_empty once the library has refused it,
# so a reshape reads nothing more than before (the try costs nothing until it raises).
def _reshape_fwd(xp, x, p):
    try:
        return xp.reshape(x, p[0])
    except Exception:
        if math.prod(x.shape) != 0:
            raise
        return _backend.reshape_empty(xp, x, p[0])


def _reshape_vjp(xp, g, x, out, p):
    try:
        return xp.reshape(g, p[1])
    except Exception:
        if math.prod(g.shape) != 0:
            raise
        return _backend.reshape_empty(xp, g, p[1])


unary(
    "reshape",
    _reshape_fwd,
    _reshape_vjp,
    jvp="linear",
    view=True,
    complex="own",
)
unary(
    "permute_dims",
    lambda xp, x, p: xp.permute_dims(x, p),
    lambda xp, g, x, out, p: xp.permute_dims(g, tuple(sorted(range(len(p)), key=p.__getitem__))),
    jvp="linear",
    view=True,
    complex="own",
)
unary(
    "broadcast_to",
    lambda xp, x, p: xp.broadcast_to(x, p[0]),
    lambda xp, g, x, out, p: sum_to(xp, g, p[1]),
    jvp="linear",
    view=True,
    complex="own",
)


def _astype(xp, x, dtype):
    """x cast to dtype; a complex x to a real dtype by its real part (NumPy warns)."""
    if _backend.dtype_kind(dtype) != "c" and _is_complex(x):
        x = xp.real(x)
    return xp.astype(x, dtype)


# p = (target dtype, source dtype). Between real and complex dtypes the cast keeps the real
# part, and the gradient of a real source is the real part of g.
unary(
    "astype",
    lambda xp, x, p: _astype(xp, x, p[0]),
    lambda xp, g, x, out, p: _astype(xp, g, p[1]),
    jvp="linear",
    complex="own",
    dtype_given=True,
)
# flip copies, as PyTorch's (NumPy's is a view; the Array API allows either): code written for
# the Array API writes into its result (scikit-learn's PCA), which must leave the input alone.
unary(
    "flip",
    lambda xp, x, p: xp.asarray(xp.flip(x, axis=p), copy=True),
    lambda xp, g, x, out, p: xp.flip(g, axis=p),
    jvp="linear",
    complex="own",
)


# Variadic rules: one save entry for every input.


def _concat_vjp(xp, g, s, p, needs):
    axis, sizes = p
    grads = []
    start = 0
    lead = (slice(None),) * axis
    for n, need in zip(sizes, needs):
        grads.append(g[lead + (slice(start, start + n), ...)] if need else None)
        start += n
    return grads


nary(
    "concat",
    lambda xp, xs, p: xp.concat(xs, axis=p[0]),
    _concat_vjp,
    ((),),
    jvp="linear",
    variadic=True,
    complex="own",
)


def _stack_vjp(xp, g, s, p, needs):
    lead = (slice(None),) * p
    return [g[lead + (i, ...)] if need else None for i, need in enumerate(needs)]


nary(
    "stack", lambda xp, xs, p: xp.stack(xs, axis=p), _stack_vjp, ((),), jvp="linear",
    variadic=True, complex="own",
)  # fmt: skip


def _where_vjp(xp, g, s, p, needs):
    c = s[0]
    return (
        None,
        xp.where(c, g, 0.0) if needs[1] else None,
        xp.where(c, 0.0, g) if needs[2] else None,
    )


def _where_jvp(xp, ts, xs, outs, p):
    # Linear in x1 and x2, with the condition as it is (not a tangent).
    _, t1, t2 = ts
    c, x1, x2 = xs
    return xp.where(
        c, _zero_like(xp, x1) if t1 is None else t1, _zero_like(xp, x2) if t2 is None else t2
    )


# where(condition, x1, x2): the condition gets no gradient; x1 and x2 read it.
nary(
    "where",
    lambda xp, xs, p: xp.where(*xs),
    _where_vjp,
    ((), (0,), (0,)),
    jvp=_where_jvp,
    broadcast=True,
    complex="own",
)


# ----------------------------------------------------------------------------- indexing
# getitem and index_add are each other's VJP (both linear); so are take and take_add.
# p = (key or indices, axis, input shape, input dtype); keys hold raw arrays.


# A basic key (ints, slices, None, Ellipsis) selects a view, as PyTorch's; other keys copy.
linear_pair(
    "getitem",
    lambda xp, x, p: _backend.getitem(xp, x, p[0]),
    "index_add",
    _backend.index_add,
    view=lambda p: _backend.is_basic(p[0]),
)
linear_pair(
    "take", lambda xp, x, p: _backend.take(xp, x, p[0], p[1]), "take_add", _backend.take_add
)


# ----------------------------------------------------------------------------- writes
# setitem: out = x with out[key] = v (v broadcast to x[key]). p = (key, v's shape, whether
# the key covers every element of x).


def _setitem_fwd(xp, xs, p):
    x, v = xs
    return _backend.assign(xp, xp.asarray(x, copy=True), p[0], v)


def _setitem_vjp(xp, g, s, p, needs):
    key, vshape, covered = p
    # A write over every element leaves x a gradient known to be zero (PyTorch: zeros): the
    # values x held no longer matter, and a NaN among them (scikit-learn overwrites a 0/0 so)
    # must not reach the gradient through 0 * NaN further back.
    gx = None
    if needs[0]:
        gx = ZERO if covered else xp.where(xp.outside(g, key), g, 0.0)
    gv = None
    if needs[1]:
        gv = _backend.getitem(xp, g, key)
        if not (_backend.is_basic(key) or _backend.is_mask(key)):
            # Index arrays may name a position twice: only the element of v left there (the
            # last written, as NumPy) gets its gradient; those overwritten get none.
            gv = xp.where(xp.written_last(g, key, gv.shape), gv, 0.0)
        gv = sum_to(xp, gv, vshape)
    return (gx, gv)


nary("setitem", _setitem_fwd, _setitem_vjp, ((), ()), jvp="linear", complex="own")


# ----------------------------------------------------------------------------- repeat, roll, tile
# p carries what the VJP needs (counts, shifts, shapes) precomputed by the public function.


def _repeat_vjp(xp, g, x, out, p):
    # Each input element fills `repeats` consecutive places along the axis: split that axis
    # into (input size, repeats) and sum the copies.
    return xp.sum(xp.reshape(g, p[2]), axis=p[1] + 1)


unary(
    "repeat", lambda xp, x, p: xp.repeat(x, p[0], axis=p[1]), _repeat_vjp, jvp="linear",
    complex="own",
)  # fmt: skip
# p = (shift, axis, the opposite shift): a roll is undone by rolling back.
unary(
    "roll",
    lambda xp, x, p: xp.roll(x, p[0], axis=p[1]),
    lambda xp, g, x, out, p: xp.roll(g, p[2], axis=p[1]),
    jvp="linear",
    complex="own",
)


def _tile_vjp(xp, g, x, out, p):
    # Along each axis the output is `r` blocks of the input: split every axis into
    # (r, size), sum over the block axes, drop the leading axes tiling added.
    split, blocks, shape = p[1:]
    return xp.reshape(xp.sum(xp.reshape(g, split), axis=blocks), shape)


unary("tile", lambda xp, x, p: xp.tile(x, p[0]), _tile_vjp, jvp="linear", complex="own")


# ----------------------------------------------------------------------------- unstack


def _unstack_vjp(xp, g, s, p, needs):
    # Outputs that received no gradient contribute zeros (all outputs share shape and dtype).
    zero = xp.zeros_like(next(gi for gi in g if gi is not None))
    return (xp.stack([zero if gi is None else gi for gi in g], axis=p),)


nary(
    "unstack",
    lambda xp, xs, p: _backend.unstack(xp, xs[0], p),
    _unstack_vjp,
    ((),),
    jvp="linear",
    multi=True,
    view=True,
    complex="own",
)


# ----------------------------------------------------------------------------- take_along_axis
# take_along_axis and take_along_add are each other's VJP (both linear).
# p = (indices, axis, input shape, input dtype): indices non-negative, of the input's rank and
# broadcastable with it off the axis; the output has the broadcast shape.


linear_pair(
    "take_along_axis",
    lambda xp, x, p: _backend.take_along_axis(xp, x, p[0], p[1]),
    "take_along_add",
    _backend.take_along_add,
)


# ----------------------------------------------------------------------------- vmap's boundary
# batch: an array of the library below a vmap level as a Batched array of that level (see
# _batching), p = (level, batch size, axis): `axis` becomes the batch axis, or with None the
# value is the same for every sample. unbatch, its adjoint: the batch axis back at `axis`, or
# with None the sum over the batch. Each is the other's VJP.

crossing("batch", lambda xp, x, p: _batching.batch(x, *p), "unbatch")
crossing("unbatch", lambda xp, x, p: _batching.unbatch(x, *p), "batch")
