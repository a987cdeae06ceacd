"""THE table of derivative rules: every primitive as a forward on raw arrays and its VJPs.

Each rule is written once against a namespace `xp`: the engine calls it with the backend's
namespace and raw arrays for a first-order backward, and with chainrule's namespace and
tensors under create_graph, so every rule differentiates again, to any order.
Signatures: forward `(xp, x, p)`, unary VJP `(xp, g, x, out, p)`, binary VJP
`(xp, g, x, y, out)`, n-ary VJP `(xp, g, xs, out, p, needs)`; `p` holds static parameters."""

from __future__ import annotations

import math

from . import _backend
from ._backend import count, expand_reduced, sum_to
from ._tensor import (
    Rule,
    Tensor,
    binary_primitive,
    binary_save,
    multi_primitive,
    nary_primitive,
    unary_primitive,
    unary_save,
)

RULES: dict[str, Rule] = {}
OPS: dict[str, object] = {}


def _register(rule: Rule, factory):
    if rule.name in RULES:
        raise ValueError(f"duplicate rule {rule.name!r}")
    RULES[rule.name] = rule
    op = factory(rule)
    OPS[rule.name] = op
    return op


def unary(name, fwd, vjp, save=""):
    return _register(Rule(name, "unary", fwd, unary_save(save), vjp=vjp), unary_primitive)


elementwise = unary  # one-input elementwise functions: unary rules without parameters


def binary(name, fwd, dx, dy, *, broadcast=True):
    """`dx`, `dy`: (vjp, what it needs among 'x', 'y', 'out')."""
    rule = Rule(
        name, "binary", fwd, binary_save(dx[1], dy[1]), dx=dx[0], dy=dy[0], elementwise=broadcast
    )
    return _register(rule, binary_primitive)


def nary(name, fwd, vjp, save="", *, broadcast=False):
    rule = Rule(
        name, "nary", fwd, ("inputs" in save, "out" in save), vjp=vjp, elementwise=broadcast
    )
    return _register(rule, nary_primitive)


def multi(name, fwd, vjp, save=""):
    rule = Rule(name, "multi", fwd, ("inputs" in save, "out" in save), vjp=vjp)
    return _register(rule, multi_primitive)


# --------------------------------------------------------------------- elementwise, one input

elementwise("negative", lambda xp, x, p: -x, lambda xp, g, x, out, p: -g)
elementwise("positive", lambda xp, x, p: +x, lambda xp, g, x, out, p: g)
# abs: subgradient 0 at 0 (sign(0) == 0), as PyTorch.
elementwise("abs", lambda xp, x, p: xp.abs(x), lambda xp, g, x, out, p: g * xp.sign(x), "x")
elementwise("square", lambda xp, x, p: x * x, lambda xp, g, x, out, p: g * (2 * x), "x")
elementwise("sqrt", lambda xp, x, p: xp.sqrt(x), lambda xp, g, x, out, p: g / (2 * out), "out")
elementwise("exp", lambda xp, x, p: xp.exp(x), lambda xp, g, x, out, p: g * out, "out")
elementwise("expm1", lambda xp, x, p: xp.expm1(x), lambda xp, g, x, out, p: g * (out + 1), "out")
elementwise("log", lambda xp, x, p: xp.log(x), lambda xp, g, x, out, p: g / x, "x")
elementwise("log1p", lambda xp, x, p: xp.log1p(x), lambda xp, g, x, out, p: g / (x + 1), "x")
elementwise(
    "log2", lambda xp, x, p: xp.log2(x), lambda xp, g, x, out, p: g / (x * math.log(2)), "x"
)
elementwise(
    "log10", lambda xp, x, p: xp.log10(x), lambda xp, g, x, out, p: g / (x * math.log(10)), "x"
)
elementwise("sin", lambda xp, x, p: xp.sin(x), lambda xp, g, x, out, p: g * xp.cos(x), "x")
elementwise("cos", lambda xp, x, p: xp.cos(x), lambda xp, g, x, out, p: -g * xp.sin(x), "x")
elementwise("tan", lambda xp, x, p: xp.tan(x), lambda xp, g, x, out, p: g * (1 + out * out), "out")
elementwise(
    "asin", lambda xp, x, p: xp.asin(x), lambda xp, g, x, out, p: g / xp.sqrt(1 - x * x), "x"
)
elementwise(
    "acos", lambda xp, x, p: xp.acos(x), lambda xp, g, x, out, p: -g / xp.sqrt(1 - x * x), "x"
)
elementwise("atan", lambda xp, x, p: xp.atan(x), lambda xp, g, x, out, p: g / (1 + x * x), "x")
elementwise("sinh", lambda xp, x, p: xp.sinh(x), lambda xp, g, x, out, p: g * xp.cosh(x), "x")
elementwise("cosh", lambda xp, x, p: xp.cosh(x), lambda xp, g, x, out, p: g * xp.sinh(x), "x")
elementwise(
    "tanh", lambda xp, x, p: xp.tanh(x), lambda xp, g, x, out, p: g * (1 - out * out), "out"
)
elementwise(
    "asinh", lambda xp, x, p: xp.asinh(x), lambda xp, g, x, out, p: g / xp.sqrt(x * x + 1), "x"
)
elementwise(
    "acosh", lambda xp, x, p: xp.acosh(x), lambda xp, g, x, out, p: g / xp.sqrt(x * x - 1), "x"
)
elementwise("atanh", lambda xp, x, p: xp.atanh(x), lambda xp, g, x, out, p: g / (1 - x * x), "x")
elementwise(
    "sigmoid",
    lambda xp, x, p: 1 / (1 + xp.exp(-x)),
    lambda xp, g, x, out, p: g * (out * (1 - out)),
    "out",
)
# relu: subgradient 0 at 0, as PyTorch.
elementwise(
    "relu",
    lambda xp, x, p: xp.where(x > 0, x, xp.zeros_like(x)),
    lambda xp, g, x, out, p: xp.where(out > 0, g, 0.0),
    "out",
)


def _zero_vjp(xp, g, x, out, p):
    return xp.zeros_like(g)


# Piecewise-constant functions: zero gradient everywhere, as PyTorch.
elementwise("sign", lambda xp, x, p: xp.sign(x), _zero_vjp)
elementwise("floor", lambda xp, x, p: xp.floor(x), _zero_vjp)
elementwise("ceil", lambda xp, x, p: xp.ceil(x), _zero_vjp)
elementwise("trunc", lambda xp, x, p: xp.trunc(x), _zero_vjp)
elementwise("round", lambda xp, x, p: xp.round(x), _zero_vjp)


# -------------------------------------------------------------------- elementwise, two inputs
# Results are reduced back to each input's shape and dtype in BinaryNode, not here.

binary(
    "add",
    lambda xp, x, y: x + y,
    (lambda xp, g, x, y, out: g, ""),
    (lambda xp, g, x, y, out: g, ""),
)
binary(
    "subtract", lambda xp, x, y: x - y,
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: -g, ""),
)  # fmt: skip
binary(
    "multiply", lambda xp, x, y: x * y,
    (lambda xp, g, x, y, out: g * y, "y"), (lambda xp, g, x, y, out: g * x, "x"),
)  # fmt: skip
binary(
    "divide", lambda xp, x, y: x / y,
    (lambda xp, g, x, y, out: g / y, "y"), (lambda xp, g, x, y, out: -g * x / (y * y), "xy"),
)  # fmt: skip


def _pow_dx(xp, g, x, y, out):
    # y * x**(y-1), written so that y == 0 gives 0 and integral y needs no log. Only x == y == 0
    # (0 * inf) is masked: a mask at every y == 0 would cut d/dy of this (1/x there).
    if y.__class__ in (int, float):
        if y == 0:
            return g * 0.0
        return g * (y * x ** (y - 1))
    return g * xp.where(xp.logical_and(y == 0, x == 0), 0.0, y * x ** (y - 1))


def _pow_dy(xp, g, x, y, out):
    # x**y * log(x), taken as 0 where x == 0 (the limit for y > 0), as PyTorch.
    if x.__class__ in (int, float):
        if x == 0:
            return g * 0.0
        return g * (out * (math.log(x) if x > 0 else math.nan))
    return g * xp.where(x == 0, 0.0, out * xp.log(xp.where(x == 0, 1.0, x)))


binary("pow", lambda xp, x, y: x**y, (_pow_dx, "xy"), (_pow_dy, "x out"))
binary(
    "atan2", lambda xp, x, y: xp.atan2(x, y),
    (lambda xp, g, x, y, out: g * y / (x * x + y * y), "xy"),
    (lambda xp, g, x, y, out: -g * x / (x * x + y * y), "xy"),
)  # fmt: skip


# maximum/minimum: where the inputs tie, the gradient is split evenly between them.
def _pick(xp, g, x, y, sign):
    wins = (x > y) if sign > 0 else (x < y)
    return xp.where(wins, g, xp.where(x == y, g * 0.5, 0.0))


binary(
    "maximum", lambda xp, x, y: xp.maximum(x, y),
    (lambda xp, g, x, y, out: _pick(xp, g, x, y, 1), "xy"),
    (lambda xp, g, x, y, out: _pick(xp, g, y, x, 1), "xy"),
)  # fmt: skip
binary(
    "minimum", lambda xp, x, y: xp.minimum(x, y),
    (lambda xp, g, x, y, out: _pick(xp, g, x, y, -1), "xy"),
    (lambda xp, g, x, y, out: _pick(xp, g, y, x, -1), "xy"),
)  # fmt: skip
# floor_divide: piecewise constant, zero gradient. remainder: x - floor(x / y) * y.
binary(
    "floor_divide", lambda xp, x, y: x // y,
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
binary(
    "remainder", lambda xp, x, y: x % y,
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: -g * xp.floor(x / y), "xy"),
)  # fmt: skip


# ----------------------------------------------------------------------------- reductions
# p = (axes, keepdims, input shape); axes normalised, sorted, non-negative.


def _spread(xp, g, p):
    """A reduction's gradient `g` back over the reduced axes, shaped like the input."""
    axes, keepdims, shape = p
    if not keepdims:
        g = expand_reduced(xp, g, axes, len(shape))
    return xp.broadcast_to(g, shape)


unary(
    "sum",
    lambda xp, x, p: xp.sum(x, axis=p[0], keepdims=p[1]),
    lambda xp, g, x, out, p: _spread(xp, g, p),
)
unary(
    "mean",
    lambda xp, x, p: xp.mean(x, axis=p[0], keepdims=p[1]),
    lambda xp, g, x, out, p: _spread(xp, g / count(p[2], p[0]), p),
)


def _extreme_vjp(xp, g, x, out, p):
    # Ties share the gradient evenly, as PyTorch's amax/amin.
    axes, keepdims, shape = p
    if not keepdims:
        out = expand_reduced(xp, out, axes, len(shape))
        g = expand_reduced(xp, g, axes, len(shape))
    hit = xp.astype(x == out, g.dtype)
    return g * hit / xp.sum(hit, axis=axes, keepdims=True)


unary("max", lambda xp, x, p: xp.max(x, axis=p[0], keepdims=p[1]), _extreme_vjp, "x out")
unary("min", lambda xp, x, p: xp.min(x, axis=p[0], keepdims=p[1]), _extreme_vjp, "x out")


def _prod_vjp(xp, g, x, out, p):
    # d prod / d x_i = prod of the others, exact at zeros: with no zero in the slice it is
    # P / x_i; with one zero z it is x_z * P / x_i off z and P at z (P: product of the
    # nonzero entries); with two or more zeros it is 0. Every branch is the exact polynomial
    # for its zero pattern, so it differentiates again (except at two or more zeros).
    axes = p[0]
    g = _spread(xp, g, p)
    nz = x != 0
    safe = xp.where(nz, x, 1.0)
    prod_nz = xp.prod(safe, axis=axes, keepdims=True)
    zeros = xp.sum(xp.astype(~nz, x.dtype), axis=axes, keepdims=True)
    zero_value = xp.sum(xp.where(nz, 0.0, x), axis=axes, keepdims=True)
    factor = xp.where(zeros == 0, 1.0, xp.where(zeros == 1, zero_value, 0.0))
    at_zero = xp.where(zeros == 1, prod_nz, 0.0)
    return g * xp.where(nz, factor * prod_nz / safe, at_zero)


unary("prod", lambda xp, x, p: xp.prod(x, axis=p[0], keepdims=p[1]), _prod_vjp, "x")


def _logsumexp_fwd(xp, x, p):
    axes, keepdims, shape = p
    if x.size == 0:
        return xp.log(xp.sum(xp.exp(x), axis=axes, keepdims=keepdims))
    m = xp.max(x, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    s = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return s if keepdims else xp.reshape(s, tuple(n for i, n in enumerate(shape) if i not in axes))


def _logsumexp_vjp(xp, g, x, out, p):
    axes, keepdims, shape = p
    if not keepdims:
        g = expand_reduced(xp, g, axes, len(shape))
        out = expand_reduced(xp, out, axes, len(shape))
    return g * xp.exp(x - out)


unary("logsumexp", _logsumexp_fwd, _logsumexp_vjp, "x out")


def _softmax_fwd(xp, x, p):
    e = xp.exp(x - xp.max(x, axis=p, keepdims=True))
    return e / xp.sum(e, axis=p, keepdims=True)


def _log_softmax_fwd(xp, x, p):
    s = x - xp.max(x, axis=p, keepdims=True)
    return s - xp.log(xp.sum(xp.exp(s), axis=p, keepdims=True))


unary(
    "softmax",
    _softmax_fwd,
    lambda xp, g, x, out, p: out * (g - xp.sum(g * out, axis=p, keepdims=True)),
    "out",
)
unary(
    "log_softmax",
    _log_softmax_fwd,
    lambda xp, g, x, out, p: g - xp.exp(out) * xp.sum(g, axis=p, keepdims=True),
    "out",
)


# ----------------------------------------------------------------------------- linear algebra


def _matmul_grads(xp, g, x, y, want_x: bool):
    """matmul's VJP for x (want_x) or y, with 1-D operands promoted as the standard says."""
    x1, y1 = x.ndim == 1, y.ndim == 1
    X = xp.reshape(x, (1, x.shape[0])) if x1 else x
    Y = xp.reshape(y, (y.shape[0], 1)) if y1 else y
    if x1 and y1:
        G = xp.reshape(g, (1, 1))
    elif x1:
        G = xp.expand_dims(g, axis=-2)
    elif y1:
        G = xp.expand_dims(g, axis=-1)
    else:
        G = g
    if want_x:
        r = sum_to(xp, xp.matmul(G, xp.matrix_transpose(Y)), X.shape)
        return xp.reshape(r, x.shape) if x1 else r
    r = sum_to(xp, xp.matmul(xp.matrix_transpose(X), G), Y.shape)
    return xp.reshape(r, y.shape) if y1 else r


binary(
    "matmul", lambda xp, x, y: xp.matmul(x, y),
    (lambda xp, g, x, y, out: _matmul_grads(xp, g, x, y, True), "xy"),
    (lambda xp, g, x, y, out: _matmul_grads(xp, g, x, y, False), "xy"),
    broadcast=False,
)  # fmt: skip


# ----------------------------------------------------------------------------- shape and order
# p carries the input shape where the VJP needs it, so that no input is kept alive for it.

unary(
    "reshape",
    lambda xp, x, p: xp.reshape(x, p[0]),
    lambda xp, g, x, out, p: xp.reshape(g, p[1]),
)
unary(
    "permute_dims",
    lambda xp, x, p: xp.permute_dims(x, p),
    lambda xp, g, x, out, p: xp.permute_dims(g, tuple(sorted(range(len(p)), key=p.__getitem__))),
)
unary(
    "broadcast_to",
    lambda xp, x, p: xp.broadcast_to(x, p[0]),
    lambda xp, g, x, out, p: sum_to(xp, g, p[1]),
)
unary(
    "astype",
    lambda xp, x, p: xp.astype(x, p[0]),
    lambda xp, g, x, out, p: xp.astype(g, p[1]),
)
unary(
    "flip",
    lambda xp, x, p: xp.flip(x, axis=p),
    lambda xp, g, x, out, p: xp.flip(g, axis=p),
)


def _concat_vjp(xp, g, xs, out, p, needs):
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
)


def _stack_vjp(xp, g, xs, out, p, needs):
    lead = (slice(None),) * p
    return [g[lead + (i, ...)] if need else None for i, need in enumerate(needs)]


nary("stack", lambda xp, xs, p: xp.stack(xs, axis=p), _stack_vjp)


def _where_vjp(xp, g, xs, out, p, needs):
    c = xs[0]
    return [
        None,
        xp.where(c, g, 0.0) if needs[1] else None,
        xp.where(c, 0.0, g) if needs[2] else None,
    ]


nary("where", lambda xp, xs, p: xp.where(*xs), _where_vjp, "inputs", broadcast=True)


# ----------------------------------------------------------------------------- indexing
# getitem and index_add are each other's VJP (both linear); so are take and take_add.
# p = (key or indices, axis, input shape, input dtype); keys hold raw arrays.


def _index_add(xp, g, p):
    if g.__class__ is Tensor:
        return index_add(g, p)
    return _backend.index_add(xp, g, p)


def _getitem(xp, g, p):
    if g.__class__ is Tensor:
        return getitem(g, p)
    return g[p[0]]


getitem = unary("getitem", lambda xp, x, p: x[p[0]], lambda xp, g, x, out, p: _index_add(xp, g, p))
index_add = unary(
    "index_add",
    lambda xp, g, p: _backend.index_add(xp, g, p),
    lambda xp, g, x, out, p: _getitem(xp, g, p),
)


def _take_add(xp, g, p):
    if g.__class__ is Tensor:
        return take_add(g, p)
    return _backend.take_add(xp, g, p)


def _take(xp, g, p):
    if g.__class__ is Tensor:
        return take(g, p)
    return xp.take(g, p[0], axis=p[1])


take = unary(
    "take",
    lambda xp, x, p: xp.take(x, p[0], axis=p[1]),
    lambda xp, g, x, out, p: _take_add(xp, g, p),
)
take_add = unary(
    "take_add",
    lambda xp, g, p: _backend.take_add(xp, g, p),
    lambda xp, g, x, out, p: _take(xp, g, p),
)
