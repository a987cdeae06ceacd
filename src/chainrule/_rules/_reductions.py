"""Reductions over axes (sum, mean, max, min, prod, logsumexp, softmax, log_softmax) and
cumulative sums and products along an axis."""

from __future__ import annotations

import math

from .. import _backend
from .._backend import count, expand_reduced
from ._declare import _along, _is_complex, _nonzero, unary

# ----------------------------------------------------------------------------- reductions
# p = (axes, keepdims, input shape, input layout); axes normalised, sorted, non-negative; the
# layout is the backend's (Dask's chunks), for gradients spread back over the input.


def _spread(xp, g, p):
    """A reduction's gradient `g` back over the reduced axes, shaped like the input."""
    axes, keepdims, shape, layout = p
    if not keepdims:
        g = expand_reduced(xp, g, axes, len(shape))
    return _backend.broadcast_to(xp, g, shape, layout)


unary(
    "sum",
    lambda xp, x, p: xp.sum(x, axis=p[0], keepdims=p[1]),
    lambda xp, g, x, out, p: _spread(xp, g, p),
    jvp="linear",
    complex="own",
)
unary(
    "mean",
    lambda xp, x, p: xp.mean(x, axis=p[0], keepdims=p[1]),
    lambda xp, g, x, out, p: _spread(xp, g / count(p[2], p[0]), p),
    jvp="linear",
    complex="own",
)


def _extreme_vjp(xp, g, x, out, p):
    # Ties share the gradient evenly, as PyTorch's amax/amin.
    axes, keepdims, shape = p[:3]
    if not keepdims:
        out = expand_reduced(xp, out, axes, len(shape))
        g = expand_reduced(xp, g, axes, len(shape))
    hit = xp.astype(x == out, g.dtype)
    return g * hit / xp.sum(hit, axis=axes, keepdims=True)


unary(
    "max",
    lambda xp, x, p: xp.max(x, axis=p[0], keepdims=p[1]),
    _extreme_vjp,
    "x out",
    jvp="reduction",
)
unary(
    "min",
    lambda xp, x, p: xp.min(x, axis=p[0], keepdims=p[1]),
    _extreme_vjp,
    "x out",
    jvp="reduction",
)


def _prod_vjp(xp, g, x, out, p):
    # d prod / d x_i = prod of the others, exact at zeros. With P the product of the nonzero
    # entries of the slice and s, q the sum of its zeros' values and of their squares (0 as
    # values, kept for their derivatives): with no zero it is P / x_i; with one zero z it is
    # x_z * P / x_i = s * P / x_i off z and P at z; with two zeros z, w it is
    # x_z * x_w * P / x_i = (s^2 - q) / 2 * P / x_i off them and (s - x_z) * P at z; with more
    # it is 0. Each branch is the exact polynomial for its zero pattern up to two zeros, so it
    # differentiates again to any order there; with more zeros, to second order.
    axes = p[0]
    g = _spread(xp, g, p)
    nz = x != 0
    safe = xp.where(nz, x, 1.0)
    prod_nz = xp.prod(safe, axis=axes, keepdims=True)
    zeros = xp.sum(xp.astype(~nz, x.dtype), axis=axes, keepdims=True)
    at_zeros = xp.where(nz, 0.0, x)
    s = xp.sum(at_zeros, axis=axes, keepdims=True)
    q = xp.sum(at_zeros * at_zeros, axis=axes, keepdims=True)
    factor = xp.where(zeros == 1, s, xp.where(zeros == 2, (s * s - q) / 2, 0.0))
    factor = xp.where(zeros == 0, 1.0, factor)
    at_zero = xp.where(zeros == 1, 1.0, xp.where(zeros == 2, s - x, 0.0)) * prod_nz
    return g * xp.where(nz, factor * prod_nz / safe, at_zero)


unary(
    "prod",
    lambda xp, x, p: xp.prod(x, axis=p[0], keepdims=p[1]),
    _prod_vjp,
    "x",
    jvp="reduction",
    complex="holomorphic",
)


def _shift(xp, x, axes):
    """The largest value along `axes` (kept), subtracted for exp to stay finite: of the real
    parts for complex values (exp(x - m) has modulus exp(Re x - m))."""
    return xp.max(xp.real(x) if _is_complex(x) else x, axis=axes, keepdims=True)


def _logsumexp_fwd(xp, x, p):
    axes, keepdims, shape = p[:3]
    if x.size == 0:  # the log of an empty sum: -inf (without a divide-by-zero warning)
        return xp.sum(x, axis=axes, keepdims=keepdims) - math.inf
    m = _shift(xp, x, axes)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    s = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return s if keepdims else xp.reshape(s, tuple(n for i, n in enumerate(shape) if i not in axes))


def _logsumexp_vjp(xp, g, x, out, p):
    axes, keepdims, shape = p[:3]
    if not keepdims:
        g = expand_reduced(xp, g, axes, len(shape))
        out = expand_reduced(xp, out, axes, len(shape))
    return g * xp.exp(x - out)


# Holomorphic for complex values (PyTorch's logsumexp takes them; softmax and log_softmax,
# exp(x - logsumexp(x)) and x - logsumexp(x), are too): the principal branch of the log.
unary("logsumexp", _logsumexp_fwd, _logsumexp_vjp, "x out", jvp="reduction", complex="holomorphic")


def _softmax_fwd(xp, x, p):
    if x.size == 0:  # no maximum to subtract; an empty result, as PyTorch
        return xp.zeros_like(x)
    e = xp.exp(x - _shift(xp, x, p))
    return e / xp.sum(e, axis=p, keepdims=True)


def _log_softmax_fwd(xp, x, p):
    if x.size == 0:
        return xp.zeros_like(x)
    s = x - _shift(xp, x, p)
    return s - xp.log(xp.sum(xp.exp(s), axis=p, keepdims=True))


# softmax's Jacobian diag(s) - s s^T is symmetric; log_softmax's, I - 1 s^T, is not.
unary(
    "softmax",
    _softmax_fwd,
    lambda xp, g, x, out, p: (g - xp.sum(g * out, axis=p, keepdims=True)) * out,
    "out",
    jvp="symmetric",
    complex="holomorphic",
)
unary(
    "log_softmax",
    _log_softmax_fwd,
    lambda xp, g, x, out, p: g - xp.sum(g, axis=p, keepdims=True) * xp.exp(out),
    "out",
    jvp=lambda xp, t, x, out, p: t - xp.sum(t * xp.exp(out), axis=p, keepdims=True),
    complex="holomorphic",
)


# ----------------------------------------------------------------------------- cumulative
# p = (axis, include_initial), axis non-negative. With include_initial the output has one more
# place along the axis, first, holding 0 (sum) or 1 (product): the VJPs drop it from g.


def _reverse_cumsum(xp, v, axis):
    """r[i] = sum of v[j] over j >= i along axis."""
    return xp.flip(xp.cumulative_sum(xp.flip(v, axis=axis), axis=axis), axis=axis)


def _cumsum_vjp(xp, g, x, out, p):
    axis, initial = p
    if initial:
        g = g[_along(axis, slice(1, None))]
    return _reverse_cumsum(xp, g, axis)


def _zeros_so_far(xp, x, axis):
    """x == 0, and how many zeros x holds along axis up to each place (that one included)."""
    zero = x == 0
    return zero, xp.cumulative_sum(xp.astype(zero, x.dtype), axis=axis)


def _cumprod_vjp(xp, g, x, out, p):
    # d out_k / d x_j = prod of x_i over i <= k, i != j (for k >= j). Where x_j != 0 the VJP is
    # reverse_cumsum(g * out)_j / x_j. At the first zero z of a slice it is reverse_cumsum(g * P)_z
    # with P the cumulative product of x with x_z set to 1; at later zeros every term holds x_z,
    # so it is 0: at the second zero w it is written x_z * reverse_cumsum(g * Q)_w, with Q the
    # cumulative product of x with x_z and x_w set to 1 (value 0, derivative in x_z exact), so
    # that it differentiates again to any order where a slice holds at most two zeros, and to
    # second order with more (the VJP at the third and later zeros is the constant 0).
    axis, initial = p
    if initial:
        g = g[_along(axis, slice(1, None))]
        out = out[_along(axis, slice(1, None))]
    zero, so_far = _zeros_so_far(xp, x, axis)
    first = xp.logical_and(zero, so_far == 1)
    second = xp.logical_and(zero, so_far == 2)
    off_zero = _reverse_cumsum(xp, g * out, axis) / _nonzero(xp, x)
    at_first = _reverse_cumsum(xp, g * xp.cumulative_prod(xp.where(first, 1.0, x), axis=axis), axis)
    both_ones = xp.where(xp.logical_or(first, second), 1.0, x)
    x_first = xp.sum(xp.where(first, x, 0.0), axis=axis, keepdims=True)
    at_second = _reverse_cumsum(xp, g * xp.cumulative_prod(both_ones, axis=axis), axis) * x_first
    later = xp.where(second, at_second, 0.0)
    return xp.where(zero, xp.where(first, at_first, later), off_zero)


def _cumprod_jvp(xp, t, x, out, p):
    # d out_k = sum over j <= k of t_j * prod of x_i over i <= k, i != j. Before the first zero
    # of a slice that is out_k * cumulative_sum(t / x)_k; from the first zero z on, every term
    # but j = z holds x_z = 0: t_z * P_k, with P the cumulative product of x with x_z set to 1,
    # plus x_z times the others' sum without x_z (value 0; its derivative in x_z keeps second
    # derivatives exact at any zeros): the same formula one zero on, for P and t with t_z = 0.
    axis, initial = p
    if initial:
        out = out[_along(axis, slice(1, None))]
    zero, so_far = _zeros_so_far(xp, x, axis)
    first = xp.logical_and(zero, so_far == 1)
    second = xp.logical_and(zero, so_far == 2)
    before = out * xp.cumulative_sum(t / _nonzero(xp, x), axis=axis)
    t_first = xp.sum(xp.where(first, t, 0.0), axis=axis, keepdims=True)
    x_first = xp.sum(xp.where(first, x, 0.0), axis=axis, keepdims=True)
    past_first = xp.cumulative_prod(xp.where(first, 1.0, x), axis=axis)
    t_rest = xp.where(first, 0.0, t)
    rest_before = xp.cumulative_sum(t_rest / _nonzero(xp, x), axis=axis) * past_first
    t_second = xp.sum(xp.where(second, t, 0.0), axis=axis, keepdims=True)
    both_ones = xp.where(xp.logical_or(first, second), 1.0, x)
    rest_after = t_second * xp.cumulative_prod(both_ones, axis=axis)
    rest = xp.where(so_far == 1, rest_before, rest_after)
    dout = xp.where(so_far == 0, before, t_first * past_first + rest * x_first)
    if initial:
        dout = xp.concat([xp.zeros_like(dout[_along(axis, slice(0, 1))]), dout], axis=axis)
    return dout


unary(
    "cumulative_sum",
    lambda xp, x, p: xp.cumulative_sum(x, axis=p[0], include_initial=p[1]),
    _cumsum_vjp,
    jvp="linear",
    complex="own",
)
unary(
    "cumulative_prod",
    lambda xp, x, p: xp.cumulative_prod(x, axis=p[0], include_initial=p[1]),
    _cumprod_vjp,
    "x out",
    jvp=_cumprod_jvp,
    complex="holomorphic",
)
