"""Elementwise rules: one input (negative, exp, sin, tanh, sigmoid, relu, rounding, ...; the
complex parts real, imag, conj, angle) and two inputs with broadcasting (add, multiply,
divide, pow, atan2, hypot, logaddexp, maximum, ...)."""

from __future__ import annotations

import cmath
import math

from .. import _special_cases
from ._declare import _is_complex, _nonzero, binary, elementwise, unary

# --------------------------------------------------------------------- elementwise, one input

elementwise("negative", lambda xp, x, p: -x, lambda xp, g, x, out, p: -g, complex="own")
elementwise("positive", lambda xp, x, p: +x, lambda xp, g, x, out, p: g, complex="own")
# copy: a new array of x's values (asarray(copy=True)), recorded as PyTorch's clone.
elementwise(
    "copy", lambda xp, x, p: xp.asarray(x, copy=True), lambda xp, g, x, out, p: g, complex="own"
)


def _sgn(xp, x):
    """x / |x| (0 at 0) for complex x, the sign of a real x."""
    if not _is_complex(x):
        return xp.sign(x)
    r = xp.abs(x)
    return xp.where(r == 0, 0.0, x / _nonzero(xp, r))


def _abs_jvp(xp, t, x, out, p):
    # For complex z: d|z| = Re(conj(sgn z) dz).
    if _is_complex(x):
        return xp.real(xp.conj(_sgn(xp, x)) * t)
    return t * xp.sign(x)


# abs: subgradient 0 at 0 (sign(0) == 0), as PyTorch; for complex z the gradient of |z| is
# g sgn(z) = g z / |z| (0 at 0).
unary(
    "abs",
    lambda xp, x, p: xp.abs(x),
    lambda xp, g, x, out, p: g * _sgn(xp, x),
    "x",
    jvp=_abs_jvp,
    complex="own",
)
elementwise("square", lambda xp, x, p: x * x, lambda xp, g, x, out, p: g * (2 * x), "x")
elementwise("sqrt", lambda xp, x, p: xp.sqrt(x), lambda xp, g, x, out, p: g / (2 * out), "out")
elementwise("exp", lambda xp, x, p: xp.exp(x), lambda xp, g, x, out, p: g * out, "out")
elementwise(
    "expm1",
    lambda xp, x, p: _special_cases.expm1(xp, x),
    lambda xp, g, x, out, p: g * (out + 1),
    "out",
)
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
    "tanh",
    lambda xp, x, p: _special_cases.tanh(xp, x),
    lambda xp, g, x, out, p: xp.tanh_backward(g, out),
    "out",
)
elementwise(
    "asinh", lambda xp, x, p: xp.asinh(x), lambda xp, g, x, out, p: g / xp.sqrt(x * x + 1), "x"
)


def _acosh_vjp(xp, g, x, out, p):
    # For complex z, sqrt(z - 1) sqrt(z + 1): sqrt(z^2 - 1) takes the other branch in half
    # of the plane.
    if _is_complex(x):
        return g / (xp.sqrt(x - 1) * xp.sqrt(x + 1))
    return g / xp.sqrt(x * x - 1)


elementwise("acosh", lambda xp, x, p: xp.acosh(x), _acosh_vjp, "x")
elementwise("atanh", lambda xp, x, p: xp.atanh(x), lambda xp, g, x, out, p: g / (1 - x * x), "x")
elementwise(
    "sigmoid",
    lambda xp, x, p: 1 / (1 + xp.exp(-x)),
    lambda xp, g, x, out, p: xp.sigmoid_backward(g, out),
    "out",
)
# relu: subgradient 0 at 0, as PyTorch, and 1 at a NaN x (PyTorch zeroes the gradient where
# x <= 0, which a NaN is not): out = max(x, 0) is 0 exactly there, so the mask is out != 0.
# The VJP multiplies by the 0/1 mask (a fifth of the time of where() in NumPy); so a NaN in
# g where x <= 0 stays NaN (PyTorch's is 0).
elementwise(
    "relu",
    lambda xp, x, p: xp.maximum(x, 0.0),
    lambda xp, g, x, out, p: g * xp.astype(out != 0, g.dtype),
    "out",
    complex=None,
)
elementwise("reciprocal", lambda xp, x, p: 1 / x, lambda xp, g, x, out, p: -g * (out * out), "out")


def _zero_vjp(xp, g, x, out, p):
    return xp.zeros_like(g)


def _sign_vjp(xp, g, x, out, p):
    # Real x: piecewise constant. Complex z = r s (s = z / r): ds = (dz - s Re(conj(s) dz)) / r,
    # whose adjoint gives (g - s Re(conj(s) g)) / r; 0 at z == 0, as PyTorch.
    if not _is_complex(x):
        return xp.zeros_like(g)
    r = xp.abs(x)
    return xp.where(r == 0, 0.0, (g - out * xp.real(xp.conj(out) * g)) / _nonzero(xp, r))


def _sign_jvp(xp, t, x, out, p):
    if not _is_complex(x):
        return xp.zeros_like(t)
    r = xp.abs(x)
    return xp.where(r == 0, 0.0, (t - out * xp.real(xp.conj(out) * t)) / _nonzero(xp, r))


# Piecewise-constant functions: zero gradient everywhere, as PyTorch (round of a complex
# value rounds both parts). The sign of a complex z is z / |z|, smooth away from 0.
unary("sign", lambda xp, x, p: xp.sign(x), _sign_vjp, "x out", jvp=_sign_jvp, complex="own")
elementwise("floor", lambda xp, x, p: xp.floor(x), _zero_vjp, complex=None)
elementwise("ceil", lambda xp, x, p: xp.ceil(x), _zero_vjp, complex=None)
elementwise("trunc", lambda xp, x, p: xp.trunc(x), _zero_vjp, complex=None)
elementwise("round", lambda xp, x, p: xp.round(x), _zero_vjp, complex="own")


# ----------------------------------------------------------------------------- complex parts
# Between complex and real values (PyTorch's convention: the gradient of a real loss by
# z = x + iy is dL/dx + i dL/dy). p = the complex dtype of the input (raw), for gradients
# sent back from a real result.


def _as_complex(xp, g, dtype):
    return g if _is_complex(g) else xp.astype(g, dtype)


unary(
    "real",
    lambda xp, x, p: xp.real(x),
    lambda xp, g, x, out, p: _as_complex(xp, g, p),
    jvp="linear",
    view=True,
    complex="own",
)
# imag: d Im(z) = Re(conj(i g) dz) for a real g: the gradient is i g.
unary(
    "imag",
    lambda xp, x, p: xp.imag(x),
    lambda xp, g, x, out, p: _as_complex(xp, g, p) * 1j,
    jvp="linear",
    view=True,
    complex="own",
)
unary(
    "conj",
    lambda xp, x, p: xp.conj(x),
    lambda xp, g, x, out, p: xp.conj(g),
    jvp="linear",
    complex="own",
)


def _angle_fwd(xp, x, p):
    if _is_complex(x):
        return xp.atan2(xp.imag(x), xp.real(x))
    # A real x: 0, or pi for negative values (NaN stays), as PyTorch.
    return xp.where(x < 0, math.pi, xp.where(xp.isnan(x), x, 0.0))


def _angle_vjp(xp, g, x, out, p):
    # d arg(z) = Im(dz / z) = Re(conj(i z g / |z|^2) dz): the gradient is i z g / |z|^2, 0 at
    # z == 0 (as PyTorch); a real x has gradient 0.
    if not _is_complex(x):
        return xp.zeros_like(g)
    r2 = xp.real(x * xp.conj(x))
    return xp.where(r2 == 0, 0.0, (g * x) * 1j / _nonzero(xp, r2))


def _angle_jvp(xp, t, x, out, p):
    if not _is_complex(x):
        return xp.zeros_like(t)
    r2 = xp.real(x * xp.conj(x))
    return xp.where(r2 == 0, 0.0, xp.imag(xp.conj(x) * t) / _nonzero(xp, r2))


unary("angle", _angle_fwd, _angle_vjp, "x", jvp=_angle_jvp, complex="own")


# -------------------------------------------------------------------- elementwise, two inputs
# Results are reduced back to each input's shape and dtype in BinaryNode, not here.

binary(
    "add",
    lambda xp, x, y: x + y,
    (lambda xp, g, x, y, out: g, ""),
    (lambda xp, g, x, y, out: g, ""),
    complex="own",
)
binary(
    "subtract", lambda xp, x, y: x - y,
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: -g, ""), complex="own",
)  # fmt: skip
binary(
    "multiply", lambda xp, x, y: x * y,
    (lambda xp, g, x, y, out: g * y, "y"), (lambda xp, g, x, y, out: g * x, "x"),
    complex="holomorphic",
)  # fmt: skip
binary(
    "divide", lambda xp, x, y: x / y,
    (lambda xp, g, x, y, out: g / y, "y"), (lambda xp, g, x, y, out: -g * x / (y * y), "x y"),
    complex="holomorphic",
)  # fmt: skip


def _pow_dx(xp, g, x, y, out):
    # y * x**(y-1), written so that y == 0 gives 0 and integral y needs no log. Only x == y == 0
    # (0 * inf) is masked: a mask at every y == 0 would cut d/dy of this (1/x there).
    if y.__class__ in (int, float, complex):
        if y == 0:
            return g * 0.0
        return g * (y * x ** (y - 1))
    return g * xp.where(xp.logical_and(y == 0, x == 0), 0.0, y * x ** (y - 1))


def _pow_dy(xp, g, x, y, out):
    # x**y * log(x), taken as 0 where x == 0 (the limit for y > 0), as PyTorch.
    if x.__class__ in (int, float, complex):
        if x == 0:
            return g * 0.0
        if x.__class__ is complex or (out.__class__ is not float and _is_complex(out)):
            return g * (out * cmath.log(x))
        return g * (out * (math.log(x) if x > 0 else math.nan))
    if x.dtype != out.dtype and _is_complex(out):  # a real x, a complex y: log of complex x
        x = xp.astype(x, out.dtype)
    return g * xp.where(x == 0, 0.0, out * xp.log(xp.where(x == 0, 1.0, x)))


binary("pow", lambda xp, x, y: x**y, (_pow_dx, "x y"), (_pow_dy, "x out"), complex="holomorphic")
# atan2: subgradient 0 at the origin (PyTorch's, and angle's at z == 0; it was 0/0).
binary(
    "atan2", lambda xp, x, y: xp.atan2(x, y),
    (lambda xp, g, x, y, out: g * y / _nonzero(xp, x * x + y * y), "x y"),
    (lambda xp, g, x, y, out: -g * x / _nonzero(xp, x * x + y * y), "x y"),
)  # fmt: skip


# maximum/minimum: where the inputs tie, the gradient is split evenly between them; each
# input gets it unless it loses, so where one is NaN both do (PyTorch's).
def _pick(xp, g, x, y, sign):
    loses = (x < y) if sign > 0 else (x > y)
    return xp.where(loses, 0.0, xp.where(x == y, g * 0.5, g))


binary(
    "maximum", lambda xp, x, y: xp.maximum(x, y),
    (lambda xp, g, x, y, out: _pick(xp, g, x, y, 1), "x y"),
    (lambda xp, g, x, y, out: _pick(xp, g, y, x, 1), "x y"),
)  # fmt: skip
binary(
    "minimum", lambda xp, x, y: xp.minimum(x, y),
    (lambda xp, g, x, y, out: _pick(xp, g, x, y, -1), "x y"),
    (lambda xp, g, x, y, out: _pick(xp, g, y, x, -1), "x y"),
)  # fmt: skip
# floor_divide: piecewise constant, zero gradient. remainder: x - floor(x / y) * y.
binary(
    "floor_divide", lambda xp, x, y: _special_cases.floor_divide(xp, x, y),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
# bernoulli: 1 where a uniform draw y is below the probability x, else 0, in x's dtype;
# piecewise constant: zero gradient (PyTorch's too, for the probabilities), none for the draw.
binary(
    "bernoulli", lambda xp, x, y: xp.astype(y < x, x.dtype),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
binary(
    "remainder", lambda xp, x, y: x % y,
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: -g * xp.floor(x / y), "x y"),
)  # fmt: skip


# hypot: subgradient 0 where x == y == 0, as the gradient of a norm at 0.
binary(
    "hypot", lambda xp, x, y: xp.hypot(x, y),
    (lambda xp, g, x, y, out: g * x / _nonzero(xp, out), "x out"),
    (lambda xp, g, x, y, out: g * y / _nonzero(xp, out), "y out"),
)  # fmt: skip
# logaddexp: d/dx = sigmoid(x - y), from the inputs as PyTorch, not as exp(x - out): right at
# an infinite input (exp(inf - inf) was NaN), and a gradient computed without the loss (Dask's
# lazy graphs) needs no logaddexp, the costliest kernel of a logistic regression's gradient.
# exp overflows where the inputs differ by more than ~709 (NumPy warns), giving the limit 0.
binary(
    "logaddexp", lambda xp, x, y: xp.logaddexp(x, y),
    (lambda xp, g, x, y, out: g / (1 + xp.exp(y - x)), "x y"),
    (lambda xp, g, x, y, out: g / (1 + xp.exp(x - y)), "x y"),
)  # fmt: skip
# binary_cross_entropy(p, t) = -(t log p + (1 - t) log(1 - p)) (nn.functional's), each log
# clamped at -100 so that p = 0 and 1 give finite losses, with PyTorch's derivatives: d/dp =
# (p - t) / max(p (1 - p), 1e-12), finite at p = 0 and 1 (through the clamped logs it was
# 0 * inf, NaN: a float32 sigmoid saturates to 1 from x ~ 17), and d/dt = -logit(p).
binary(
    "binary_cross_entropy",
    lambda xp, x, y: (
        -(y * xp.maximum(xp.log(x), -100.0) + (1 - y) * xp.maximum(xp.log(1 - x), -100.0))
    ),
    (lambda xp, g, x, y, out: g * ((x - y) / xp.maximum(x * (1 - x), 1e-12)), "x y"),
    (lambda xp, g, x, y, out: g * -xp.log(x / (1 - x)), "x"),
)
# copysign: |x| with the sign of y. d/dx is out / x (+1 or -1), 0 at x == 0 as abs; d/dy is 0
# (a jump at y == 0).
binary(
    "copysign", lambda xp, x, y: xp.copysign(x, y),
    (lambda xp, g, x, y, out: g * (out / _nonzero(xp, x)), "x out"),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
# nextafter: x moved by one unit in the last place towards y, so d/dx is 1 and d/dy is 0.
binary(
    "nextafter", lambda xp, x, y: xp.nextafter(x, y),
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
